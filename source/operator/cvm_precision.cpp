/* cvm_precision: y = bit length of |x|, 0 -> 1. Output precision is fixed at 6
 * (upstream MaxPrecision<6>): a bit length is at most 32. */
#include "operator/op_def.h"
#include "operator/op_common.h"
#include "operator/op_elemwise.h"

namespace {

int infer_precision_6(op_infer_ctx* ctx) {
    ctx->outputs[0]->precision = 6;
    return CVML_OK;
}

}  // namespace

static const op_def cvm_precision_op = {
    .name = "cvm_precision",
    .attrs = nullptr,
    .attr_count = 0,
    .param_size = 0,
    .parse_extra = nullptr,
    .release_param = nullptr,
    .fixed_inputs = 1,
    .num_inputs = nullptr,
    .num_outputs = 1,
    .infer_shape = op_infer_shape_same_as_input0,
    .infer_precision = infer_precision_6,
    .gas_base = nullptr,
    .may_share_input_storage = 1,
    .runnable = 1,
};

int register_op_cvm_precision(void) {
    return op_registry_add(&cvm_precision_op);
}
int unregister_op_cvm_precision(void) {
    return op_registry_remove(&cvm_precision_op);
}
