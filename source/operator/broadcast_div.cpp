/* broadcast_div: NumPy-broadcast a / b truncated toward zero, 0 where b == 0; upstream
 * registers it with SamePrecision, so the output takes input 0's precision. */
#include "operator/op_def.h"
#include "operator/op_common.h"
#include "operator/op_elemwise.h"

static const op_def broadcast_div_op = {
    .name = "broadcast_div",
    .attrs = nullptr,
    .attr_count = 0,
    .param_size = 0,
    .parse_extra = nullptr,
    .release_param = nullptr,
    .fixed_inputs = 2,
    .num_inputs = nullptr,
    .num_outputs = 1,
    .infer_shape = op_infer_shape_broadcast,
    .infer_precision = op_infer_precision_same_as_input0,
    .gas_base = nullptr,
    .may_share_input_storage = 0,
    .runnable = 1,
};

int register_op_broadcast_div(void) {
    return op_registry_add(&broadcast_div_op);
}
int unregister_op_broadcast_div(void) {
    return op_registry_remove(&broadcast_div_op);
}
