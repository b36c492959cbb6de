/* Cortex-M conv2d kernels (groups == 1, int8-stored image and weights): the DSP
 * extension's SMLAD (Cortex-M4/M7, dsp/conv2d_s8.cpp) and Helium/MVE's VMLADAVA
 * (Cortex-M55, mve/conv2d_s8.cpp). Chosen at compile time (simd.h: CVML_SIMD_CORTEXM).
 *
 * An output row is computed for every channel at once: each output pixel's patch is
 * gathered into a column of K = C * kh * kw int8 values in the weights' (c, r, s)
 * order, zeros where the patch leaves the image, and each channel's sum is the dot
 * product of its weight row, read in place, with that column, started from the bias.
 * Products of int8 values are exact; the sums wrap mod 2^32 like upstream's (SMLAD and
 * VMLADAVA keep the low 32 bits), so the order of the terms is free and the sums are the
 * reference loops' bits. */
#pragma once

#include <stddef.h>
#include <stdint.h>

typedef struct cm_conv {
    const int8_t* x;     /* input N x C x H x W */
    const int8_t* w;     /* weights O x K, row-major */
    const int32_t* bias; /* O values, or NULL */
    int32_t c, h, w_in;  /* input channels, height, width */
    int32_t o, kh, kw;   /* output channels, kernel */
    int32_t sh, sw, ph, pw, dh, dw;
    int32_t oh, ow; /* output spatial */
    int32_t K;      /* c * kh * kw */
} cm_conv;

/* sums[o * ow + x] = bias[o] + dot(weight row o, patch of pixel (oy, x)) of image n,
 * wrapping, for every channel o and column x. */
void cm_conv_row(const cm_conv* cv, int64_t n, int32_t oy, void* scratch, int32_t* sums);

namespace cortexm {

/* The input rows an output row reads, zero-padded: row (c, r) of the band is input row
 * oy * sh - ph + r * dh of channel c, its column j input column j - pw (zero outside the
 * image), band_width() columns long (conv2d_plan.h). With it every pixel's patch is at
 * fixed offsets from band + ox * sw: segment (c, r) is band_width() * (c * kh + r) on,
 * kw values dw apart. */
void fill_band(const cm_conv* cv, const int8_t* img, int32_t oy, int8_t* band);
/* The patch of output pixel ox as K int8 values in the weights' order (c, r, s), from
 * the band. Writes up to 4 bytes past K (col must have room). */
void band_patch(const cm_conv* cv, const int8_t* band, int32_t ox, int8_t* col);

}  // namespace cortexm
