/* max_pool2d on CUDA, one thread per output cell: the window is clipped to the input
 * (padded cells count as INT32_MIN and never win), so a window over padding only, which
 * ceil_mode can produce, yields INT32_MIN as on the CPU. */
#include "cuda_kernel.h"

namespace {

struct pool_geom {
    int64_t h, w, oh, ow, kh, kw, sh, sw, ph, pw;
};

__global__ void pool_kernel(const int32_t* x, int32_t* y, pool_geom g, int64_t n) {
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const int64_t j = i % g.ow;
        const int64_t r = (i / g.ow) % g.oh;
        const int64_t plane = i / (g.ow * g.oh);
        const int32_t* xp = x + plane * g.h * g.w;
        int64_t r0 = r * g.sh - g.ph, r1 = r0 + g.kh;
        int64_t c0 = j * g.sw - g.pw, c1 = c0 + g.kw;
        if (r0 < 0) r0 = 0;
        if (r1 > g.h) r1 = g.h;
        if (c0 < 0) c0 = 0;
        if (c1 > g.w) c1 = g.w;
        int32_t m = INT32_MIN;
        for (int64_t a = r0; a < r1; ++a)
            for (int64_t b = c0; b < c1; ++b) {
                const int32_t v = xp[a * g.w + b];
                m = v > m ? v : m;
            }
        y[i] = m;
    }
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
    if (n > 0)
        CUDA_LAUNCH(pool_kernel, cuda_blocks(n), 256, ctx->stream, ctx->in[0], ctx->out[0], g, n);
    return CVML_OK;
}

}  // namespace

extern const cuda_kernel cuda_kernel_max_pool2d = {"max_pool2d", max_pool2d_supports, nullptr,
                                                   max_pool2d_run, nullptr};
