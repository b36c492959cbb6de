/* elemwise_add: y = a + b (wrapping), equal shapes; precision max(p0, p1) + 1. */
#include "operator/op_def.h"
#include "operator/op_common.h"
#include "operator/op_elemwise.h"

namespace {

/* Either input plus the other (cvml_ops.h): shapes are equal. */
int elemwise_add_step(const ir_graph*, const ir_node* node, int32_t input, cvml_step* step) {
    if (node->input_count != 2 || node->output_count != 1 || input < 0 || input > 1) return 0;
    *step = {CVML_STEP_ADD, 0, 0, 1 - input};
    return 1;
}

}  // namespace

extern const op_def op_def_elemwise_add = {
    .name = "elemwise_add",
    .fixed_inputs = 2,
    .num_outputs = 1,
    .infer_shape = op_infer_shape_same_binary,
    .infer_precision = op_infer_precision_max_plus_one,
    .may_share_input_storage = 1,
    .step = elemwise_add_step,
};
