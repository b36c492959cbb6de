/* elemwise_add on CUDA: int32 wrap-around, as upstream. */
#include "binary.cuh"
CVML_CUDA_BINARY(elemwise_add, cvml_wrap_add(a, b));
