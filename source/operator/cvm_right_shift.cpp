/* cvm_right_shift: a rounding right shift then a symmetric clip to the output
 * precision. The CPU kernel's quirks (p == 1, shift_bit >= 31, p + shift_bit >= 32)
 * live in its kernel; the output precision is the precision attribute. */
#include <stddef.h>

#include "operator/cvm_right_shift.h"
#include "operator/op_common.h"
#include "operator/nn_attr.h"
#include "operator/op_def.h"
#include "utility/error.h"

namespace {

const attr_spec cvm_right_shift_attrs[] = {
    {"precision", ATTR_INT, nullptr, offsetof(cvm_right_shift_param, precision), 0, 0, nullptr},
    {"is_sign", ATTR_BOOL, "true", offsetof(cvm_right_shift_param, is_sign), 0, 0, nullptr},
    {"shift_bit", ATTR_INT, nullptr, offsetof(cvm_right_shift_param, shift_bit), 0, 0, nullptr},
};

int cvm_right_shift_infer_precision(op_infer_ctx* ctx) {
    const cvm_right_shift_param* p = static_cast<const cvm_right_shift_param*>(ctx->param);
    // Upstream VerifyAttrRange(v, 1, 33) is inclusive on both ends.
    if (int rc = nn_verify_attr_range(p->precision, "cvm_right_shift.precision", 1, 33)) return rc;
    if (int rc = nn_verify_attr_range(p->shift_bit, "cvm_right_shift.shift_bit", 1, 33)) return rc;
    ctx->outputs[0]->precision = p->precision;
    return CVML_OK;
}

/* The step it is (cvml_ops.h) for the parameters the step type covers. */
int cvm_right_shift_step(const ir_graph*, const ir_node* node, int32_t input, cvml_step* step) {
    const cvm_right_shift_param* p = static_cast<const cvm_right_shift_param*>(node->param);
    if (input != 0 || !p || p->precision < 1 || p->precision > 32 || p->shift_bit < 1 ||
        p->shift_bit > 32)
        return 0;
    *step = {CVML_STEP_RIGHT_SHIFT, p->precision, p->shift_bit, 0};
    return 1;
}

}  // namespace

extern const op_def op_def_cvm_right_shift = {
    .name = "cvm_right_shift",
    .attrs = cvm_right_shift_attrs,
    .attr_count = 3,
    .param_size = sizeof(cvm_right_shift_param),
    .fixed_inputs = 1,
    .num_outputs = 1,
    .infer_shape = op_infer_shape_same_as_input0,
    .infer_precision = cvm_right_shift_infer_precision,
    .may_share_input_storage = 1,
    .step = cvm_right_shift_step,
};
