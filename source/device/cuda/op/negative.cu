/* negative on CUDA: -x with wrap-around (-INT32_MIN is INT32_MIN). */
#include "unary.cuh"

namespace {
struct negative_fn {
    __device__ int32_t operator()(int32_t x) const { return cvml_wrap_neg(x); }
};
int negative_run(cuda_node_ctx* ctx) {
    return unary_run(ctx, negative_fn());
}
}  // namespace

extern const cuda_kernel cuda_kernel_negative = {"negative", nullptr, nullptr, negative_run,
                                                 nullptr};
