/* relu: y = max(x, 0). No attributes; the output keeps the input's shape and
 * precision, and may share the input's storage slot (upstream's in-place list). */
#include "operator/op_def.h"
#include "operator/op_common.h"

namespace {

/* max(x, 0) is a clip to [0, INT32_MAX] (cvml_ops.h). */
int relu_step(const ir_graph*, const ir_node*, int32_t input, cvml_step* step) {
    if (input != 0) return 0;
    *step = {CVML_STEP_CLIP, 0, INT32_MAX, 0};
    return 1;
}

}  // namespace

extern constexpr op_def op_def_relu = {
    .name = "relu",
    .fixed_inputs = 1,
    .num_outputs = 1,
    .infer_shape = op_infer_shape_same_as_input0,
    .infer_precision = op_infer_precision_same_as_input0,
    .may_share_input_storage = 1,
    .step = relu_step,
};

/* Upstream's aliases of relu (op_alias_of). */
CVML_OP_ALIAS(nn_relu, "nn.relu", op_def_relu);
