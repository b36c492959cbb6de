#include "device/cpu/simd/gemm_s8.h"

#include <stdlib.h>
#include <string.h>

#include "cvml.h"
#include "device/cpu/simd/interleave4.h"
#include "device/cpu/simd/simd.h"
#include "utility/error.h"

#if CVML_SIMD_X86
#include <immintrin.h>
/* GCC 12's AVX-512 headers trip this on their own _mm512_undefined_* helpers. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#endif

namespace {

int32_t round_up(int32_t v, int32_t m) {
    return (v + m - 1) / m * m;
}

/* B's columns are packed in multiples of this: a 16-column panel at avx512, the 12
 * columns (3 panels of 4) of an avx2 micro-kernel. */
int32_t panel_width(int level) {
    return level == CPU_SIMD_AVX512 ? 16 : level == CPU_SIMD_AVX2 ? 12 : 1;
}

/* The 4 rows of B's row group k4 whose row k is base + offsets[k]; rows past K are
 * past_k (a row of -128s for the avx512 packers, which turn it into u8 0; NULL, read as
 * zeros, elsewhere). */
inline void group_rows(const int8_t* base, const int64_t* offsets, const int8_t* past_k, int32_t K,
                       int32_t k4, const int8_t* rows[GEMM_KG]) {
    for (int32_t i = 0; i < GEMM_KG; ++i) {
        const int32_t k = k4 * GEMM_KG + i;
        rows[i] = k < K ? base + offsets[k] : past_k;
    }
}

/* ---- scalar ------------------------------------------------------------------------- */

/* A: M x Kp int8 rows; B: Kp x N int8 rows. Sums in uint32 wrap like upstream. */
void tile_scalar(const gemm_weights* a, const int8_t* b, int32_t N, int32_t m0, int32_t rows,
                 int32_t n0, int32_t cols, int32_t* tile) {
    const int8_t* w = static_cast<const int8_t*>(a->data);
    for (int32_t r = 0; r < rows; ++r) {
        uint32_t acc[GEMM_NT] = {0};
        const int8_t* wr = w + static_cast<size_t>(m0 + r) * static_cast<size_t>(a->Kp);
        for (int32_t k = 0; k < a->K; ++k) {
            int32_t wv = wr[k];
            const int8_t* br = b + static_cast<size_t>(k) * static_cast<size_t>(N) + n0;
            for (int32_t c = 0; c < cols; ++c)
                acc[c] += static_cast<uint32_t>(wv * static_cast<int32_t>(br[c]));
        }
        for (int32_t c = 0; c < cols; ++c) tile[r * GEMM_NT + c] = static_cast<int32_t>(acc[c]);
    }
}

#if CVML_SIMD_X86

/* ---- avx512 (VNNI) -------------------------------------------------------------------- */

/* Four weight bytes as one int32 lane value (unaligned). */
inline int32_t load_a(const int8_t* p) {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* GCC 12 copies the accumulator of _mm512_dpbusd_epi32 through the stack on every
 * step; the instruction itself accumulates in place. */
#define dpbusd(acc, b, a) __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(b), "v"(a))

/* Where k4 step k4 of B starts for the micro-kernels (vector j of it is panel_bytes
 * further on): packed B holds the steps 64 bytes apart; in taps mode (conv2d on a
 * channel-interleaved image, nothing packed) each step is the image at its own offset,
 * and the 16-column vectors are consecutive. */
template <bool Taps>
inline const uint8_t* b_step(const uint8_t* b, const int64_t* boff, int32_t k4) {
    return Taps ? b + boff[k4] : b + static_cast<size_t>(k4) * 64;
}

/* One step of row r: B's vectors v0..v2 (NC of them) times the row's 4 weight bytes,
 * into the row's accumulators, in column order. */
template <int NC>
CVML_TARGET_AVX512 inline __attribute__((always_inline)) void ukr_row(__m512i& c0, __m512i& c1,
                                                                      __m512i& c2, __m512i v0,
                                                                      __m512i v1, __m512i v2,
                                                                      const int8_t* a) {
    const __m512i w = _mm512_set1_epi32(load_a(a));
    dpbusd(c0, v0, w);
    if constexpr (NC > 1) dpbusd(c1, v1, w);
    if constexpr (NC > 2) dpbusd(c2, v2, w);
}

template <int NC>
CVML_TARGET_AVX512 inline __attribute__((always_inline)) void ukr_store(int32_t* row, __m512i c0,
                                                                        __m512i c1, __m512i c2) {
    _mm512_storeu_si512(row + 0, c0);
    if constexpr (NC > 1) _mm512_storeu_si512(row + 16, c1);
    if constexpr (NC > 2) _mm512_storeu_si512(row + 32, c2);
}

/* The micro-kernel: 8 rows x NC 16-column vectors of the tile, over k4n steps of K.
 * Named accumulators (GCC spills an array of vectors to the stack); those of columns
 * past NC are never used and vanish. */
template <int NC, bool Taps>
CVML_TARGET_AVX512 void ukr_avx512(const int8_t* a, size_t rs, size_t ks, const uint8_t* b,
                                   size_t panel_bytes, int32_t k4n, const int32_t* start,
                                   int32_t* tile, const int64_t* boff) {
    __m512i c00 = _mm512_set1_epi32(start[0]), c01 = c00, c02 = c00;
    __m512i c10 = _mm512_set1_epi32(start[1]), c11 = c10, c12 = c10;
    __m512i c20 = _mm512_set1_epi32(start[2]), c21 = c20, c22 = c20;
    __m512i c30 = _mm512_set1_epi32(start[3]), c31 = c30, c32 = c30;
    __m512i c40 = _mm512_set1_epi32(start[4]), c41 = c40, c42 = c40;
    __m512i c50 = _mm512_set1_epi32(start[5]), c51 = c50, c52 = c50;
    __m512i c60 = _mm512_set1_epi32(start[6]), c61 = c60, c62 = c60;
    __m512i c70 = _mm512_set1_epi32(start[7]), c71 = c70, c72 = c70;
    for (int32_t k4 = 0; k4 < k4n; ++k4) {
        const uint8_t* bk = b_step<Taps>(b, boff, k4);
        const __m512i v0 = _mm512_loadu_si512(bk);
        const __m512i v1 = NC > 1 ? _mm512_loadu_si512(bk + panel_bytes) : v0;
        const __m512i v2 = NC > 2 ? _mm512_loadu_si512(bk + 2 * panel_bytes) : v0;
        const int8_t* ak = a + static_cast<size_t>(k4) * ks;
        ukr_row<NC>(c00, c01, c02, v0, v1, v2, ak + 0 * rs);
        ukr_row<NC>(c10, c11, c12, v0, v1, v2, ak + 1 * rs);
        ukr_row<NC>(c20, c21, c22, v0, v1, v2, ak + 2 * rs);
        ukr_row<NC>(c30, c31, c32, v0, v1, v2, ak + 3 * rs);
        ukr_row<NC>(c40, c41, c42, v0, v1, v2, ak + 4 * rs);
        ukr_row<NC>(c50, c51, c52, v0, v1, v2, ak + 5 * rs);
        ukr_row<NC>(c60, c61, c62, v0, v1, v2, ak + 6 * rs);
        ukr_row<NC>(c70, c71, c72, v0, v1, v2, ak + 7 * rs);
    }
    ukr_store<NC>(tile + 0 * GEMM_NT, c00, c01, c02);
    ukr_store<NC>(tile + 1 * GEMM_NT, c10, c11, c12);
    ukr_store<NC>(tile + 2 * GEMM_NT, c20, c21, c22);
    ukr_store<NC>(tile + 3 * GEMM_NT, c30, c31, c32);
    ukr_store<NC>(tile + 4 * GEMM_NT, c40, c41, c42);
    ukr_store<NC>(tile + 5 * GEMM_NT, c50, c51, c52);
    ukr_store<NC>(tile + 6 * GEMM_NT, c60, c61, c62);
    ukr_store<NC>(tile + 7 * GEMM_NT, c70, c71, c72);
}

/* The micro-kernel for a tile of `nc` 16-column vectors. */
template <bool Taps>
void ukr_for(int32_t nc, const int8_t* a, size_t rs, size_t ks, const uint8_t* b,
             size_t panel_bytes, int32_t k4n, const int32_t* start, int32_t* tile,
             const int64_t* boff) {
    if (nc == 3)
        ukr_avx512<3, Taps>(a, rs, ks, b, panel_bytes, k4n, start, tile, boff);
    else if (nc == 2)
        ukr_avx512<2, Taps>(a, rs, ks, b, panel_bytes, k4n, start, tile, boff);
    else
        ukr_avx512<1, Taps>(a, rs, ks, b, panel_bytes, k4n, start, tile, boff);
}

void tile_avx512(const gemm_weights* a, const uint8_t* b, int32_t m0, int32_t n0, int32_t cols,
                 int32_t* tile) {
    int32_t k4n = a->Kp / 4;
    size_t panel_bytes = static_cast<size_t>(k4n) * 64;
    const uint8_t* bp = b + static_cast<size_t>(n0 / 16) * panel_bytes;
    const int32_t* start = a->start + m0;
    int32_t nc = (cols + 15) / 16;
    const int8_t* ap;
    size_t rs, ks;
    if (a->plain && m0 + GEMM_MR <= a->M) {
        // Rows straight from the caller's int8 [M][K] array; the bytes a row's last
        // group reads past K meet B's zero padding rows.
        ap = a->plain + static_cast<size_t>(m0) * static_cast<size_t>(a->lda);
        rs = static_cast<size_t>(a->lda);
        ks = 4;
    } else {
        // Packed blocks; in plain mode only the last, partial block is packed.
        size_t blk = a->plain ? 0 : static_cast<size_t>(m0 / GEMM_MR);
        ap = static_cast<const int8_t*>(a->data) + blk * GEMM_MR * static_cast<size_t>(a->Kp);
        rs = 4;
        ks = GEMM_MR * 4;
    }
    ukr_for<false>(nc, ap, rs, ks, bp, panel_bytes, k4n, start, tile, nullptr);
}

/* A tile in taps mode: 8 whole rows of in-place weights (gemm_narrow_ok), B read from
 * the image at img + boff[k4] + 4 * n. */
void tile_taps_avx512(const gemm_weights* a, const uint8_t* img, const int64_t* boff, int32_t m0,
                      int32_t n0, int32_t cols, int32_t* tile) {
    const int32_t k4n = a->Kp / 4;
    const uint8_t* bp = img + static_cast<size_t>(n0) * 4;
    const int8_t* ap = a->plain + static_cast<size_t>(m0) * static_cast<size_t>(a->lda);
    const size_t rs = static_cast<size_t>(a->lda);
    const int32_t* start = a->start + m0;
    const int32_t nc = (cols + 15) / 16;
    ukr_for<true>(nc, ap, rs, 4, bp, 64, k4n, start, tile, boff);
}

/* 64 columns of 4 rows at once (interleave4.h). Columns past n read as 0 (never stored
 * by the caller). */
CVML_TARGET_AVX512 inline __attribute__((always_inline)) void pack64_panels(
    const int8_t* const rows[4], int32_t n, int32_t avail, __m512i p[4]) {
    const __mmask64 m = simd_bits64(0, avail);
    interleave4_panels(
        _mm512_maskz_loadu_epi8(m, rows[0] + n), _mm512_maskz_loadu_epi8(m, rows[1] + n),
        _mm512_maskz_loadu_epi8(m, rows[2] + n), _mm512_maskz_loadu_epi8(m, rows[3] + n), p);
}

/* gemm_interleave4 at avx512: 64 pixels per step, the padding by load masks. */
CVML_TARGET_AVX512 void interleave4_avx512(const int8_t* const rows[4], int64_t lo, int64_t w,
                                           int64_t wq, uint8_t* dst) {
    for (int64_t j = 0; j < wq; j += 64) {
        const __mmask64 m = simd_bits64(lo - j, lo + w - j);
        __m512i r[4];
        for (int i = 0; i < 4; ++i)
            r[i] =
                rows[i] ? _mm512_maskz_loadu_epi8(m, rows[i] + (j - lo)) : _mm512_setzero_si512();
        __m512i p[4];
        interleave4_panels(r[0], r[1], r[2], r[3], p);
        const int64_t left = (wq - j) * 4;  // bytes of this row still to write
        for (int i = 0; i < 4 && 64 * i < left; ++i)
            _mm512_mask_storeu_epi8(dst + 4 * j + 64 * i, simd_bits64(0, left - 64 * i), p[i]);
    }
}

CVML_TARGET_AVX512 inline __attribute__((always_inline)) void pack64_body(
    const int8_t* const rows[4], int32_t n, int32_t avail, int32_t panels, uint8_t* dst,
    size_t panel_bytes) {
    __m512i p[4];
    pack64_panels(rows, n, avail, p);
    for (int32_t i = 0; i < panels; ++i)
        _mm512_storeu_si512(dst + static_cast<size_t>(i) * panel_bytes, p[i]);
}

CVML_TARGET_AVX512 void pack64_avx512(const int8_t* const rows[4], int32_t n, int32_t avail,
                                      int32_t panels, uint8_t* dst, size_t panel_bytes) {
    pack64_body(rows, n, avail, panels, dst, panel_bytes);
}

/* All row groups of a strip (gemm_pack_b_rows at avx512): one loop with the 64-column
 * step inlined, since a strip's 48 columns make each group a single step and a call
 * and level dispatch per group cost as much as the unpacks. */
CVML_TARGET_AVX512 void pack_rows_avx512(const int8_t* base, const int64_t* offsets,
                                         const int8_t* pad, int32_t N, int32_t K, uint8_t* packed) {
    const size_t panel_bytes = static_cast<size_t>(round_up(K, GEMM_KG) / 4) * 64;
    const int32_t Np = round_up(N, 16);
    for (int32_t k4 = 0; k4 * GEMM_KG < K; ++k4) {
        const int8_t* rows[GEMM_KG];
        group_rows(base, offsets, pad, K, k4, rows);
        uint8_t* dst = packed + static_cast<size_t>(k4) * 64;
        for (int32_t n = 0; n < Np; n += 64) {
            const int32_t panels = (Np - n) / 16 < 4 ? (Np - n) / 16 : 4;
            pack64_body(rows, n, N - n, panels, dst + static_cast<size_t>(n / 16) * panel_bytes,
                        panel_bytes);
        }
    }
}

/* gemm_pack_b_select at avx512: each row group packed as 64 consecutive columns, then
 * every output panel picked from two of those panels with one vpermt2d. Panel 0 always
 * starts in flat panel 0 and panel 2 in flat panel 2 (conv2d's selections; checked
 * below), so only panel 1's source varies: one loop per case keeps every vector in a
 * register. */
template <int From1>
CVML_TARGET_AVX512 void pack_select_loop(const int8_t* base, const int64_t* offsets,
                                         const int8_t* pad, int32_t K, int32_t panels,
                                         const __m512i idx[3], uint8_t* packed) {
    const size_t panel_bytes = static_cast<size_t>(round_up(K, GEMM_KG) / 4) * 64;
    const __m512i i0 = idx[0], i1 = idx[1], i2 = idx[2];
    for (int32_t k4 = 0; k4 * GEMM_KG < K; ++k4) {
        const int8_t* rows[GEMM_KG];
        group_rows(base, offsets, pad, K, k4, rows);
        __m512i p[4];
        pack64_panels(rows, 0, 64, p);
        uint8_t* dst = packed + static_cast<size_t>(k4) * 64;
        _mm512_storeu_si512(dst, _mm512_permutex2var_epi32(p[0], i0, p[1]));
        if (panels > 1)
            _mm512_storeu_si512(dst + panel_bytes,
                                _mm512_permutex2var_epi32(p[From1], i1, p[From1 + 1]));
        if (panels > 2)
            _mm512_storeu_si512(dst + 2 * panel_bytes, _mm512_permutex2var_epi32(p[2], i2, p[3]));
    }
}

CVML_TARGET_AVX512 void pack_select_avx512(const int8_t* base, const int64_t* offsets,
                                           const int8_t* pad, int32_t K, const gemm_select* sel,
                                           uint8_t* packed) {
    __m512i idx[3];
    for (int32_t i = 0; i < 3; ++i)
        idx[i] =
            _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sel->idx[i])));
    if (sel->panels > 1 && sel->from[1] == 2)
        pack_select_loop<2>(base, offsets, pad, K, sel->panels, idx, packed);
    else
        pack_select_loop<1>(base, offsets, pad, K, sel->panels, idx, packed);
}

/* 4 rows x C columns of a narrow tail: dot products along K, 64 bytes per step. Row r
 * of A is a + r * lda (read exactly: the last step is masked); column j of B is
 * b + j * stride, zero past K. */
template <int C>
CVML_TARGET_AVX512 void narrow4_avx512(const int8_t* a, size_t lda, int32_t K, const uint8_t* b,
                                       size_t stride, const int32_t* start, int32_t* tile) {
    __m512i acc[4][C];
#pragma GCC unroll 4
    for (int r = 0; r < 4; ++r)
#pragma GCC unroll 4
        for (int j = 0; j < C; ++j) acc[r][j] = _mm512_setzero_si512();
    for (int32_t k = 0; k < K; k += 64) {
        const __mmask64 m = simd_bits64(0, K - k);
        __m512i bv[C];
#pragma GCC unroll 4
        for (int j = 0; j < C; ++j)
            bv[j] = _mm512_loadu_si512(b + static_cast<size_t>(j) * stride + k);
#pragma GCC unroll 4
        for (int r = 0; r < 4; ++r) {
            const __m512i av = _mm512_maskz_loadu_epi8(m, a + static_cast<size_t>(r) * lda + k);
#pragma GCC unroll 4
            for (int j = 0; j < C; ++j) dpbusd(acc[r][j], bv[j], av);
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < 4; ++r)
#pragma GCC unroll 4
        for (int j = 0; j < C; ++j)
            tile[r * GEMM_NT + j] =
                static_cast<int32_t>(static_cast<uint32_t>(_mm512_reduce_add_epi32(acc[r][j])) +
                                     static_cast<uint32_t>(start[r]));
}

CVML_TARGET_AVX512 void narrow_block_avx512(const gemm_weights* a, const uint8_t* b, size_t stride,
                                            int32_t c, int32_t m0, int32_t* tile) {
    for (int32_t r = 0; r < GEMM_MR; r += 4) {
        const int8_t* ar = a->plain + static_cast<size_t>(m0 + r) * static_cast<size_t>(a->lda);
        const size_t lda = static_cast<size_t>(a->lda);
        const int32_t* start = a->start + m0 + r;
        int32_t* t = tile + r * GEMM_NT;
        if (c == 1)
            narrow4_avx512<1>(ar, lda, a->K, b, stride, start, t);
        else if (c == 2)
            narrow4_avx512<2>(ar, lda, a->K, b, stride, start, t);
        else if (c == 3)
            narrow4_avx512<3>(ar, lda, a->K, b, stride, start, t);
        else
            narrow4_avx512<4>(ar, lda, a->K, b, stride, start, t);
    }
}

/* ---- avx2 (vpmaddwd) ------------------------------------------------------------------
 * B is packed as int16 in panels of 4 columns, each k4 step one ymm holding every
 * column's 4 values in turn; the weights are int8 rows read in place. A row's 4 bytes,
 * broadcast and sign-extended, give the int16 pairs (w0, w1), (w2, w3) alternating, so
 * one vpmaddwd makes two partial sums per column, added at the end. */

#define AVX2_ROWS 4
#define AVX2_COLS 12 /* 3 panels */

/* acc += vpmaddwd(b, w), in this order: left to itself GCC computes every product
 * first and spills the accumulators from the 16 registers. */
#define MADD_ACC(acc, b, w, t) \
    __asm__("vpmaddwd %2, %3, %1\n\tvpaddd %1, %0, %0" : "+x"(acc), "=&x"(t) : "xm"(b), "x"(w))

CVML_TARGET_AVX2 void ukr_avx2(const int8_t* a, size_t lda, const int16_t* b, size_t panel,
                               int32_t k4n, int32_t* tile) {
    __m256i c00 = _mm256_setzero_si256(), c01 = _mm256_setzero_si256(),
            c02 = _mm256_setzero_si256();
    __m256i c10 = _mm256_setzero_si256(), c11 = _mm256_setzero_si256(),
            c12 = _mm256_setzero_si256();
    __m256i c20 = _mm256_setzero_si256(), c21 = _mm256_setzero_si256(),
            c22 = _mm256_setzero_si256();
    __m256i c30 = _mm256_setzero_si256(), c31 = _mm256_setzero_si256(),
            c32 = _mm256_setzero_si256();
    const int8_t* a0 = a;
    const int8_t* a1 = a + lda;
    const int8_t* a2 = a + 2 * lda;
    const int8_t* a3 = a + 3 * lda;
    __m256i t;
    for (int32_t k4 = 0; k4 < k4n; ++k4) {
        const int16_t* bk = b + static_cast<size_t>(k4) * 16;
        const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bk));
        const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bk + panel));
        const __m256i b2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bk + 2 * panel));
        const size_t k = static_cast<size_t>(k4) * 4;
        __m256i w;
        w = _mm256_cvtepi8_epi16(
            _mm_castps_si128(_mm_broadcast_ss(reinterpret_cast<const float*>(a0 + k))));
        MADD_ACC(c00, b0, w, t);
        MADD_ACC(c01, b1, w, t);
        MADD_ACC(c02, b2, w, t);
        w = _mm256_cvtepi8_epi16(
            _mm_castps_si128(_mm_broadcast_ss(reinterpret_cast<const float*>(a1 + k))));
        MADD_ACC(c10, b0, w, t);
        MADD_ACC(c11, b1, w, t);
        MADD_ACC(c12, b2, w, t);
        w = _mm256_cvtepi8_epi16(
            _mm_castps_si128(_mm_broadcast_ss(reinterpret_cast<const float*>(a2 + k))));
        MADD_ACC(c20, b0, w, t);
        MADD_ACC(c21, b1, w, t);
        MADD_ACC(c22, b2, w, t);
        w = _mm256_cvtepi8_epi16(
            _mm_castps_si128(_mm_broadcast_ss(reinterpret_cast<const float*>(a3 + k))));
        MADD_ACC(c30, b0, w, t);
        MADD_ACC(c31, b1, w, t);
        MADD_ACC(c32, b2, w, t);
    }
    // hadd: [c0 c1 c4 c5 | c2 c3 c6 c7]; the 64-bit permute puts them in order.
    const __m256i c[AVX2_ROWS][3] = {
        {c00, c01, c02}, {c10, c11, c12}, {c20, c21, c22}, {c30, c31, c32}};
    for (int r = 0; r < AVX2_ROWS; ++r) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(tile + r * GEMM_NT),
                            _mm256_permute4x64_epi64(_mm256_hadd_epi32(c[r][0], c[r][1]), 0xD8));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(tile + r * GEMM_NT + 8),
                         _mm256_castsi256_si128(
                             _mm256_permute4x64_epi64(_mm256_hadd_epi32(c[r][2], c[r][2]), 0xD8)));
    }
}

void tile_avx2(const gemm_weights* a, const int16_t* b, int32_t m0, int32_t n0, int32_t cols,
               int32_t* tile) {
    const int32_t k4n = a->Kp / 4;
    const size_t panel = static_cast<size_t>(k4n) * 16;
    const int8_t* ap;
    size_t lda;
    if (a->plain && m0 + GEMM_MR <= a->M) {
        ap = a->plain + static_cast<size_t>(m0) * static_cast<size_t>(a->lda);
        lda = static_cast<size_t>(a->lda);
    } else {
        // Zero-padded rows: all of them when packed, the last partial block in plain mode.
        const size_t blk = a->plain ? 0 : static_cast<size_t>(m0);
        ap = static_cast<const int8_t*>(a->data) + blk * static_cast<size_t>(a->Kp);
        lda = static_cast<size_t>(a->Kp);
    }
    for (int32_t half = 0; half < GEMM_MR / AVX2_ROWS; ++half)
        for (int32_t c = 0; c < cols; c += AVX2_COLS)
            ukr_avx2(ap + static_cast<size_t>(half * AVX2_ROWS) * lda, lda,
                     b + static_cast<size_t>((n0 + c) / 4) * panel, panel, k4n,
                     tile + half * AVX2_ROWS * GEMM_NT + c);
}

/* Columns n .. n + 7 of 4 rows into two panels (at p0 and p0 + panel). */
CVML_TARGET_AVX2 void pack8_avx2(const int8_t* const rows[4], int32_t n, int16_t* p0,
                                 size_t panel) {
    __m128i r[4];
    for (int i = 0; i < 4; ++i) {
        int64_t v;
        memcpy(&v, rows[i] + n, 8);
        r[i] = _mm_cvtepi8_epi16(_mm_cvtsi64_si128(v));
    }
    const __m128i lo01 = _mm_unpacklo_epi16(r[0], r[1]), lo23 = _mm_unpacklo_epi16(r[2], r[3]);
    const __m128i hi01 = _mm_unpackhi_epi16(r[0], r[1]), hi23 = _mm_unpackhi_epi16(r[2], r[3]);
    _mm256_storeu_si256(
        reinterpret_cast<__m256i*>(p0),
        _mm256_set_m128i(_mm_unpackhi_epi32(lo01, lo23), _mm_unpacklo_epi32(lo01, lo23)));
    _mm256_storeu_si256(
        reinterpret_cast<__m256i*>(p0 + panel),
        _mm256_set_m128i(_mm_unpackhi_epi32(hi01, hi23), _mm_unpacklo_epi32(hi01, hi23)));
}

#endif /* CVML_SIMD_X86 */

}  // namespace

namespace {

/* Packs M x K weights given as int32 or int8 values (cast to int8 as upstream's conv2d
 * does) for `level`. */
template <typename T>
int pack_weights(int level, const T* w, int32_t M, int32_t K, gemm_weights* out) {
    memset(out, 0, sizeof(*out));
#if !CVML_SIMD_X86
    level = CPU_SIMD_SCALAR;
#endif
    out->level = level;
    out->M = M;
    out->K = K;
    out->Mp = round_up(M, GEMM_MR);
    out->Kp = round_up(K, GEMM_KG);
    size_t elems = static_cast<size_t>(out->Mp) * static_cast<size_t>(out->Kp);
    out->data = aligned_alloc(64, (elems + 63) / 64 * 64);
    out->start = static_cast<int32_t*>(calloc(static_cast<size_t>(out->Mp), sizeof(int32_t)));
    if (!out->data || !out->start) {
        gemm_weights_free(out);
        return cvml_fail(CVML_ERR_RUNTIME, "out of memory packing %d x %d weights", M, K);
    }
    memset(out->data, 0, elems);
    for (int32_t m = 0; m < M; ++m) {
        uint32_t sum = 0;
        for (int32_t k = 0; k < K; ++k) {
            int8_t v = static_cast<int8_t>(w[static_cast<size_t>(m) * K + k]);
            sum += static_cast<uint32_t>(static_cast<int32_t>(v));
            size_t mb = static_cast<size_t>(m / GEMM_MR), r = static_cast<size_t>(m % GEMM_MR);
            size_t blk = mb * GEMM_MR * static_cast<size_t>(out->Kp);
            if (level == CPU_SIMD_AVX512)
                static_cast<int8_t*>(out->data)[blk + static_cast<size_t>(k / 4) * GEMM_MR * 4 +
                                                r * 4 + static_cast<size_t>(k % 4)] = v;
            else  // scalar and avx2: zero-padded int8 rows
                static_cast<int8_t*>(out->data)[static_cast<size_t>(m) * out->Kp + k] = v;
        }
        out->start[m] = static_cast<int32_t>(0u - sum * 128u);
    }
    return CVML_OK;
}

}  // namespace

int gemm_weights_pack(int level, const int32_t* w, int32_t M, int32_t K, gemm_weights* out) {
    return pack_weights(level, w, M, K, out);
}

int gemm_weights_plain(int level, const int8_t* w, int32_t M, int32_t K, gemm_weights* out) {
    // The scalar level keeps its own copy (the reference loops read Kp-long rows).
    if (level != CPU_SIMD_AVX512 && level != CPU_SIMD_AVX2)
        return pack_weights(level, w, M, K, out);
    memset(out, 0, sizeof(*out));
    out->level = level;
    out->M = M;
    out->K = K;
    out->Mp = round_up(M, GEMM_MR);
    out->Kp = round_up(K, GEMM_KG);
    out->plain = w;
    out->lda = K;
    int32_t tail = M % GEMM_MR;
    size_t tail_bytes = static_cast<size_t>(GEMM_MR) * static_cast<size_t>(out->Kp);
    out->data = tail ? aligned_alloc(64, (tail_bytes + 63) / 64 * 64) : nullptr;
    out->start = static_cast<int32_t*>(calloc(static_cast<size_t>(out->Mp), sizeof(int32_t)));
    if ((tail && !out->data) || !out->start) {
        gemm_weights_free(out);
        return cvml_fail(CVML_ERR_RUNTIME, "out of memory packing %d x %d weights", M, K);
    }
    if (tail) memset(out->data, 0, tail_bytes);
    int32_t tail0 = M - tail;
    for (int32_t m = 0; m < M; ++m) {
        uint32_t sum = 0;
        for (int32_t k = 0; k < K; ++k) {
            int8_t v = w[static_cast<size_t>(m) * K + k];
            sum += static_cast<uint32_t>(static_cast<int32_t>(v));
            // The last partial block: interleaved by 4 at avx512, zero-padded rows at avx2.
            if (m >= tail0 && level == CPU_SIMD_AVX512)
                static_cast<int8_t*>(
                    out->data)[static_cast<size_t>(k / 4) * GEMM_MR * 4 +
                               static_cast<size_t>(m - tail0) * 4 + static_cast<size_t>(k % 4)] = v;
            else if (m >= tail0)
                static_cast<int8_t*>(out->data)[static_cast<size_t>(m - tail0) * out->Kp + k] = v;
        }
        out->start[m] = static_cast<int32_t>(0u - sum * 128u);
    }
    return CVML_OK;
}

void gemm_weights_free(gemm_weights* w) {
    free(w->data);
    free(w->start);
    w->data = nullptr;
    w->start = nullptr;
}

namespace {

/* start[m] += per_row[m] (when given) + all, wrapping. */
int fold_into_start(gemm_weights* w, const int32_t* per_row, int32_t all) {
    if (w->level != CPU_SIMD_AVX512 || !w->start) return 0;
    for (int32_t m = 0; m < w->M; ++m)
        w->start[m] = static_cast<int32_t>(static_cast<uint32_t>(w->start[m]) +
                                           static_cast<uint32_t>(per_row ? per_row[m] : 0) +
                                           static_cast<uint32_t>(all));
    return 1;
}

}  // namespace

int gemm_weights_fold_bias(gemm_weights* w, const int32_t* bias) {
    return fold_into_start(w, bias, 0);
}

int gemm_weights_fold_add(gemm_weights* w, int32_t v) {
    return fold_into_start(w, nullptr, v);
}

int32_t gemm_b_cols(int level, int32_t N) {
    return round_up(N, panel_width(level));
}

size_t gemm_b_bytes(int level, int32_t K, int32_t N) {
    size_t elems =
        static_cast<size_t>(round_up(K, GEMM_KG)) * static_cast<size_t>(gemm_b_cols(level, N));
    return elems * (level == CPU_SIMD_AVX2 ? 2 : 1);
}

void gemm_pack_b_group(int level, const int8_t* const rows_in[GEMM_KG], int32_t N, int32_t K,
                       int32_t k4, void* packed) {
    (void)K;
    const int8_t* const* rows = rows_in;
#if CVML_SIMD_X86
    int32_t Kp = round_up(K, GEMM_KG);
    if (level == CPU_SIMD_AVX512) {
        uint8_t* base = static_cast<uint8_t*>(packed);
        size_t panel_bytes = static_cast<size_t>(Kp / 4) * 64;
        int32_t n = 0;
        bool all = rows[0] && rows[1] && rows[2] && rows[3];
        int32_t Np = gemm_b_cols(level, N);
        if (all) {
            for (; n < Np; n += 64) {
                const int32_t panels = (Np - n) / 16 < 4 ? (Np - n) / 16 : 4;
                pack64_avx512(
                    rows, n, N - n, panels,
                    base + static_cast<size_t>(n / 16) * panel_bytes + static_cast<size_t>(k4) * 64,
                    panel_bytes);
            }
            return;
        }
        for (; n < Np; ++n) {
            uint8_t* d = base + static_cast<size_t>(n / 16) * panel_bytes +
                         static_cast<size_t>(k4) * 64 + static_cast<size_t>(n % 16) * 4;
            for (int i = 0; i < 4; ++i)
                d[i] = rows[i] ? static_cast<uint8_t>((n < N ? rows[i][n] : 0) ^ 0x80) : 0;
        }
        return;
    }
    if (level == CPU_SIMD_AVX2) {
        // Panels of 4 columns; per k4 step, column c's 4 values at (c % 4) * 4.
        int16_t* base = static_cast<int16_t*>(packed);
        const size_t panel = static_cast<size_t>(Kp / 4) * 16;
        int32_t n = 0;
        bool all = rows[0] && rows[1] && rows[2] && rows[3];
        if (all)
            for (; n + 8 <= N; n += 8)
                pack8_avx2(rows, n,
                           base + static_cast<size_t>(n / 4) * panel + static_cast<size_t>(k4) * 16,
                           panel);
        int32_t Np = gemm_b_cols(level, N);
        for (; n < Np; ++n)
            for (int i = 0; i < 4; ++i)
                base[static_cast<size_t>(n / 4) * panel + static_cast<size_t>(k4) * 16 +
                     static_cast<size_t>(n % 4) * 4 + static_cast<size_t>(i)] =
                    rows[i] && n < N ? rows[i][n] : 0;
        return;
    }
#endif
    (void)level;
    int8_t* base = static_cast<int8_t*>(packed);
    for (int i = 0; i < GEMM_KG; ++i) {
        int8_t* d = base + (static_cast<size_t>(k4) * 4 + static_cast<size_t>(i)) * N;
        if (rows[i])
            memcpy(d, rows[i], static_cast<size_t>(N));
        else
            memset(d, 0, static_cast<size_t>(N));
    }
}

void gemm_pack_b_rows(int level, const int8_t* base, const int64_t* offsets, const int8_t* pad,
                      int32_t N, int32_t K, void* packed) {
#if CVML_SIMD_X86
    if (level == CPU_SIMD_AVX512) {
        pack_rows_avx512(base, offsets, pad, N, K, static_cast<uint8_t*>(packed));
        return;
    }
#endif
    (void)pad;  // only the avx512 packer reads rows past K; here they are zeros
    for (int32_t k4 = 0; k4 * GEMM_KG < K; ++k4) {
        // Rows past K must pack to zeros: the weights read in place have other bytes
        // there (the next row's).
        const int8_t* rows[GEMM_KG];
        group_rows(base, offsets, nullptr, K, k4, rows);
        gemm_pack_b_group(level, rows, N, K, k4, packed);
    }
}

int64_t gemm_tile_count(int32_t M, int32_t N) {
    int64_t mb = (M + GEMM_MR - 1) / GEMM_MR;
    int64_t nt = (N + GEMM_NT - 1) / GEMM_NT;
    return mb * nt;
}

void gemm_run_tiles(const gemm_weights* a, const void* packed_b, int32_t N, int64_t t0, int64_t t1,
                    gemm_tile_fn fn, void* arg) {
    alignas(64) int32_t tile[GEMM_MR * GEMM_NT];
    const int64_t mblocks = (a->M + GEMM_MR - 1) / GEMM_MR;
    // Tile t is row block t % mblocks of column tile t / mblocks; stepped, not divided.
    int64_t mb = t0 % mblocks, nb = t0 / mblocks;
    for (int64_t t = t0; t < t1; ++t, ++mb) {
        if (mb == mblocks) {
            mb = 0;
            ++nb;
        }
        int32_t m0 = static_cast<int32_t>(mb) * GEMM_MR;
        int32_t n0 = static_cast<int32_t>(nb) * GEMM_NT;
        int32_t rows = a->M - m0 < GEMM_MR ? a->M - m0 : GEMM_MR;
        int32_t cols = N - n0 < GEMM_NT ? N - n0 : GEMM_NT;
#if CVML_SIMD_X86
        if (a->level == CPU_SIMD_AVX512)
            tile_avx512(a, static_cast<const uint8_t*>(packed_b), m0, n0, cols, tile);
        else if (a->level == CPU_SIMD_AVX2)
            tile_avx2(a, static_cast<const int16_t*>(packed_b), m0, n0, cols, tile);
        else
#endif
            tile_scalar(a, static_cast<const int8_t*>(packed_b), N, m0, rows, n0, cols, tile);
        fn(arg, m0, rows, n0, cols, tile);
    }
}

void gemm_pack_b_select(int level, const int8_t* base, const int64_t* offsets, const int8_t* pad,
                        int32_t K, const gemm_select* sel, void* packed) {
#if CVML_SIMD_X86
    if (level == CPU_SIMD_AVX512) {
        pack_select_avx512(base, offsets, pad, K, sel, static_cast<uint8_t*>(packed));
        return;
    }
#endif
    (void)level;
    (void)base;
    (void)offsets;
    (void)pad;
    (void)K;
    (void)sel;
    (void)packed;
    abort();  // gemm_narrow_ok() is false below avx512, so callers never get here
}

int gemm_select_ok(const gemm_select* sel) {
    if (sel->panels < 1 || sel->panels > 3 || sel->from[0] != 0) return 0;
    if (sel->panels > 1 && sel->from[1] != 1 && sel->from[1] != 2) return 0;
    if (sel->panels > 2 && sel->from[2] != 2) return 0;
    for (int32_t i = 0; i < sel->panels; ++i)
        for (int32_t j = 0; j < 16; ++j)
            if (sel->idx[i][j] >= 32) return 0;
    return 1;
}

int gemm_narrow_ok(const gemm_weights* a) {
#if CVML_SIMD_X86
    return a->level == CPU_SIMD_AVX512 && a->plain && a->M % GEMM_MR == 0;
#else
    (void)a;
    return 0;
#endif
}

size_t gemm_narrow_stride(int32_t K) {
    return static_cast<size_t>(round_up(K, 64));
}

void gemm_run_narrow(const gemm_weights* a, const uint8_t* cols, int32_t c, int32_t n0, int64_t mb0,
                     int64_t mb1, gemm_tile_fn fn, void* arg) {
#if CVML_SIMD_X86
    alignas(64) int32_t tile[GEMM_MR * GEMM_NT];
    const size_t stride = gemm_narrow_stride(a->K);
    for (int64_t mb = mb0; mb < mb1; ++mb) {
        const int32_t m0 = static_cast<int32_t>(mb) * GEMM_MR;
        narrow_block_avx512(a, cols, stride, c, m0, tile);
        fn(arg, m0, GEMM_MR, n0, c, tile);
    }
#else
    (void)a;
    (void)cols;
    (void)c;
    (void)n0;
    (void)mb0;
    (void)mb1;
    (void)fn;
    (void)arg;
    abort();
#endif
}

void gemm_interleave4(int level, const int8_t* const rows[4], int64_t lo, int64_t w, int64_t wq,
                      uint8_t* dst) {
#if CVML_SIMD_X86
    if (level == CPU_SIMD_AVX512) {
        interleave4_avx512(rows, lo, w, wq, dst);
        return;
    }
#endif
    (void)level;
    for (int64_t j = 0; j < wq; ++j)
        for (int i = 0; i < 4; ++i) {
            const int64_t x = j - lo;
            const int8_t v = rows[i] && x >= 0 && x < w ? rows[i][x] : 0;
            dst[4 * j + i] = static_cast<uint8_t>(static_cast<uint8_t>(v) ^ 0x80u);
        }
}

void gemm_run_tiles_taps(const gemm_weights* a, const uint8_t* img, const int64_t* boff, int32_t N,
                         int64_t t0, int64_t t1, gemm_tile_fn fn, void* arg) {
#if CVML_SIMD_X86
    alignas(64) int32_t tile[GEMM_MR * GEMM_NT];
    const int64_t mblocks = a->M / GEMM_MR;
    for (int64_t t = t0; t < t1; ++t) {
        const int32_t m0 = static_cast<int32_t>(t % mblocks) * GEMM_MR;
        const int32_t n0 = static_cast<int32_t>(t / mblocks) * GEMM_NT;
        const int32_t cols = N - n0 < GEMM_NT ? N - n0 : GEMM_NT;
        tile_taps_avx512(a, img, boff, m0, n0, cols, tile);
        fn(arg, m0, GEMM_MR, n0, cols, tile);
    }
#else
    (void)a;
    (void)img;
    (void)boff;
    (void)N;
    (void)t0;
    (void)t1;
    (void)fn;
    (void)arg;
    abort();
#endif
}
