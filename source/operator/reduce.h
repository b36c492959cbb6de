/* The attributes and shape rules shared by the reductions sum and max (upstream
 * ReduceParam and src/top/tensor/reduce.cc). Plain C layout for kernels and plugins. */
#pragma once

#include <stdint.h>

#include "operator/nn_attr.h"
#include "operator/op_def.h"

typedef struct reduce_param {
    attr_tuple axis;   /* default (): every axis */
    uint8_t keepdims;  /* default false */
    uint8_t exclude;   /* default false: reduce over the axes NOT listed */
    attr_string dtype; /* default "int32"; parsed, ignored */
} reduce_param;

#define REDUCE_ATTRS(type)                                                         \
    {"axis", ATTR_TUPLE, "()", offsetof(type, axis), 0, 0, nullptr},               \
        {"keepdims", ATTR_BOOL, "False", offsetof(type, keepdims), 0, 0, nullptr}, \
        {"exclude", ATTR_BOOL, "False", offsetof(type, exclude), 0, 0, nullptr}, { \
        "dtype", ATTR_STRING, "int32", offsetof(type, dtype), 0, 0, nn_dtype_names \
    }

/* Upstream GetReduceAxes, used for shape inference: axis = () means every axis (even
 * with exclude); listed axes are normalised, range-checked and must be unique (logic
 * errors); exclude takes the complement. Writes the sorted axes to `out`. */
static inline int reduce_infer_axes(const reduce_param* p, int32_t ndim, int32_t* out,
                                    int32_t* count) {
    *count = 0;
    if (p->axis.count == 0) {
        for (int32_t i = 0; i < ndim; ++i) out[(*count)++] = i;
        return CVML_OK;
    }
    int64_t ax[ATTR_TUPLE_MAX];
    for (int32_t i = 0; i < p->axis.count; ++i) {
        ax[i] = p->axis.values[i] < 0 ? p->axis.values[i] + ndim : p->axis.values[i];
        int rc = nn_verify_attr_range(ax[i], "reduce.axis", 0, ndim - 1);
        if (rc) return rc;
    }
    for (int32_t i = 1; i < p->axis.count; ++i)
        for (int32_t j = i; j > 0 && ax[j - 1] > ax[j]; --j) {
            int64_t t = ax[j];
            ax[j] = ax[j - 1];
            ax[j - 1] = t;
        }
    for (int32_t i = 0; i + 1 < p->axis.count; ++i)
        if (ax[i] == ax[i + 1])
            return cvml_fail(CVML_ERR_LOGIC, "reduce.axis %lld appears twice",
                             static_cast<long long>(ax[i]));
    if (!p->exclude) {
        for (int32_t i = 0; i < p->axis.count; ++i) out[(*count)++] = static_cast<int32_t>(ax[i]);
        return CVML_OK;
    }
    for (int32_t i = 0, j = 0; i < ndim; ++i) {
        if (j < p->axis.count && ax[j] == i) {
            ++j;
            continue;
        }
        out[(*count)++] = i;
    }
    return CVML_OK;
}

/* Upstream ReduceShapeImpl. */
static inline int reduce_infer_shape(op_infer_ctx* ctx) {
    const reduce_param* p = static_cast<const reduce_param*>(ctx->param);
    const ir_tensor* x = ctx->inputs[0];
    ir_tensor* y = ctx->outputs[0];
    int32_t axes[ATTR_TUPLE_MAX + CVML_MAX_DIMS];
    int32_t n = 0;
    int rc = reduce_infer_axes(p, x->ndim, axes, &n);
    if (rc) return rc;
    if (n == 0) {
        op_copy_shape(y, x);
        return CVML_OK;
    }
    if (n == x->ndim) {
        y->ndim = p->keepdims ? x->ndim : 1;
        for (int32_t i = 0; i < y->ndim; ++i) y->dims[i] = 1;
        return CVML_OK;
    }
    y->ndim = 0;
    for (int32_t i = 0, j = 0; i < x->ndim; ++i) {
        const bool reduced = j < n && axes[j] == i;
        if (reduced) ++j;
        if (reduced && !p->keepdims) continue;
        y->dims[y->ndim++] = reduced ? 1 : x->dims[i];
    }
    return CVML_OK;
}
