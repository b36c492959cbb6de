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
 * mma.sync m16n8k32 per K step of 32 int8, fragments read by ldmatrix). K tiles of A
 * and B reach shared memory by cp.async, kStages in flight. Tiles are walked with a
 * grid-stride loop, m fastest, so neighbouring blocks share a weight tile. Every sum
 * wraps mod 2^32. */
#pragma once

#include <string.h>

#include "cuda_kernel.h"
#include "mma.cuh"

/* Each including file gets its own copy (internal linkage): conv2d.cu and dense.cu both
 * launch it, and kernels in a header would otherwise be defined twice. */
namespace igemm {
namespace {

constexpr int kTileM = 64;
constexpr int kTileN = 64;
constexpr int kTileK = 16; /* words: 64 int8 values, two mma K steps */
constexpr int kStages = 3; /* K tiles in flight (cp.async) */
constexpr int kThreads = 128;
/* Shared-memory row stride in words: 20 (80 bytes, 16-byte aligned for ldmatrix and
 * cp.async) puts the 8 rows x 16 bytes each ldmatrix phase reads in 32 different banks. */
constexpr int kStride = kTileK + 4;
/* The staged output tile's row stride: 68 spreads a warp's fragment stores
 * (o = 2t, 2t + 1; m = g, g + 8) over all 32 banks. */
constexpr int kOutStride = kTileM + 4;

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
                          const int32_t* bias, int32_t* y, const geom& g, int64_t m0, int32_t o0,
                          const cuda_tail& tail) {
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
        y[m * g.n_out + o] = cuda_tail_apply(tail, static_cast<int32_t>(acc), m * g.n_out + o);
    }
}

/* Shared memory of a block: kStages K tiles of A and B in flight, reused after the
 * K loop to stage the output tile, so that a warp's stores to y are contiguous. */
struct __align__(16) smem_tiles {
    union {
        struct {
            int32_t a[kStages][kTileM * kStride];
            int32_t b[kStages][kTileN * kStride];
        } k;
        int32_t out[kTileN * kOutStride]; /* [o][m] */
    };
};

/* Where word kk of the row's im2col row starts in the packed input: false (and *src left
 * as it was) for a word past K or one that reads padding, which the caller zero-fills. */
__device__ __forceinline__ bool tap_source(const int32_t* x8, const geom& g, const row_origin& o,
                                           int32_t kk, const int32_t** src) {
    if (!o.valid || kk >= g.k_words) return false;
    const int32_t rs = kk / g.c4, c = kk - rs * g.c4;
    const int32_t r = rs / g.kw, s = rs - r * g.kw;
    const int32_t iy = o.iy + r * g.dh, ix = o.ix + s * g.dw;
    if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) return false;
    *src = x8 + o.image + (static_cast<int64_t>(iy) * g.w + ix) * g.c4 + c;
    return true;
}

/* Issues the cp.async copies of K tile `k0` (words) into stage buffers a and b: this
 * thread's half of A row `row` in kChunkA-byte pieces (gathered from x8, zeros for
 * padding and past K), and of B row `row` in kChunkB-byte pieces (w8, padded, so always
 * in bounds). B's rows are contiguous: 16-byte pieces whenever their stride allows,
 * whatever the input's channels. */
template <int kChunkA, int kChunkB>
__device__ __forceinline__ void load_tile(int32_t* a, int32_t* b, const int32_t* x8,
                                          const int32_t* wrow, const geom& g, const row_origin& o,
                                          int32_t k0, int row, int col0) {
    constexpr int kHalf = kTileK / 2;
    if (kChunkA == 16 && g.c4 % kHalf == 0) {
        /* The thread's half row lies in one pixel: one address for all its pieces. */
        const int32_t* src = x8;
        const bool valid = tap_source(x8, g, o, k0 + col0, &src);
        for (int j = 0; j < kHalf; j += 4)
            cp_async_zfill<16>(a + row * kStride + col0 + j, src + (valid ? j : 0), valid);
    } else {
        constexpr int kWords = kChunkA / 4;
        for (int j = 0; j < kHalf; j += kWords) {
            const int32_t col = col0 + j;
            // A piece lies in one pixel: kWords == 1, or C4 is a multiple of 4.
            const int32_t* src = x8;
            const bool valid = tap_source(x8, g, o, k0 + col, &src);
            cp_async_zfill<kChunkA>(a + row * kStride + col, src, valid);
        }
    }
    for (int j = 0; j < kHalf; j += kChunkB / 4)
        cp_async_zfill<kChunkB>(b + row * kStride + col0 + j, wrow + k0 + col0 + j, true);
}

/* One K tile (two mma K steps of 32 int8) of the warp's 32 x 32 outputs. */
__device__ __forceinline__ void mma_tile(int32_t (&acc)[2][4][4], const int32_t* a,
                                         const int32_t* b, int warp_m, int warp_n, int lane) {
    for (int ks = 0; ks < kTileK; ks += 8) {
        uint32_t af[2][4], bf[4][2];
        for (int mi = 0; mi < 2; ++mi)
            ldmatrix_x4(af[mi],
                        a + (warp_m + mi * 16 + lane % 16) * kStride + ks + (lane / 16) * 4);
        for (int nj = 0; nj < 2; ++nj) {
            uint32_t r[4];
            ldmatrix_x4(r, b + (warp_n + nj * 16 + (lane / 16) * 8 + lane % 8) * kStride + ks +
                               ((lane / 8) % 2) * 4);
            bf[2 * nj][0] = r[0];
            bf[2 * nj][1] = r[1];
            bf[2 * nj + 1][0] = r[2];
            bf[2 * nj + 1][1] = r[3];
        }
        for (int mi = 0; mi < 2; ++mi)
            for (int ni = 0; ni < 4; ++ni)
                mma_s8_m16n8k32(acc[mi][ni], af[mi], bf[ni], acc[mi][ni]);
    }
}

/* How a thread stores its share of a tile: one pixel, m = m0 + tid % kTileM, and the
 * channels o = o0 + tid / kTileM + j * kColsPerPass for j < kPerThread, a warp writing
 * 32 consecutive pixels of one channel (contiguous in NCHW). kBatch outputs at a time
 * have their loads in flight together (cuda_tail_apply_n). */
constexpr int kColsPerPass = kThreads / kTileM;
constexpr int kPerThread = kTileN / kColsPerPass;
constexpr int kBatch = 16;

/* A tile's final values as int8, staged in shared memory for write_packed: row ml holds
 * pixel m0 + ml's 64 channels (rows of 16-byte pieces). */
constexpr int kPackRow = kTileN + 16;

/* Stores this thread's outputs of the tile at (m0, o0), value(ol, i) giving the sum of
 * tile column ol at flat index i, after the tail; atomic: added to y instead (split K,
 * no tail). Each batch reads all its values before the tail and the stores. staged, when
 * not null, also gets each final value's int8 cast (write_packed then stores them). */
template <class Value>
__device__ __forceinline__ void store_outputs(int32_t* y, const geom& g, int64_t m0, int32_t o0,
                                              const cuda_tail& tail, bool atomic, int8_t* staged,
                                              Value value) {
    const int ml = threadIdx.x % kTileM, ol0 = threadIdx.x / kTileM;
    const int64_t m = m0 + ml;
    if (m >= g.m || o0 + ol0 >= g.n_out) return;
    const int64_t n = m / g.pix, p = m - n * g.pix;
    const int64_t first = (n * g.n_out + o0 + ol0) * g.pix + p;
    const int64_t stride = kColsPerPass * g.pix;
    /* Columns j with o0 + ol0 + j * kColsPerPass < n_out. */
    const int cols = (g.n_out - o0 - ol0 + kColsPerPass - 1) / kColsPerPass;
    for (int j0 = 0; j0 < kPerThread && j0 < cols; j0 += kBatch) {
        const int valid = cols - j0;
        const int64_t at = first + j0 * stride;
        int32_t v[kBatch];
        CUDA_UNROLL
        for (int j = 0; j < kBatch; ++j)
            v[j] = j < valid ? value(ol0 + (j0 + j) * kColsPerPass, at + j * stride) : 0;
        if (atomic) {
            CUDA_UNROLL
            for (int j = 0; j < kBatch; ++j)
                if (j < valid) atomicAdd(y + at + j * stride, v[j]);
            continue;
        }
        cuda_tail_apply_n(tail, v, at, stride, valid);
        CUDA_UNROLL
        for (int j = 0; j < kBatch; ++j)
            if (j < valid) y[at + j * stride] = v[j];
        if (staged) {
            int8_t* row = staged + ml * kPackRow + ol0;
            CUDA_UNROLL
            for (int j = 0; j < kBatch; ++j)
                if (j < valid) row[(j0 + j) * kColsPerPass] = static_cast<int8_t>(v[j]);
        }
    }
}

/* 16 bytes from shared memory to global memory, both 16-byte aligned. */
__device__ __forceinline__ void copy16(int8_t* dst, const int8_t* src) {
#ifdef __CUDACC__
    *reinterpret_cast<int4*>(dst) = *reinterpret_cast<const int4*>(src);
#else
    memcpy(dst, src, 16);
#endif
}

/* The staged tile (every thread's store_outputs done, after a barrier) into packed, the
 * next convolution's input in pack_input's layout (byte m * C4 * 4 + o): a pixel's 64
 * channels are 64 contiguous bytes there, written 16 at a time where the tile is whole
 * (storing each byte where its thread had it landed one per 32-byte sector, and doubled
 * the time of ResNet-18's GEMMs). */
__device__ __forceinline__ void write_packed(const int8_t* staged, int8_t* packed, const geom& g,
                                             int64_t m0, int32_t o0) {
    constexpr int kPieces = kTileN / 16;
    const int64_t row_bytes = (g.n_out + 3) / 4 * 4;
    const bool whole = o0 + kTileN <= g.n_out && row_bytes % 16 == 0;
    for (int e = threadIdx.x; e < kTileM * kPieces; e += kThreads) {
        const int ml = e / kPieces, piece = e % kPieces;
        const int64_t m = m0 + ml;
        if (m >= g.m) continue;
        const int8_t* src = staged + ml * kPackRow + piece * 16;
        int8_t* dst = packed + m * row_bytes + o0 + piece * 16;
        if (whole)
            copy16(dst, src);
        else
            for (int b = 0; b < 16 && o0 + piece * 16 + b < g.n_out; ++b) dst[b] = src[b];
    }
}

/* The block's tile (+ bias) to NCHW y through shared memory: each warp's fragments go
 * to out[o][m], then threads store m-fastest (consecutive pixels of one channel). With
 * split K, each split adds its partial sums to y (zeroed before) and split 0 the bias:
 * int32 additions wrap, so any order of the atomics gives the same bytes. */
__device__ __forceinline__ void store_tile(const int32_t (&acc)[2][4][4], int32_t* out,
                                           const int32_t* bias, int32_t* y, const geom& g,
                                           int64_t m0, int32_t o0, int warp_m, int warp_n,
                                           bool split_k, bool add_bias, const cuda_tail& tail,
                                           int8_t* staged, int8_t* packed) {
    const int lane = threadIdx.x % 32, gid = lane / 4, t = lane % 4;
    for (int mi = 0; mi < 2; ++mi)
        for (int ni = 0; ni < 4; ++ni)
            for (int i = 0; i < 4; ++i) {
                const int m = warp_m + mi * 16 + gid + (i >= 2 ? 8 : 0);
                const int o = warp_n + ni * 8 + 2 * t + (i & 1);
                out[o * kOutStride + m] = acc[mi][ni][i];
            }
    __syncthreads();
    const int ml = threadIdx.x % kTileM;
    const bool with_bias = bias && add_bias;
    /* split K: the tail waits for the whole sum (finish_split). */
    const bool pack = packed && !split_k; /* split K: the last split packs (finish_split) */
    store_outputs(y, g, m0, o0, tail, split_k, pack ? staged : nullptr, [&](int ol, int64_t) {
        const uint32_t b = with_bias ? static_cast<uint32_t>(bias[o0 + ol]) : 0u;
        return static_cast<int32_t>(static_cast<uint32_t>(out[ol * kOutStride + ml]) + b);
    });
    if (pack) {
        __syncthreads();
        write_packed(staged, packed, g, m0, o0);
    }
}

/* Split K with a fused tail: the split that finishes a tile last applies the tail to
 * its whole sums. Each split fences its atomics before counting itself in on the
 * tile's counter (the CUDA guide's threadfence reduction); the last one reads y from
 * L2 (__ldcg: its L1 may not have seen the other blocks' atomics) and resets the
 * counter for the next run. `last` is a shared int. */
__device__ void finish_split(int32_t* counter, int32_t splits, int32_t* y, const geom& g,
                             int64_t m0, int32_t o0, const cuda_tail& tail, int8_t* staged,
                             int8_t* packed, int* last) {
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence(); /* the block's atomics, seen through the barrier, before the count */
        *last = atomicAdd(counter, 1) == splits - 1;
    }
    __syncthreads();
    if (!*last) return;
    if (threadIdx.x == 0) CUDA_PATH("igemm: split K, the last split applies the tail");
    __threadfence();
    store_outputs(y, g, m0, o0, tail, false, packed ? staged : nullptr,
                  [&](int, int64_t i) { return __ldcg(y + i); });
    if (packed) {
        __syncthreads();
        write_packed(staged, packed, g, m0, o0);
    }
    if (threadIdx.x == 0) *counter = 0;
}

/* `wide`, when not null, is a device flag (dense only): nonzero when an operand holds a
 * value outside int8, and then every tile takes tile_wide (uniform over the grid).
 * kChunkA: bytes per cp.async of A, 16 when C4 is a multiple of 4 words (a 16-byte piece
 * then lies in one pixel), else 4; kChunkB, of B: 16 when w8's row stride is a multiple
 * of 4 words, else 4. */
template <int kChunkA, int kChunkB>
__global__ void igemm_s8(const int32_t* x8, const int32_t* w8, const int32_t* bias, int32_t* y,
                         geom g, int32_t splits, const int32_t* wide, const int32_t* x32,
                         const int32_t* w32, cuda_tail tail, int32_t* counters, int8_t* packed) {
    __shared__ smem_tiles sm;
    __shared__ int last_split;
    __shared__ __align__(16) int8_t staged[kTileM * kPackRow]; /* write_packed's tile */
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int warp_m = (warp % 2) * 32, warp_n = (warp / 2) * 32;
    /* Each thread loads half a row of A and of B per K tile. */
    const int row = tid / 2, col0 = (tid % 2) * (kTileK / 2);
    const int64_t tiles_m = (g.m + kTileM - 1) / kTileM;
    const int64_t tiles = tile_count(g);
    const bool is_wide = wide && *wide;
    const int32_t k_tiles = (g.k_words + kTileK - 1) / kTileK;
    for (int64_t job = blockIdx.x; job < tiles * splits; job += gridDim.x) {
        const int64_t tile = job % tiles;
        const int32_t split = static_cast<int32_t>(job / tiles);
        const int64_t m0 = (tile % tiles_m) * kTileM;
        const int32_t o0 = static_cast<int32_t>(tile / tiles_m) * kTileN;
        if (is_wide) {
            if (threadIdx.x == 0) CUDA_PATH("igemm: dense operands past int8, int32 tile");
            if (split == 0) tile_wide(x32, w32, w8, bias, y, g, m0, o0, tail);
            continue;
        }
        if (threadIdx.x == 0) {
            if constexpr (kChunkA == 16)
                CUDA_PATH("igemm: 16-byte cp.async");
            else
                CUDA_PATH("igemm: 4-byte cp.async");
            if constexpr (kChunkB == 4)
                CUDA_PATH("igemm: 4-byte cp.async of B (a computed weight)");
            if (splits > 1) CUDA_PATH("igemm: split K");
            if (tail.count > 0) CUDA_PATH("igemm: fused tail");
            if (packed) CUDA_PATH("igemm: the output also packed for the next convolution");
        }
        /* This split's K tiles: [kt0, kt1). */
        const int32_t kt0 = static_cast<int32_t>(static_cast<int64_t>(k_tiles) * split / splits);
        const int32_t kt1 =
            static_cast<int32_t>(static_cast<int64_t>(k_tiles) * (split + 1) / splits);
        const row_origin origin = origin_of(g, m0 + row);
        const int32_t* wrow = w8 + static_cast<int64_t>(o0 + row) * g.k_pad;
        int32_t acc[2][4][4] = {};
        /* A pipeline of kStages: tiles kt + 1 .. kt + kStages - 1 load while kt computes.
         * Every thread commits one group per step, empty ones too, so that the wait
         * below always means "tile kt has landed". */
        for (int s = 0; s < kStages - 1; ++s) {
            if (kt0 + s < kt1)
                load_tile<kChunkA, kChunkB>(sm.k.a[s], sm.k.b[s], x8, wrow, g, origin,
                                            (kt0 + s) * kTileK, row, col0);
            cp_async_commit();
        }
        for (int32_t kt = kt0; kt < kt1; ++kt) {
            cp_async_wait<kStages - 2>();
            __syncthreads(); /* tile kt is visible; the stage kt - 1 used is free */
            const int32_t next = kt + kStages - 1;
            if (next < kt1) {
                const int sb = (next - kt0) % kStages;
                load_tile<kChunkA, kChunkB>(sm.k.a[sb], sm.k.b[sb], x8, wrow, g, origin,
                                            next * kTileK, row, col0);
            }
            cp_async_commit();
            const int sc = (kt - kt0) % kStages;
            mma_tile(acc, sm.k.a[sc], sm.k.b[sc], warp_m, warp_n, lane);
        }
        cp_async_wait<0>();
        __syncthreads(); /* every warp is done with the stages: reuse them for the output */
        store_tile(acc, sm.out, bias, y, g, m0, o0, warp_m, warp_n, splits > 1, split == 0, tail,
                   staged, packed);
        if (splits > 1 && tail.count > 0)
            finish_split(counters + tile, splits, y, g, m0, o0, tail, staged, packed, &last_split);
        __syncthreads(); /* the output staged is read before the next tile's loads */
    }
}

/* Blocks a launch should have to fill a large GPU (an H100 has 132 SMs): layers with
 * fewer tiles (small batches, deep layers) split K so that more blocks share the work.
 * A build may set it (and the next) to compare splitting policies on a GPU. */
#ifndef CVML_IGEMM_TARGET_BLOCKS
#define CVML_IGEMM_TARGET_BLOCKS 128
#endif
constexpr int64_t kTargetBlocks = CVML_IGEMM_TARGET_BLOCKS;
/* Each split keeps at least this many K tiles, so that its pipeline fills. */
#ifndef CVML_IGEMM_MIN_SPLIT_TILES
#define CVML_IGEMM_MIN_SPLIT_TILES 4
#endif
constexpr int32_t kMinSplitTiles = CVML_IGEMM_MIN_SPLIT_TILES;

/* How many parts K is split into for `tiles` output tiles. */
inline int32_t split_count(const geom& g, int64_t tiles) {
    const int32_t k_tiles = (g.k_words + kTileK - 1) / kTileK;
    int64_t splits = tiles >= kTargetBlocks ? 1 : kTargetBlocks / tiles;
    if (splits > k_tiles / kMinSplitTiles) splits = k_tiles / kMinSplitTiles;
    return splits < 1 ? 1 : static_cast<int32_t>(splits);
}

/* Tile counters a split-K GEMM with a tail needs (finish_split), zeroed once at
 * prerun: 0 when K is not split. */
inline int64_t counter_count(const geom& g) {
    const int64_t tiles = tile_count(g);
    return tiles > 0 && split_count(g, tiles) > 1 ? tiles : 0;
}

/* Enqueues the GEMM: one block per tile (and K split), bounded like every other launch.
 * With split K, y is zeroed first (stream order) and the splits add into it (the last
 * of a tile applies the tail, with `counters`, counter_count(g) zeroed ints); a dense
 * whose operands turn out wide computes each tile whole in split 0 instead. */
inline int launch(const int32_t* x8, const int32_t* w8, const int32_t* bias, int32_t* y,
                  const geom& g, const int32_t* wide, const int32_t* x32, const int32_t* w32,
                  const cuda_tail& tail, int32_t* counters, cudaStream_t stream,
                  bool y_zeroed = false, int32_t* packed = nullptr) {
    const int64_t tiles = tile_count(g);
    if (tiles == 0 || g.m == 0) return CVML_OK;
    const int32_t splits = split_count(g, tiles);
    if (splits > 1 && tail.count > 0 && !counters)
        return cuda_fail(CVML_ERR_RUNTIME, "igemm: split K with a tail and no tile counters");
    if (splits > 1 && !y_zeroed) {
        const int rc = cuda_check(
            cudaMemsetAsync(y, 0, static_cast<size_t>(g.m) * g.n_out * sizeof(int32_t), stream),
            "cudaMemsetAsync (split-K output)");
        if (rc) return rc;
    }
    const int64_t jobs = tiles * splits;
    const unsigned blocks = static_cast<unsigned>(
        jobs > CVML_CUDA_MAX_BLOCKS ? static_cast<int64_t>(CVML_CUDA_MAX_BLOCKS) : jobs);
    // A 16-byte piece of B needs rows of whole 16-byte pieces; one of A, pixels of them
    // (C4 a multiple of 4 words, which makes K, and so a computed weight's rows, one too).
    if (g.k_pad % 4 != 0)
        CUDA_LAUNCH((igemm_s8<4, 4>), blocks, kThreads, stream, x8, w8, bias, y, g, splits, wide,
                    x32, w32, tail, counters, reinterpret_cast<int8_t*>(packed));
    else if (g.c4 % 4 == 0)
        CUDA_LAUNCH((igemm_s8<16, 16>), blocks, kThreads, stream, x8, w8, bias, y, g, splits, wide,
                    x32, w32, tail, counters, reinterpret_cast<int8_t*>(packed));
    else
        CUDA_LAUNCH((igemm_s8<4, 16>), blocks, kThreads, stream, x8, w8, bias, y, g, splits, wide,
                    x32, w32, tail, counters, reinterpret_cast<int8_t*>(packed));
    return CVML_OK;
}

}  // namespace
}  // namespace igemm
