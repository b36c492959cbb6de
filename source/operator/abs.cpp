/* abs: y = |x|. |INT32_MIN| wraps to INT32_MIN on the CPU kernel (two's complement). */
#include "operator/op_def.h"
#include "operator/op_common.h"
#include "operator/op_elemwise.h"

static const op_def abs_op = {
    .name = "abs",
    .attrs = nullptr,
    .attr_count = 0,
    .param_size = 0,
    .parse_extra = nullptr,
    .release_param = nullptr,
    .fixed_inputs = 1,
    .num_inputs = nullptr,
    .num_outputs = 1,
    .infer_shape = op_infer_shape_same_as_input0,
    .infer_precision = op_infer_precision_same_as_input0,
    .gas_base = nullptr,
    .may_share_input_storage = 1,
    .runnable = 1,
};

int register_op_abs(void) {
    return op_registry_add(&abs_op);
}
int unregister_op_abs(void) {
    return op_registry_remove(&abs_op);
}
