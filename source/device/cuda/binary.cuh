/* Element-wise and numpy-broadcast binary operators on CUDA: the output's shape is the
 * broadcast of both inputs, right-aligned, a dimension of 1 repeating. */
#pragma once

#include "cuda_kernel.h"

struct bcast_shape {
    int32_t ndim;
    int64_t out[CVML_MAX_DIMS];
    int64_t sa[CVML_MAX_DIMS]; /* strides of a and b per output dim, 0 where broadcast */
    int64_t sb[CVML_MAX_DIMS];
};

static inline bcast_shape make_bcast(const cuda_tensor* a, const cuda_tensor* b,
                                     const cuda_tensor* o) {
    bcast_shape s = {};
    s.ndim = o->ndim;
    int64_t ka = 1, kb = 1;
    for (int32_t d = o->ndim - 1; d >= 0; --d) {
        s.out[d] = o->dims[d];
        int32_t da = d - (o->ndim - a->ndim), db = d - (o->ndim - b->ndim);
        s.sa[d] = da >= 0 && a->dims[da] != 1 ? ka : 0;
        s.sb[d] = db >= 0 && b->dims[db] != 1 ? kb : 0;
        if (da >= 0) ka *= a->dims[da];
        if (db >= 0) kb *= b->dims[db];
    }
    return s;
}

template <typename F>
__global__ void bcast_kernel(const int32_t* a, const int32_t* b, int32_t* y, bcast_shape s,
                             int64_t n, F f) {
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        int64_t rem = i, ia = 0, ib = 0;
        for (int32_t d = s.ndim - 1; d >= 0; --d) {
            int64_t idx = rem % s.out[d];
            rem /= s.out[d];
            ia += idx * s.sa[d];
            ib += idx * s.sb[d];
        }
        y[i] = f(a[ia], b[ib]);
    }
}

template <typename F>
__global__ void same_kernel(const int32_t* a, const int32_t* b, int32_t* y, int64_t n, F f) {
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x)
        y[i] = f(a[i], b[i]);
}

template <typename F>
int binary_run(cuda_node_ctx* ctx, F f) {
    const cuda_tensor *a = ctx->inputs[0], *b = ctx->inputs[1], *o = ctx->outputs[0];
    int64_t n = cuda_count(o);
    if (cuda_count(a) == n && cuda_count(b) == n) {
        CUDA_LAUNCH(same_kernel, cuda_blocks(n), 256, ctx->stream, ctx->in[0], ctx->in[1],
                    ctx->out[0], n, f);
    } else {
        CUDA_LAUNCH(bcast_kernel, cuda_blocks(n), 256, ctx->stream, ctx->in[0], ctx->in[1],
                    ctx->out[0], make_bcast(a, b, o), n, f);
    }
    return CVML_OK;
}

#define CVML_CUDA_BINARY(NAME, EXPR)                                               \
    namespace {                                                                    \
    struct NAME##_fn {                                                             \
        __device__ int32_t operator()(int32_t a, int32_t b) const { return EXPR; } \
    };                                                                             \
    int NAME##_run(cuda_node_ctx* ctx) {                                           \
        return binary_run(ctx, NAME##_fn());                                       \
    }                                                                              \
    }                                                                              \
    extern const cuda_kernel cuda_kernel_##NAME = {#NAME, nullptr, nullptr, NAME##_run, nullptr}
