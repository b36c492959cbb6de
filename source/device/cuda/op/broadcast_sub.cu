/* broadcast_sub on CUDA. */
#include "binary.cuh"
CVML_CUDA_BINARY(broadcast_sub, cvml_wrap_sub(a, b));
