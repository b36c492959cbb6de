/* cvm_precision on CUDA: the bit length of |x| with 0 mapped to 1 (cvm_precision_value,
 * operator/scalar.h). */
#include "unary.cuh"

namespace {
struct precision_fn {
    __device__ int32_t operator()(int32_t x) const { return cvm_precision_value(x); }
};
int cvm_precision_run(cuda_node_ctx* ctx) {
    return unary_run(ctx, precision_fn());
}
}  // namespace

extern const cuda_kernel cuda_kernel_cvm_precision = {"cvm_precision", nullptr, nullptr,
                                                      cvm_precision_run, nullptr};
