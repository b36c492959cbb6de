/* cvm_left_shift: y = clip(x << shift_bit, +-(2^(p-1)-1)). Upstream's CPU kernel always
 * fails (it reads its attribute argument as a string); cvm-lite computes the documented
 * result as upstream's formal device does (divergence D1). */
#include <inttypes.h>
#include <stddef.h>

#include "operator/cvm_left_shift.h"
#include "operator/op_common.h"
#include "operator/nn_attr.h"
#include "operator/op_def.h"
#include "utility/error.h"

namespace {

const attr_spec cvm_left_shift_attrs[] = {
    {"precision", ATTR_INT, nullptr, offsetof(cvm_left_shift_param, precision), 0, 0, nullptr},
    {"is_sign", ATTR_BOOL, "true", offsetof(cvm_left_shift_param, is_sign), 0, 0, nullptr},
    {"shift_bit", ATTR_INT, nullptr, offsetof(cvm_left_shift_param, shift_bit), 0, 0, nullptr},
};

int cvm_left_shift_infer_precision(op_infer_ctx* ctx) {
    const cvm_left_shift_param* p = static_cast<const cvm_left_shift_param*>(ctx->param);
    // Upstream VerifyAttrRange(v, 1, 33) is inclusive on both ends.
    if (int rc = nn_verify_attr_range(p->precision, "cvm_left_shift.precision", 1, 33)) return rc;
    if (int rc = nn_verify_attr_range(p->shift_bit, "cvm_left_shift.shift_bit", 1, 33)) return rc;
    // Upstream's inference returns false here, which its caller reports as a
    // runtime error ("infer precision failed"), not a VERIFY.
    if (static_cast<int64_t>(ctx->inputs[0]->precision) + p->shift_bit > 32)
        return cvml_fail(CVML_ERR_RUNTIME,
                         "infer precision failed: input precision %" PRId32 " + shift_bit %" PRId32
                         " exceeds 32",
                         ctx->inputs[0]->precision, p->shift_bit);
    ctx->outputs[0]->precision = p->precision;
    return CVML_OK;
}

}  // namespace

extern const op_def op_def_cvm_left_shift = {
    .name = "cvm_left_shift",
    .attrs = cvm_left_shift_attrs,
    .attr_count = 3,
    .param_size = sizeof(cvm_left_shift_param),
    .fixed_inputs = 1,
    .num_outputs = 1,
    .infer_shape = op_infer_shape_same_as_input0,
    .infer_precision = cvm_left_shift_infer_precision,
    .may_share_input_storage = 1,
};
