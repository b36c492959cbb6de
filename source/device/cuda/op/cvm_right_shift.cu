/* cvm_right_shift on CUDA: upstream's CPU rounding shift with its quirks
 * (cvml_right_shift, cvml_ops.h). Right shifts of negative values are arithmetic on the
 * device. */
#include "unary.cuh"

namespace {
struct rshift_fn {
    int32_t precision, shift_bit;
    __device__ int32_t operator()(int32_t x) const {
        return cvml_right_shift(x, precision, shift_bit);
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
    return unary_run(ctx, rshift_fn{precision, shift_bit});
}
}  // namespace

extern const cuda_kernel cuda_kernel_cvm_right_shift = {"cvm_right_shift", cvm_right_shift_supports,
                                                        nullptr, cvm_right_shift_run, nullptr};
