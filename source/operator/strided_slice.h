/* strided_slice's parsed attributes (upstream StridedSliceParam) and the per-axis rule
 * that inference and every device's kernel use. Dependency-free: it includes nothing
 * from graph/, so the CUDA plugin shares it. */
#pragma once

#include <stdint.h>

#include "operator/attr_types.h"

typedef struct strided_slice_param {
    attr_tuple begin;  /* default (0,); missing entries are 0 */
    attr_tuple end;    /* default (1,); missing entries are the dim */
    attr_tuple stride; /* default (); missing entries are 1 */
} strided_slice_param;

enum strided_slice_axis_status {
    STRIDED_SLICE_OK = 0,
    STRIDED_SLICE_ZERO_STRIDE = 1,
    STRIDED_SLICE_EMPTY = 2, /* begin/end order does not match the stride's sign */
};

/* Axis `axis` of an input dim `n`: the clamped first index and the output size.
 * Negative begin/end get n added; they are clamped to [0, n] for a positive stride and
 * to [-1, n-1] for a negative one; size = ceil(|end-begin| / |stride|), evaluated with
 * upstream's 64-bit wrap-around (a stride near 2^63 wraps the numerator) and then
 * truncated to int as upstream stores it. */
static inline int strided_slice_axis(const strided_slice_param* p, int32_t axis, int64_t n,
                                     int64_t* first, int64_t* stride_out, int64_t* size) {
    const int64_t b_in = axis < p->begin.count ? p->begin.values[axis] : 0;
    const int64_t e_in = axis < p->end.count ? p->end.values[axis] : n;
    const int64_t s = axis < p->stride.count ? p->stride.values[axis] : 1;
    if (s == 0) return STRIDED_SLICE_ZERO_STRIDE;
    const int64_t lo = s < 0 ? -1 : 0;
    const int64_t hi = s < 0 ? n - 1 : n;
    int64_t b = b_in < 0 ? n + b_in : b_in;
    int64_t e = e_in < 0 ? n + e_in : e_in;
    b = b < lo ? lo : (b > hi ? hi : b);
    e = e < lo ? lo : (e > hi ? hi : e);
    const uint64_t interval = static_cast<uint64_t>(e > b ? e - b : b - e);
    const uint64_t abs_s = s < 0 ? 0 - static_cast<uint64_t>(s) : static_cast<uint64_t>(s);
    const int64_t num = static_cast<int64_t>(interval + abs_s - 1);
    const int64_t den = static_cast<int64_t>(abs_s);
    const int64_t q = num / den; /* den is never -1, so this cannot trap */
    *size = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(q)));
    *first = b;
    *stride_out = s;
    if (s < 0 ? !(e < b) : !(b < e)) return STRIDED_SLICE_EMPTY;
    return STRIDED_SLICE_OK;
}
