/* The fused element-wise tail (simd/epilogue.h) on Cortex-M: applied step by step to a
 * chunk of values (a tight loop per step, vectorized with MVE) instead of the scalar
 * level's whole chain per value, which interprets every step for every value. Each value
 * goes through the same operations in the same order, so the bits are the scalar
 * level's (epilogue_value). */
#pragma once

#include <stdint.h>

#include "device/cpu/simd/epilogue.h"

/* epilogue_apply for any storages (int8, int16, int32) of in, out and EP_ADD operands. */
void cm_epilogue_apply(const epilogue* ep, const void* in, int32_t in_storage, int64_t in_index,
                       int32_t bias, void* out, int32_t out_storage, int64_t out_index, int64_t n);

/* A block of sums (rows of `cols` int32, contiguous, modified in place) through the
 * chain into out: row r goes to out_first + r * out_stride on (a conv2d output row for
 * every channel at once), EP_ADD operands indexed like the output. */
void cm_epilogue_block(const epilogue* ep, int32_t* sums, int32_t rows, int32_t cols, void* out,
                       int32_t out_storage, int64_t out_first, int64_t out_stride);
