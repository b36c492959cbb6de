/* elemwise_sub: y = a - b (wrapping), equal shapes; precision max(p0, p1) + 1. */
#include "operator/op_def.h"
#include "operator/op_common.h"
#include "operator/op_elemwise.h"

extern const op_def op_def_elemwise_sub = {
    .name = "elemwise_sub",
    .fixed_inputs = 2,
    .num_outputs = 1,
    .infer_shape = op_infer_shape_same_binary,
    .infer_precision = op_infer_precision_max_plus_one,
    .may_share_input_storage = 1,
};
