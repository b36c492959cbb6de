/* relu on CUDA. */
#include "cuda_kernel.h"

namespace {

__global__ void relu_kernel(const int32_t* x, int32_t* y, int64_t n) {
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x)
        y[i] = x[i] > 0 ? x[i] : 0;
}

int relu_run(cuda_node_ctx* ctx) {
    int64_t n = cuda_count(ctx->outputs[0]);
    CUDA_LAUNCH(relu_kernel, cuda_blocks(n), 256, ctx->stream, ctx->in[0], ctx->out[0], n);
    return CVML_OK;
}

}  // namespace

extern const cuda_kernel cuda_kernel_relu = {"relu", nullptr, nullptr, relu_run, nullptr};
