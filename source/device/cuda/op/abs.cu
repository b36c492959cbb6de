/* abs on CUDA: |x|, INT32_MIN wrapping to itself as upstream's -O3 build computes. */
#include "unary.cuh"

namespace {
struct abs_fn {
    __device__ int32_t operator()(int32_t x) const { return cvm_abs_value(x); }
};
int abs_run(cuda_node_ctx* ctx) {
    return unary_run(ctx, abs_fn());
}
}  // namespace

extern const cuda_kernel cuda_kernel_abs = {"abs", nullptr, nullptr, abs_run, nullptr};
