/* conv2d at avx512, groups == 1, broadcast mode (op/conv2d_gemm.cpp chooses it; see
 * gemm_bcast_mode in op/conv2d_fast.h): output channels along the vectors, each output
 * pixel's 4 image bytes broadcast, only the taps that read the input multiplied. */
#include <string.h>

#include "device/cpu/op/conv2d_fast.h"
#include "device/cpu/simd/gemm_s8_impl.h"
#include "device/cpu/simd/x86/avx512/epilogue_avx512.h"

#if CVML_SIMD_X86
#include <immintrin.h>
/* GCC 12's AVX-512 headers trip this on their own _mm512_undefined_* helpers. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace cpu_conv2d {
namespace {

/* GCC 12 copies the accumulator of _mm512_dpbusd_epi32 through the stack on every
 * step; the instruction itself accumulates in place. */
#define bcast_dpbusd(acc, b, w) __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(b), "v"(w))

/* Output channels per block: two vectors. Two rows of accumulators per pixel leave
 * room for 14 pixels (28 of the 32 registers, with the block's two weight vectors and
 * a broadcast); four vectors of 7 pixels did not fit with the broadcasts GCC hoists. */
constexpr int kVectors = 2;

/* Which of a segment's pixels a tap skips (it reads padding there): the first pixel of
 * each row for the left kernel column where the segment starts its rows (Left), the last
 * for the right one where it ends them (Right), and every pixel of a row whose input row
 * is padding (SkipRow: 1 the first row, 2 the second). */
template <int W, int Tap, bool Left, bool Right, int SkipRow>
constexpr bool tap_skips(int x) {
    return (Tap == 0 && Left && x % W == 0) || (Tap == 2 && Right && x % W == W - 1) ||
           (SkipRow == 1 && x < W) || (SkipRow == 2 && x >= W);
}

/* One tap over every group of 4 input channels, for a segment of W pixels in each of
 * R output rows (the pixels tap_skips names are left out): pixel x of row j's bytes of
 * group g4 are at pix[j] + g4 * plane4 + 4 * S * x (S: the column stride), the block's
 * weights of that group at w + g4 * 128. The accumulators are an array indexed by
 * constants only, every loop over them unrolled, so that they live in registers; the
 * pixels' offsets are constants too (in an image with each pixel's channels together
 * they took a register each, and the loop ran out of them). */
template <int W, int R, int S, int Tap, bool Left, bool Right, int SkipRow>
CVML_TARGET_AVX512 inline __attribute__((always_inline)) void tap_steps(
    __m512i (&acc)[W * R][kVectors], const uint8_t* const (&rows)[R], int64_t plane4,
    const int8_t* w, int64_t groups4, int64_t prefetch) {
    const uint8_t* pix[R];
#pragma GCC unroll 2
    for (int j = 0; j < R; ++j) pix[j] = rows[j] + 4 * Tap;
    for (int64_t g4 = 0; g4 < groups4; ++g4, w += 64 * kVectors) {
        const __m512i w0 = _mm512_loadu_si512(w);
        const __m512i w1 = _mm512_loadu_si512(w + 64);
        _mm_prefetch(reinterpret_cast<const char*>(w + prefetch), _MM_HINT_T1);
        _mm_prefetch(reinterpret_cast<const char*>(w + prefetch + 64), _MM_HINT_T1);
#pragma GCC unroll 16
        for (int x = 0; x < W * R; ++x) {
            if (tap_skips<W, Tap, Left, Right, SkipRow>(x)) continue;
            int32_t bytes;
            memcpy(&bytes, pix[x / W] + 4 * S * (x % W), 4);
            const __m512i b = _mm512_set1_epi32(bytes);
            bcast_dpbusd(acc[x][0], b, w0);
            bcast_dpbusd(acc[x][1], b, w1);
        }
#pragma GCC unroll 2
        for (int j = 0; j < R; ++j) pix[j] += plane4;
    }
}

/* A kernel row's three taps for the segment, the rows whose input row is padding
 * (SkipRow) left out. */
template <int W, int R, int S, bool Left, bool Right, int SkipRow>
CVML_TARGET_AVX512 inline __attribute__((always_inline)) void kernel_row(
    __m512i (&acc)[W * R][kVectors], const uint8_t* const (&rows)[R], int64_t plane4,
    const int8_t* w, size_t tap_bytes, int64_t groups4, int64_t prefetch) {
    tap_steps<W, R, S, 0, Left, Right, SkipRow>(acc, rows, plane4, w, groups4, prefetch);
    tap_steps<W, R, S, 1, Left, Right, SkipRow>(acc, rows, plane4, w + tap_bytes, groups4,
                                                prefetch);
    tap_steps<W, R, S, 2, Left, Right, SkipRow>(acc, rows, plane4, w + 2 * tap_bytes, groups4,
                                                prefetch);
}

/* The border class of output row y: 0 where the first kernel row reads padding, 2 where
 * the last one does, else 1 (never both: the output is at least 2 x 2). A pixel's class
 * (gemm_bcast_mode::starts) is its row's * 3 + its column's, alike. */
inline int64_t row_class(const conv_geom& g, int64_t y) {
    return y == 0 ? 0 : y * g.sh + 1 >= g.h ? 2 : 1;
}

/* r[i] lane j becomes r[j] lane i: 32-bit unpacks within 128-bit lanes, 64-bit unpacks,
 * then a 4 x 4 transpose of the 128-bit lanes (64 shuffles). */
CVML_TARGET_AVX512 inline __attribute__((always_inline)) void transpose16(__m512i (&r)[16]) {
    __m512i t[16];
#pragma GCC unroll 8
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
    }
    // u[4a + j], 128-bit lane L: rows 4a..4a+3 at column 4L + j.
    __m512i u[16];
#pragma GCC unroll 4
    for (int a = 0; a < 16; a += 4) {
        u[a] = _mm512_unpacklo_epi64(t[a], t[a + 2]);
        u[a + 1] = _mm512_unpackhi_epi64(t[a], t[a + 2]);
        u[a + 2] = _mm512_unpacklo_epi64(t[a + 1], t[a + 3]);
        u[a + 3] = _mm512_unpackhi_epi64(t[a + 1], t[a + 3]);
    }
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
        const __m512i v0 = _mm512_shuffle_i32x4(u[j], u[4 + j], 0x44);
        const __m512i v1 = _mm512_shuffle_i32x4(u[j], u[4 + j], 0xEE);
        const __m512i v2 = _mm512_shuffle_i32x4(u[8 + j], u[12 + j], 0x44);
        const __m512i v3 = _mm512_shuffle_i32x4(u[8 + j], u[12 + j], 0xEE);
        r[j] = _mm512_shuffle_i32x4(v0, v2, 0x88);
        r[4 + j] = _mm512_shuffle_i32x4(v0, v2, 0xDD);
        r[8 + j] = _mm512_shuffle_i32x4(v1, v3, 0x88);
        r[12 + j] = _mm512_shuffle_i32x4(v1, v3, 0xDD);
    }
}

/* Where a segment's sums go: the GEMM's fused tail (gemm_tail: the matched chain,
 * saturating int8 output) with its constants, or the tile for the plan's tile function. */
struct segment_out {
    int32_t kind; /* gemm_tail::kind, 0: the tile */
    cpu_ep::rc_chain c;
    cpu_ep::rc_consts k;
    int8_t* out;
    int64_t at;     /* channel 0, pixel 0 of the segment */
    int64_t stride; /* between channels */
    int32_t* tile;  /* [channel][16] */
};

/* One channel's P pixels through the fused tail and stored. */
template <bool Add>
CVML_TARGET_AVX512 inline __attribute__((always_inline)) void tail_store(const segment_out& o,
                                                                         __m512i v, int64_t at,
                                                                         __mmask16 m) {
    const __m512i none = _mm512_setzero_si512();  // no bias: it is in the sums
    cpu_ep::store16_i8_sat(o.out, at, m,
                           cpu_ep::rc_apply<Add, false, 1, true, 0>(o.c, o.k, v, none, at, m));
}

/* A segment's P sums per channel of the block, each channel's pixels made one vector
 * and written (segment_out). */
template <int P>
CVML_TARGET_AVX512 inline __attribute__((always_inline)) void store_segment(
    __m512i (&acc)[P][kVectors], const segment_out& o) {
    const __mmask16 m = static_cast<__mmask16>((1u << P) - 1u);
#pragma GCC unroll 2
    for (int v = 0; v < kVectors; ++v) {
        __m512i lanes[16];
#pragma GCC unroll 16
        for (int x = 0; x < 16; ++x) lanes[x] = x < P ? acc[x][v] : _mm512_setzero_si512();
        transpose16(lanes);  // lanes[c]: channel 16 v + c, lane x: pixel x
        const int64_t at = o.at + 16 * v * o.stride;
        if (o.kind & gemm_impl::GEMM_TAIL_ADD) {
            for (int c = 0; c < 16; ++c) tail_store<true>(o, lanes[c], at + c * o.stride, m);
        } else if (o.kind) {
            for (int c = 0; c < 16; ++c) tail_store<false>(o, lanes[c], at + c * o.stride, m);
        } else {
            for (int c = 0; c < 16; ++c) _mm512_store_si512(o.tile + 16 * (16 * v + c), lanes[c]);
        }
    }
}

/* The sums of one segment (W pixels from x0 of output rows y .. y + R - 1) for a block of
 * 32 channels, each channel's pixels made one vector and written (segment_out), at
 * column stride S. Two rows only where the output is W wide, so that the segment's
 * pixels are one run of the output plane. Left / Right: the first / last pixel's taps of
 * the left / right kernel column read padding (the segment starts / ends the row). */
template <int W, int R, int S, bool Left, bool Right>
CVML_TARGET_AVX512 void segment(const conv_gemm* f, const uint8_t* img, const int8_t* wblock,
                                int64_t prefetch, const int32_t* starts, int64_t y, int64_t x0,
                                const segment_out& o) {
    constexpr int P = W * R;
    const conv_geom& g = f->g;
    __m512i acc[P][kVectors];
#pragma GCC unroll 16
    for (int x = 0; x < P; ++x) {
        const int64_t col = Left && x % W == 0 ? 0 : Right && x % W == W - 1 ? 2 : 1;
        const int32_t* s = starts + (3 * row_class(g, y + x / W) + col) * g.o;
        acc[x][0] = _mm512_loadu_si512(s);
        acc[x][1] = _mm512_loadu_si512(s + 16);
    }
    const int64_t groups4 = f->taps4.groups4, plane4 = f->bcast.plane4;
    const size_t tap_bytes = static_cast<size_t>(groups4) * 64 * kVectors;
#pragma GCC unroll 3
    for (int r = 0; r < 3; ++r) {
        // Row j's pixel x, tap s: input row (y + j) * sh + r - 1, column (x0 + x) * S + s - 1.
        const uint8_t* rows[R];
        bool inside[R];
#pragma GCC unroll 2
        for (int j = 0; j < R; ++j) {
            const int64_t iy = (y + j) * g.sh + r - 1;
            inside[j] = iy >= 0 && iy < g.h;
            rows[j] = img + ((inside[j] ? iy : 0) * g.w + x0 * S - 1) * 4;
        }
        const int8_t* wr = wblock + static_cast<size_t>(3 * r) * tap_bytes;
        if (R == 1 || (inside[0] && inside[R - 1])) {
            if (inside[0])
                kernel_row<W, R, S, Left, Right, 0>(acc, rows, plane4, wr, tap_bytes, groups4,
                                                    prefetch);
        } else if (inside[R - 1]) {
            kernel_row<W, R, S, Left, Right, 1>(acc, rows, plane4, wr, tap_bytes, groups4,
                                                prefetch);
        } else if (inside[0]) {
            kernel_row<W, R, S, Left, Right, 2>(acc, rows, plane4, wr, tap_bytes, groups4,
                                                prefetch);
        }
    }
    store_segment<P>(acc, o);
}

/* The same for a 1x1 kernel without padding: its one tap reads every pixel, so each
 * channel has one start (the GEMM's) and pixel x of row j reads input column
 * (x0 + x) * S of input row (y + j) * sh. */
template <int W, int R, int S>
CVML_TARGET_AVX512 void segment_1x1(const conv_gemm* f, const uint8_t* img, const int8_t* wblock,
                                    int64_t prefetch, const int32_t* starts, int64_t y, int64_t x0,
                                    const segment_out& o) {
    constexpr int P = W * R;
    const conv_geom& g = f->g;
    const __m512i start0 = _mm512_loadu_si512(starts), start1 = _mm512_loadu_si512(starts + 16);
    __m512i acc[P][kVectors];
#pragma GCC unroll 16
    for (int x = 0; x < P; ++x) {
        acc[x][0] = start0;
        acc[x][1] = start1;
    }
    const uint8_t* rows[R];
#pragma GCC unroll 2
    for (int j = 0; j < R; ++j) rows[j] = img + ((y + j) * g.sh * g.w + x0 * S) * 4;
    tap_steps<W, R, S, 0, false, false, 0>(acc, rows, f->bcast.plane4, wblock, f->taps4.groups4,
                                           prefetch);
    store_segment<P>(acc, o);
}

/* Output rows y .. y + R - 1 of one block, segment by segment. */
template <int W, int R, int S>
CVML_TARGET_AVX512 void segments_of_rows(const conv_gemm* f, const uint8_t* img, const bcast_out* b,
                                         segment_out* o, int64_t block, int64_t y) {
    const conv_geom& g = f->g;
    const int64_t o0 = block * GEMM_BCAST_BLOCK;
    const size_t block_bytes =
        static_cast<size_t>(f->bcast.taps) * static_cast<size_t>(f->taps4.groups4) * 64 * kVectors;
    const int8_t* wblock = f->bcast.w + static_cast<size_t>(block) * block_bytes;
    const int32_t* starts = f->bcast.starts + o0;
    const int64_t segments = g.ow / W;
    // A block's weights come from memory once, for its first row, and from L2 for the
    // others (a 512-channel block is 147 KB); the second item fetches the next block's
    // for its first (elsewhere each step prefetches the line it has just read). Rows first
    // (bcast_rows_first), all blocks' weights stay in L2 and that prefetch is early.
    const int64_t prefetch =
        y == R && (block + 1) * GEMM_BCAST_BLOCK < g.o ? static_cast<int64_t>(block_bytes) : 0;
    const ep_tile_keep* keep = R == 2 ? &f->bcast.keep_pair : &f->bcast.keep;
    for (int64_t sg = 0; sg < segments; ++sg) {
        const int64_t x0 = sg * W;
        const int64_t first = b->out_base + o0 * f->N + y * g.ow + x0;
        o->at = first;
        const bool left = sg == 0, right = (x0 + W - 1) * S + 1 >= g.w;
        if (f->bcast.taps == 1)
            segment_1x1<W, R, S>(f, img, wblock, prefetch, starts, y, x0, *o);
        else if (left && right)
            segment<W, R, S, true, true>(f, img, wblock, prefetch, starts, y, x0, *o);
        else if (left)
            segment<W, R, S, true, false>(f, img, wblock, prefetch, starts, y, x0, *o);
        else if (right)
            segment<W, R, S, false, true>(f, img, wblock, prefetch, starts, y, x0, *o);
        else
            segment<W, R, S, false, false>(f, img, wblock, prefetch, starts, y, x0, *o);
        if (!o->kind)
            epilogue_apply_tile_planned(b->plan, o->tile, 16, GEMM_BCAST_BLOCK, keep,
                                        b->bias ? b->bias + o0 : nullptr, b->out, first, f->N);
    }
}

/* One item's rows at column stride S: a whole row, or (pairs) two 7-wide rows as one
 * segment, and a single row where the plane's rows are odd. */
template <int S>
CVML_TARGET_AVX512 void item_rows(const conv_gemm* f, const uint8_t* img, const bcast_out* b,
                                  segment_out* o, int64_t block, int64_t item_row) {
    if (f->bcast.pairs) {
        const int64_t y = 2 * item_row;
        if (y + 1 < f->g.oh)
            segments_of_rows<7, 2, S>(f, img, b, o, block, y);
        else
            segments_of_rows<7, 1, S>(f, img, b, o, block, y);
    } else if (f->bcast.pixels == 14) {
        segments_of_rows<14, 1, S>(f, img, b, o, block, item_row);
    } else {
        segments_of_rows<7, 1, S>(f, img, b, o, block, item_row);
    }
}

}  // namespace

void bcast_items_avx512(const conv_gemm* f, const uint8_t* img, const bcast_out* b, int64_t begin,
                        int64_t end) {
    const int64_t blocks = f->g.o / GEMM_BCAST_BLOCK;
    // Rows of 16 (one vector of a segment's pixels); the tile functions read a row as
    // GEMM_NT values, so the last row's reads run 32 values past the block (never kept).
    alignas(64) int32_t tile[GEMM_BCAST_BLOCK * 16 + GEMM_NT - 16] = {};
    segment_out o;
    memset(&o, 0, sizeof o);
    o.tile = tile;
    o.stride = f->N;
    if (b->tail && b->tail->kind) {
        o.kind = b->tail->kind;
        memcpy(&o.c, b->tail->chain, sizeof o.c);
        o.k = cpu_ep::rc_consts_of(o.c);
        o.out = b->tail->out;
    }
    const int64_t rows = f->bcast.row_items;
    for (int64_t item = begin; item < end; ++item) {
        const int64_t block = f->bcast.rows_first ? item % blocks : item / rows;
        const int64_t row = f->bcast.rows_first ? item / blocks : item % rows;
        if (f->g.sw == 1)
            item_rows<1>(f, img, b, &o, block, row);
        else
            item_rows<2>(f, img, b, &o, block, row);
    }
}

}  // namespace cpu_conv2d

#endif
