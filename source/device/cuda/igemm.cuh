/* The int8 implicit GEMM on tensor cores behind conv2d (groups == 1) and dense.
 *
 * Y[m][o] = bias[o] + sum_k A[m][k] * B[o][k] with
 *   m = (image, output row, output column), M = N * OH * OW,
 *   o = output channel (dense: unit),
 *   k = (kernel row r, kernel column s, input channel c), C padded to a multiple of 4.
 * A is never formed: each tile gathers its words (4 int8 channels) from the input packed
 * channel-innermost, x8[n][h][w][c4] (zero outside the image and past K). B is the
 * weight packed, w8[o][k] in words, rows padded to the tile with zeros, so its loads
 * need no masks: past K (a row stride k_pad that is not a multiple of kTileK reads into
 * the next row, or the buffer's kTileK words of slack) it multiplies A's zeros. Dense is
 * the same with H = W = KH = KW = 1.
 *
 * A block computes kTileM x kTileN outputs with 4 warps (2 x 2, 32 x 32 each: 2 x 4
 * mma.sync m16n8k32 per K step of 32 int8). Tiles are walked with a grid-stride loop,
 * m fastest, so neighbouring blocks share a weight tile. Every sum wraps mod 2^32. */
#pragma once

#include "cuda_kernel.h"
#include "mma.cuh"

/* Each including file gets its own copy (internal linkage): conv2d.cu and dense.cu both
 * launch it, and kernels in a header would otherwise be defined twice. */
namespace igemm {
namespace {

constexpr int kTileM = 64;
constexpr int kTileN = 64;
constexpr int kTileK = 8; /* words: 32 int8 values, one mma K step */
constexpr int kThreads = 128;
/* Shared-memory row stride in words: 12 puts the 8 rows x 4 words a fragment load reads
 * in 32 different banks (8 would put rows g and g+4 in the same ones). */
constexpr int kStride = 12;

struct geom {
    int64_t m;       /* rows: N * OH * OW */
    int64_t pix;     /* OH * OW */
    int32_t n_out;   /* columns: output channels or units */
    int32_t k_words; /* KH * KW * C4 */
    int32_t k_pad;   /* w8's row stride in words: k_words, or that rounded up to kTileK */
    int32_t c, c4;   /* input channels, and words per pixel */
    int32_t h, w, kh, kw, ow;
    int32_t sh, sw, ph, pw, dh, dw;
};

inline int32_t round_up(int32_t v, int32_t to) {
    return (v + to - 1) / to * to;
}

/* Words of w8: rows padded to the tile, and the slack past the last row. */
inline int64_t weight_words(const geom& g) {
    return static_cast<int64_t>(round_up(g.n_out, kTileN)) * g.k_pad + kTileK;
}

__host__ __device__ inline int64_t tile_count(const geom& g) {
    return (g.m + kTileM - 1) / kTileM * ((g.n_out + kTileN - 1) / kTileN);
}

/* The signed byte b of a word. */
__device__ __forceinline__ int32_t word_byte(int32_t word, int b) {
    return static_cast<int8_t>(static_cast<uint8_t>(static_cast<uint32_t>(word) >> (8 * b)));
}

/* Where the A row of output pixel m starts reading, or h = -1 past M. */
struct row_origin {
    int64_t image;  /* base word offset of the image in x8 */
    int32_t iy, ix; /* top-left input position of the window */
    bool valid;
};

__device__ __forceinline__ row_origin origin_of(const geom& g, int64_t m) {
    row_origin o = {0, 0, 0, m < g.m};
    if (!o.valid) return o;
    const int64_t n = m / g.pix, p = m - n * g.pix;
    const int32_t oy = static_cast<int32_t>(p / g.ow), ox = static_cast<int32_t>(p % g.ow);
    o.image = n * g.h * g.w * static_cast<int64_t>(g.c4);
    o.iy = oy * g.sh - g.ph;
    o.ix = ox * g.sw - g.pw;
    return o;
}

/* Word kk of A's row: 4 channels of one input pixel, or 0 (padding, past K). */
__device__ __forceinline__ int32_t a_word(const int32_t* x8, const geom& g, const row_origin& o,
                                          int32_t kk) {
    if (!o.valid || kk >= g.k_words) return 0;
    const int32_t rs = kk / g.c4, c = kk - rs * g.c4;
    const int32_t r = rs / g.kw, s = rs - r * g.kw;
    const int32_t iy = o.iy + r * g.dh, ix = o.ix + s * g.dw;
    if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) return 0;
    return x8[o.image + (static_cast<int64_t>(iy) * g.w + ix) * g.c4 + c];
}

/* Exact int32 products for a dense tile whose operands are not all int8 (dense reads
 * them as int32, see dense.cu): x32[m][c] times w32[o][c], or w8's bytes when w32 is
 * null (an int8 constant), each thread some outputs (pix is 1: y is [m][o]). */
__device__ void tile_wide(const int32_t* x32, const int32_t* w32, const int32_t* w8,
                          const int32_t* bias, int32_t* y, const geom& g, int64_t m0, int32_t o0) {
    for (int e = threadIdx.x; e < kTileM * kTileN; e += kThreads) {
        const int64_t m = m0 + e % kTileM;
        const int32_t o = o0 + e / kTileM;
        if (m >= g.m || o >= g.n_out) continue;
        uint32_t acc = bias ? static_cast<uint32_t>(bias[o]) : 0u;
        const int32_t* xr = x32 + m * g.c;
        if (w32) {
            const int32_t* wr = w32 + static_cast<int64_t>(o) * g.c;
            for (int32_t i = 0; i < g.c; ++i)
                acc += static_cast<uint32_t>(xr[i]) * static_cast<uint32_t>(wr[i]);
        } else {
            const int32_t* wr = w8 + static_cast<int64_t>(o) * g.k_pad;
            for (int32_t i = 0; i < g.c; ++i)
                acc += static_cast<uint32_t>(xr[i]) *
                       static_cast<uint32_t>(word_byte(wr[i / 4], i % 4));
        }
        y[m * g.n_out + o] = static_cast<int32_t>(acc);
    }
}

/* Writes the warp's 32 x 32 accumulators (+ bias) to NCHW y. */
__device__ __forceinline__ void store_tile(const int32_t (&acc)[2][4][4], const int32_t* bias,
                                           int32_t* y, const geom& g, int64_t m0, int32_t o0) {
    const int lane = threadIdx.x % 32, gid = lane / 4, t = lane % 4;
    for (int mi = 0; mi < 2; ++mi)
        for (int ni = 0; ni < 4; ++ni)
            for (int i = 0; i < 4; ++i) {
                const int64_t m = m0 + mi * 16 + gid + (i >= 2 ? 8 : 0);
                const int32_t o = o0 + ni * 8 + 2 * t + (i & 1);
                if (m >= g.m || o >= g.n_out) continue;
                const int64_t n = m / g.pix, p = m - n * g.pix;
                const uint32_t b = bias ? static_cast<uint32_t>(bias[o]) : 0u;
                y[(n * g.n_out + o) * g.pix + p] =
                    static_cast<int32_t>(static_cast<uint32_t>(acc[mi][ni][i]) + b);
            }
}

/* `wide`, when not null, is a device flag (dense only): nonzero when an operand holds a
 * value outside int8, and then every tile takes tile_wide (uniform over the grid). */
__global__ void igemm_s8(const int32_t* x8, const int32_t* w8, const int32_t* bias, int32_t* y,
                         geom g, const int32_t* wide, const int32_t* x32, const int32_t* w32) {
    __shared__ int32_t as[kTileM * kStride];
    __shared__ int32_t bs[kTileN * kStride];
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int gid = lane / 4, t = lane % 4;
    const int warp_m = (warp % 2) * 32, warp_n = (warp / 2) * 32;
    /* Each thread loads 4 words of one A row and one B row per K step. */
    const int load_row = tid / 2, load_col = (tid % 2) * 4;
    const int64_t tiles_m = (g.m + kTileM - 1) / kTileM;
    const int64_t tiles = tile_count(g);
    const bool is_wide = wide && *wide;
    for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const int64_t m0 = (tile % tiles_m) * kTileM;
        const int32_t o0 = static_cast<int32_t>(tile / tiles_m) * kTileN;
        if (is_wide) {
            tile_wide(x32, w32, w8, bias, y, g, m0, o0);
            continue;
        }
        const row_origin origin = origin_of(g, m0 + load_row);
        const int32_t* wrow = w8 + static_cast<int64_t>(o0 + load_row) * g.k_pad + load_col;
        int32_t acc[2][4][4] = {};
        for (int32_t k0 = 0; k0 < g.k_words; k0 += kTileK) {
            for (int j = 0; j < 4; ++j) {
                as[load_row * kStride + load_col + j] = a_word(x8, g, origin, k0 + load_col + j);
                bs[load_row * kStride + load_col + j] = wrow[k0 + j];
            }
            __syncthreads();
            uint32_t a[2][4], b[4][2];
            for (int mi = 0; mi < 2; ++mi) {
                const int32_t* r0 = as + (warp_m + mi * 16 + gid) * kStride;
                const int32_t* r8 = r0 + 8 * kStride;
                a[mi][0] = static_cast<uint32_t>(r0[t]);
                a[mi][1] = static_cast<uint32_t>(r8[t]);
                a[mi][2] = static_cast<uint32_t>(r0[t + 4]);
                a[mi][3] = static_cast<uint32_t>(r8[t + 4]);
            }
            for (int ni = 0; ni < 4; ++ni) {
                const int32_t* col = bs + (warp_n + ni * 8 + gid) * kStride;
                b[ni][0] = static_cast<uint32_t>(col[t]);
                b[ni][1] = static_cast<uint32_t>(col[t + 4]);
            }
            for (int mi = 0; mi < 2; ++mi)
                for (int ni = 0; ni < 4; ++ni)
                    mma_s8_m16n8k32(acc[mi][ni], a[mi], b[ni], acc[mi][ni]);
            __syncthreads();
        }
        store_tile(acc, bias, y, g, m0 + warp_m, o0 + warp_n);
    }
}

/* Enqueues the GEMM: one block per tile, bounded like every other launch. */
inline void launch(const int32_t* x8, const int32_t* w8, const int32_t* bias, int32_t* y,
                   const geom& g, const int32_t* wide, const int32_t* x32, const int32_t* w32,
                   cudaStream_t stream) {
    const int64_t tiles = tile_count(g);
    if (tiles == 0 || g.m == 0) return;
    const unsigned blocks = static_cast<unsigned>(
        tiles > CVML_CUDA_MAX_BLOCKS ? static_cast<int64_t>(CVML_CUDA_MAX_BLOCKS) : tiles);
    CUDA_LAUNCH(igemm_s8, blocks, kThreads, stream, x8, w8, bias, y, g, wide, x32, w32);
}

}  // namespace
}  // namespace igemm
