/* negative: y = -x (wrapping). Not allowed to share its input's storage slot: upstream's
 * in-place list spells it "nagetive", so the storage check never matches it. */
#include "operator/op_def.h"
#include "operator/op_common.h"
#include "operator/op_elemwise.h"

static const op_def negative_op = {
    .name = "negative",
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
    .may_share_input_storage = 0,
    .runnable = 1,
};

int register_op_negative(void) {
    return op_registry_add(&negative_op);
}
int unregister_op_negative(void) {
    return op_registry_remove(&negative_op);
}
