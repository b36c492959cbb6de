/* broadcast_max on CUDA. */
#include "binary.cuh"
CVML_CUDA_BINARY(broadcast_max, a > b ? a : b);
