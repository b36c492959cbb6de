#include "operator/op_common.h"

int op_infer_shape_same_as_input0(op_infer_ctx* ctx) {
    op_copy_shape(ctx->outputs[0], ctx->inputs[0]);
    return CVML_OK;
}

int op_infer_precision_same_as_input0(op_infer_ctx* ctx) {
    ctx->outputs[0]->precision = ctx->inputs[0]->precision;
    return CVML_OK;
}
