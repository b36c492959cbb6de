/* Scalar semantics of the element-wise operators, byte-exact with upstream's CPU
 * kernels (FORMAT.md §7). Shared by the CPU kernels, their SIMD variants and the
 * unit tests, so that every path computes the same function. Signed overflow is
 * avoided: wrap-around goes through the unsigned helpers. */
#pragma once

#include <stdint.h>

#include "device/cpu/cpu_kernel.h"

/* |x|; |INT32_MIN| wraps to INT32_MIN as upstream's -O3 build does. */
static inline int32_t cvm_abs_value(int32_t x) {
    return x < 0 ? wrap_neg(x) : x;
}

/* Bit length of |x| with 0 mapped to 1; |INT32_MIN| = 2^31 has 32 bits. */
static inline int32_t cvm_precision_value(int32_t x) {
    uint32_t m = x < 0 ? 0u - static_cast<uint32_t>(x) : static_cast<uint32_t>(x);
    int32_t bits = 0;
    while (m) {
        ++bits;
        m >>= 1;
    }
    return bits ? bits : 1;
}

/* C division truncating toward zero; a zero divisor gives 0 (upstream's kernel tests
 * for it). INT32_MIN / -1 would trap; its wrapped quotient is INT32_MIN. */
static inline int32_t cvm_div_value(int32_t a, int32_t b) {
    if (b == 0) return 0;
    if (b == -1) return wrap_neg(a);
    return a / b;
}

/* cvm_left_shift as upstream's formal device computes it (divergence D1):
 * clip(x * 2^b, +-(2^(p-1)-1)), in int64 so that neither the shift of a negative
 * value nor an overflow is undefined. |x| <= 2^31 and b <= 32 keep it in range. */
static inline int32_t cvm_left_shift_value(int32_t x, int32_t precision, int32_t shift_bit) {
    int32_t bound = cvml_precision_bound(precision);
    if (shift_bit > 32) shift_bit = 32;
    int64_t v = static_cast<int64_t>(x) * (int64_t{1} << shift_bit);
    return v > bound ? bound
                     : (v < -static_cast<int64_t>(bound) ? -bound : static_cast<int32_t>(v));
}

/* Index clipping shared by take and cvm_lut: negative indices become 0, indices past
 * the end become n - 1. */
static inline int64_t cvm_clip_index(int32_t i, int64_t n) {
    return i < 0 ? 0 : (i >= n ? n - 1 : i);
}
