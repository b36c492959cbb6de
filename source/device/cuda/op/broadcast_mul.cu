/* broadcast_mul on CUDA. */
#include "binary.cuh"
CVML_CUDA_BINARY(broadcast_mul, dwrap_mul(a, b));
