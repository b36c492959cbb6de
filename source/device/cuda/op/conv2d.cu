/* conv2d on CUDA, byte-exact with the CPU kernel:
 * - groups == 1 (upstream's im2col + int8 GEMM path) casts input and weight values to
 *   int8 first. Both are repacked channel-innermost, padded to a multiple of 4 with
 *   zeros, so that __dp4a multiplies four int8 pairs at a time; a zero pad adds 0;
 * - groups > 1 (depthwise included) multiplies the int32 values as they are;
 * - every sum wraps mod 2^32 (uint32 here, dp4a's 32-bit add in hardware), so the
 *   order of the additions does not change the bytes.
 * One thread per output value, in the output's NCHW order. */
#include <stdlib.h>

#include "cuda_kernel.h"

namespace {

struct conv_geom {
    int64_t n, c, h, w;    /* input */
    int64_t o, ic, kh, kw; /* weight (o, c / groups, kh, kw) */
    int64_t oh, ow;
    int64_t sh, sw, ph, pw, dh, dw;
    int64_t opg; /* output channels per group */
    int64_t icw; /* groups == 1: 4-channel words per pixel of the packed input */
};

struct conv_state {
    int32_t* x8; /* [n][h][w][icw] words of 4 int8 channels */
    int32_t* w8; /* [o][kh][kw][icw] */
    int w_packed;
    int w_const; /* a constant weight is packed once, at the first run */
};

/* The node's parameters, read once through the accessors. */
struct conv_params {
    int64_t channels, groups;
    bool use_bias;
    cuda_tuple strides, padding, dilation;
};

conv_params conv_params_of(const cuda_node_ctx* ctx) {
    const cuda_params p = params_of(ctx);
    return {p.get("channels"),  p.get("groups"),    p.get("use_bias") != 0,
            p.tuple("strides"), p.tuple("padding"), p.tuple("dilation")};
}

conv_geom make_geom(const conv_params* p, const cuda_tensor* x, const cuda_tensor* w,
                    const cuda_tensor* y) {
    conv_geom g;
    g.n = x->dims[0];
    g.c = x->dims[1];
    g.h = x->dims[2];
    g.w = x->dims[3];
    g.o = w->dims[0];
    g.ic = w->dims[1];
    g.kh = w->dims[2];
    g.kw = w->dims[3];
    g.oh = y->dims[2];
    g.ow = y->dims[3];
    g.sh = p->strides.values[0];
    g.sw = p->strides.values[1];
    g.ph = p->padding.values[0];
    g.pw = p->padding.values[1];
    g.dh = p->dilation.values[0];
    g.dw = p->dilation.values[1];
    g.opg = p->groups > 0 ? g.o / p->groups : 0;
    g.icw = (g.ic + 3) / 4;
    return g;
}

__device__ __forceinline__ uint32_t byte_of(int32_t v, int k) {
    return static_cast<uint32_t>(static_cast<uint8_t>(static_cast<int8_t>(v))) << (8 * k);
}

/* x8[n][h][w][c4] = the int8 casts of channels 4*c4 .. 4*c4+3 (0 past C). */
__global__ void pack_input(const int32_t* x, int32_t* x8, conv_geom g, int64_t total) {
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const int64_t c4 = i % g.icw;
        const int64_t pix = i / g.icw; /* (n * h + r) * w + s */
        const int64_t n = pix / (g.h * g.w), hw = pix - n * g.h * g.w;
        uint32_t word = 0;
        for (int k = 0; k < 4; ++k) {
            const int64_t c = c4 * 4 + k;
            if (c < g.c) word |= byte_of(x[(n * g.c + c) * g.h * g.w + hw], k);
        }
        x8[i] = static_cast<int32_t>(word);
    }
}

/* w8[o][r][s][c4] likewise from the OIHW weight. */
__global__ void pack_weight(const int32_t* w, int32_t* w8, conv_geom g, int64_t total) {
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const int64_t c4 = i % g.icw;
        const int64_t rs = (i / g.icw) % (g.kh * g.kw);
        const int64_t o = i / (g.icw * g.kh * g.kw);
        uint32_t word = 0;
        for (int k = 0; k < 4; ++k) {
            const int64_t c = c4 * 4 + k;
            if (c < g.ic) word |= byte_of(w[(o * g.ic + c) * g.kh * g.kw + rs], k);
        }
        w8[i] = static_cast<int32_t>(word);
    }
}

__global__ void conv_dp4a(const int32_t* x8, const int32_t* w8, const int32_t* bias, int32_t* y,
                          conv_geom g, int64_t total) {
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const int64_t ox = i % g.ow;
        const int64_t oy = (i / g.ow) % g.oh;
        const int64_t o = (i / (g.ow * g.oh)) % g.o;
        const int64_t n = i / (g.ow * g.oh * g.o);
        int acc = bias ? bias[o] : 0;
        for (int64_t r = 0; r < g.kh; ++r) {
            const int64_t ih = oy * g.sh + r * g.dh - g.ph;
            if (ih < 0 || ih >= g.h) continue;
            for (int64_t s = 0; s < g.kw; ++s) {
                const int64_t iw = ox * g.sw + s * g.dw - g.pw;
                if (iw < 0 || iw >= g.w) continue;
                const int32_t* xp = x8 + ((n * g.h + ih) * g.w + iw) * g.icw;
                const int32_t* wp = w8 + ((o * g.kh + r) * g.kw + s) * g.icw;
                for (int64_t c = 0; c < g.icw; ++c) acc = __dp4a(xp[c], wp[c], acc);
            }
        }
        y[i] = acc;
    }
}

__global__ void conv_direct(const int32_t* x, const int32_t* w, const int32_t* bias, int32_t* y,
                            conv_geom g, int64_t total) {
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const int64_t ox = i % g.ow;
        const int64_t oy = (i / g.ow) % g.oh;
        const int64_t o = (i / (g.ow * g.oh)) % g.o;
        const int64_t n = i / (g.ow * g.oh * g.o);
        const int64_t c0 = (o / g.opg) * g.ic;
        uint32_t acc = bias ? static_cast<uint32_t>(bias[o]) : 0u;
        for (int64_t ic = 0; ic < g.ic; ++ic) {
            const int32_t* xp = x + (n * g.c + c0 + ic) * g.h * g.w;
            const int32_t* wp = w + (o * g.ic + ic) * g.kh * g.kw;
            for (int64_t r = 0; r < g.kh; ++r) {
                const int64_t ih = oy * g.sh + r * g.dh - g.ph;
                if (ih < 0 || ih >= g.h) continue;
                for (int64_t s = 0; s < g.kw; ++s) {
                    const int64_t iw = ox * g.sw + s * g.dw - g.pw;
                    if (iw < 0 || iw >= g.w) continue;
                    acc += static_cast<uint32_t>(wp[r * g.kw + s]) *
                           static_cast<uint32_t>(xp[ih * g.w + iw]);
                }
            }
        }
        y[i] = static_cast<int32_t>(acc);
    }
}

int conv2d_supports(const cuda_node_ctx* ctx) {
    const conv_params cp = conv_params_of(ctx);
    const conv_params* p = &cp;
    if (ctx->input_count != (p->use_bias ? 3 : 2) || p->groups < 1) return 0;
    const cuda_tensor* x = ctx->inputs[0];
    const cuda_tensor* w = ctx->inputs[1];
    const cuda_tensor* y = ctx->outputs[0];
    if (x->ndim != 4 || w->ndim != 4 || y->ndim != 4) return 0;
    if (p->strides.count != 2 || p->padding.count != 2 || p->dilation.count != 2) return 0;
    const conv_geom g = make_geom(p, x, w, y);
    return g.o == p->channels && g.ic * p->groups == g.c && y->dims[1] == g.o && y->dims[0] == g.n;
}

int conv2d_prerun(cuda_node_ctx* ctx) {
    const conv_params cp = conv_params_of(ctx);
    const conv_params* p = &cp;
    if (p->groups != 1) return CVML_OK;
    const conv_geom g = make_geom(p, ctx->inputs[0], ctx->inputs[1], ctx->outputs[0]);
    conv_state* st = static_cast<conv_state*>(calloc(1, sizeof(conv_state)));
    if (!st) return cuda_fail(CVML_ERR_RUNTIME, "out of memory");
    ctx->state = st;
    st->w_const = ctx->inputs[1]->is_const;
    const size_t xw = static_cast<size_t>(g.n * g.h * g.w * g.icw) + 1;
    const size_t ww = static_cast<size_t>(g.o * g.kh * g.kw * g.icw) + 1;
    void* a = nullptr;
    int rc = cuda_check(cudaMalloc(&a, xw * sizeof(int32_t)), "cudaMalloc (conv2d input)");
    st->x8 = static_cast<int32_t*>(a);
    a = nullptr;
    if (!rc) rc = cuda_check(cudaMalloc(&a, ww * sizeof(int32_t)), "cudaMalloc (conv2d weight)");
    st->w8 = static_cast<int32_t*>(a);
    return rc;
}

int conv2d_run(cuda_node_ctx* ctx) {
    const conv_params cp = conv_params_of(ctx);
    const conv_params* p = &cp;
    const conv_geom g = make_geom(p, ctx->inputs[0], ctx->inputs[1], ctx->outputs[0]);
    const int32_t* bias = p->use_bias ? ctx->in[2] : nullptr;
    const int64_t total = cuda_count(ctx->outputs[0]);
    if (total == 0) return CVML_OK;
    if (p->groups != 1) {
        CUDA_LAUNCH(conv_direct, cuda_blocks(total), 256, ctx->stream, ctx->in[0], ctx->in[1], bias,
                    ctx->out[0], g, total);
        return CVML_OK;
    }
    conv_state* st = static_cast<conv_state*>(ctx->state);
    if (!st) return cuda_fail(CVML_ERR_RUNTIME, "conv2d: not prepared");
    const int64_t xw = g.n * g.h * g.w * g.icw;
    if (xw > 0)
        CUDA_LAUNCH(pack_input, cuda_blocks(xw), 256, ctx->stream, ctx->in[0], st->x8, g, xw);
    if (!st->w_packed) {
        const int64_t ww = g.o * g.kh * g.kw * g.icw;
        if (ww > 0)
            CUDA_LAUNCH(pack_weight, cuda_blocks(ww), 256, ctx->stream, ctx->in[1], st->w8, g, ww);
        // Stream order puts this after the constant upload and before every later run.
        st->w_packed = st->w_const;
    }
    CUDA_LAUNCH(conv_dp4a, cuda_blocks(total), 256, ctx->stream, st->x8, st->w8, bias, ctx->out[0],
                g, total);
    return CVML_OK;
}

void conv2d_postrun(cuda_node_ctx* ctx) {
    conv_state* st = static_cast<conv_state*>(ctx->state);
    if (!st) return;
    if (st->x8) cudaFree(st->x8);
    if (st->w8) cudaFree(st->w8);
    free(st);
    ctx->state = nullptr;
}

}  // namespace

extern const cuda_kernel cuda_kernel_conv2d = {"conv2d", conv2d_supports, conv2d_prerun, conv2d_run,
                                               conv2d_postrun};
