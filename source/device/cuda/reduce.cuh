/* sum and max on CUDA: upstream's CPU reduce algorithm as the CPU kernel ports it
 * (device/cpu/op/reduce_kernel.h), quirks included:
 * - exclude with every axis listed: identity copy;
 * - axis = () without exclude: one accumulator that starts at 0 (max of all-negative
 *   data is 0), every output gets it;
 * - otherwise each output's base input index drops the output's size-1 dims and pairs
 *   what is left right-to-left with the non-reduced input axes (wrong, as upstream, when
 *   a kept size-1 axis sits right of a larger kept axis); the reduced elements are then
 *   folded from that base.
 * Sums wrap mod 2^32 and max is order-free, so one warp folds an output's elements in
 * any order and gets the CPU's bytes. */
#pragma once

#include <string.h>

#include "cuda_kernel.h"

enum cuda_reduce_kind { CUDA_REDUCE_SUM = 0, CUDA_REDUCE_MAX = 1 };

enum cuda_reduce_mode { CUDA_REDUCE_COPY = 0, CUDA_REDUCE_ALL = 1, CUDA_REDUCE_GENERAL = 2 };

struct cuda_reduce_plan {
    int mode;
    int32_t ndim;
    int64_t xdims[CVML_MAX_DIMS];
    int64_t every[CVML_MAX_DIMS]; /* row-major strides of x */
    int32_t real[CVML_MAX_DIMS];  /* reduced axes, ascending */
    int32_t real_count;
    int64_t axis_size;
    int64_t ysh[CVML_MAX_DIMS]; /* output dims other than 1 */
    int32_t ysh_count;
    uint8_t flag[CVML_MAX_DIMS];
    int64_t xsize, ysize;
};

/* 1 with the plan filled when the CPU kernel would run this node without error. */
/* The reduce parameters (sum and max share them): axis and exclude. */
struct cuda_reduce_params {
    cuda_tuple axis;
    bool exclude;
};

static inline cuda_reduce_params cuda_reduce_params_of(const cuda_node_ctx* ctx) {
    const cuda_params p = params_of(ctx);
    return {p.tuple("axis"), p.get("exclude") != 0};
}

static inline int cuda_reduce_make_plan(const cuda_reduce_params* prm, const cuda_tensor* xt,
                                        const cuda_tensor* yt, cuda_reduce_plan* p) {
    memset(p, 0, sizeof *p);
    p->ndim = xt->ndim;
    if (p->ndim < 1 || p->ndim > CVML_MAX_DIMS) return 0;
    for (int32_t i = 0; i < p->ndim; ++i) p->xdims[i] = xt->dims[i];
    for (int32_t i = 0; i < prm->axis.count; ++i) {
        int64_t a = prm->axis.values[i];
        if (a < 0) a += p->ndim;
        if (a < 0 || a >= p->ndim) return 0;
        p->flag[a] = 1;
    }
    if (prm->exclude)
        for (int32_t i = 0; i < p->ndim; ++i) p->flag[i] = !p->flag[i];
    for (int32_t i = 0; i < p->ndim; ++i)
        if (p->flag[i]) p->real[p->real_count++] = i;
    p->xsize = cuda_count(xt);
    p->ysize = cuda_count(yt);
    // An empty input leaves upstream reading outside it; the CPU keeps that case.
    if (p->xsize == 0) return 0;
    if (p->real_count == 0 && prm->exclude) {
        p->mode = CUDA_REDUCE_COPY;
        return p->ysize == p->xsize;
    }
    if (p->real_count == 0) {
        p->mode = CUDA_REDUCE_ALL;
        return 1;
    }
    p->mode = CUDA_REDUCE_GENERAL;
    p->every[p->ndim - 1] = 1;
    for (int32_t i = p->ndim - 2; i >= 0; --i) p->every[i] = p->xdims[i + 1] * p->every[i + 1];
    p->axis_size = 1;
    for (int32_t r = 0; r < p->real_count; ++r) p->axis_size *= p->xdims[p->real[r]];
    for (int32_t i = 0; i < yt->ndim; ++i)
        if (yt->dims[i] != 1) p->ysh[p->ysh_count++] = yt->dims[i];
    int32_t kept = 0;
    for (int32_t i = 0; i < p->ndim; ++i) kept += !p->flag[i];
    return p->ysh_count <= kept;
}

template <int Kind>
__device__ __forceinline__ int32_t reduce_fold(int32_t t, int32_t v) {
    if (Kind == CUDA_REDUCE_SUM) return cvml_wrap_add(t, v);
    return v > t ? v : t;
}

template <int Kind>
__device__ __forceinline__ int32_t reduce_warp(int32_t t) {
    for (unsigned off = 16; off > 0; off >>= 1)
        t = reduce_fold<Kind>(t, __shfl_down_sync(0xffffffffu, t, off));
    return t;
}

/* Identity of the fold for lanes without an element (max over real elements only). */
template <int Kind>
__device__ __forceinline__ int32_t reduce_identity() {
    return Kind == CUDA_REDUCE_SUM ? 0 : INT32_MIN;
}

constexpr unsigned kReduceThreads = 256;

template <int Kind>
__global__ void reduce_general_kernel(const int32_t* x, int32_t* y, cuda_reduce_plan p) {
    const unsigned lane = threadIdx.x & 31u;
    const unsigned warps = kReduceThreads / 32;
    for (int64_t i = blockIdx.x * static_cast<int64_t>(warps) + threadIdx.x / 32u; i < p.ysize;
         i += static_cast<int64_t>(gridDim.x) * warps) {
        int64_t in_i = 0, o_i = i;
        int32_t xj = p.ndim - 1;
        for (int32_t j = p.ysh_count - 1; j >= 0; --j) {
            const int64_t col = o_i % p.ysh[j];
            o_i /= p.ysh[j];
            // Upstream: while (xj >= 0 && flag[xj--]); — skips reduced axes and steps
            // past the kept one it stops on.
            while (xj >= 0 && p.flag[xj--]) {
            }
            in_i += col * p.every[xj + 1];
        }
        int32_t t = reduce_identity<Kind>();
        for (int64_t k = lane; k < p.axis_size; k += 32) {
            // Element k of the fold: the reduced axes as a mixed radix, last fastest.
            int64_t rem = k, off = 0;
            for (int32_t r = p.real_count - 1; r >= 0; --r) {
                const int64_t d = p.xdims[p.real[r]];
                off += (rem % d) * p.every[p.real[r]];
                rem /= d;
            }
            t = reduce_fold<Kind>(t, x[in_i + off]);
        }
        t = reduce_warp<Kind>(t);
        if (lane == 0) y[i] = t;
    }
}

/* axis = () without exclude: one block folds everything from 0, then fills y. */
template <int Kind>
__global__ void reduce_all_kernel(const int32_t* x, int32_t* y, int64_t xsize, int64_t ysize) {
    __shared__ int32_t part[kReduceThreads / 32];
    int32_t t = 0;
    for (int64_t i = threadIdx.x; i < xsize; i += kReduceThreads) t = reduce_fold<Kind>(t, x[i]);
    t = reduce_warp<Kind>(t);
    if ((threadIdx.x & 31u) == 0) part[threadIdx.x / 32u] = t;
    __syncthreads();
    if (threadIdx.x < 32) {
        t = threadIdx.x < kReduceThreads / 32 ? part[threadIdx.x] : 0;
        t = reduce_warp<Kind>(t);
        if (threadIdx.x == 0) part[0] = t;
    }
    __syncthreads();
    for (int64_t i = threadIdx.x; i < ysize; i += kReduceThreads) y[i] = part[0];
}

template <int Kind>
int cuda_reduce_supports(const cuda_node_ctx* ctx) {
    cuda_reduce_plan p;
    const cuda_reduce_params prm = cuda_reduce_params_of(ctx);
    return cuda_reduce_make_plan(&prm, ctx->inputs[0], ctx->outputs[0], &p);
}

template <int Kind>
int cuda_reduce_run(cuda_node_ctx* ctx) {
    cuda_reduce_plan p;
    const cuda_reduce_params prm = cuda_reduce_params_of(ctx);
    if (!cuda_reduce_make_plan(&prm, ctx->inputs[0], ctx->outputs[0], &p))
        return cuda_fail(CVML_ERR_RUNTIME, "reduce: shapes disagree with the axes");
    if (p.ysize == 0) return CVML_OK;
    if (p.mode == CUDA_REDUCE_COPY) return cuda_copy_input0(ctx);
    if (p.mode == CUDA_REDUCE_ALL) {
        CUDA_LAUNCH(reduce_all_kernel<Kind>, 1, kReduceThreads, ctx->stream, ctx->in[0],
                    ctx->out[0], p.xsize, p.ysize);
        return CVML_OK;
    }
    int64_t blocks = (p.ysize + kReduceThreads / 32 - 1) / (kReduceThreads / 32);
    if (blocks > CVML_CUDA_MAX_BLOCKS) blocks = CVML_CUDA_MAX_BLOCKS;
    CUDA_LAUNCH(reduce_general_kernel<Kind>, static_cast<unsigned>(blocks), kReduceThreads,
                ctx->stream, ctx->in[0], ctx->out[0], p);
    return CVML_OK;
}
