/* conv2d on aarch64, groups > 1 (conv2d_grouped.cpp dispatches): the depthwise planes
 * over the phase image of an int8 input, at the neon, dotprod and i8mm levels.
 *
 * Exact like upstream's int32 loop: each product x * w is formed exactly (SMLAL: int16
 * by int16 into int32; conv2d's weights are int8) and added into the int32 lane with
 * wrap-around. */
#include "device/cpu/op/conv2d_fast.h"
#include "device/cpu/simd/simd.h"

#if CVML_SIMD_AARCH64
#include <arm_neon.h>

namespace cpu_conv2d {
namespace {

bool fits_int16(const int32_t* w, int64_t n) {
    for (int64_t t = 0; t < n; ++t)
        if (w[t] < INT16_MIN || w[t] > INT16_MAX) return false;
    return true;
}

/* 16 outputs from `base`: the sum over taps t of w[t] * base[taps[t] + i]. */
inline void dot16_i16(const int8_t* base, const int64_t* taps, const int16_t* w, int64_t nt,
                      int32_t* out) {
    int32x4_t a0 = vdupq_n_s32(0), a1 = a0, a2 = a0, a3 = a0;
    for (int64_t t = 0; t < nt; ++t) {
        const int8x16_t x = vld1q_s8(base + taps[t]);
        const int16x8_t lo = vmovl_s8(vget_low_s8(x)), hi = vmovl_high_s8(x);
        a0 = vmlal_n_s16(a0, vget_low_s16(lo), w[t]);
        a1 = vmlal_high_n_s16(a1, lo, w[t]);
        a2 = vmlal_n_s16(a2, vget_low_s16(hi), w[t]);
        a3 = vmlal_high_n_s16(a3, hi, w[t]);
    }
    vst1q_s32(out, a0);
    vst1q_s32(out + 4, a1);
    vst1q_s32(out + 8, a2);
    vst1q_s32(out + 12, a3);
}

}  // namespace

void depthwise_plane_neon(const conv_grouped* f, const int8_t* img, const int64_t* taps,
                          const int32_t* w, int32_t* acc) {
    const conv_geom& g = f->g;
    const int64_t nt = g.kh * g.kw;
    int16_t w16[64];
    if (nt > 64 || !fits_int16(w, nt)) {
        // Not reached through the API: conv2d's weights are int8 (upstream refuses wider
        // ones), so a plane's weights always fit int16. Exact anyway: the plain loop.
        for (int64_t y = 0; y < g.oh; ++y)
            for (int64_t x = 0; x < g.ow; ++x) {
                uint32_t v = 0;
                for (int64_t t = 0; t < nt; ++t)
                    v += static_cast<uint32_t>(img[y * f->wq + taps[t] + x]) *
                         static_cast<uint32_t>(w[t]);
                acc[y * g.ow + x] = static_cast<int32_t>(v);
            }
        return;
    }
    for (int64_t t = 0; t < nt; ++t) w16[t] = static_cast<int16_t>(w[t]);
    for (int64_t y = 0; y < g.oh; ++y) {
        const int8_t* base = img + y * f->wq;
        // Whole groups of 16 read up to 15 values past the row: the image has that
        // slack, and acc rows are followed by the next row (or the plane's 16 values of
        // slack), which is written after this one.
        for (int64_t x = 0; x < g.ow; x += 16)
            dot16_i16(base + x, taps, w16, nt, acc + y * g.ow + x);
    }
}

void depthwise_1x1_neon(const int8_t* x, int32_t w, int64_t n, int32_t* acc) {
    const int64_t t0 = 0;
    int64_t i = 0;
    if (w >= INT16_MIN && w <= INT16_MAX) {  // always (see depthwise_plane_neon)
        const int16_t w16 = static_cast<int16_t>(w);
        for (; i + 16 <= n; i += 16) dot16_i16(x + i, &t0, &w16, 1, acc + i);
    }
    for (; i < n; ++i)
        acc[i] = static_cast<int32_t>(static_cast<uint32_t>(x[i]) * static_cast<uint32_t>(w));
}

}  // namespace cpu_conv2d

#endif
