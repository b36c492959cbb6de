/* conv2d at avx512, groups == 1 (op/conv2d_gemm.cpp dispatches): the image rows of an
 * int8-stored input, each phase row written whole, zeros included (phase_row_writer). */
#include "device/cpu/op/conv2d_fast.h"
#include "device/cpu/simd/x86/avx512/phase_row_writer.h"

#if CVML_SIMD_X86
/* GCC 12's AVX-512 headers trip this on their own _mm512_undefined_* helpers. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace cpu_conv2d {
namespace {

template <int SW>
CVML_TARGET_AVX512 void image_rows_sw(const conv_gemm* f, const int8_t* x, int8_t* img,
                                      int64_t begin, int64_t end) {
    const conv_geom& g = f->g;
    const phase_row_writer<SW> writer(g.w, g.pw, f->wq);
    const __m512i zero = _mm512_setzero_si512();
    const int64_t plane = f->hq * f->wq;
    int64_t ic = begin / g.h, h = begin % g.h;
    for (int64_t item = begin; item < end; ++item, ++h) {
        int8_t* channel = image_item(f, img, &ic, &h);
        if (f->row_read[h + g.ph])
            writer.write(x + item * g.w, zero, plane, channel + f->row_at[h + g.ph]);
    }
}

}  // namespace

void image_rows_i8_avx512(const conv_gemm* f, const int8_t* x, int8_t* img, int64_t begin,
                          int64_t end) {
    if (f->g.sw == 1)
        image_rows_sw<1>(f, x, img, begin, end);
    else
        image_rows_sw<2>(f, x, img, begin, end);
}

}  // namespace cpu_conv2d

#endif
