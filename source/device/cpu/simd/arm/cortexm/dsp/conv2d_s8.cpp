/* conv2d's dot products with the DSP extension (Cortex-M4/M7): SMLAD multiplies two
 * pairs of int16 and adds both products to a 32-bit sum, keeping the low 32 bits.
 * Weight words of 4 int8 are widened with SXTB16 into lanes (0, 2) and, rotated by 8,
 * (1, 3); each pixel's column is widened once into the same lane order, so every
 * weight word feeds two pixels and every column word two channels (2 x 2 sums). */
#include "device/cpu/simd/simd.h"

#if CVML_SIMD_CORTEXM_DSP

#pragma GCC optimize("O2") /* the hot loops, in an -Os library too */

#include <arm_acle.h>
#include <string.h>

#include "device/cpu/simd/arm/cortexm/conv2d_s8.h"

namespace {

inline size_t round8(size_t v) {
    return (v + 7) & ~static_cast<size_t>(7);
}

/* Words of a column widened: per group of 4 values, (v0, v2) then (v1, v3). */
inline size_t wide_words(int32_t K) {
    return static_cast<size_t>(K / 4) * 2;
}

inline uint32_t load_word(const int8_t* p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* Bytes 1 and 3 sign-extended to int16 lanes (SXTB16 of the word rotated by 8). */
inline uint32_t sxtb16_odd(uint32_t v) {
    uint32_t r;
    __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(v));
    return r;
}

void widen(const int8_t* col, int32_t K, uint32_t* wide) {
    for (int32_t g = 0; g < K / 4; ++g) {
        const uint32_t v = load_word(col + 4 * g);
        wide[2 * g] = __sxtb16(v);
        wide[2 * g + 1] = sxtb16_odd(v);
    }
}

/* The K % 4 values past the last whole word, one product at a time. */
inline uint32_t tail_dot(const int8_t* w, const int8_t* col, int32_t K) {
    uint32_t acc = 0;
    for (int32_t k = K & ~3; k < K; ++k)
        acc += static_cast<uint32_t>(static_cast<int32_t>(w[k]) * static_cast<int32_t>(col[k]));
    return acc;
}

/* Sums of channels o, o + 1 (rows w0, w1) for pixels with widened columns c0, c1. */
void dot2x2(const int8_t* w0, const int8_t* w1, int32_t K, const uint32_t* c0, const uint32_t* c1,
            int32_t acc[4]) {
    int32_t s00 = acc[0], s01 = acc[1], s10 = acc[2], s11 = acc[3];
    for (int32_t g = 0; g < K / 4; ++g) {
        const uint32_t a0 = load_word(w0 + 4 * g), a1 = load_word(w1 + 4 * g);
        const uint32_t a0e = __sxtb16(a0), a0o = sxtb16_odd(a0);
        const uint32_t a1e = __sxtb16(a1), a1o = sxtb16_odd(a1);
        const uint32_t b0e = c0[2 * g], b0o = c0[2 * g + 1];
        const uint32_t b1e = c1[2 * g], b1o = c1[2 * g + 1];
        s00 = __smlad(a0e, b0e, s00);
        s00 = __smlad(a0o, b0o, s00);
        s01 = __smlad(a0e, b1e, s01);
        s01 = __smlad(a0o, b1o, s01);
        s10 = __smlad(a1e, b0e, s10);
        s10 = __smlad(a1o, b0o, s10);
        s11 = __smlad(a1e, b1e, s11);
        s11 = __smlad(a1o, b1o, s11);
    }
    acc[0] = s00;
    acc[1] = s01;
    acc[2] = s10;
    acc[3] = s11;
}

/* One channel's sums for pixels c0, c1 (an odd channel count's last). */
void dot1x2(const int8_t* w0, int32_t K, const uint32_t* c0, const uint32_t* c1, int32_t acc[2]) {
    int32_t s0 = acc[0], s1 = acc[1];
    for (int32_t g = 0; g < K / 4; ++g) {
        const uint32_t a0 = load_word(w0 + 4 * g);
        const uint32_t a0e = __sxtb16(a0), a0o = sxtb16_odd(a0);
        s0 = __smlad(a0e, c0[2 * g], s0);
        s0 = __smlad(a0o, c0[2 * g + 1], s0);
        s1 = __smlad(a0e, c1[2 * g], s1);
        s1 = __smlad(a0o, c1[2 * g + 1], s1);
    }
    acc[0] = s0;
    acc[1] = s1;
}

}  // namespace

/* Scratch: the band (4 bytes of slack for band_patch's words), two int8 columns (K + 4
 * each), then the two widened. */
size_t cm_conv_scratch_bytes(const cm_conv* cv) {
    return cortexm::round16(cortexm::band_bytes(cv) + 4) +
           2 * round8(static_cast<size_t>(cv->K) + 4) + 2 * wide_words(cv->K) * 4;
}

void cm_conv_row(const cm_conv* cv, int64_t n, int32_t oy, void* scratch, int32_t* sums) {
    const size_t K = static_cast<size_t>(cv->K), col_bytes = round8(K + 4);
    int8_t* band = static_cast<int8_t*>(scratch);
    int8_t* col0 = band + cortexm::round16(cortexm::band_bytes(cv) + 4);
    int8_t* col1 = col0 + col_bytes;
    uint32_t* wide0 = reinterpret_cast<uint32_t*>(col1 + col_bytes);
    uint32_t* wide1 = wide0 + wide_words(cv->K);
    const int8_t* img = cv->x + static_cast<size_t>(n) * static_cast<size_t>(cv->c) *
                                    static_cast<size_t>(cv->h) * static_cast<size_t>(cv->w_in);
    const int32_t ow = cv->ow;
    cortexm::fill_band(cv, img, oy, band);
    // Pixels in pairs; an odd last pixel pairs with itself (its sums are written twice).
    for (int32_t ox = 0; ox < ow; ox += 2) {
        const int32_t ox1 = ox + 1 < ow ? ox + 1 : ox;
        cortexm::band_patch(cv, band, ox, col0);
        cortexm::band_patch(cv, band, ox1, col1);
        widen(col0, cv->K, wide0);
        widen(col1, cv->K, wide1);
        int32_t o = 0;
        for (; o + 2 <= cv->o; o += 2) {
            const int8_t* w0 = cv->w + static_cast<size_t>(o) * K;
            const int8_t* w1 = w0 + K;
            const int32_t b0 = cv->bias ? cv->bias[o] : 0, b1 = cv->bias ? cv->bias[o + 1] : 0;
            int32_t acc[4] = {b0, b0, b1, b1};
            dot2x2(w0, w1, cv->K, wide0, wide1, acc);
            sums[o * ow + ox] =
                static_cast<int32_t>(static_cast<uint32_t>(acc[0]) + tail_dot(w0, col0, cv->K));
            sums[o * ow + ox1] =
                static_cast<int32_t>(static_cast<uint32_t>(acc[1]) + tail_dot(w0, col1, cv->K));
            sums[(o + 1) * ow + ox] =
                static_cast<int32_t>(static_cast<uint32_t>(acc[2]) + tail_dot(w1, col0, cv->K));
            sums[(o + 1) * ow + ox1] =
                static_cast<int32_t>(static_cast<uint32_t>(acc[3]) + tail_dot(w1, col1, cv->K));
        }
        if (o < cv->o) {
            const int8_t* w0 = cv->w + static_cast<size_t>(o) * K;
            const int32_t b0 = cv->bias ? cv->bias[o] : 0;
            int32_t acc[2] = {b0, b0};
            dot1x2(w0, cv->K, wide0, wide1, acc);
            sums[o * ow + ox] =
                static_cast<int32_t>(static_cast<uint32_t>(acc[0]) + tail_dot(w0, col0, cv->K));
            sums[o * ow + ox1] =
                static_cast<int32_t>(static_cast<uint32_t>(acc[1]) + tail_dot(w0, col1, cv->K));
        }
    }
}

#endif
