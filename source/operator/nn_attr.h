/* Helpers shared by the nn and reduction operator definitions: upstream's
 * VerifyAttrRange and string-attribute checks, and the shape text of its
 * CVM_ASSIGN_* messages. Header-only so that each operator file stays self-contained. */
#pragma once

#include <stdio.h>
#include <string.h>

#include "operator/op_def.h"
#include "utility/error.h"

/* Upstream VerifyAttrRange: min <= v <= max, [0, 4096] unless a caller says
 * otherwise; a violation is a VERIFY failure (logic error). */
static inline int nn_verify_attr_range(int64_t v, const char* name, int64_t min = 0,
                                       int64_t max = 4096) {
    if (v < min || v > max)
        return cvml_fail(CVML_ERR_LOGIC, "attribute %s value: %lld out of range [%lld, %lld]", name,
                         static_cast<long long>(v), static_cast<long long>(min),
                         static_cast<long long>(max));
    return CVML_OK;
}

static inline bool nn_str_eq(const attr_string* s, const char* v) {
    return strcmp(s->value, v) == 0;
}

/* Formats dims as upstream prints a TShape: "[3,5]". */
static inline const char* nn_dims_str(const int64_t* dims, int32_t ndim, char* buf, size_t cap) {
    size_t used = 0;
    if (cap == 0) return buf;
    used += static_cast<size_t>(snprintf(buf, cap, "["));
    for (int32_t i = 0; i < ndim && used < cap; ++i)
        used += static_cast<size_t>(snprintf(buf + used, cap - used, i ? ",%lld" : "%lld",
                                             static_cast<long long>(dims[i])));
    if (used < cap) snprintf(buf + used, cap - used, "]");
    return buf;
}

/* Upstream CVM_ASSIGN_INPUT_SHAPE on a known input: a mismatch is LOG(FATAL), a runtime
 * error, worded "expects weight's shape to be [3,5], but got [3,4]". */
static inline int nn_expect_input_shape(const ir_tensor* t, const char* what, const int64_t* dims,
                                        int32_t ndim) {
    bool same = t->ndim == ndim;
    for (int32_t i = 0; same && i < ndim; ++i) same = t->dims[i] == dims[i];
    if (same) return CVML_OK;
    char want[96], got[96];
    nn_dims_str(dims, ndim, want, sizeof want);
    nn_dims_str(t->dims, t->ndim, got, sizeof got);
    return cvml_fail(CVML_ERR_RUNTIME, "expects %s's shape to be %s, but got %s", what, want, got);
}

/* Product of a tensor's dims (shapes are verified to at most 2^30 elements). */
static inline int64_t nn_size(const ir_tensor* t) {
    int64_t n = 1;
    for (int32_t i = 0; i < t->ndim; ++i) n *= t->dims[i];
    return n;
}

/* DMLC_DECLARE_DTYPE_FIELD's accepted names. */
inline const char* const nn_dtype_names[] = {
    "float16", "float32", "float64", "uint8", "uint16", "uint32",
    "uint64",  "int8",    "int16",   "int32", "int64",  nullptr,
};
/* The same with conv2d's extra "same" (-1). */
inline const char* const nn_dtype_or_same_names[] = {
    "same",   "float16", "float32", "float64", "uint8", "uint16", "uint32",
    "uint64", "int8",    "int16",   "int32",   "int64", nullptr,
};
