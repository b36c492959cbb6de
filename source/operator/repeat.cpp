/* repeat: np.repeat of every element `repeats` times along `axis`. */
#include "operator/repeat.h"

#include <inttypes.h>
#include <stddef.h>

#include "operator/op_common.h"
#include "operator/op_def.h"
#include "operator/shape_rules.h"

namespace {

const attr_spec repeat_attrs[] = {
    {"repeats", ATTR_INT, nullptr, offsetof(repeat_param, repeats), 0, 0, nullptr},
    {"axis", ATTR_INT, "0", offsetof(repeat_param, axis), 0, 0, nullptr},
};

int repeat_infer_shape(op_infer_ctx* ctx) {
    const repeat_param* p = static_cast<const repeat_param*>(ctx->param);
    const ir_tensor* x = ctx->inputs[0];
    const int32_t ndim = x->ndim;
    if (p->repeats <= 0)
        return cvml_fail(CVML_ERR_LOGIC, "repeat: repeats:%" PRId32 " must greater than 0",
                         p->repeats);
    int rc = shape_verify_range(p->axis, "repeat.axis", -ndim, ndim - 1);
    if (rc) return rc;
    const int32_t axis = p->axis < 0 ? p->axis + ndim : p->axis;
    int64_t out[CVML_MAX_DIMS];
    for (int32_t d = 0; d < ndim; ++d) out[d] = x->dims[d];
    out[axis] *= p->repeats; /* <= 2^24 * 2^31: no overflow in int64 */
    return shape_set_output(ctx->outputs[0], out, ndim);
}

}  // namespace

extern const op_def op_def_repeat = {
    .name = "repeat",
    .attrs = repeat_attrs,
    .attr_count = 2,
    .param_size = sizeof(repeat_param),
    .fixed_inputs = 1,
    .num_outputs = 1,
    .infer_shape = repeat_infer_shape,
    .infer_precision = op_infer_precision_same_as_input0,
};
