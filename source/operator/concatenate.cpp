/* concatenate: joins any number (>= 1) of inputs along `axis`; every other dim must
 * agree. The output precision is the largest input precision (upstream MaxInPrecision). */
#include "operator/concatenate.h"

#include <inttypes.h>
#include <stddef.h>

#include "operator/op_common.h"
#include "operator/op_def.h"
#include "operator/shape_rules.h"

namespace {

const attr_spec concatenate_attrs[] = {
    {"axis", ATTR_INT, "1", offsetof(concatenate_param, axis), 0, 0, nullptr},
};

int concatenate_infer_shape(op_infer_ctx* ctx) {
    const concatenate_param* p = static_cast<const concatenate_param*>(ctx->param);
    if (ctx->input_count < 1) return cvml_fail(CVML_ERR_LOGIC, "concatenate: no inputs");
    const ir_tensor* x0 = ctx->inputs[0];
    const int32_t ndim = x0->ndim;
    int rc = shape_verify_range(p->axis, "concatenate.axis", -ndim, ndim - 1);
    if (rc) return rc;
    const int32_t axis = p->axis < 0 ? p->axis + ndim : p->axis;
    for (int32_t i = 0; i < ctx->input_count; ++i)
        if (ctx->inputs[i]->ndim != ndim)
            return cvml_fail(CVML_ERR_LOGIC,
                             "concatenate: input %" PRId32 " has %" PRId32
                             " dims, input 0 has %" PRId32,
                             i, ctx->inputs[i]->ndim, ndim);
    int64_t out[CVML_MAX_DIMS];
    for (int32_t d = 0; d < ndim; ++d) out[d] = x0->dims[d];
    int64_t total = 0;
    for (int32_t i = 0; i < ctx->input_count; ++i) {
        const ir_tensor* x = ctx->inputs[i];
        for (int32_t d = 0; d < ndim; ++d)
            if (d != axis && x->dims[d] != out[d])
                return cvml_fail(
                    CVML_ERR_LOGIC,
                    "concatenate: input %" PRId32 " dim %" PRId32 " is %lld but input 0 has %lld",
                    i, d, static_cast<long long>(x->dims[d]), static_cast<long long>(out[d]));
        /* every input dim is at most 2^24, so the sum of int32-many stays far below 2^63 */
        total += x->dims[axis];
    }
    out[axis] = total;
    return shape_set_output(ctx->outputs[0], out, ndim);
}

int concatenate_infer_precision(op_infer_ctx* ctx) {
    int32_t p = ctx->inputs[0]->precision;
    for (int32_t i = 1; i < ctx->input_count; ++i)
        if (ctx->inputs[i]->precision > p) p = ctx->inputs[i]->precision;
    ctx->outputs[0]->precision = p;
    return CVML_OK;
}

}  // namespace

extern const op_def op_def_concatenate = {
    .name = "concatenate",
    .attrs = concatenate_attrs,
    .attr_count = 1,
    .param_size = sizeof(concatenate_param),
    .fixed_inputs = -1,
    .num_outputs = 1,
    .infer_shape = concatenate_infer_shape,
    .infer_precision = concatenate_infer_precision,
};
