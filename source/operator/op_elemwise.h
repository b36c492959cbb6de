/* Shape and precision rules shared by the element-wise and broadcast operators
 * (upstream's ElemwiseShape, BinaryBroadcastShape and the Elemwise*Precision family).
 * Header-only so that each operator file stays self-contained. */
#pragma once

#include "operator/op_def.h"
#include "utility/error.h"

#include <inttypes.h>

/* ElemwiseShape<2, 1>: both inputs must have the same shape (upstream VERIFY). */
static inline int op_infer_shape_same_binary(op_infer_ctx* ctx) {
    if (!op_same_shape(ctx->inputs[0], ctx->inputs[1])) {
        char a[128], b[128];
        return cvml_fail(CVML_ERR_LOGIC, "input shapes differ: %s vs %s",
                         op_shape_str(ctx->inputs[0], a, sizeof a),
                         op_shape_str(ctx->inputs[1], b, sizeof b));
    }
    op_copy_shape(ctx->outputs[0], ctx->inputs[0]);
    return CVML_OK;
}

/* BinaryBroadcastShape: NumPy rules, right-aligned; a mismatch that is not 1 is a
 * VERIFY failure upstream. */
static inline int op_infer_shape_broadcast(op_infer_ctx* ctx) {
    const ir_tensor* l = ctx->inputs[0];
    const ir_tensor* r = ctx->inputs[1];
    ir_tensor* out = ctx->outputs[0];
    int32_t nd = l->ndim > r->ndim ? l->ndim : r->ndim;
    if (nd > CVML_MAX_DIMS)
        return cvml_fail(CVML_ERR_LOGIC, "broadcast ndim %" PRId32 " exceeds 6", nd);
    int32_t bl = nd - l->ndim;
    int32_t br = nd - r->ndim;
    for (int32_t i = 0; i < nd; ++i) {
        int64_t a = i >= bl ? l->dims[i - bl] : 1;
        int64_t b = i >= br ? r->dims[i - br] : 1;
        if (a != b && a != 1 && b != 1) {
            char x[128], y[128];
            return cvml_fail(CVML_ERR_LOGIC,
                             "operands could not be broadcast together with shapes %s %s",
                             op_shape_str(l, x, sizeof x), op_shape_str(r, y, sizeof y));
        }
        out->dims[i] = a > b ? a : b;
    }
    out->ndim = nd;
    return CVML_OK;
}

/* BinaryPlusPrecision: max(p0, p1) + 1. */
static inline int op_infer_precision_max_plus_one(op_infer_ctx* ctx) {
    int32_t a = ctx->inputs[0]->precision;
    int32_t b = ctx->inputs[1]->precision;
    ctx->outputs[0]->precision = (a > b ? a : b) + 1;
    return CVML_OK;
}
