/* broadcast_add on CUDA. */
#include "binary.cuh"
CVML_CUDA_BINARY(broadcast_add, dwrap_add(a, b));
