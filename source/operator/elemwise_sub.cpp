/* elemwise_sub: y = a - b (wrapping), equal shapes; precision max(p0, p1) + 1. */
#include "operator/op_def.h"
#include "operator/op_common.h"
#include "operator/op_elemwise.h"

static const op_def elemwise_sub_op = {
    .name = "elemwise_sub",
    .attrs = nullptr,
    .attr_count = 0,
    .param_size = 0,
    .parse_extra = nullptr,
    .release_param = nullptr,
    .fixed_inputs = 2,
    .num_inputs = nullptr,
    .num_outputs = 1,
    .infer_shape = op_infer_shape_same_binary,
    .infer_precision = op_infer_precision_max_plus_one,
    .gas_base = nullptr,
    .may_share_input_storage = 1,
    .runnable = 1,
};

int register_op_elemwise_sub(void) {
    return op_registry_add(&elemwise_sub_op);
}
int unregister_op_elemwise_sub(void) {
    return op_registry_remove(&elemwise_sub_op);
}
