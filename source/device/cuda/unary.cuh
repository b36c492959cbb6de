/* Element-wise operators on CUDA: one grid-stride kernel that applies a functor to
 * every element. The functors call the scalar semantics every device shares
 * (operator/scalar.h, cvml_ops.h). */
#pragma once

#include "cuda_kernel.h"
#include "operator/scalar.h"

template <typename F>
__global__ void unary_kernel(const int32_t* x, int32_t* y, int64_t n, F f) {
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x)
        y[i] = f(x[i]);
}

template <typename F>
int unary_run(cuda_node_ctx* ctx, F f) {
    const int64_t n = cuda_count(ctx->outputs[0]);
    if (n > 0)
        CUDA_LAUNCH(unary_kernel, cuda_blocks(n), 256, ctx->stream, ctx->in[0], ctx->out[0], n, f);
    return CVML_OK;
}
