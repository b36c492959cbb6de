/* What the Cortex-M conv2d kernels share: the zero-padded band of input rows an output
 * row reads, and each pixel's patch gathered from it. */
#include "device/cpu/simd/arm/cortexm/conv2d_s8.h"

#include "device/cpu/simd/arm/cortexm/conv2d_plan.h"

#include <string.h>

#include "device/cpu/simd/simd.h"

#if CVML_SIMD_CORTEXM

#pragma GCC optimize("O2") /* the hot loops, in an -Os library too */

namespace cortexm {

void fill_band(const cm_conv* cv, const int8_t* img, int32_t oy, int8_t* band) {
    const int32_t wb = band_width(cv), W = cv->w_in;
    // Band columns [lo, hi) hold input columns [lo - pw, hi - pw), the rest zeros.
    int32_t lo = cv->pw < wb ? cv->pw : wb;
    int32_t hi = W + cv->pw < wb ? W + cv->pw : wb;
    if (hi < lo) hi = lo;
    const size_t plane = static_cast<size_t>(cv->h) * static_cast<size_t>(W);
    for (int32_t c = 0; c < cv->c; ++c)
        for (int32_t r = 0; r < cv->kh; ++r, band += wb) {
            const int32_t iy = oy * cv->sh - cv->ph + r * cv->dh;
            if (iy < 0 || iy >= cv->h) {
                memset(band, 0, static_cast<size_t>(wb));
                continue;
            }
            const int8_t* row = img + static_cast<size_t>(c) * plane + static_cast<size_t>(iy) * W;
            memset(band, 0, static_cast<size_t>(lo));
            memcpy(band + lo, row + (lo - cv->pw), static_cast<size_t>(hi - lo));
            memset(band + hi, 0, static_cast<size_t>(wb - hi));
        }
}

void band_patch(const cm_conv* cv, const int8_t* band, int32_t ox, int8_t* col) {
    const int32_t wb = band_width(cv), segments = cv->c * cv->kh, kw = cv->kw;
    const int8_t* src = band + static_cast<size_t>(ox) * static_cast<size_t>(cv->sw);
    if (kw == 1) {  // one value per segment
        for (int32_t j = 0; j < segments; ++j, src += wb) col[j] = *src;
        return;
    }
    if (cv->dw == 1 && kw <= 4) {
        // Consecutive taps move as one (unaligned) word; the next segment overwrites
        // its extra bytes. The last word may read up to 3 bytes past the band's
        // segment: the band has that slack (conv2d_plan.h, scratch_bytes).
        for (int32_t j = 0; j < segments; ++j, src += wb, col += kw) {
            uint32_t v;
            memcpy(&v, src, 4);
            memcpy(col, &v, 4);
        }
        return;
    }
    for (int32_t j = 0; j < segments; ++j, src += wb)
        for (int32_t s = 0; s < kw; ++s) *col++ = src[s * cv->dw];
}

}  // namespace cortexm

#endif
