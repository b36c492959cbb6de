/* cvm_left_shift on CUDA as upstream's formal device computes it (divergence D1, the
 * CPU kernel's reading): clip(x * 2^b, +-(2^(p-1)-1)) in int64, b capped at 32, so
 * neither a negative shift nor an overflow is undefined. */
#include "unary.cuh"

namespace {
struct lshift_fn {
    int32_t shift_bit, bound;
    __device__ int32_t operator()(int32_t x) const {
        const int64_t v = static_cast<int64_t>(x) * (int64_t{1} << shift_bit);
        return v > bound ? bound
                         : (v < -static_cast<int64_t>(bound) ? -bound : static_cast<int32_t>(v));
    }
};
/* A negative shift_bit cannot pass verification; the CPU keeps it if it ever did. */
int cvm_left_shift_supports(const cuda_node_ctx* ctx) {
    return params_of(ctx).get("shift_bit") >= 0;
}
int cvm_left_shift_run(cuda_node_ctx* ctx) {
    const cuda_params p = params_of(ctx);
    const int64_t shift_bit = p.get("shift_bit");
    const int32_t b = shift_bit > 32 ? 32 : static_cast<int32_t>(shift_bit);
    return unary_run(ctx, lshift_fn{b, dclip_bound(static_cast<int32_t>(p.get("precision")))});
}
}  // namespace

extern const cuda_kernel cuda_kernel_cvm_left_shift = {"cvm_left_shift", cvm_left_shift_supports,
                                                       nullptr, cvm_left_shift_run, nullptr};
