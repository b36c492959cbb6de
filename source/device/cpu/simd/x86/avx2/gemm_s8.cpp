/* The int8 GEMM at avx2 (vpmaddwd): the 4 x 12 micro-kernel on int16-packed B, and
 * B's packing. */
#include <string.h>

#include "device/cpu/simd/gemm_s8_impl.h"

#if CVML_SIMD_X86
#include <immintrin.h>

namespace gemm_impl {
namespace {

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

}  // namespace

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

}  // namespace gemm_impl

#endif
