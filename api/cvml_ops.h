/* cvm-lite: the element-wise steps of a fused tail, for every device.
 *
 * An operator that maps each value on its own (cvm_right_shift, cvm_clip, clip, relu,
 * broadcast_mul by a one-element constant, elemwise_add) describes itself as one step
 * (operator/op_def.h: op_def.step). A device that fuses such operators into the node
 * before them (a convolution's tail) applies the steps in order to each int32 result.
 * The functions below are the steps' exact semantics, byte-exact with upstream's CPU
 * kernels on int32 with two's-complement wrap-around; a device's vector code is checked
 * against them.
 *
 * Plain, self-contained C99 (and C++): plugins and the CUDA device include it as is. */
#ifndef CVML_OPS_H
#define CVML_OPS_H

#include <stdint.h>

/* Raised when a step kind or a field is added; kinds and fields are never removed or
 * renumbered. */
#define CVML_OPS_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

/* Host and CUDA device code alike. */
#if defined(__CUDACC__)
#define CVML_OPS_FN static inline __host__ __device__
#else
#define CVML_OPS_FN static inline
#endif

/* What a step does to a value x (its element i). */
typedef enum cvml_step_kind {
    CVML_STEP_NONE = 0,
    /* max(min(x, b), a): clip (a_min, a_max), cvm_clip (-(2^(p-1)-1), 2^(p-1)-1), relu
     * (0, INT32_MAX). */
    CVML_STEP_CLIP = 1,
    /* cvm_right_shift with precision a (1..32) and shift_bit b (1..32), with upstream's
     * CPU quirks: a == 1 gives 0; b >= 31 gives x >> 31 (no rounding); otherwise
     * t = ((x >> (b-1)) + 1) >> 1 (the + 1 wrapping), clipped to +-(2^(a-1)-1) only
     * when a + b < 32. */
    CVML_STEP_RIGHT_SHIFT = 2,
    /* x * a, wrapping (broadcast_mul by a one-element constant a). */
    CVML_STEP_MUL = 3,
    /* x + y[i], wrapping, y being the operator's input number `operand` (elemwise_add:
     * the input that is not x), with the same element count as x. */
    CVML_STEP_ADD = 4
} cvml_step_kind;

typedef struct cvml_step {
    int32_t kind;    /* cvml_step_kind */
    int32_t a, b;    /* the constants, as documented per kind */
    int32_t operand; /* CVML_STEP_ADD: the input index of y in the operator's node */
} cvml_step;

/* 2^(p-1)-1, the largest magnitude of a p-bit signed value; 0 for p <= 1 and INT32_MAX
 * for p >= 32. */
CVML_OPS_FN int32_t cvml_precision_bound(int32_t precision) {
    if (precision <= 1) return 0;
    if (precision >= 32) return INT32_MAX;
    return (int32_t)((((uint32_t)1) << (precision - 1)) - 1u);
}

/* Two's-complement wrap-around, which C and C++ leave undefined for signed overflow:
 * upstream's g++ -O3 build wraps, and consensus depends on it. Every device computes
 * int32 arithmetic through these. */
CVML_OPS_FN int32_t cvml_wrap_add(int32_t x, int32_t y) {
    return (int32_t)((uint32_t)x + (uint32_t)y);
}
CVML_OPS_FN int32_t cvml_wrap_sub(int32_t x, int32_t y) {
    return (int32_t)((uint32_t)x - (uint32_t)y);
}
CVML_OPS_FN int32_t cvml_wrap_mul(int32_t x, int32_t y) {
    return (int32_t)((uint32_t)x * (uint32_t)y);
}
CVML_OPS_FN int32_t cvml_wrap_neg(int32_t x) {
    return (int32_t)(0u - (uint32_t)x);
}

CVML_OPS_FN int32_t cvml_clip(int32_t x, int32_t lo, int32_t hi) {
    x = x > hi ? hi : x;
    return x < lo ? lo : x;
}

/* cvm_right_shift (precision p, shift_bit b) on one value, as CVML_STEP_RIGHT_SHIFT.
 * Right shifts of negative values are arithmetic on every compiler cvm-lite supports. */
CVML_OPS_FN int32_t cvml_right_shift(int32_t x, int32_t p, int32_t b) {
    int32_t t, bound;
    if (p <= 1) return 0;
    if (b >= 31) return x >> 31;
    t = cvml_wrap_add(x >> (b - 1), 1) >> 1;
    if (p + b >= 32) return t;
    bound = cvml_precision_bound(p);
    return cvml_clip(t, -bound, bound);
}

/* One step on x; y is the operand's element for CVML_STEP_ADD (ignored otherwise). */
CVML_OPS_FN int32_t cvml_step_value(const cvml_step* s, int32_t x, int32_t y) {
    switch (s->kind) {
        case CVML_STEP_CLIP:
            return cvml_clip(x, s->a, s->b);
        case CVML_STEP_RIGHT_SHIFT:
            return cvml_right_shift(x, s->a, s->b);
        case CVML_STEP_MUL:
            return cvml_wrap_mul(x, s->a);
        case CVML_STEP_ADD:
            return cvml_wrap_add(x, y);
        default:
            return x;
    }
}

/* The largest |value| the step's output can hold when |x| <= x_bound and, for
 * CVML_STEP_ADD, |y| <= y_bound; -1 means unknown (also for an unknown input bound,
 * -1). Declared precision is not a bound by itself: a right shift with p + b >= 32
 * does not clip. */
CVML_OPS_FN int64_t cvml_step_bound(const cvml_step* s, int64_t x_bound, int64_t y_bound) {
    int64_t lo, hi, f;
    switch (s->kind) {
        case CVML_STEP_CLIP:
            /* The clip is monotone: x in [-x_bound, x_bound] (any int32 when unknown)
             * lands in [clip(lowest), clip(highest)]. */
            lo = cvml_clip(x_bound >= 0 && x_bound <= INT32_MAX ? (int32_t)-x_bound : INT32_MIN,
                           s->a, s->b);
            hi = cvml_clip(x_bound >= 0 && x_bound <= INT32_MAX ? (int32_t)x_bound : INT32_MAX,
                           s->a, s->b);
            lo = lo < 0 ? -lo : lo;
            hi = hi < 0 ? -hi : hi;
            return lo > hi ? lo : hi;
        case CVML_STEP_RIGHT_SHIFT:
            if (s->a <= 1) return 0;
            if (s->b >= 31) return 1;
            if (s->a + s->b >= 32) return -1;
            return cvml_precision_bound(s->a);
        case CVML_STEP_MUL:
            f = s->a < 0 ? -(int64_t)s->a : s->a;
            return x_bound >= 0 && x_bound * f <= INT32_MAX ? x_bound * f : -1;
        case CVML_STEP_ADD:
            if (x_bound < 0 || y_bound < 0 || x_bound + y_bound > INT32_MAX) return -1;
            return x_bound + y_bound;
        default:
            return -1;
    }
}

#ifdef __cplusplus
}
#endif

#endif /* CVML_OPS_H */
