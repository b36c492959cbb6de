/* negative: y = -x (wrapping). Not allowed to share its input's storage slot: upstream's
 * in-place list spells it "nagetive", so the storage check never matches it. */
#include "operator/op_def.h"
#include "operator/op_common.h"
#include "operator/op_elemwise.h"

extern const op_def op_def_negative = {
    .name = "negative",
    .fixed_inputs = 1,
    .num_outputs = 1,
    .infer_shape = op_infer_shape_same_as_input0,
    .infer_precision = op_infer_precision_same_as_input0,
};
