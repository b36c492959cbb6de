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

/* One tap over every group of 4 input channels, for the segment's pixels [X0, X1) (the
 * others read padding there): pixel x's bytes of group g4 are at pix + g4 * plane4 +
 * 4 * S * x (S: the column stride), the block's weights of that group at w + g4 * 128.
 * The accumulators are an array indexed by constants only, every loop over them
 * unrolled, so that they live in registers; the pixels' offsets are constants too (in an
 * image with each pixel's channels together they took a register each, and the loop ran
 * out of them). */
template <int P, int S, int X0, int X1>
CVML_TARGET_AVX512 inline __attribute__((always_inline)) void tap_steps(
    __m512i (&acc)[P][kVectors], const uint8_t* pix, int64_t plane4, const int8_t* w,
    int64_t groups4, int64_t prefetch) {
    for (int64_t g4 = 0; g4 < groups4; ++g4, pix += plane4, w += 64 * kVectors) {
        const __m512i w0 = _mm512_loadu_si512(w);
        const __m512i w1 = _mm512_loadu_si512(w + 64);
        _mm_prefetch(reinterpret_cast<const char*>(w + prefetch), _MM_HINT_T1);
        _mm_prefetch(reinterpret_cast<const char*>(w + prefetch + 64), _MM_HINT_T1);
#pragma GCC unroll 16
        for (int x = X0; x < X1; ++x) {
            int32_t bytes;
            memcpy(&bytes, pix + 4 * S * x, 4);
            const __m512i b = _mm512_set1_epi32(bytes);
            bcast_dpbusd(acc[x][0], b, w0);
            bcast_dpbusd(acc[x][1], b, w1);
        }
    }
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

/* The sums of one segment (P pixels from x0 of output row y) for a block of 32
 * channels, each channel's pixels made one vector and written (segment_out), at column
 * stride S. Left / Right: the first / last pixel's taps of the left / right kernel
 * column read padding (the segment starts / ends the row). */
template <int P, int S, bool Left, bool Right>
CVML_TARGET_AVX512 void segment(const conv_gemm* f, const uint8_t* img, const int8_t* wblock,
                                int64_t prefetch, const int32_t* starts, int64_t y, int64_t x0,
                                const segment_out& o) {
    const conv_geom& g = f->g;
    const int64_t cls = 3 * row_class(g, y);
    __m512i acc[P][kVectors];
#pragma GCC unroll 16
    for (int x = 0; x < P; ++x) {
        const int64_t col = Left && x == 0 ? 0 : Right && x == P - 1 ? 2 : 1;
        const int32_t* s = starts + (cls + col) * g.o;
        acc[x][0] = _mm512_loadu_si512(s);
        acc[x][1] = _mm512_loadu_si512(s + 16);
    }
    const int64_t groups4 = f->taps4.groups4, plane4 = g.h * g.w * 4;
    const size_t tap_bytes = static_cast<size_t>(groups4) * 64 * kVectors;
#pragma GCC unroll 3
    for (int r = 0; r < 3; ++r) {
        const int64_t iy = y * g.sh + r - 1;
        if (iy < 0 || iy >= g.h) continue;  // a padding row
        // Pixel x's tap s is input column (x0 + x) * S + s - 1; row is column x0 * S - 1.
        const uint8_t* row = img + (iy * g.w + x0 * S - 1) * 4;
        const int8_t* wr = wblock + static_cast<size_t>(3 * r) * tap_bytes;
        tap_steps<P, S, Left ? 1 : 0, P>(acc, row, plane4, wr, groups4, prefetch);
        tap_steps<P, S, 0, P>(acc, row + 4, plane4, wr + tap_bytes, groups4, prefetch);
        tap_steps<P, S, 0, Right ? P - 1 : P>(acc, row + 8, plane4, wr + 2 * tap_bytes, groups4,
                                              prefetch);
    }
    const __mmask16 m = static_cast<__mmask16>((1u << P) - 1u);
#pragma GCC unroll 2
    for (int v = 0; v < kVectors; ++v) {
        __m512i rows[16];
#pragma GCC unroll 16
        for (int x = 0; x < 16; ++x) rows[x] = x < P ? acc[x][v] : _mm512_setzero_si512();
        transpose16(rows);  // rows[c]: channel 16 v + c, lane x: pixel x
        const int64_t at = o.at + 16 * v * o.stride;
        if (o.kind & gemm_impl::GEMM_TAIL_ADD) {
            for (int c = 0; c < 16; ++c) tail_store<true>(o, rows[c], at + c * o.stride, m);
        } else if (o.kind) {
            for (int c = 0; c < 16; ++c) tail_store<false>(o, rows[c], at + c * o.stride, m);
        } else {
            for (int c = 0; c < 16; ++c) _mm512_store_si512(o.tile + 16 * (16 * v + c), rows[c]);
        }
    }
}

template <int P, int S>
CVML_TARGET_AVX512 void segments_of_row(const conv_gemm* f, const uint8_t* img, const bcast_out* b,
                                        segment_out* o, int64_t block, int64_t y) {
    const conv_geom& g = f->g;
    const int64_t o0 = block * GEMM_BCAST_BLOCK;
    const int8_t* wblock = f->bcast.w + static_cast<size_t>(block) * 9 *
                                            static_cast<size_t>(f->taps4.groups4) * 64 * kVectors;
    const int32_t* starts = f->bcast.starts + o0;
    const int64_t segments = g.ow / P;
    // A block's weights come from memory once, for its first row, and from L2 for the
    // others (a 512-channel block is 147 KB); the second row fetches the next block's
    // for its first (elsewhere each step prefetches the line it has just read). Rows first
    // (bcast_rows_first), all blocks' weights stay in L2 and that prefetch is early.
    const size_t block_bytes = 9 * static_cast<size_t>(f->taps4.groups4) * 64 * kVectors;
    const int64_t prefetch =
        y == 1 && (block + 1) * GEMM_BCAST_BLOCK < g.o ? static_cast<int64_t>(block_bytes) : 0;
    for (int64_t sg = 0; sg < segments; ++sg) {
        const int64_t x0 = sg * P;
        const int64_t first = b->out_base + o0 * f->N + y * g.ow + x0;
        o->at = first;
        const bool left = sg == 0, right = (x0 + P - 1) * S + 1 >= g.w;
        if (left && right)
            segment<P, S, true, true>(f, img, wblock, prefetch, starts, y, x0, *o);
        else if (left)
            segment<P, S, true, false>(f, img, wblock, prefetch, starts, y, x0, *o);
        else if (right)
            segment<P, S, false, true>(f, img, wblock, prefetch, starts, y, x0, *o);
        else
            segment<P, S, false, false>(f, img, wblock, prefetch, starts, y, x0, *o);
        if (!o->kind)
            epilogue_apply_tile_planned(b->plan, o->tile, 16, GEMM_BCAST_BLOCK, &f->bcast.keep,
                                        b->bias ? b->bias + o0 : nullptr, b->out, first, f->N);
    }
}

}  // namespace

void bcast_items_avx512(const conv_gemm* f, const uint8_t* img, const bcast_out* b, int64_t begin,
                        int64_t end) {
    const int64_t oh = f->g.oh, blocks = f->g.o / GEMM_BCAST_BLOCK;
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
    for (int64_t item = begin; item < end; ++item) {
        const int64_t block = f->bcast.rows_first ? item % blocks : item / oh;
        const int64_t y = f->bcast.rows_first ? item / blocks : item % oh;
        const bool wide = f->bcast.pixels == 14;
        if (f->g.sw == 1)
            (wide ? segments_of_row<14, 1> : segments_of_row<7, 1>)(f, img, b, &o, block, y);
        else
            (wide ? segments_of_row<14, 2> : segments_of_row<7, 2>)(f, img, b, &o, block, y);
    }
}

}  // namespace cpu_conv2d

#endif
