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

}  // namespace cpu_max_pool2d

#endif
