/* max_pool2d at avx2 (max_pool2d.cpp dispatches). */
#include <string.h>

#include "device/cpu/op/max_pool2d_fast.h"

#if CVML_SIMD_X86
#include <immintrin.h>

namespace cpu_max_pool2d {

CVML_TARGET_AVX2 void max_row_avx2(int32_t* acc, const int32_t* src, int64_t n) {
    max_row_body(acc, src, n);
}
CVML_TARGET_AVX2 void max_row8_avx2(int8_t* acc, const int8_t* src, int64_t n) {
    max_row_body(acc, src, n);
}

namespace {

/* Output columns [j, j + 32) of the row whose windows start at rows + off[t]. */
CVML_TARGET_AVX2 inline __m256i fold32(const int8_t* rows, const int64_t* off, int64_t taps,
                                       int64_t j) {
    __m256i v = _mm256_set1_epi8(-128);
    for (int64_t t = 0; t < taps; ++t)
        v = _mm256_max_epi8(
            v, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows + off[t] + j)));
    return v;
}

CVML_TARGET_AVX2 inline __m128i fold16(const int8_t* rows, const int64_t* off, int64_t taps,
                                       int64_t j) {
    __m128i v = _mm_set1_epi8(-128);
    for (int64_t t = 0; t < taps; ++t)
        v = _mm_max_epi8(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows + off[t] + j)));
    return v;
}

}  // namespace

/* Each 32-column block of an output row folds every window offset in a register; a row
 * of 32 or more ends in a block that overlaps the one before it (max is idempotent, so
 * the overlap is written twice with the same bytes) and nothing is read past the row.
 * Rows of 16 to 31 take 16-column blocks the same way, shorter ones max_row8. The
 * offsets of output row 0 are computed once for windows of at most 8 x 8. */
CVML_TARGET_AVX2 void pool_rows8_avx2(const pool_fast* f, const int8_t* ph, int8_t* y, int64_t i0,
                                      int64_t i1) {
    constexpr int64_t kMaxTaps = 64;
    const int64_t taps = f->kh * f->kw;
    int64_t off[kMaxTaps];
    const bool listed = taps <= kMaxTaps;
    for (int64_t t = 0; t < taps && listed; ++t) off[t] = window_offset(f, 0, t / f->kw, t % f->kw);
    const int64_t ow = f->ow;
    for (int64_t i = i0; i < i1; ++i) {
        const int8_t* rows = ph + i * f->sh * f->wq;
        int8_t* out = y + i * ow;
        if (!listed || ow < 16) {
            memset(out, -128, static_cast<size_t>(ow));
            for (int64_t t = 0; t < taps; ++t)
                max_row8_avx2(out, rows + window_offset(f, 0, t / f->kw, t % f->kw), ow);
            continue;
        }
        if (ow < 32) {
            _mm_storeu_si128(reinterpret_cast<__m128i*>(out), fold16(rows, off, taps, 0));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(out + ow - 16),
                             fold16(rows, off, taps, ow - 16));
            continue;
        }
        for (int64_t j = 0;; j += 32) {
            const int64_t at = j + 32 <= ow ? j : ow - 32;
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + at), fold32(rows, off, taps, at));
            if (at + 32 >= ow) break;
        }
    }
}

namespace {

/* The 32 even and the 32 odd bytes of the 64 at p (each 32 taken apart in its lanes, then
 * the halves joined). */
CVML_TARGET_AVX2 inline void split64(const int8_t* p, __m256i* even, __m256i* odd) {
    const __m256i split = _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15, 0,
                                           2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
    // Per 32 bytes: qwords 0, 2 hold the even bytes, 1, 3 the odd ones; then joined.
    const __m256i a = _mm256_permute4x64_epi64(
        _mm256_shuffle_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), split), 0xD8);
    const __m256i b = _mm256_permute4x64_epi64(
        _mm256_shuffle_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32)), split),
        0xD8);
    *even = _mm256_permute2x128_si256(a, b, 0x20);
    *odd = _mm256_permute2x128_si256(a, b, 0x31);
}

/* Output row i's kh input rows folded into v[0, w): padding rows skipped (every window
 * holds an input cell), the last 32-byte block overlapping the one before it. */
CVML_TARGET_AVX2 inline void fold_rows(const pool_fast* f, const int8_t* x, int64_t i, int8_t* v) {
    const int64_t r0 = i * f->sh - f->ph;
    const int64_t lo = r0 < 0 ? 0 : r0, hi = r0 + f->kh > f->h ? f->h : r0 + f->kh;
    for (int64_t j = 0;; j += 32) {
        const int64_t at = j + 32 <= f->w ? j : f->w - 32;
        __m256i m = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + lo * f->w + at));
        for (int64_t r = lo + 1; r < hi; ++r)
            m = _mm256_max_epi8(
                m, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + r * f->w + at)));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(v + at), m);
        if (at + 32 >= f->w) break;
    }
}

/* Output columns [j, j + 32) of the folded row v: window column s of output column c is
 * v[c * SW - pw + s]. At column stride 2 the even bytes of the 64 from column s serve
 * tap s and their odd bytes tap s + 1. */
template <int SW>
CVML_TARGET_AVX2 inline __m256i fold_columns(const pool_fast* f, const int8_t* v, int64_t j) {
    const int8_t* base = v + j * SW - f->pw;
    __m256i m = _mm256_set1_epi8(-128);
    if (SW == 1) {
        for (int64_t s = 0; s < f->kw; ++s)
            m = _mm256_max_epi8(m, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(base + s)));
        return m;
    }
    for (int64_t s = 0; s < f->kw; s += 2) {
        __m256i even, odd;
        split64(base + s, &even, &odd);
        m = _mm256_max_epi8(m, even);
        if (s + 1 < f->kw) m = _mm256_max_epi8(m, odd);
    }
    return m;
}

template <int SW>
CVML_TARGET_AVX2 void pool_direct8_sw(const pool_fast* f, const int8_t* x, int8_t* y, int64_t i0,
                                      int64_t i1) {
    // Two folded rows, with -128 where the windows reach past them on either side: row
    // i + 1 is folded before row i's columns are read, so that those loads, which
    // straddle the fold's 32-byte stores, find them in the cache rather than waiting for
    // them (ResNet-18's pool on 1 thread: 0.051 -> 0.038 ms).
    alignas(32) int8_t buf[2][kPoolDirectMaxW + 2 * kPoolDirectMargin];
    int8_t* v[2] = {buf[0] + kPoolDirectMargin, buf[1] + kPoolDirectMargin};
    for (int8_t* row : v) {
        memset(row - kPoolDirectMargin, -128, kPoolDirectMargin);
        memset(row + f->w, -128, kPoolDirectMargin);
    }
    if (i0 < i1) fold_rows(f, x, i0, v[0]);
    for (int64_t i = i0; i < i1; ++i) {
        const int8_t* folded = v[(i - i0) & 1];
        if (i + 1 < i1) fold_rows(f, x, i + 1, v[(i + 1 - i0) & 1]);
        int8_t* out = y + i * f->ow;
        for (int64_t j = 0;; j += 32) {
            const int64_t at = j + 32 <= f->ow ? j : f->ow - 32;
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + at),
                                fold_columns<SW>(f, folded, at));
            if (at + 32 >= f->ow) break;
        }
    }
}

}  // namespace

/* Separable: max is taken over the window's rows first, into one row, then over its
 * columns, so each input row is read once per output row that spans it and no padded
 * image is built (ResNet-18's 3x3 stride-2 pool took 0.095 ms at avx2 with the image,
 * 1.4x oneDNN's). Output rows [i0, i1) of one plane (pool_direct8_fits). */
CVML_TARGET_AVX2 void pool_direct8_avx2(const pool_fast* f, const int8_t* x, int8_t* y, int64_t i0,
                                        int64_t i1) {
    if (f->sw == 1)
        pool_direct8_sw<1>(f, x, y, i0, i1);
    else
        pool_direct8_sw<2>(f, x, y, i0, i1);
}

}  // namespace cpu_max_pool2d

#endif
