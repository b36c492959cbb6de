/* conv2d's dot products with Helium/MVE (Cortex-M55): VMLADAVA.S8 multiplies 16 int8
 * pairs and adds their sum to a 32-bit scalar, keeping the low 32 bits, so four
 * channels' sums take one load of the column and four of weights per 16 values.
 * The last K % 16 values are loaded predicated (lanes past K read as zero and are not
 * accessed), so weight rows are read in place without padding. */
#include "device/cpu/simd/simd.h"

#if CVML_SIMD_CORTEXM_MVE

#pragma GCC optimize("O2") /* the hot loops, in an -Os library too */

#include <arm_mve.h>

#include "device/cpu/simd/arm/cortexm/conv2d_s8.h"

namespace {

/* out[i] = init[i] + dot(w + i * K, col) for i < 4, wrapping. */
__attribute__((always_inline)) inline void dot4(const int8_t* w, int32_t K, const int8_t* col,
                                                const int32_t* init, int32_t* out, int32_t stride) {
    const int8_t* w0 = w;
    const int8_t* w1 = w0 + K;
    const int8_t* w2 = w1 + K;
    const int8_t* w3 = w2 + K;
    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    if (init) {
        a0 = init[0];
        a1 = init[1];
        a2 = init[2];
        a3 = init[3];
    }
    int32_t k = 0;
    for (; k + 16 <= K; k += 16) {
        const int8x16_t b = vldrbq_s8(col + k);
        a0 = vmladavaq_s8(a0, vldrbq_s8(w0 + k), b);
        a1 = vmladavaq_s8(a1, vldrbq_s8(w1 + k), b);
        a2 = vmladavaq_s8(a2, vldrbq_s8(w2 + k), b);
        a3 = vmladavaq_s8(a3, vldrbq_s8(w3 + k), b);
    }
    if (k < K) {
        const mve_pred16_t p = vctp8q(static_cast<uint32_t>(K - k));
        const int8x16_t b = vldrbq_z_s8(col + k, p);
        a0 = vmladavaq_s8(a0, vldrbq_z_s8(w0 + k, p), b);
        a1 = vmladavaq_s8(a1, vldrbq_z_s8(w1 + k, p), b);
        a2 = vmladavaq_s8(a2, vldrbq_z_s8(w2 + k, p), b);
        a3 = vmladavaq_s8(a3, vldrbq_z_s8(w3 + k, p), b);
    }
    out[0] = a0;
    out[stride] = a1;
    out[2 * stride] = a2;
    out[3 * stride] = a3;
}

inline int32_t dot1(const int8_t* w, int32_t K, const int8_t* col, int32_t init) {
    int32_t a = init, k = 0;
    for (; k + 16 <= K; k += 16) a = vmladavaq_s8(a, vldrbq_s8(w + k), vldrbq_s8(col + k));
    if (k < K) {
        const mve_pred16_t p = vctp8q(static_cast<uint32_t>(K - k));
        a = vmladavaq_s8(a, vldrbq_z_s8(w + k, p), vldrbq_z_s8(col + k, p));
    }
    return a;
}

}  // namespace

using cortexm::round16;

/* Whether every patch offset in the band fits the 16-bit offsets of a gather load. */
static bool gather_fits(const cm_conv* cv) {
    return cortexm::band_bytes(cv) <= 65535;
}

/* offsets[k]: where value k of a patch is, from its pixel's start in the band. */
static void patch_offsets(const cm_conv* cv, uint16_t* offsets) {
    const int32_t wb = cortexm::band_width(cv);
    for (int32_t j = 0, k = 0; j < cv->c * cv->kh; ++j)
        for (int32_t s = 0; s < cv->kw; ++s, ++k)
            offsets[k] = static_cast<uint16_t>(j * wb + s * cv->dw);
}

/* The patch of the pixel whose band columns start at src: 8 values per gather. */
static void gather_patch(const int8_t* src, const uint16_t* offsets, int32_t K, int8_t* col) {
    int32_t k = 0;
    for (; k + 8 <= K; k += 8)
        vstrbq_s16(col + k, vldrbq_gather_offset_s16(src, vldrhq_u16(offsets + k)));
    if (k < K) {
        const mve_pred16_t p = vctp16q(static_cast<uint32_t>(K - k));
        vstrbq_p_s16(col + k, vldrbq_gather_offset_z_s16(src, vldrhq_z_u16(offsets + k, p), p), p);
    }
}

/* Scratch: the band (with 4 bytes of slack for band_patch's words), the patch offsets,
 * then a column. */
size_t cm_conv_scratch_bytes(const cm_conv* cv) {
    return round16(cortexm::band_bytes(cv) + 4) + round16(2 * static_cast<size_t>(cv->K)) +
           round16(static_cast<size_t>(cv->K) + 4);
}

void cm_conv_row(const cm_conv* cv, int64_t n, int32_t oy, void* scratch, int32_t* sums) {
    int8_t* band = static_cast<int8_t*>(scratch);
    uint16_t* offsets = reinterpret_cast<uint16_t*>(band + round16(cortexm::band_bytes(cv) + 4));
    int8_t* col = reinterpret_cast<int8_t*>(offsets) + round16(2 * static_cast<size_t>(cv->K));
    const bool gather = gather_fits(cv);
    if (gather) patch_offsets(cv, offsets);
    const int8_t* img = cv->x + static_cast<size_t>(n) * static_cast<size_t>(cv->c) *
                                    static_cast<size_t>(cv->h) * static_cast<size_t>(cv->w_in);
    const size_t K = static_cast<size_t>(cv->K);
    cortexm::fill_band(cv, img, oy, band);
    for (int32_t ox = 0; ox < cv->ow; ++ox) {
        if (gather)
            gather_patch(band + static_cast<size_t>(ox) * static_cast<size_t>(cv->sw), offsets,
                         cv->K, col);
        else
            cortexm::band_patch(cv, band, ox, col);
        int32_t o = 0;
        for (; o + 4 <= cv->o; o += 4) {
            dot4(cv->w + static_cast<size_t>(o) * K, cv->K, col, cv->bias ? cv->bias + o : nullptr,
                 sums + o * cv->ow + ox, cv->ow);
        }
        for (; o < cv->o; ++o)
            sums[o * cv->ow + ox] =
                dot1(cv->w + static_cast<size_t>(o) * K, cv->K, col, cv->bias ? cv->bias[o] : 0);
    }
}

#endif
