/* broadcast_mul: NumPy-broadcast a * b (wrapping); precision p0 + p1. */
#include "operator/op_def.h"
#include "operator/op_common.h"
#include "operator/op_elemwise.h"

namespace {

int infer_precision_sum(op_infer_ctx* ctx) {
    ctx->outputs[0]->precision = ctx->inputs[0]->precision + ctx->inputs[1]->precision;
    return CVML_OK;
}

}  // namespace

static const op_def broadcast_mul_op = {
    .name = "broadcast_mul",
    .attrs = nullptr,
    .attr_count = 0,
    .param_size = 0,
    .parse_extra = nullptr,
    .release_param = nullptr,
    .fixed_inputs = 2,
    .num_inputs = nullptr,
    .num_outputs = 1,
    .infer_shape = op_infer_shape_broadcast,
    .infer_precision = infer_precision_sum,
    .gas_base = nullptr,
    .may_share_input_storage = 0,
    .runnable = 1,
};

const op_def* op_def_broadcast_mul(void) {
    return &broadcast_mul_op;
}
int register_op_broadcast_mul(void) {
    return op_registry_add(&broadcast_mul_op);
}
int unregister_op_broadcast_mul(void) {
    return op_registry_remove(&broadcast_mul_op);
}
