/* Cortex-M accumulate_row and 1x1 depthwise sums (accumulate.h). */
#include "device/cpu/simd/simd.h"

#if CVML_SIMD_CORTEXM

#pragma GCC optimize("O2") /* the hot loops, in an -Os library too */

#include "cvml_ops.h"
#include "device/cpu/simd/arm/cortexm/accumulate.h"

#include "graph/graph.h"

#if CVML_SIMD_CORTEXM_MVE
#include <arm_mve.h>
#endif

namespace {

template <typename T, bool kCast>
void accumulate(uint32_t* acc, const void* row, uint32_t wv, int64_t lo64, int64_t hi64,
                int64_t sw64, int64_t off64) {
    const int32_t lo = static_cast<int32_t>(lo64), hi = static_cast<int32_t>(hi64);
    const int32_t sw = static_cast<int32_t>(sw64);
    const int32_t off = static_cast<int32_t>(off64);
    const T* x = static_cast<const T*>(row);
    int32_t i = lo;
#if CVML_SIMD_CORTEXM_MVE
    // Four sums at a time: acc + x * wv keeps the low 32 bits, as the scalar loop.
    if (sw == 1 && sizeof(T) == 1 && !kCast) {
        const int8_t* x8 = reinterpret_cast<const int8_t*>(x);
        for (; i + 4 <= hi; i += 4) {
            int32x4_t a = vreinterpretq_s32_u32(vld1q_u32(acc + i));
            a = vmlaq_n_s32(a, vldrbq_s32(x8 + i + off), static_cast<int32_t>(wv));
            vst1q_u32(acc + i, vreinterpretq_u32_s32(a));
        }
    }
#endif
    for (; i < hi; ++i) {
        const T v = x[i * sw + off];
        const int32_t xv = kCast ? static_cast<int8_t>(v) : static_cast<int32_t>(v);
        acc[i] += wv * static_cast<uint32_t>(xv);
    }
}

inline int32_t scale_add(int32_t b, int32_t w, int32_t x) {
    return cvml_wrap_add(b, cvml_wrap_mul(w, x));
}

}  // namespace

void cm_accumulate_s8(uint32_t* acc, const void* row, uint32_t wv, int64_t lo, int64_t hi,
                      int64_t sw, int64_t off) {
    accumulate<int8_t, false>(acc, row, wv, lo, hi, sw, off);
}

void cm_accumulate_s32(uint32_t* acc, const void* row, uint32_t wv, int64_t lo, int64_t hi,
                       int64_t sw, int64_t off) {
    accumulate<int32_t, false>(acc, row, wv, lo, hi, sw, off);
}

void cm_accumulate_s32_cast(uint32_t* acc, const void* row, uint32_t wv, int64_t lo, int64_t hi,
                            int64_t sw, int64_t off) {
    accumulate<int32_t, true>(acc, row, wv, lo, hi, sw, off);
}

void cm_scale_add(const void* x, int32_t storage, int32_t n, int32_t w, int32_t b, int32_t* out) {
    int32_t i = 0;
    if (storage == STORAGE_INT8) {
        const int8_t* x8 = static_cast<const int8_t*>(x);
#if CVML_SIMD_CORTEXM_MVE
        const int32x4_t bias = vdupq_n_s32(b);
        for (; i + 4 <= n; i += 4) vst1q_s32(out + i, vmlaq_n_s32(bias, vldrbq_s32(x8 + i), w));
#endif
        for (; i < n; ++i) out[i] = scale_add(b, w, x8[i]);
        return;
    }
    const int32_t* x32 = static_cast<const int32_t*>(x);
    for (; i < n; ++i) out[i] = scale_add(b, w, x32[i]);
}

#endif
