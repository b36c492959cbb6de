/* broadcast_sub on CUDA. */
#include "binary.cuh"
CVML_CUDA_BINARY(broadcast_sub, dwrap_sub(a, b));
