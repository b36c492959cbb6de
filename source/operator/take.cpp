/* take(data, indices[, axis]): without an axis, indices address the flattened data;
 * with one, numpy take along that axis. The kernel clips every index to the valid
 * range. Output shape: indices' shape (no axis), or data's shape with the axis
 * replaced by indices' shape. Precision: data's. */
#include <inttypes.h>
#include <stddef.h>

#include "operator/op_common.h"
#include "operator/op_def.h"
#include "operator/take.h"
#include "utility/error.h"

static_assert(sizeof(((take_param*)nullptr)->axis) == sizeof(attr_opt_int),
              "take_param.axis must have attr_opt_int's layout");
static_assert(offsetof(attr_opt_int, present) == 0 && offsetof(attr_opt_int, value) == 4,
              "attr_opt_int layout changed");

namespace {

const attr_spec take_attrs[] = {
    {"axis", ATTR_OPT_INT, "None", offsetof(take_param, axis), 0, 0, nullptr},
};

int take_infer_shape(op_infer_ctx* ctx) {
    const take_param* p = static_cast<const take_param*>(ctx->param);
    const ir_tensor* data = ctx->inputs[0];
    const ir_tensor* idx = ctx->inputs[1];
    ir_tensor* out = ctx->outputs[0];
    if (!p->axis.present) {
        op_copy_shape(out, idx);
        return CVML_OK;
    }
    int32_t nd = data->ndim;
    int32_t axis = p->axis.value;
    if (axis < -nd || axis > nd - 1)
        return cvml_fail(CVML_ERR_LOGIC,
                         "attribute take.axis value: %" PRId32 " out of range [%" PRId32
                         ", %" PRId32 "]",
                         axis, -nd, nd - 1);
    if (axis < 0) axis += nd;
    int32_t out_nd = nd - 1 + idx->ndim;
    if (out_nd > CVML_MAX_DIMS)
        return cvml_fail(CVML_ERR_LOGIC, "take output would have %" PRId32 " dims, more than 6",
                         out_nd);
    int32_t k = 0;
    for (int32_t i = 0; i < nd; ++i) {
        if (i == axis) {
            for (int32_t j = 0; j < idx->ndim; ++j) out->dims[k++] = idx->dims[j];
        } else {
            out->dims[k++] = data->dims[i];
        }
    }
    out->ndim = out_nd;
    return CVML_OK;
}

}  // namespace

extern const op_def op_def_take = {
    .name = "take",
    .attrs = take_attrs,
    .attr_count = 1,
    .param_size = sizeof(take_param),
    .fixed_inputs = 2,
    .num_outputs = 1,
    .infer_shape = take_infer_shape,
    .infer_precision = op_infer_precision_same_as_input0,
};
