/* What planning needs to know of the Cortex-M conv2d kernels (conv2d_s8.h): the bytes of
 * their band and scratch. Plain arithmetic, compiled on every build, so that a host
 * prepares a compiled plan for a Cortex-M target (docs/compiled-plan.md) with the
 * figures the core's own build uses; the kernels (dsp/, mve/) take their layout from the
 * same functions. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "device/cpu/cpu_runtime.h"
#include "device/cpu/simd/arm/cortexm/conv2d_s8.h"

namespace cortexm {

inline size_t round16(size_t v) {
    return (v + 15) & ~static_cast<size_t>(15);
}
inline size_t round8(size_t v) {
    return (v + 7) & ~static_cast<size_t>(7);
}

/* Output pixels the kernels compute together. */
constexpr int32_t kPixels = 4;
/* Values of a patch one MVE gather chunk holds. */
constexpr int32_t kChunk = 16;

/* The band's row length: the input columns an output row's patches read. */
inline int32_t band_width(const cm_conv* cv) {
    return (cv->ow - 1) * cv->sw + (cv->kw - 1) * cv->dw + 1;
}

inline size_t band_bytes(const cm_conv* cv) {
    return static_cast<size_t>(cv->c) * static_cast<size_t>(cv->kh) *
           static_cast<size_t>(band_width(cv));
}

/* MVE: the patch offsets repeat every `entries` values (a multiple of 16, at most K
 * rounded up to 16), the table mve/conv2d_s8.cpp gathers with. */
inline int32_t mve_offset_entries(const cm_conv* cv) {
    const int32_t kw = cv->kw, low_bit = kw & -kw;
    const int32_t chunks = kw / (low_bit < kChunk ? low_bit : kChunk);
    const int32_t kp = static_cast<int32_t>(round16(static_cast<size_t>(cv->K)));
    return chunks * kChunk < kp ? chunks * kChunk : kp;
}

/* MVE scratch: the band, a quad column, a period of patch offsets, and for rows narrower
 * than a quad four sums per channel. */
inline size_t mve_scratch_bytes(const cm_conv* cv) {
    const size_t kp = round16(static_cast<size_t>(cv->K));
    const size_t offsets = 2 * static_cast<size_t>(mve_offset_entries(cv));
    const size_t narrow =
        cv->ow < kPixels ? sizeof(int32_t) * kPixels * static_cast<size_t>(cv->o) : 0;
    return round16(band_bytes(cv)) + kPixels * kp + round16(offsets) + narrow;
}

/* DSP scratch: the band (4 bytes of slack for band_patch's words), four int8 columns
 * (K + 4 each), then the four widened and interleaved. */
inline size_t dsp_scratch_bytes(const cm_conv* cv) {
    return round16(band_bytes(cv) + 4) + kPixels * round8(static_cast<size_t>(cv->K) + 4) +
           static_cast<size_t>(cv->K / 4) * 2 * kPixels * 4;
}

/* The scratch one row of the kernels of `kernels` (enum cpu_cortexm_kernels) needs. */
inline size_t scratch_bytes(int kernels, const cm_conv* cv) {
    return kernels == CPU_CM_MVE ? mve_scratch_bytes(cv) : dsp_scratch_bytes(cv);
}

}  // namespace cortexm
