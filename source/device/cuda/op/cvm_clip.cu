/* cvm_clip on CUDA: clip to +-(2^(p-1)-1); is_sign is ignored as upstream ignores it. */
#include "unary.cuh"

namespace {
struct cvm_clip_fn {
    int32_t bound;
    __device__ int32_t operator()(int32_t x) const { return cvml_clip(x, -bound, bound); }
};
int cvm_clip_run(cuda_node_ctx* ctx) {
    const int32_t precision = static_cast<int32_t>(params_of(ctx).get("precision"));
    return unary_run(ctx, cvm_clip_fn{cvml_precision_bound(precision)});
}
}  // namespace

extern const cuda_kernel cuda_kernel_cvm_clip = {"cvm_clip", nullptr, nullptr, cvm_clip_run,
                                                 nullptr};
