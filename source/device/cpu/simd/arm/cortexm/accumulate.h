/* The scalar conv2d loops' inner step on Cortex-M (op/conv2d.cpp, accumulate_row):
 * acc[x] += wv * X(row[x * sw + off]) for x in [lo, hi), wrapping, X the stored value
 * (int8), or its int8 cast (int32 storage, kCast), or itself (int32 storage). Those loops
 * take every conv2d the GEMM-like kernels do not (depthwise, the first layer on an
 * int32 image); here they run in 32-bit indices, vectorized with MVE. */
#pragma once

#include <stdint.h>

void cm_accumulate_s8(uint32_t* acc, const void* row, uint32_t wv, int64_t lo, int64_t hi,
                      int64_t sw, int64_t off);
void cm_accumulate_s32(uint32_t* acc, const void* row, uint32_t wv, int64_t lo, int64_t hi,
                       int64_t sw, int64_t off);
void cm_accumulate_s32_cast(uint32_t* acc, const void* row, uint32_t wv, int64_t lo, int64_t hi,
                            int64_t sw, int64_t off);

/* out[i] = b + w * x[i] for i < n, wrapping; x int8 or int32 storage (a 1x1 depthwise
 * conv2d's sums). */
void cm_scale_add(const void* x, int32_t storage, int32_t n, int32_t w, int32_t b, int32_t* out);
