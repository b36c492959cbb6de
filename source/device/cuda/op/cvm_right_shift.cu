/* cvm_right_shift on CUDA, upstream's CPU rounding shift with its quirks:
 *   p == 1        -> 0 (the clip range is empty);
 *   b >= 31       -> x >> 31 (-1 or 0, no rounding);
 *   p + b >= 32   -> ((x >> (b-1)) + 1) >> 1 without clipping, the +1 wrapping;
 *   otherwise     -> the same rounding, clipped to +-(2^(p-1)-1).
 * Right shifts of negative values are arithmetic on the device. */
#include "operator/cvm_right_shift.h"
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
int cvm_right_shift_supports(const ir_graph*, const ir_node* node) {
    return static_cast<const cvm_right_shift_param*>(node->param)->shift_bit >= 1;
}
int cvm_right_shift_run(cuda_node_ctx* ctx) {
    const cvm_right_shift_param* p = static_cast<const cvm_right_shift_param*>(ctx->param);
    return unary_run(ctx, rshift_fn{p->precision, p->shift_bit, dclip_bound(p->precision)});
}
}  // namespace

extern const cuda_kernel cuda_kernel_cvm_right_shift = {"cvm_right_shift", cvm_right_shift_supports,
                                                        nullptr, cvm_right_shift_run, nullptr};
