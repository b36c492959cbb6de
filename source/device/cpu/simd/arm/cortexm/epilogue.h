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
