/* conv2d's dot products with the DSP extension (Cortex-M4/M7): SMLAD multiplies two
 * pairs of int16 and adds both products to a 32-bit sum, keeping the low 32 bits.
 * A weight word of 4 int8 is widened with SXTB16 into lanes (0, 2) and, rotated by 8,
 * (1, 3); four pixels' columns are widened once into the same lane order and
 * interleaved, so each weight word feeds four pixels' sums (one channel by four pixels:
 * 17 instructions per 16 multiply-accumulates, in assembly so that the loop keeps its
 * 11 registers). */
#include "device/cpu/simd/simd.h"

#if CVML_SIMD_CORTEXM_DSP

#pragma GCC optimize("O2") /* the hot loops, in an -Os library too */

#include <arm_acle.h>
#include <string.h>

#include "device/cpu/simd/arm/cortexm/conv2d_s8.h"
#include "device/cpu/simd/arm/cortexm/conv2d_plan.h"

namespace {

using cortexm::kPixels;
using cortexm::round8;

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

/* Column p's group g of 4 values widened to wide[g * 8 + 2p] (v0, v2), [.. + 1] (v1, v3). */
void widen(const int8_t* col, int32_t K, int32_t p, uint32_t* wide) {
    for (int32_t g = 0; g < K / 4; ++g) {
        const uint32_t v = load_word(col + 4 * g);
        wide[g * 2 * kPixels + 2 * p] = __sxtb16(v);
        wide[g * 2 * kPixels + 2 * p + 1] = sxtb16_odd(v);
    }
}

/* acc[p] += dot(weight row w, column p) over the groups of 4 (groups > 0). */
void dot1x4(const int8_t* w, const uint32_t* wide, int32_t groups, int32_t acc[kPixels]) {
    int32_t s0 = acc[0], s1 = acc[1], s2 = acc[2], s3 = acc[3];
    uint32_t a, ao, be, bo;
    __asm__ volatile(
        "1:\n"
        "ldr %[a], [%[w]], #4\n"
        "sxtb16 %[ao], %[a], ror #8\n"
        "sxtb16 %[a], %[a]\n"
        "ldrd %[be], %[bo], [%[c]], #8\n"
        "smlad %[s0], %[a], %[be], %[s0]\n"
        "smlad %[s0], %[ao], %[bo], %[s0]\n"
        "ldrd %[be], %[bo], [%[c]], #8\n"
        "smlad %[s1], %[a], %[be], %[s1]\n"
        "smlad %[s1], %[ao], %[bo], %[s1]\n"
        "ldrd %[be], %[bo], [%[c]], #8\n"
        "smlad %[s2], %[a], %[be], %[s2]\n"
        "smlad %[s2], %[ao], %[bo], %[s2]\n"
        "ldrd %[be], %[bo], [%[c]], #8\n"
        "smlad %[s3], %[a], %[be], %[s3]\n"
        "smlad %[s3], %[ao], %[bo], %[s3]\n"
        "subs %[n], %[n], #1\n"
        "bne 1b\n"
        : [s0] "+r"(s0), [s1] "+r"(s1), [s2] "+r"(s2), [s3] "+r"(s3), [w] "+r"(w), [c] "+r"(wide),
          [n] "+r"(groups), [a] "=&r"(a), [ao] "=&r"(ao), [be] "=&r"(be), [bo] "=&r"(bo)
        :
        : "cc", "memory");
    acc[0] = s0;
    acc[1] = s1;
    acc[2] = s2;
    acc[3] = s3;
}

/* The K % 4 values past the last whole word, one product at a time. */
inline uint32_t tail_dot(const int8_t* w, const int8_t* col, int32_t K) {
    uint32_t acc = 0;
    for (int32_t k = K & ~3; k < K; ++k)
        acc += static_cast<uint32_t>(static_cast<int32_t>(w[k]) * static_cast<int32_t>(col[k]));
    return acc;
}

}  // namespace

/* Its scratch is laid out as cortexm::dsp_scratch_bytes (conv2d_plan.h) counts it. */
void cm_conv_row(const cm_conv* cv, int64_t n, int32_t oy, void* scratch, int32_t* sums) {
    const size_t K = static_cast<size_t>(cv->K), col_bytes = round8(K + 4);
    int8_t* band = static_cast<int8_t*>(scratch);
    int8_t* cols = band + cortexm::round16(cortexm::band_bytes(cv) + 4);
    uint32_t* wide = reinterpret_cast<uint32_t*>(cols + kPixels * col_bytes);
    const int8_t* img = cv->x + static_cast<size_t>(n) * static_cast<size_t>(cv->c) *
                                    static_cast<size_t>(cv->h) * static_cast<size_t>(cv->w_in);
    const int32_t ow = cv->ow, groups = cv->K / 4;
    const bool tail = (cv->K & 3) != 0;  // values past the last whole word
    cortexm::fill_band(cv, img, oy, band);
    // Pixels four at a time; past the row's end the last pixel repeats (its sums are
    // written again, the same).
    for (int32_t ox = 0; ox < ow; ox += kPixels) {
        int32_t px[kPixels];
        for (int32_t p = 0; p < kPixels; ++p) {
            px[p] = ox + p < ow ? ox + p : ow - 1;
            cortexm::band_patch(cv, band, px[p], cols + p * col_bytes);
            widen(cols + p * col_bytes, cv->K, p, wide);
        }
        for (int32_t o = 0; o < cv->o; ++o) {
            const int8_t* w = cv->w + static_cast<size_t>(o) * K;
            const int32_t b = cv->bias ? cv->bias[o] : 0;
            int32_t acc[kPixels] = {b, b, b, b};
            if (groups > 0) dot1x4(w, wide, groups, acc);
            for (int32_t p = 0; p < kPixels; ++p)
                sums[o * ow + px[p]] =
                    tail ? static_cast<int32_t>(static_cast<uint32_t>(acc[p]) +
                                                tail_dot(w, cols + p * col_bytes, cv->K))
                         : acc[p];
        }
    }
}

#endif
