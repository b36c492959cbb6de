/* sum on CUDA (upstream's CPU reduce algorithm, see reduce.cuh); sums wrap mod 2^32. */
#include "reduce.cuh"

extern const cuda_kernel cuda_kernel_sum = {"sum", cuda_reduce_supports<CUDA_REDUCE_SUM>, nullptr,
                                            cuda_reduce_run<CUDA_REDUCE_SUM>, nullptr};
