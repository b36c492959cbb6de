/* max on CUDA (upstream's CPU reduce algorithm, see reduce.cuh); axis = () starts at 0. */
#include "reduce.cuh"

extern const cuda_kernel cuda_kernel_max = {"max", cuda_reduce_supports<CUDA_REDUCE_MAX>, nullptr,
                                            cuda_reduce_run<CUDA_REDUCE_MAX>, nullptr};
