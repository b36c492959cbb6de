/* cvm_right_shift on CUDA, upstream's CPU rounding shift with its quirks:
 *   p == 1        -> 0 (the clip range is empty);
 *   b >= 31       -> x >> 31 (-1 or 0, no rounding);
 *   p + b >= 32   -> ((x >> (b-1)) + 1) >> 1 without clipping, the +1 wrapping;
 *   otherwise     -> the same rounding, clipped to +-(2^(p-1)-1).
 * Right shifts of negative values are arithmetic on the device. */
#include "unary.cuh"

namespace {
struct rshift_fn {
    int32_t precision, shift_bit, bound;
    __device__ int32_t operator()(int32_t x) const {
        if (precision <= 1) return 0;
        if (shift_bit >= 31) return x >> 31;
        const int32_t t = dwrap_add(x >> (shift_bit - 1), 1) >> 1;
        if (precision + shift_bit >= 32) return t;
        return dclip_value(t, bound);
    }
};
/* shift_bit is verified to be at least 1; anything else stays with the CPU. */
int cvm_right_shift_supports(const cuda_node_ctx* ctx) {
    return params_of(ctx).get("shift_bit") >= 1;
}
int cvm_right_shift_run(cuda_node_ctx* ctx) {
    const cuda_params p = params_of(ctx);
    const int32_t precision = static_cast<int32_t>(p.get("precision"));
    const int32_t shift_bit = static_cast<int32_t>(p.get("shift_bit"));
    return unary_run(ctx, rshift_fn{precision, shift_bit, dclip_bound(precision)});
}
}  // namespace

extern const cuda_kernel cuda_kernel_cvm_right_shift = {"cvm_right_shift", cvm_right_shift_supports,
                                                        nullptr, cvm_right_shift_run, nullptr};
