/* clip on CUDA: x above a_max gives a_max before a_min is looked at, exactly as the
 * CPU kernel orders the tests (it matters only when a_min > a_max). */
#include "operator/clip.h"
#include "unary.cuh"

namespace {
struct clip_fn {
    int32_t lo, hi;
    __device__ int32_t operator()(int32_t x) const { return x > hi ? hi : (x < lo ? lo : x); }
};
int clip_run(cuda_node_ctx* ctx) {
    const clip_param* p = static_cast<const clip_param*>(ctx->param);
    return unary_run(ctx, clip_fn{p->a_min, p->a_max});
}
}  // namespace

extern const cuda_kernel cuda_kernel_clip = {"clip", nullptr, nullptr, clip_run, nullptr};
