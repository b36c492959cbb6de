/* Int8 input rows written into the phase rows of a padded image at avx512: conv2d's
 * depthwise images and max_pool2d's planes (conv2d_grouped.cpp, max_pool2d.cpp here). */
#pragma once

#include <stdint.h>

#include "device/cpu/simd/simd.h"

#if CVML_SIMD_X86
#include <immintrin.h>

/* Writes int8 input rows into the phase rows of a padded image at avx512, column stride
 * SW = 1 or 2 (conv2d's images, max_pool2d's planes). Lane L of the 64 values loaded
 * for chunk c is padded column 64c + L; lanes with no input read as `fill` (0 for a
 * convolution, -128 for a max pool). With stride 2 the even and odd bytes are the two
 * phase rows (vpmovwb, no VBMI). Each phase row [0, wq) is written whole by masked
 * stores, so nothing is cleared first, and a masked-off lane never touches memory. The
 * masks are the same for every row of a tensor: made once, at construction. */
template <int SW>
struct phase_row_writer {
    static constexpr int64_t kMaxChunks = 8;
    static constexpr int64_t kOut = 64 / SW; /* phase row bytes per chunk */
    int64_t w, pad, wq, chunks;
    __mmask64 load[kMaxChunks], store[kMaxChunks];

    CVML_TARGET_AVX512 phase_row_writer(int64_t w_, int64_t pad_, int64_t wq_)
        : w(w_), pad(pad_), wq(wq_), chunks((wq_ + kOut - 1) / kOut) {
        for (int64_t c = 0; c < chunks && c < kMaxChunks; ++c) {
            load[c] = load_mask(c);
            store[c] = store_mask(c);
        }
    }
    __mmask64 load_mask(int64_t c) const { return simd_bits64(pad - 64 * c, pad + w - 64 * c); }
    __mmask64 store_mask(int64_t c) const { return simd_bits64(0, wq - kOut * c); }

    /* in: the row's first input value; row: its phase-0 row, phase 1 phase_stride on. */
    CVML_TARGET_AVX512 void write(const int8_t* in, __m512i fill, int64_t phase_stride,
                                  int8_t* row) const {
        in -= pad;
        for (int64_t c = 0; c < chunks; ++c) {
            const __mmask64 lm = c < kMaxChunks ? load[c] : load_mask(c);
            const __mmask64 sm = c < kMaxChunks ? store[c] : store_mask(c);
            const __m512i v = _mm512_mask_loadu_epi8(fill, lm, in + 64 * c);
            if (SW == 1) {
                _mm512_mask_storeu_epi8(row + 64 * c, sm, v);
                continue;
            }
            const __mmask32 sm32 = static_cast<__mmask32>(sm);
            _mm256_mask_storeu_epi8(row + 32 * c, sm32, _mm512_cvtepi16_epi8(v));
            _mm256_mask_storeu_epi8(row + phase_stride + 32 * c, sm32,
                                    _mm512_cvtepi16_epi8(_mm512_srli_epi16(v, 8)));
        }
    }
};
#endif
