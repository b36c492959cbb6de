/* transpose: permutes the axes; `axes=()` reverses them. */
#include "operator/transpose.h"

#include <inttypes.h>
#include <stddef.h>

#include "operator/op_common.h"
#include "operator/shape_rules.h"

namespace {

const attr_spec transpose_attrs[] = {
    {"axes", ATTR_TUPLE, "()", offsetof(transpose_param, axes), 0, 0, nullptr},
};

int transpose_infer_shape(op_infer_ctx* ctx) {
    const transpose_param* p = static_cast<const transpose_param*>(ctx->param);
    const ir_tensor* x = ctx->inputs[0];
    const int32_t ndim = x->ndim;
    int64_t out[CVML_MAX_DIMS];
    if (p->axes.count == 0) {
        for (int32_t i = 0; i < ndim; ++i) out[i] = x->dims[ndim - 1 - i];
        return shape_set_output(ctx->outputs[0], out, ndim);
    }
    if (p->axes.count != ndim)
        return cvml_fail(CVML_ERR_LOGIC,
                         "transpose: %" PRId32 " axes given for a %" PRId32 "-D input",
                         p->axes.count, ndim);
    int32_t perm[CVML_MAX_DIMS];
    for (int32_t i = 0; i < ndim; ++i) {
        const int64_t a = p->axes.values[i];
        int rc = shape_verify_range(a, "transpose.axis", -ndim, ndim - 1);
        if (rc) return rc;
        perm[i] = static_cast<int32_t>(a < 0 ? a + ndim : a);
        for (int32_t j = 0; j < i; ++j)
            if (perm[j] == perm[i])
                return cvml_fail(
                    CVML_ERR_LOGIC,
                    "repeated axis in transpose: axes[%" PRId32 "] and axes[%" PRId32 "]", j, i);
        out[i] = x->dims[perm[i]];
    }
    return shape_set_output(ctx->outputs[0], out, ndim);
}

}  // namespace

extern const op_def op_def_transpose = {
    .name = "transpose",
    .attrs = transpose_attrs,
    .attr_count = 1,
    .param_size = sizeof(transpose_param),
    .fixed_inputs = 1,
    .num_outputs = 1,
    .infer_shape = transpose_infer_shape,
    .infer_precision = op_infer_precision_same_as_input0,
};
