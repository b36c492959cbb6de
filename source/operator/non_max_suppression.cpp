/* non_max_suppression over (B, N, 6) boxes [id, score, x1, y1, x2, y2] and the valid
 * counts (B,) (upstream src/top/nn/nms.cc). Upstream supports one configuration only;
 * any other value of the fixed attributes is a VERIFY failure (logic error). */
#include "operator/non_max_suppression.h"

#include <inttypes.h>
#include <stddef.h>

#include "operator/nn_attr.h"
#include "operator/op_common.h"

namespace {

typedef non_max_suppression_param nms_param;

const attr_spec nms_attrs[] = {
    {"max_output_size", ATTR_INT, "-1", offsetof(nms_param, max_output_size), 0, 0, nullptr},
    {"iou_threshold", ATTR_INT, "50", offsetof(nms_param, iou_threshold), 0, 0, nullptr},
    {"force_suppress", ATTR_BOOL, "False", offsetof(nms_param, force_suppress), 0, 0, nullptr},
    {"top_k", ATTR_INT, "-1", offsetof(nms_param, top_k), 0, 0, nullptr},
    {"coord_start", ATTR_INT, "2", offsetof(nms_param, coord_start), 0, 0, nullptr},
    {"score_index", ATTR_INT, "1", offsetof(nms_param, score_index), 0, 0, nullptr},
    {"id_index", ATTR_INT, "0", offsetof(nms_param, id_index), 0, 0, nullptr},
    {"return_indices", ATTR_BOOL, "False", offsetof(nms_param, return_indices), 0, 0, nullptr},
    {"invalid_to_bottom", ATTR_BOOL, "True", offsetof(nms_param, invalid_to_bottom), 0, 0, nullptr},
};

int nms_infer_shape(op_infer_ctx* ctx) {
    const nms_param* p = static_cast<const nms_param*>(ctx->param);
    const ir_tensor* x = ctx->inputs[0];
    const ir_tensor* vc = ctx->inputs[1];
    if (x->ndim != 3) return cvml_fail(CVML_ERR_LOGIC, "Input data should be 3-D.");
    if (vc->ndim != 1) return cvml_fail(CVML_ERR_LOGIC, "Input valid count should be 1-D.");
    if (x->dims[2] != 6)
        return cvml_fail(CVML_ERR_LOGIC,
                         "Data input should have shape (batch_size, num_anchors, 6), got K = %lld",
                         static_cast<long long>(x->dims[2]));
    if (x->dims[0] != vc->dims[0])
        return cvml_fail(CVML_ERR_LOGIC, "batch_size mismatch: %lld vs. %lld",
                         static_cast<long long>(x->dims[0]), static_cast<long long>(vc->dims[0]));
    if (p->return_indices)
        return cvml_fail(CVML_ERR_LOGIC,
                         "NonMaximumSuppressionParam only supported return_indices false vs. 1");
    if (!p->invalid_to_bottom)
        return cvml_fail(CVML_ERR_LOGIC,
                         "NonMaximumSuppressionParam only supported invalid_to_bottom true vs. 0");
    if (p->coord_start != 2)
        return cvml_fail(CVML_ERR_LOGIC,
                         "NonMaximumSuppressionParam coord_start must be 2 vs. %" PRId32,
                         p->coord_start);
    if (p->score_index != 1)
        return cvml_fail(CVML_ERR_LOGIC,
                         "NonMaximumSuppressionParam score_index must be 1 vs. %" PRId32,
                         p->score_index);
    if (p->id_index != 0)
        return cvml_fail(CVML_ERR_LOGIC,
                         "NonMaximumSuppressionParam id_index must be 0 vs. %" PRId32, p->id_index);
    if (p->iou_threshold <= 0)
        return cvml_fail(CVML_ERR_LOGIC,
                         "NonMaximumSuppressionParam iou_threshold must be > 0 "
                         "vs. %" PRId32,
                         p->iou_threshold);
    op_copy_shape(ctx->outputs[0], x);
    return CVML_OK;
}

int nms_gas_base(const op_infer_ctx* ctx, int64_t* base) {
    *base = 20 * ctx->inputs[0]->dims[0];
    return CVML_OK;
}

}  // namespace

extern constexpr op_def op_def_non_max_suppression = {
    .name = "non_max_suppression",
    .attrs = nms_attrs,
    .attr_count = sizeof(nms_attrs) / sizeof(nms_attrs[0]),
    .param_size = sizeof(nms_param),
    .fixed_inputs = 2,
    .num_outputs = 1,
    .infer_shape = nms_infer_shape,
    .infer_precision = op_infer_precision_same_as_input0,
    .gas_base = nms_gas_base,
    .writes_input = 1,
};

/* Upstream's aliases of non_max_suppression (op_alias_of). */
CVML_OP_ALIAS(vision_non_max_suppression, "vision.non_max_suppression", op_def_non_max_suppression);

/* For the upstream alias vision.non_max_suppression (aliases.cpp). */
