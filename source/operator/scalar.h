/* The scalar semantics of the element-wise operators that are not fused-tail steps,
 * byte-exact with upstream's CPU kernels (FORMAT.md §7): one definition for the CPU
 * kernels, their vector code's checks, the CUDA kernels (host and device code) and the
 * unit tests. The steps (clip, cvm_right_shift, ...) and the wrap-around arithmetic are
 * cvml_ops.h's. Dependency-free: it includes nothing from graph/. */
#pragma once

#include <stdint.h>

#include "cvml_ops.h"

/* |x|; |INT32_MIN| wraps to INT32_MIN as upstream's -O3 build does. */
CVML_OPS_FN int32_t cvm_abs_value(int32_t x) {
    return x < 0 ? cvml_wrap_neg(x) : x;
}

/* Bit length of |x| with 0 mapped to 1; |INT32_MIN| = 2^31 has 32 bits (the magnitude
 * is taken in uint32). */
CVML_OPS_FN int32_t cvm_precision_value(int32_t x) {
    uint32_t m = x < 0 ? 0u - (uint32_t)x : (uint32_t)x;
#if defined(__CUDA_ARCH__)
    const int32_t bits = 32 - __clz((int)m);
#else
    int32_t bits = 0;
    while (m) {
        ++bits;
        m >>= 1;
    }
#endif
    return bits ? bits : 1;
}

/* C division truncating toward zero; a zero divisor gives 0 (upstream's kernel tests
 * for it). INT32_MIN / -1 would trap; its wrapped quotient is INT32_MIN. */
CVML_OPS_FN int32_t cvm_div_value(int32_t a, int32_t b) {
    if (b == 0) return 0;
    if (b == -1) return cvml_wrap_neg(a);
    return a / b;
}

/* cvm_left_shift as upstream's formal device computes it (divergence D1):
 * clip(x * 2^b, +-(2^(p-1)-1)), b capped at 32, in int64 so that neither the shift of a
 * negative value nor an overflow is undefined: |x| <= 2^31 keeps it in range. */
CVML_OPS_FN int32_t cvm_left_shift_value(int32_t x, int32_t precision, int32_t shift_bit) {
    const int32_t bound = cvml_precision_bound(precision);
    const int64_t v = (int64_t)x * ((int64_t)1 << (shift_bit > 32 ? 32 : shift_bit));
    return v > bound ? bound : (v < -(int64_t)bound ? -bound : (int32_t)v);
}

/* Index clipping shared by take and cvm_lut: negative indices become 0, indices past
 * the end become n - 1. */
CVML_OPS_FN int64_t cvm_clip_index(int32_t i, int64_t n) {
    return i < 0 ? 0 : (i >= n ? n - 1 : i);
}
