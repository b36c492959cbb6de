/* squeeze: drops dims of size 1 (the listed ones, or all when `axis` is empty); when
 * nothing is left the shape is (1,). A copy; may share its input's storage slot. */
#include "operator/squeeze.h"

#include <inttypes.h>
#include <stddef.h>

#include "operator/op_common.h"
#include "operator/shape_rules.h"

namespace {

const attr_spec squeeze_attrs[] = {
    {"axis", ATTR_TUPLE, "()", offsetof(squeeze_param, axis), 0, 0, nullptr},
};

int squeeze_infer_shape(op_infer_ctx* ctx) {
    const squeeze_param* p = static_cast<const squeeze_param*>(ctx->param);
    const ir_tensor* x = ctx->inputs[0];
    const int32_t ndim = x->ndim;
    bool drop[CVML_MAX_DIMS] = {};
    if (p->axis.count == 0) {
        for (int32_t i = 0; i < ndim; ++i) drop[i] = x->dims[i] == 1;
    } else {
        /* repeated axes are accepted: upstream collects them in a set */
        for (int32_t k = 0; k < p->axis.count; ++k) {
            int64_t a = p->axis.values[k];
            int rc = shape_verify_range(a, "squeeze.axis", -ndim, ndim - 1);
            if (rc) return rc;
            drop[a < 0 ? a + ndim : a] = true;
        }
        for (int32_t i = 0; i < ndim; ++i)
            if (drop[i] && x->dims[i] != 1)
                return cvml_fail(CVML_ERR_LOGIC,
                                 "The squeezed axis must have shape 1! Want to squeeze %" PRId32
                                 ", which "
                                 "has shape %lld",
                                 i, static_cast<long long>(x->dims[i]));
    }
    int64_t out[CVML_MAX_DIMS];
    int32_t n = 0;
    for (int32_t i = 0; i < ndim; ++i)
        if (!drop[i]) out[n++] = x->dims[i];
    if (n == 0) out[n++] = 1;
    return shape_set_output(ctx->outputs[0], out, n);
}

}  // namespace

extern const op_def op_def_squeeze = {
    .name = "squeeze",
    .attrs = squeeze_attrs,
    .attr_count = 1,
    .param_size = sizeof(squeeze_param),
    .fixed_inputs = 1,
    .num_outputs = 1,
    .infer_shape = squeeze_infer_shape,
    .infer_precision = op_infer_precision_same_as_input0,
    .may_share_input_storage = 1,
    .is_view = 1,
    .bound = op_bound_of_input0,
};
