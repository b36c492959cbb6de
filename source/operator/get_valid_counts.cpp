/* get_valid_counts: per batch of (B, N, K) boxes, moves the rows whose score (column 1)
 * is strictly above the threshold to the top, fills the rest with -1 and counts them.
 * Two outputs: the counts (B,) with precision NP(N·K), and the compacted boxes. */
#include "operator/get_valid_counts.h"

#include <inttypes.h>
#include <stddef.h>

#include "operator/nn_attr.h"
#include "operator/op_common.h"

namespace {

const attr_spec get_valid_counts_attrs[] = {
    {"score_threshold", ATTR_INT, "0", offsetof(get_valid_counts_param, score_threshold), 0, 0,
     nullptr},
};

int get_valid_counts_infer_shape(op_infer_ctx* ctx) {
    const ir_tensor* x = ctx->inputs[0];
    if (x->ndim != 3)
        return cvml_fail(CVML_ERR_LOGIC, "get_valid_counts input should be 3-D, got %" PRId32 "-D",
                         x->ndim);
    if (x->dims[2] < 2 || x->dims[2] >= 32)
        return cvml_fail(CVML_ERR_LOGIC, "get_valid_counts box size K = %lld outside [2, 32)",
                         static_cast<long long>(x->dims[2]));
    ctx->outputs[0]->ndim = 1;
    ctx->outputs[0]->dims[0] = x->dims[0];
    op_copy_shape(ctx->outputs[1], x);
    return CVML_OK;
}

int get_valid_counts_infer_precision(op_infer_ctx* ctx) {
    const ir_tensor* x = ctx->inputs[0];
    ctx->outputs[0]->precision = op_number_precision(x->dims[1] * x->dims[2]);
    ctx->outputs[1]->precision = x->precision;
    return CVML_OK;
}

}  // namespace

extern const op_def op_def_get_valid_counts = {
    .name = "get_valid_counts",
    .attrs = get_valid_counts_attrs,
    .attr_count = sizeof(get_valid_counts_attrs) / sizeof(get_valid_counts_attrs[0]),
    .param_size = sizeof(get_valid_counts_param),
    .fixed_inputs = 1,
    .num_outputs = 2,
    .infer_shape = get_valid_counts_infer_shape,
    .infer_precision = get_valid_counts_infer_precision,
};
