/* cvm_left_shift on CUDA as upstream's formal device computes it (divergence D1, the
 * CPU kernel's reading: cvm_left_shift_value, operator/scalar.h). */
#include "unary.cuh"

namespace {
struct lshift_fn {
    int32_t precision, shift_bit;
    __device__ int32_t operator()(int32_t x) const {
        return cvm_left_shift_value(x, precision, shift_bit);
    }
};
/* A negative shift_bit cannot pass verification; the CPU keeps it if it ever did. */
int cvm_left_shift_supports(const cuda_node_ctx* ctx) {
    return params_of(ctx).get("shift_bit") >= 0;
}
int cvm_left_shift_run(cuda_node_ctx* ctx) {
    const cuda_params p = params_of(ctx);
    return unary_run(ctx, lshift_fn{static_cast<int32_t>(p.get("precision")),
                                    static_cast<int32_t>(p.get("shift_bit"))});
}
}  // namespace

extern const cuda_kernel cuda_kernel_cvm_left_shift = {"cvm_left_shift", cvm_left_shift_supports,
                                                       nullptr, cvm_left_shift_run, nullptr};
