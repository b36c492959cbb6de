/* max_pool2d on CUDA, one thread per output cell: the window is clipped to the input
 * (padded cells count as INT32_MIN and never win), so a window over padding only, which
 * ceil_mode can produce, yields INT32_MIN as on the CPU. */
#include "cuda_kernel.h"

namespace {

struct pool_geom {
    int64_t h, w, oh, ow, kh, kw, sh, sw, ph, pw;
};

/* Index: int32_t when every index fits (the launch checks), since 64-bit divisions cost
 * several times the 32-bit ones and dominate this memory-bound kernel; else int64_t. */
template <typename Index>
__global__ void pool_kernel(const int32_t* x, int32_t* y, pool_geom pg, Index n) {
    const Index h = static_cast<Index>(pg.h), w = static_cast<Index>(pg.w);
    const Index oh = static_cast<Index>(pg.oh), ow = static_cast<Index>(pg.ow);
    for (Index i = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<Index>(gridDim.x) * blockDim.x) {
        const Index rows = i / ow, j = i - rows * ow;
        const Index plane = rows / oh, r = rows - plane * oh;
        const int32_t* xp = x + static_cast<int64_t>(plane) * h * w;
        Index r0 = r * static_cast<Index>(pg.sh) - static_cast<Index>(pg.ph);
        Index c0 = j * static_cast<Index>(pg.sw) - static_cast<Index>(pg.pw);
        Index r1 = r0 + static_cast<Index>(pg.kh), c1 = c0 + static_cast<Index>(pg.kw);
        if (r0 < 0) r0 = 0;
        if (r1 > h) r1 = h;
        if (c0 < 0) c0 = 0;
        if (c1 > w) c1 = w;
        int32_t m = INT32_MIN;
        for (Index a = r0; a < r1; ++a)
            for (Index b = c0; b < c1; ++b) {
                const int32_t v = xp[a * w + b];
                m = v > m ? v : m;
            }
        y[i] = m;
    }
}

/* Whether every index pool_kernel<int32_t> forms fits int32 (with room for the grid
 * stride and the window's reach past the input). */
bool pool_fits_int32(const pool_geom& g, int64_t n) {
    const int64_t limit = INT32_MAX / 4;
    const int64_t v[] = {n, g.h * g.w, g.oh * g.sh + g.kh, g.ow * g.sw + g.kw, g.ph, g.pw};
    for (int64_t x : v)
        if (x > limit) return false;
    return n + static_cast<int64_t>(CVML_CUDA_MAX_BLOCKS) * 256 <= INT32_MAX;
}

int max_pool2d_supports(const cuda_node_ctx* ctx) {
    const cuda_params p = params_of(ctx);
    const cuda_tensor* x = ctx->inputs[0];
    const cuda_tensor* y = ctx->outputs[0];
    if (ctx->input_count != 1 || x->ndim != 4 || y->ndim != 4) return 0;
    if (p.tuple("pool_size").count != 2 || p.tuple("strides").count != 2 ||
        p.tuple("padding").count < 1)
        return 0;
    return y->dims[0] == x->dims[0] && y->dims[1] == x->dims[1];
}

int max_pool2d_run(cuda_node_ctx* ctx) {
    const cuda_params p = params_of(ctx);
    const cuda_tuple pool = p.tuple("pool_size"), strides = p.tuple("strides"),
                     padding = p.tuple("padding");
    const cuda_tensor *x = ctx->inputs[0], *y = ctx->outputs[0];
    pool_geom g;
    g.h = x->dims[2];
    g.w = x->dims[3];
    g.oh = y->dims[2];
    g.ow = y->dims[3];
    g.kh = pool.values[0];
    g.kw = pool.values[1];
    g.sh = strides.values[0];
    g.sw = strides.values[1];
    // One padding value pads both axes (the operator's rule, max_pool2d_pads).
    g.ph = padding.values[0];
    g.pw = padding.count == 2 ? padding.values[1] : padding.values[0];
    const int64_t n = cuda_count(y);
    if (n > 0 && pool_fits_int32(g, n))
        CUDA_LAUNCH(pool_kernel<int32_t>, cuda_blocks(n), 256, ctx->stream, ctx->in[0], ctx->out[0],
                    g, static_cast<int32_t>(n));
    else if (n > 0)
        CUDA_LAUNCH(pool_kernel<int64_t>, cuda_blocks(n), 256, ctx->stream, ctx->in[0], ctx->out[0],
                    g, n);
    return CVML_OK;
}

}  // namespace

extern const cuda_kernel cuda_kernel_max_pool2d = {"max_pool2d", max_pool2d_supports, nullptr,
                                                   max_pool2d_run, nullptr};
