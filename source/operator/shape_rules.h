/* Helpers shared by the shape and layout operators' inference (header-only, so the
 * operator lists need no support entry). */
#pragma once

#include <inttypes.h>
#include <stdint.h>

#include "operator/op_def.h"
#include "utility/error.h"

/* Upstream VerifyAttrRange: a value outside [lo, hi] is a VERIFY failure (logic). */
static inline int shape_verify_range(int64_t value, const char* name, int64_t lo, int64_t hi) {
    if (value < lo || value > hi)
        return cvml_fail(CVML_ERR_LOGIC, "attribute %s value: %lld out of range [%lld, %lld]", name,
                         static_cast<long long>(value), static_cast<long long>(lo),
                         static_cast<long long>(hi));
    return CVML_OK;
}

/* Stores an inferred shape. A rank outside 1..6 or a dim below 1 can never equal a
 * shape the file may declare, so upstream ends in its shape comparison (logic); we stop
 * here so that nothing downstream sees such a shape or overflows on it. */
static inline int shape_set_output(ir_tensor* out, const int64_t* dims, int32_t ndim) {
    if (ndim < 1 || ndim > CVML_MAX_DIMS)
        return cvml_fail(CVML_ERR_LOGIC, "inferred output rank %" PRId32 " outside 1..%d", ndim,
                         CVML_MAX_DIMS);
    for (int32_t i = 0; i < ndim; ++i)
        if (dims[i] < 1)
            return cvml_fail(CVML_ERR_LOGIC, "inferred output dim %" PRId32 " is %lld", i,
                             static_cast<long long>(dims[i]));
    out->ndim = ndim;
    /* One loop over the fixed bound: gcc 13 does not carry the rank check above into a
     * loop to ndim and warns (-Warray-bounds) that it may read past dims[6]. */
    for (int32_t i = 0; i < CVML_MAX_DIMS; ++i) out->dims[i] = i < ndim ? dims[i] : 0;
    return CVML_OK;
}

/* a * b for non-negative operands, saturating at 2^62 so that later comparisons with
 * real sizes (at most 2^30) stay meaningful without signed overflow. */
static inline int64_t shape_sat_mul(int64_t a, int64_t b) {
    const int64_t cap = int64_t{1} << 62;
    if (a == 0 || b == 0) return 0;
    if (a > cap / b) return cap;
    return a * b;
}
