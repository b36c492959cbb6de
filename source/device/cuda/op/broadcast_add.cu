/* broadcast_add on CUDA. */
#include "binary.cuh"
CVML_CUDA_BINARY(broadcast_add, cvml_wrap_add(a, b));
