/* broadcast_max: NumPy-broadcast max(a, b); precision max(p0, p1). */
#include "operator/op_def.h"
#include "operator/op_common.h"
#include "operator/op_elemwise.h"

namespace {

int infer_precision_max(op_infer_ctx* ctx) {
    int32_t a = ctx->inputs[0]->precision;
    int32_t b = ctx->inputs[1]->precision;
    ctx->outputs[0]->precision = a > b ? a : b;
    return CVML_OK;
}

}  // namespace

static const op_def broadcast_max_op = {
    .name = "broadcast_max",
    .attrs = nullptr,
    .attr_count = 0,
    .param_size = 0,
    .parse_extra = nullptr,
    .release_param = nullptr,
    .fixed_inputs = 2,
    .num_inputs = nullptr,
    .num_outputs = 1,
    .infer_shape = op_infer_shape_broadcast,
    .infer_precision = infer_precision_max,
    .gas_base = nullptr,
    .may_share_input_storage = 0,
    .runnable = 1,
};

int register_op_broadcast_max(void) {
    return op_registry_add(&broadcast_max_op);
}
int unregister_op_broadcast_max(void) {
    return op_registry_remove(&broadcast_max_op);
}
