/* cvm_clip on CUDA: clip to +-(2^(p-1)-1); is_sign is ignored as upstream ignores it. */
#include "operator/cvm_clip.h"
#include "unary.cuh"

namespace {
struct cvm_clip_fn {
    int32_t bound;
    __device__ int32_t operator()(int32_t x) const { return dclip_value(x, bound); }
};
int cvm_clip_run(cuda_node_ctx* ctx) {
    const cvm_clip_param* p = static_cast<const cvm_clip_param*>(ctx->param);
    return unary_run(ctx, cvm_clip_fn{dclip_bound(p->precision)});
}
}  // namespace

extern const cuda_kernel cuda_kernel_cvm_clip = {"cvm_clip", nullptr, nullptr, cvm_clip_run,
                                                 nullptr};
