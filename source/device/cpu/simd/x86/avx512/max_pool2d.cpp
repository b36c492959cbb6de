/* max_pool2d at avx512 (max_pool2d.cpp dispatches). */
#include <string.h>

#include "device/cpu/op/max_pool2d_fast.h"
#include "device/cpu/simd/x86/avx512/phase_row_writer.h"

#if CVML_SIMD_X86
#include <immintrin.h>
/* GCC 12's AVX-512 headers trip this on their own _mm512_undefined_* helpers. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace cpu_max_pool2d {

CVML_TARGET_AVX512 void max_row_avx512(int32_t* acc, const int32_t* src, int64_t n) {
    max_row_body(acc, src, n);
}
CVML_TARGET_AVX512 void max_row8_avx512(int8_t* acc, const int8_t* src, int64_t n) {
    max_row_body(acc, src, n);
}

/* Each 64-column block of an output row folds every window offset in a register. The
 * offsets of output row 0 are computed once (two 64-bit divisions each), as long as the
 * window is at most 8 x 8; row i adds i * sh rows to them. Output rows [i0, i1). */
CVML_TARGET_AVX512 void pool_rows8_avx512(const pool_fast* f, const int8_t* ph, int8_t* y,
                                          int64_t i0, int64_t i1) {
    constexpr int64_t kMaxTaps = 64;
    const int64_t taps = f->kh * f->kw;
    int64_t off[kMaxTaps];
    for (int64_t t = 0; t < taps && taps <= kMaxTaps; ++t)
        off[t] = window_offset(f, 0, t / f->kw, t % f->kw);
    for (int64_t i = i0; i < i1; ++i) {
        const int8_t* rows = ph + i * f->sh * f->wq;
        for (int64_t j = 0; j < f->ow; j += 64) {
            const __mmask64 m = simd_bits64(0, f->ow - j);
            __m512i v = _mm512_set1_epi8(-128);
            for (int64_t t = 0; t < taps; ++t) {
                const int64_t o =
                    taps <= kMaxTaps ? off[t] : window_offset(f, 0, t / f->kw, t % f->kw);
                v = _mm512_max_epi8(v, _mm512_maskz_loadu_epi8(m, rows + o + j));
            }
            _mm512_mask_storeu_epi8(y + i * f->ow + j, m, v);
        }
    }
}

/* The rows of the phase planes of column stride 2 (ResNet's 3x3 pool) that output rows
 * [i0, i1) read, -128 where there is no input: the input rows written whole
 * (phase_row_writer), padding rows cleared. */
CVML_TARGET_AVX512 void phase_planes8_s2_avx512(const pool_fast* f, const int8_t* x, int8_t* ph,
                                                int64_t i0, int64_t i1) {
    const int64_t plane = f->hp * f->wq;
    const int64_t r0 = i0 * f->sh, r1 = (i1 - 1) * f->sh + f->kh;  // padded rows read
    const phase_row_writer<2> writer(f->w, f->pw, f->wq);
    const __m512i fill = _mm512_set1_epi8(-128);
    for (int64_t r = r0; r < r1 && r < f->hp; ++r) {
        const int64_t h = r - f->ph;
        if (h >= 0 && h < f->h) {
            writer.write(x + h * f->w, fill, plane, ph + r * f->wq);
            continue;
        }
        for (int64_t pc = 0; pc < 2; ++pc)
            memset(ph + pc * plane + r * f->wq, -128, static_cast<size_t>(f->wq));
    }
}

}  // namespace cpu_max_pool2d

#endif
