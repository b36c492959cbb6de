/* Element-wise operators on CUDA: the scalar functions of the CPU's elemwise_scalar.h
 * (byte-exact with upstream's CPU kernels, FORMAT.md §7), restated for the device, and
 * one grid-stride kernel that applies a functor to every element. */
#pragma once

#include "cuda_kernel.h"

__device__ __forceinline__ int32_t dwrap_neg(int32_t a) {
    return static_cast<int32_t>(0u - static_cast<uint32_t>(a));
}

/* 2^(p-1)-1 for p in 1..33 (saturated outside, as cvml_precision_bound in cvml_ops.h). */
__host__ __device__ __forceinline__ int32_t dclip_bound(int32_t precision) {
    if (precision <= 1) return 0;
    if (precision >= 32) return INT32_MAX;
    return static_cast<int32_t>((int64_t{1} << (precision - 1)) - 1);
}

__device__ __forceinline__ int32_t dclip_value(int32_t x, int32_t bound) {
    return x > bound ? bound : (x < -bound ? -bound : x);
}

/* Index clipping of take and cvm_lut: negative -> 0, past the end -> n - 1. */
__device__ __forceinline__ int64_t dclip_index(int32_t i, int64_t n) {
    return i < 0 ? 0 : (i >= n ? n - 1 : i);
}

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
