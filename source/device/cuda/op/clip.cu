/* clip on CUDA: x above a_max gives a_max before a_min is looked at, exactly as the
 * CPU kernel orders the tests (it matters only when a_min > a_max). */
#include "unary.cuh"

namespace {
struct clip_fn {
    int32_t lo, hi;
    __device__ int32_t operator()(int32_t x) const { return x > hi ? hi : (x < lo ? lo : x); }
};
int clip_run(cuda_node_ctx* ctx) {
    const cuda_params p = params_of(ctx);
    return unary_run(
        ctx, clip_fn{static_cast<int32_t>(p.get("a_min")), static_cast<int32_t>(p.get("a_max"))});
}
}  // namespace

extern const cuda_kernel cuda_kernel_clip = {"clip", nullptr, nullptr, clip_run, nullptr};
