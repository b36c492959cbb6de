/* slice_like: keeps the leading [0, like.dims[a]) of each selected axis a of the data. */
#include "operator/slice_like.h"

#include <inttypes.h>
#include <stddef.h>

#include "operator/op_common.h"
#include "operator/shape_rules.h"

namespace {

const attr_spec slice_like_attrs[] = {
    {"axis", ATTR_TUPLE, "()", offsetof(slice_like_param, axis), 0, 0, nullptr},
};

/* upstream parses `axis` as Tuple<int>: a value outside int32 is a ParamError */
int slice_like_parse_extra(void* param) {
    const slice_like_param* p = static_cast<const slice_like_param*>(param);
    for (int32_t i = 0; i < p->axis.count; ++i)
        if (p->axis.values[i] < INT32_MIN || p->axis.values[i] > INT32_MAX)
            return cvml_fail(CVML_ERR_RUNTIME,
                             "Invalid Parameter format for axis expect Tuple<int> but value %lld",
                             static_cast<long long>(p->axis.values[i]));
    return CVML_OK;
}

int slice_like_infer_shape(op_infer_ctx* ctx) {
    const slice_like_param* p = static_cast<const slice_like_param*>(ctx->param);
    const ir_tensor* x = ctx->inputs[0];
    const ir_tensor* like = ctx->inputs[1];
    int64_t out[CVML_MAX_DIMS];
    for (int32_t i = 0; i < x->ndim; ++i) out[i] = x->dims[i];
    if (p->axis.count == 0) {
        for (int32_t i = 0; i < x->ndim && i < like->ndim; ++i) out[i] = like->dims[i];
    } else {
        for (int32_t k = 0; k < p->axis.count; ++k) {
            int64_t a = p->axis.values[k];
            int rc = shape_verify_range(a, "slice_like.axis", -x->ndim, like->ndim - 1);
            if (rc) return rc;
            if (a < 0) a += x->ndim;
            /* upstream indexes both shapes with `a` unchecked (out-of-bounds read or
             * write when the ranks differ); refuse instead */
            if (a >= x->ndim || a >= like->ndim)
                return cvml_fail(CVML_ERR_LOGIC,
                                 "slice_like: axis %lld is not an axis of both inputs (%" PRId32
                                 "-D, %" PRId32 "-D)",
                                 static_cast<long long>(p->axis.values[k]), x->ndim, like->ndim);
            out[a] = like->dims[a];
        }
    }
    for (int32_t i = 0; i < x->ndim; ++i)
        if (out[i] > x->dims[i])
            return cvml_fail(CVML_ERR_LOGIC,
                             "slice_like: End index of axis %" PRId32
                             " exceeds input shape: %lld vs %lld",
                             i, static_cast<long long>(out[i]), static_cast<long long>(x->dims[i]));
    return shape_set_output(ctx->outputs[0], out, x->ndim);
}

}  // namespace

extern const op_def op_def_slice_like = {
    .name = "slice_like",
    .attrs = slice_like_attrs,
    .attr_count = 1,
    .param_size = sizeof(slice_like_param),
    .parse_extra = slice_like_parse_extra,
    .fixed_inputs = 2,
    .num_outputs = 1,
    .infer_shape = slice_like_infer_shape,
    .infer_precision = op_infer_precision_same_as_input0,
};
