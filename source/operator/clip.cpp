/* clip: y = max(min(x, a_max), a_min). The output precision is the precision of the
 * larger bound's magnitude, NP(max(|a_min|, |a_max|)): clip(-127, 127) is 9 bits,
 * not 8 (upstream GetNumberPrecision). */
#include <inttypes.h>
#include <stddef.h>

#include "operator/clip.h"
#include "operator/op_common.h"
#include "operator/op_def.h"
#include "utility/error.h"

namespace {

const attr_spec clip_attrs[] = {
    {"a_min", ATTR_INT, nullptr, offsetof(clip_param, a_min), 0, 0, nullptr},
    {"a_max", ATTR_INT, nullptr, offsetof(clip_param, a_max), 0, 0, nullptr},
};

/* Upstream VerifyAttrRange(v, name, -(2^31-1), 2^31-1), inclusive: only INT32_MIN
 * fails. */
int check_bound(int32_t v, const char* name) {
    if (v < -INT32_MAX)
        return cvml_fail(CVML_ERR_LOGIC,
                         "attribute %s value: %" PRId32 " out of range [%" PRId32 ", %" PRId32 "]",
                         name, v, -INT32_MAX, INT32_MAX);
    return CVML_OK;
}

int clip_infer_precision(op_infer_ctx* ctx) {
    const clip_param* p = static_cast<const clip_param*>(ctx->param);
    int rc = check_bound(p->a_max, "clip.a_max");
    if (!rc) rc = check_bound(p->a_min, "clip.a_min");
    if (rc) return rc;
    if (!(p->a_min < p->a_max))
        return cvml_fail(CVML_ERR_LOGIC,
                         "clip a_min (%" PRId32 ") must be less than a_max (%" PRId32 ")", p->a_min,
                         p->a_max);
    int64_t lo = p->a_min < 0 ? -static_cast<int64_t>(p->a_min) : p->a_min;
    int64_t hi = p->a_max < 0 ? -static_cast<int64_t>(p->a_max) : p->a_max;
    ctx->outputs[0]->precision = op_number_precision(lo > hi ? lo : hi);
    return CVML_OK;
}

/* A clip to [a_min, a_max] (cvml_ops.h); a_min < a_max was verified. */
int clip_step(const ir_graph*, const ir_node* node, int32_t input, cvml_step* step) {
    const clip_param* p = static_cast<const clip_param*>(node->param);
    if (input != 0 || !p) return 0;
    *step = {CVML_STEP_CLIP, p->a_min, p->a_max, 0};
    return 1;
}

}  // namespace

extern const op_def op_def_clip = {
    .name = "clip",
    .attrs = clip_attrs,
    .attr_count = 2,
    .param_size = sizeof(clip_param),
    .fixed_inputs = 1,
    .num_outputs = 1,
    .infer_shape = op_infer_shape_same_as_input0,
    .infer_precision = clip_infer_precision,
    .may_share_input_storage = 1,
    .step = clip_step,
};
