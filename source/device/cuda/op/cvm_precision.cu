/* cvm_precision on CUDA: the bit length of |x| with 0 mapped to 1; |INT32_MIN| = 2^31
 * has 32 bits (the magnitude is taken in uint32). */
#include "unary.cuh"

namespace {
struct precision_fn {
    __device__ int32_t operator()(int32_t x) const {
        const uint32_t m = x < 0 ? 0u - static_cast<uint32_t>(x) : static_cast<uint32_t>(x);
        const int32_t bits = 32 - __clz(static_cast<int>(m));
        return bits ? bits : 1;
    }
};
int cvm_precision_run(cuda_node_ctx* ctx) {
    return unary_run(ctx, precision_fn());
}
}  // namespace

extern const cuda_kernel cuda_kernel_cvm_precision = {"cvm_precision", nullptr, nullptr,
                                                      cvm_precision_run, nullptr};
