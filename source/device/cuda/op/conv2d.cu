/* conv2d on CUDA, byte-exact with the CPU kernel:
 * - groups == 1 (upstream's im2col + int8 GEMM path) casts input and weight values to
 *   int8 first, and runs as an implicit GEMM on int8 tensor cores (igemm.cuh). The
 *   weight is packed once, at prerun, from the host's constant; the input is packed
 *   channel-innermost at each run (a weight computed by the graph too: OIHW is an image
 *   batch of O images of C channels, KH x KW, so pack_input gives its rows). An input
 *   of few channels (C4 not a multiple of 4 words: a network's first layer, RGB) under a
 *   window wider than 1x1 is instead gathered into the GEMM's rows at each run
 *   (gather_rows), so that the GEMM reads them in 16-byte pieces: gathered 4 bytes at a
 *   time it was bound by address arithmetic (ResNet-18's first layer took a seventh of
 *   a batch-64 run);
 * - groups > 1 (depthwise included) multiplies the int32 values as they are, a strip of
 *   outputs per thread (conv_grouped.cuh);
 * - every sum wraps mod 2^32, so the order of the additions does not change the bytes. */
#include <limits.h>
#include <stdlib.h>

#include "conv_grouped.cuh"
#include "cuda_kernel.h"
#include "igemm.cuh"

namespace {

using conv_geom = conv2d_geom;
/* Named unqualified at its launch (the emulation names launches so): its geometry is the
 * operator's, so argument lookup no longer finds it in grouped::. */
using grouped::conv_grouped;

struct conv_state {
    igemm::geom gemm;  /* what the GEMM is launched with */
    igemm::geom conv;  /* the convolution's own view (gemm, unless rows are gathered) */
    int rows;          /* x8 holds A's rows, gathered at each run (gather_rows) */
    int32_t* x8;       /* the input packed: [n][h][w][c4] words of 4 int8 channels, or
                          (rows) A: [m][K rounded up to 4 words] */
    int32_t* w8;       /* the weight packed: [o (padded)][(r, s, c4) padded] words */
    int w_const;       /* packed at prerun; else by pack_input at each run */
    int32_t* counters; /* split K with a tail: per output tile (igemm::counter_count) */
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
    return conv2d_geom_of(x->dims, w->dims, y->dims, p->strides.values, p->padding.values,
                          p->dilation.values, p->groups);
}

/* K words rounded up to whole 16-byte pieces. */
int32_t round_up_words(int32_t k_words) {
    return igemm::round_up(k_words, 4);
}

bool fits_int32(int64_t v) {
    return v >= INT32_MIN / 4 && v <= INT32_MAX / 4;
}

/* The GEMM's view of a groups == 1 conv; false when a size is past its int32 indices. */
bool gemm_geom(const conv_geom& g, igemm::geom* out) {
    const int64_t c4 = (g.c + 3) / 4, k_words = g.kh * g.kw * c4;
    const int64_t sizes[] = {g.c,  g.h,  g.w,  g.o,  g.kh, g.kw,    g.ow,     g.sh,
                             g.sw, g.ph, g.pw, g.dh, g.dw, k_words, g.h * g.w};
    for (int64_t v : sizes)
        if (!fits_int32(v)) return false;
    igemm::geom& e = *out;
    e.m = g.n * g.oh * g.ow;
    e.pix = g.oh * g.ow;
    e.n_out = static_cast<int32_t>(g.o);
    e.k_words = static_cast<int32_t>(k_words);
    e.k_pad = igemm::round_up(e.k_words, igemm::kTileK);
    e.c = static_cast<int32_t>(g.c);
    e.c4 = static_cast<int32_t>(c4);
    e.h = static_cast<int32_t>(g.h);
    e.w = static_cast<int32_t>(g.w);
    e.kh = static_cast<int32_t>(g.kh);
    e.kw = static_cast<int32_t>(g.kw);
    e.ow = static_cast<int32_t>(g.ow);
    e.sh = static_cast<int32_t>(g.sh);
    e.sw = static_cast<int32_t>(g.sw);
    e.ph = static_cast<int32_t>(g.ph);
    e.pw = static_cast<int32_t>(g.pw);
    e.dh = static_cast<int32_t>(g.dh);
    e.dw = static_cast<int32_t>(g.dw);
    return true;
}

__device__ __forceinline__ uint32_t byte_of(int32_t v, int k) {
    return static_cast<uint32_t>(static_cast<uint8_t>(static_cast<int8_t>(v))) << (8 * k);
}

/* zero[0 .. words) = 0, over the whole grid: a split-K GEMM's output, zeroed by the
 * kernel that packs its input rather than by a memset node of its own (one node less
 * per layer in the run's graph). */
template <typename Index>
__device__ __forceinline__ void zero_output(int32_t* zero, Index words) {
    for (Index i = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; i < words;
         i += static_cast<Index>(gridDim.x) * blockDim.x)
        zero[i] = 0;
}

/* pack_input's block: a tile of kPackPixels pixels x kPackWords channel words (128
 * channels) of one image, read channel by channel (a warp reads 32 pixels of a channel,
 * coalesced) into shared memory as bytes, then written pixel by pixel (a warp writes 32
 * words of a pixel, coalesced). Rows of kPackStride bytes put a warp's byte stores in
 * different banks. */
constexpr int kPackThreads = 256;
constexpr int kPackPixels = 32;
constexpr int kPackWords = 32;
constexpr int kPackStride = kPackWords * 4 + 4;

/* x8[n][h][w][c4] = the int8 casts of channels 4*c4 .. 4*c4+3 (0 past C), for `images`
 * images of C x H x W. Index: int32_t when every index fits (pack_fits_int32), since
 * 64-bit divisions would dominate this memory-bound kernel; else int64_t. */
template <typename Index>
__global__ void pack_input(const int32_t* __restrict__ x, int32_t* __restrict__ x8, igemm::geom g,
                           Index images, int32_t* __restrict__ zero, Index zero_words) {
    zero_output(zero, zero_words);
    __shared__ uint32_t tile[kPackPixels * kPackStride / 4];
    uint8_t* bytes = reinterpret_cast<uint8_t*>(tile);
    const Index hw = static_cast<Index>(g.h) * g.w, c = g.c, c4s = g.c4;
    const Index pixel_tiles = (hw + kPackPixels - 1) / kPackPixels;
    const Index word_tiles = (c4s + kPackWords - 1) / kPackWords;
    const Index tiles = images * pixel_tiles * word_tiles;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    constexpr int kWarps = kPackThreads / 32;
    for (Index t = blockIdx.x; t < tiles; t += gridDim.x) {
        const Index rest = t / word_tiles, q0 = (t - rest * word_tiles) * kPackWords;
        const Index n = rest / pixel_tiles, p0 = (rest - n * pixel_tiles) * kPackPixels;
        CUDA_UNROLL
        for (int j = 0; j < kPackWords * 4 / kWarps; ++j) {
            const int ch = warp + j * kWarps;
            const Index cc = q0 * 4 + ch, p = p0 + lane;
            const int32_t v = cc < c && p < hw ? x[(n * c + cc) * hw + p] : 0;
            bytes[lane * kPackStride + ch] = static_cast<uint8_t>(static_cast<int8_t>(v));
        }
        __syncthreads();
        for (int px = warp; px < kPackPixels; px += kWarps) {
            const Index p = p0 + px, q = q0 + lane;
            if (p < hw && q < c4s)
                x8[(n * hw + p) * c4s + q] =
                    static_cast<int32_t>(tile[px * kPackStride / 4 + lane]);
        }
        __syncthreads(); /* the tile is read before the next one overwrites it */
    }
}

/* Whether pack_input<int32_t> can index `images` images (n * C4 * 4 * H * W values at
 * most) and its tiles. */
bool pack_fits_int32(const igemm::geom& g, int64_t images) {
    const int64_t values = images * g.c4 * 4 * static_cast<int64_t>(g.h) * g.w;
    return values + static_cast<int64_t>(CVML_CUDA_MAX_BLOCKS) * kPackThreads <= INT32_MAX;
}

/* Enqueues pack_input over `images` images. */
void launch_pack(const int32_t* x, int32_t* x8, const igemm::geom& g, int64_t images,
                 cudaStream_t stream, int32_t* zero = nullptr, int64_t zero_words = 0) {
    const int64_t pixels = static_cast<int64_t>(g.h) * g.w;
    const int64_t tiles = images * ((pixels + kPackPixels - 1) / kPackPixels) *
                          ((g.c4 + kPackWords - 1) / kPackWords);
    if (tiles <= 0 && zero_words <= 0) return;
    const int64_t most = tiles > 1 ? tiles : 1;
    const unsigned blocks = static_cast<unsigned>(
        most > CVML_CUDA_MAX_BLOCKS ? static_cast<int64_t>(CVML_CUDA_MAX_BLOCKS) : most);
    if (pack_fits_int32(g, images) && zero_words <= INT32_MAX / 2)
        CUDA_LAUNCH(pack_input<int32_t>, blocks, kPackThreads, stream, x, x8, g,
                    static_cast<int32_t>(images), zero, static_cast<int32_t>(zero_words));
    else
        CUDA_LAUNCH(pack_input<int64_t>, blocks, kPackThreads, stream, x, x8, g, images, zero,
                    zero_words);
}

/* gather_rows' block: kGatherRows consecutive rows of A, built in shared memory (rows of
 * at most kMaxRowWords words, padded by one word against bank conflicts) and written out
 * contiguously. */
constexpr int kGatherThreads = 256;
constexpr int kGatherRows = 32;
constexpr int kMaxRowWords = 256;

/* Rows m0 .. m0 + 31 of the GEMM's A, a row per output pixel m: the words of (kernel
 * row r, column s, channel word q) in the packed weight's order, zero for padding and
 * from K up to row_words (K rounded up to 4 words). A warp gathers one word kk of 32
 * consecutive pixels (neighbouring input columns: its loads are nearly coalesced);
 * the block then writes its rows as one contiguous run. Index: as pack_input's. */
template <typename Index>
__global__ void gather_rows(const int32_t* __restrict__ x, int32_t* __restrict__ a, igemm::geom g,
                            int32_t row_words, Index m_total, int32_t* __restrict__ zero,
                            Index zero_words) {
    zero_output(zero, zero_words);
    __shared__ int32_t rows[kGatherRows * (kMaxRowWords + 1)];
    const int stride = row_words + 1;
    const Index hw = static_cast<Index>(g.h) * g.w, c = g.c;
    const Index pix = static_cast<Index>(g.pix), ow = g.ow;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    constexpr int kWarps = kGatherThreads / 32;
    const Index tiles = (m_total + kGatherRows - 1) / kGatherRows;
    for (Index t = blockIdx.x; t < tiles; t += gridDim.x) {
        const Index m0 = t * kGatherRows, m = m0 + lane;
        const Index n = m / pix, p = m - n * pix;
        const Index oy = p / ow, ox = p - oy * ow;
        const int32_t* image = x + n * c * hw;
        for (int kk = warp; kk < row_words; kk += kWarps) {
            uint32_t word = 0;
            if (kk < g.k_words && m < m_total) {
                const int rs = kk / g.c4, q = kk - rs * g.c4;
                const int r = rs / g.kw, s = rs - r * g.kw;
                const Index iy = oy * g.sh - g.ph + r * g.dh, ix = ox * g.sw - g.pw + s * g.dw;
                if (iy >= 0 && iy < g.h && ix >= 0 && ix < g.w)
                    for (int k = 0; k < 4 && q * 4 + k < c; ++k)
                        word |= byte_of(image[(q * 4 + k) * hw + iy * g.w + ix], k);
            }
            rows[lane * stride + kk] = static_cast<int32_t>(word);
        }
        __syncthreads();
        const Index count = (m_total - m0 < kGatherRows ? m_total - m0 : kGatherRows) * row_words;
        int32_t* out = a + m0 * row_words;
        for (Index e = threadIdx.x; e < count; e += kGatherThreads) {
            const Index row = e / row_words;
            out[e] = rows[row * stride + (e - row * row_words)];
        }
        __syncthreads(); /* the rows are read before the next tile overwrites them */
    }
}

/* Whether gather_rows<int32_t> can index x and the rows (and its grid stride). */
bool gather_fits_int32(const igemm::geom& g, int64_t n) {
    const int64_t values = n * g.c4 * 4 * static_cast<int64_t>(g.h) * g.w;
    const int64_t words = g.m * round_up_words(g.k_words);
    const int64_t most = values > words ? values : words;
    return most + static_cast<int64_t>(CVML_CUDA_MAX_BLOCKS) * 256 <= INT32_MAX;
}

/* The GEMM's view of gathered rows: a 1x1 convolution over OH x OW images of
 * row_words words a pixel, against the same packed weight. */
igemm::geom rows_view(const igemm::geom& e, int64_t oh) {
    igemm::geom r = e;
    r.c4 = round_up_words(e.k_words);
    r.c = r.c4 * 4;
    r.k_words = r.c4;
    r.h = static_cast<int32_t>(oh);
    r.w = e.ow;
    r.kh = r.kw = r.sh = r.sw = r.dh = r.dw = 1;
    r.ph = r.pw = 0;
    return r;
}

/* The constant weight packed on the host, as pack_weight would, and uploaded. */
int upload_packed_weight(const cuda_node_ctx* ctx, const igemm::geom& g, int32_t* w8) {
    const cvml_ir_tensor* wt = cuda_ir->graph_tensor(ctx->graph, ctx->inputs[1]->index);
    const size_t words = static_cast<size_t>(igemm::weight_words(g));
    uint32_t* host = static_cast<uint32_t*>(calloc(words ? words : 1, sizeof(uint32_t)));
    if (!host) return cuda_fail(CVML_ERR_RUNTIME, "conv2d: out of memory packing the weight");
    const int64_t khw = static_cast<int64_t>(g.kh) * g.kw;
    for (int64_t o = 0; o < g.n_out; ++o)
        for (int64_t rs = 0; rs < khw; ++rs)
            for (int64_t c = 0; c < g.c; ++c) {
                const int32_t v = cuda_ir->tensor_const_value(wt, (o * g.c + c) * khw + rs);
                host[o * g.k_pad + rs * g.c4 + c / 4] |=
                    static_cast<uint32_t>(static_cast<uint8_t>(static_cast<int8_t>(v)))
                    << (8 * (c % 4));
            }
    const int rc =
        cuda_check(cudaMemcpy(w8, host, words * sizeof(uint32_t), cudaMemcpyHostToDevice),
                   "cudaMemcpy (conv2d weight)");
    free(host);
    return rc;
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
    igemm::geom e;
    if (p->groups == 1 && !gemm_geom(g, &e)) return 0;
    return g.o == p->channels && g.ic * p->groups == g.c && y->dims[1] == g.o && y->dims[0] == g.n;
}

int conv2d_prerun(cuda_node_ctx* ctx) {
    const conv_params cp = conv_params_of(ctx);
    const conv_params* p = &cp;
    ctx->tail_capacity = CUDA_MAX_TAIL;  // both paths apply a tail as they store
    if (p->groups != 1) return CVML_OK;
    const conv_geom g = make_geom(p, ctx->inputs[0], ctx->inputs[1], ctx->outputs[0]);
    conv_state* st = static_cast<conv_state*>(calloc(1, sizeof(conv_state)));
    if (!st) return cuda_fail(CVML_ERR_RUNTIME, "out of memory");
    ctx->state = st;
    if (!gemm_geom(g, &st->gemm)) return cuda_fail(CVML_ERR_RUNTIME, "conv2d: sizes past int32");
    st->w_const = ctx->inputs[1]->is_const;
    // A packed-per-run weight has rows of exactly K words, as pack_input writes them.
    if (!st->w_const) st->gemm.k_pad = st->gemm.k_words;
    st->conv = st->gemm;
    const igemm::geom& e = st->conv;
    st->rows = st->w_const && e.c4 % 4 != 0 && e.kh * e.kw > 1 &&
               round_up_words(e.k_words) <= kMaxRowWords &&
               fits_int32(e.m * round_up_words(e.k_words));
    if (st->rows) st->gemm = rows_view(e, g.oh);
    const size_t xw =
        static_cast<size_t>(st->rows ? e.m * round_up_words(e.k_words) : g.n * g.h * g.w * e.c4) +
        1;
    const size_t ww = static_cast<size_t>(igemm::weight_words(e));
    void* a = nullptr;
    int rc = cuda_check(cudaMalloc(&a, xw * sizeof(int32_t)), "cudaMalloc (conv2d input)");
    st->x8 = static_cast<int32_t*>(a);
    // Packed handover (cuda_node_ctx): this GEMM can store its output packed, and, when
    // x8 holds the packed input (not rows), it can read its input so from whoever wrote
    // it. Bytes past C stay zero: a writer stores only the channels there are.
    ctx->packs_output = 1;
    if (!rc && !st->rows) {
        rc = cuda_check(cudaMemset(st->x8, 0, xw * sizeof(int32_t)), "cudaMemset (conv2d input)");
        ctx->packed_input = st->x8;
    }
    a = nullptr;
    if (!rc) rc = cuda_check(cudaMalloc(&a, ww * sizeof(int32_t)), "cudaMalloc (conv2d weight)");
    st->w8 = static_cast<int32_t*>(a);
    if (!rc && st->w_const) rc = upload_packed_weight(ctx, e, st->w8);
    if (!rc && st->w_const) ctx->unread_inputs |= 1u << 1;  // only w8 is read from now on
    const int64_t counters = igemm::counter_count(st->gemm);
    if (!rc && counters > 0) {
        a = nullptr;
        rc = cuda_check(cudaMalloc(&a, static_cast<size_t>(counters) * sizeof(int32_t)),
                        "cudaMalloc (conv2d tile counters)");
        st->counters = static_cast<int32_t*>(a);
        if (!rc)
            rc = cuda_check(
                cudaMemset(st->counters, 0, static_cast<size_t>(counters) * sizeof(int32_t)),
                "cudaMemset (conv2d tile counters)");
    }
    // A computed weight is packed at each run into its first O rows; the rest stays 0.
    if (!rc && !st->w_const)
        rc = cuda_check(cudaMemset(st->w8, 0, ww * sizeof(int32_t)), "cudaMemset (conv2d weight)");
    return rc;
}

int conv2d_run(cuda_node_ctx* ctx) {
    const conv_params cp = conv_params_of(ctx);
    const conv_params* p = &cp;
    const int32_t* bias = p->use_bias ? ctx->in[2] : nullptr;
    const int64_t total = cuda_count(ctx->outputs[0]);
    if (total == 0) return CVML_OK;
    if (p->groups != 1) {
        const conv_geom g = make_geom(p, ctx->inputs[0], ctx->inputs[1], ctx->outputs[0]);
        const int64_t strips = grouped::strip_count(g);
        CUDA_LAUNCH(conv_grouped, cuda_blocks(strips), 256, ctx->stream, ctx->in[0], ctx->in[1],
                    bias, ctx->out[0], g, strips, ctx->tail);
        return CVML_OK;
    }
    conv_state* st = static_cast<conv_state*>(ctx->state);
    if (!st) return cuda_fail(CVML_ERR_RUNTIME, "conv2d: not prepared");
    const igemm::geom& e = st->conv;
    // A split-K GEMM adds into y: the kernel packing its input zeroes it first (or, with
    // the input packed already, the GEMM's own memset).
    const igemm::geom& gm = st->gemm;
    const bool split = igemm::split_count(gm, igemm::tile_count(gm)) > 1;
    const bool prepacked = ctx->input_prepacked != 0;
    int32_t* zero = split && !prepacked ? ctx->out[0] : nullptr;
    const int64_t zero_words = zero ? gm.m * gm.n_out : 0;
    if (prepacked) {
        CUDA_PATH("conv2d: the input came packed from the convolution that wrote it");
    } else if (st->rows) {
        CUDA_PATH("conv2d: few channels, the input gathered into GEMM rows");
        const int64_t tiles = (e.m + kGatherRows - 1) / kGatherRows;
        const unsigned blocks = static_cast<unsigned>(
            tiles > CVML_CUDA_MAX_BLOCKS ? static_cast<int64_t>(CVML_CUDA_MAX_BLOCKS) : tiles);
        if (tiles > 0 && gather_fits_int32(e, ctx->inputs[0]->dims[0]) &&
            zero_words <= INT32_MAX / 2)
            CUDA_LAUNCH(gather_rows<int32_t>, blocks, kGatherThreads, ctx->stream, ctx->in[0],
                        st->x8, e, round_up_words(e.k_words), static_cast<int32_t>(e.m), zero,
                        static_cast<int32_t>(zero_words));
        else if (tiles > 0)
            CUDA_LAUNCH(gather_rows<int64_t>, blocks, kGatherThreads, ctx->stream, ctx->in[0],
                        st->x8, e, round_up_words(e.k_words), e.m, zero, zero_words);
    } else {
        launch_pack(ctx->in[0], st->x8, e, ctx->inputs[0]->dims[0], ctx->stream, zero, zero_words);
    }
    const int64_t ww = static_cast<int64_t>(e.n_out) * e.k_words;
    if (!st->w_const && ww > 0) {
        CUDA_PATH("conv2d: a computed weight packed at each run");
        igemm::geom as_image = e;
        as_image.h = e.kh;
        as_image.w = e.kw;
        launch_pack(ctx->in[1], st->w8, as_image, e.n_out, ctx->stream);
    }
    const int32_t* x8 = prepacked ? ctx->packed_input : st->x8;
    // The device links only writers with a tail (link_packed_inputs): they store whole sums.
    if (ctx->packed_out && ctx->tail.count == 0)
        return cuda_fail(CVML_ERR_RUNTIME, "conv2d: a packed output without a tail");
    return igemm::launch(x8, st->w8, bias, ctx->out[0], st->gemm, nullptr, nullptr, nullptr,
                         ctx->tail, st->counters, ctx->stream, zero != nullptr, ctx->packed_out);
}

void conv2d_postrun(cuda_node_ctx* ctx) {
    conv_state* st = static_cast<conv_state*>(ctx->state);
    if (!st) return;
    if (st->x8) cudaFree(st->x8);
    if (st->w8) cudaFree(st->w8);
    if (st->counters) cudaFree(st->counters);
    free(st);
    ctx->state = nullptr;
}

}  // namespace

extern const cuda_kernel cuda_kernel_conv2d = {"conv2d", conv2d_supports, conv2d_prerun, conv2d_run,
                                               conv2d_postrun};
