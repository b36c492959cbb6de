/* abs: y = |x|. |INT32_MIN| wraps to INT32_MIN on the CPU kernel (two's complement). */
#include "operator/op_def.h"
#include "operator/op_common.h"
#include "operator/op_elemwise.h"

extern const op_def op_def_abs = {
    .name = "abs",
    .fixed_inputs = 1,
    .num_outputs = 1,
    .infer_shape = op_infer_shape_same_as_input0,
    .infer_precision = op_infer_precision_same_as_input0,
    .may_share_input_storage = 1,
};
