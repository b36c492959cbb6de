/* strided_slice: y[i] = x[begin + i*stride] per axis, with upstream's defaults and
 * clamping (see strided_slice_axis in strided_slice.h). */
#include "operator/strided_slice.h"

#include <inttypes.h>
#include <stddef.h>

#include "operator/op_common.h"
#include "operator/shape_rules.h"

namespace {

const attr_spec strided_slice_attrs[] = {
    {"begin", ATTR_TUPLE, "(0,)", offsetof(strided_slice_param, begin), 0, 0, nullptr},
    {"end", ATTR_TUPLE, "(1,)", offsetof(strided_slice_param, end), 0, 0, nullptr},
    {"stride", ATTR_TUPLE, "()", offsetof(strided_slice_param, stride), 0, 0, nullptr},
};

int strided_slice_infer_shape(op_infer_ctx* ctx) {
    const strided_slice_param* p = static_cast<const strided_slice_param*>(ctx->param);
    const ir_tensor* x = ctx->inputs[0];
    int64_t out[CVML_MAX_DIMS];
    for (int32_t i = 0; i < x->ndim; ++i) {
        int64_t first, stride;
        switch (strided_slice_axis(p, i, x->dims[i], &first, &stride, &out[i])) {
            case STRIDED_SLICE_ZERO_STRIDE:
                return cvml_fail(CVML_ERR_LOGIC, "strided_slice: stride of axis %" PRId32 " is 0",
                                 i);
            case STRIDED_SLICE_EMPTY:
                return cvml_fail(
                    CVML_ERR_LOGIC,
                    "strided_slice: Input [Begin=%lld, End=%lld] is invalid for axis=%" PRId32,
                    static_cast<long long>(i < p->begin.count ? p->begin.values[i] : 0),
                    static_cast<long long>(i < p->end.count ? p->end.values[i] : x->dims[i]), i);
            default:
                break;
        }
    }
    return shape_set_output(ctx->outputs[0], out, x->ndim);
}

}  // namespace

extern const op_def op_def_strided_slice = {
    .name = "strided_slice",
    .attrs = strided_slice_attrs,
    .attr_count = 3,
    .param_size = sizeof(strided_slice_param),
    .fixed_inputs = 1,
    .num_outputs = 1,
    .infer_shape = strided_slice_infer_shape,
    .infer_precision = op_infer_precision_same_as_input0,
};
