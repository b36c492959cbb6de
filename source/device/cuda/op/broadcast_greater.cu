/* broadcast_greater on CUDA: 1 or 0. */
#include "binary.cuh"
CVML_CUDA_BINARY(broadcast_greater, a > b ? 1 : 0);
