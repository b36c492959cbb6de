/* cvm_clip: y = clip(x, -(2^(p-1)-1), 2^(p-1)-1) with p = precision, the output's
 * precision. is_sign is accepted and ignored (upstream's kernel never reads it). */
#include <stddef.h>

#include "operator/cvm_clip.h"
#include "operator/op_common.h"
#include "operator/nn_attr.h"
#include "operator/op_def.h"
#include "utility/error.h"

namespace {

const attr_spec cvm_clip_attrs[] = {
    {"precision", ATTR_INT, nullptr, offsetof(cvm_clip_param, precision), 0, 0, nullptr},
    {"is_sign", ATTR_BOOL, "true", offsetof(cvm_clip_param, is_sign), 0, 0, nullptr},
};

int cvm_clip_infer_precision(op_infer_ctx* ctx) {
    const cvm_clip_param* p = static_cast<const cvm_clip_param*>(ctx->param);
    // Upstream VerifyAttrRange(precision, 1, 33) is inclusive; 33 then fails the
    // verifier's 1..32 output check, also a logic error.
    if (int rc = nn_verify_attr_range(p->precision, "cvm_clip.precision", 1, 33)) return rc;
    ctx->outputs[0]->precision = p->precision;
    return CVML_OK;
}

/* A symmetric clip to the precision's range (cvml_ops.h). */
int cvm_clip_step(const ir_graph*, const ir_node* node, int32_t input, cvml_step* step) {
    const cvm_clip_param* p = static_cast<const cvm_clip_param*>(node->param);
    if (input != 0 || !p || p->precision < 1 || p->precision > 32) return 0;
    const int32_t bound = cvml_precision_bound(p->precision);
    *step = {CVML_STEP_CLIP, -bound, bound, 0};
    return 1;
}

}  // namespace

extern const op_def op_def_cvm_clip = {
    .name = "cvm_clip",
    .attrs = cvm_clip_attrs,
    .attr_count = 2,
    .param_size = sizeof(cvm_clip_param),
    .fixed_inputs = 1,
    .num_outputs = 1,
    .infer_shape = op_infer_shape_same_as_input0,
    .infer_precision = cvm_clip_infer_precision,
    .may_share_input_storage = 1,
    .step = cvm_clip_step,
};
