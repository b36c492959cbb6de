/* elemwise_sub on CUDA: int32 wrap-around, as upstream. */
#include "binary.cuh"
CVML_CUDA_BINARY(elemwise_sub, cvml_wrap_sub(a, b));
