/* conv2d at avx2, groups > 1 (conv2d_grouped.cpp dispatches): the int32 multiply-add
 * rows, and the depthwise planes (vpmulld) over the phase image of an int8 input. */
#include <string.h>

#include "device/cpu/op/conv2d_fast.h"
#include "device/cpu/simd/simd.h"

#if CVML_SIMD_X86
#include <immintrin.h>

namespace cpu_conv2d {

CVML_TARGET_AVX2 void acc_row_avx2(uint32_t* acc, const int32_t* src, uint32_t w, int64_t n) {
    acc_row_body(acc, src, w, n);
}

CVML_TARGET_AVX2 void depthwise_plane_avx2(const conv_grouped* f, const int8_t* img,
                                           const int64_t* taps, const int32_t* w, int32_t* acc) {
    const conv_geom& g = f->g;
    const int64_t nt = g.kh * g.kw;
    for (int64_t y = 0; y < g.oh; ++y) {
        const int8_t* base = img + y * f->wq;
        // Whole groups of 8 read up to 7 values past the row: the image has that slack,
        // and acc rows are followed by the next row (or the plane's slack).
        for (int64_t x = 0; x < g.ow; x += 8) {
            __m256i v = _mm256_setzero_si256();
            for (int64_t t = 0; t < nt; ++t) {
                int64_t bytes;
                memcpy(&bytes, base + taps[t] + x, 8);
                const __m256i xv = _mm256_cvtepi8_epi32(_mm_cvtsi64_si128(bytes));
                v = _mm256_add_epi32(v, _mm256_mullo_epi32(xv, _mm256_set1_epi32(w[t])));
            }
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + y * g.ow + x), v);
        }
    }
}

}  // namespace cpu_conv2d

#endif
