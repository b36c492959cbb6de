/* max: reduction by maximum over the chosen axes (upstream src/top/tensor/reduce.cc).
 * The output keeps the input's precision; gas base 1. */
#include "operator/max.h"

#include <stddef.h>

#include "operator/op_common.h"

namespace {

const attr_spec max_attrs[] = {REDUCE_ATTRS(max_param)};

}  // namespace

extern const op_def op_def_max = {
    .name = "max",
    .attrs = max_attrs,
    .attr_count = sizeof(max_attrs) / sizeof(max_attrs[0]),
    .param_size = sizeof(max_param),
    .fixed_inputs = 1,
    .num_outputs = 1,
    .infer_shape = reduce_infer_shape,
    .infer_precision = op_infer_precision_same_as_input0,
};
