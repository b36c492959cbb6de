/* broadcast_mul on CUDA. */
#include "binary.cuh"
CVML_CUDA_BINARY(broadcast_mul, cvml_wrap_mul(a, b));
