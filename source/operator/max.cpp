/* max: reduction by maximum over the chosen axes (upstream src/top/tensor/reduce.cc).
 * The output keeps the input's precision; gas base 1. */
#include "operator/max.h"

#include <stddef.h>

#include "operator/op_common.h"

namespace {

const attr_spec max_attrs[] = {REDUCE_ATTRS(max_param)};

const op_def max_op = {
    .name = "max",
    .attrs = max_attrs,
    .attr_count = sizeof(max_attrs) / sizeof(max_attrs[0]),
    .param_size = sizeof(max_param),
    .parse_extra = nullptr,
    .release_param = nullptr,
    .fixed_inputs = 1,
    .num_inputs = nullptr,
    .num_outputs = 1,
    .infer_shape = reduce_infer_shape,
    .infer_precision = op_infer_precision_same_as_input0,
    .gas_base = nullptr,
    .may_share_input_storage = 0,
    .runnable = 1,
};

}  // namespace

int register_op_max(void) {
    return op_registry_add(&max_op);
}
int unregister_op_max(void) {
    return op_registry_remove(&max_op);
}
