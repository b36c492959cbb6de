/* broadcast_sub: NumPy-broadcast a - b (wrapping); precision max(p0, p1) + 1. */
#include "operator/op_def.h"
#include "operator/op_common.h"
#include "operator/op_elemwise.h"

static const op_def broadcast_sub_op = {
    .name = "broadcast_sub",
    .attrs = nullptr,
    .attr_count = 0,
    .param_size = 0,
    .parse_extra = nullptr,
    .release_param = nullptr,
    .fixed_inputs = 2,
    .num_inputs = nullptr,
    .num_outputs = 1,
    .infer_shape = op_infer_shape_broadcast,
    .infer_precision = op_infer_precision_max_plus_one,
    .gas_base = nullptr,
    .may_share_input_storage = 0,
    .runnable = 1,
};

int register_op_broadcast_sub(void) {
    return op_registry_add(&broadcast_sub_op);
}
int unregister_op_broadcast_sub(void) {
    return op_registry_remove(&broadcast_sub_op);
}
