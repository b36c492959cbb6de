/* Helpers shared by the nn and reduction operator definitions: upstream's
 * VerifyAttrRange and string-attribute checks, and the shape text of its
 * CVM_ASSIGN_* messages. The ones with a message are out of line (nn_attr.cpp): inlined,
 * each operator file had its own copy of the formatting. */
#pragma once

#include <stdio.h>
#include <string.h>

#include "operator/op_def.h"
#include "utility/error.h"

/* Upstream VerifyAttrRange: min <= v <= max, [0, 4096] unless a caller says
 * otherwise; a violation is a VERIFY failure (logic error). */
int nn_verify_attr_range(int64_t v, const char* name, int64_t min = 0, int64_t max = 4096);

static inline bool nn_str_eq(const attr_string* s, const char* v) {
    return strcmp(s->value, v) == 0;
}

/* Formats dims as upstream prints a TShape: "[3,5]". */
const char* nn_dims_str(const int64_t* dims, int32_t ndim, char* buf, size_t cap);

/* Upstream CVM_ASSIGN_INPUT_SHAPE on a known input: a mismatch is LOG(FATAL), a runtime
 * error, worded "expects weight's shape to be [3,5], but got [3,4]". */
int nn_expect_input_shape(const ir_tensor* t, const char* what, const int64_t* dims, int32_t ndim);

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
