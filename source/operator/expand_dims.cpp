/* expand_dims: inserts `num_newaxis` dims of size 1 before `axis`. A copy; may share
 * its input's storage slot. */
#include "operator/expand_dims.h"

#include <inttypes.h>
#include <stddef.h>

#include "operator/op_common.h"
#include "operator/op_def.h"
#include "operator/shape_rules.h"

namespace {

const attr_spec expand_dims_attrs[] = {
    {"axis", ATTR_INT, nullptr, offsetof(expand_dims_param, axis), 0, 0, nullptr},
    {"num_newaxis", ATTR_INT, "1", offsetof(expand_dims_param, num_newaxis), 1, 1, nullptr},
};

int expand_dims_infer_shape(op_infer_ctx* ctx) {
    const expand_dims_param* p = static_cast<const expand_dims_param*>(ctx->param);
    const ir_tensor* x = ctx->inputs[0];
    const int32_t ndim = x->ndim;
    int rc = shape_verify_range(p->axis, "expand_dims.axis", -ndim - 1, ndim);
    if (!rc) rc = shape_verify_range(p->num_newaxis, "expand_dims.num_newaxis", 0, 4096);
    if (rc) return rc;
    if (ndim + p->num_newaxis > CVML_MAX_DIMS)
        return cvml_fail(CVML_ERR_LOGIC,
                         "expand_dims: %" PRId32 " new axes on a %" PRId32
                         "-D input exceed %d dims",
                         p->num_newaxis, ndim, CVML_MAX_DIMS);
    const int32_t axis = p->axis < 0 ? ndim + p->axis + 1 : p->axis;
    int64_t out[CVML_MAX_DIMS];
    int32_t n = 0;
    for (int32_t i = 0; i < axis; ++i) out[n++] = x->dims[i];
    for (int32_t i = 0; i < p->num_newaxis; ++i) out[n++] = 1;
    for (int32_t i = axis; i < ndim; ++i) out[n++] = x->dims[i];
    return shape_set_output(ctx->outputs[0], out, n);
}

}  // namespace

extern const op_def op_def_expand_dims = {
    .name = "expand_dims",
    .attrs = expand_dims_attrs,
    .attr_count = 2,
    .param_size = sizeof(expand_dims_param),
    .fixed_inputs = 1,
    .num_outputs = 1,
    .infer_shape = expand_dims_infer_shape,
    .infer_precision = op_infer_precision_same_as_input0,
    .may_share_input_storage = 1,
    .is_view = 1,
    .bound = op_bound_of_input0,
};
