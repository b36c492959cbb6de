/* sum: reduction by addition over the chosen axes (upstream src/top/tensor/reduce.cc).
 * Output precision p + bits(in_size / out_size); gas base in_size / out_size. */
#include "operator/sum.h"

#include <stddef.h>

#include "operator/op_common.h"

namespace {

const attr_spec sum_attrs[] = {REDUCE_ATTRS(sum_param)};

int sum_infer_precision(op_infer_ctx* ctx) {
    const int64_t ratio = nn_size(ctx->inputs[0]) / nn_size(ctx->outputs[0]);
    ctx->outputs[0]->precision = ctx->inputs[0]->precision + op_bits(ratio);
    return CVML_OK;
}

int sum_gas_base(const op_infer_ctx* ctx, int64_t* base) {
    *base = nn_size(ctx->inputs[0]) / nn_size(ctx->outputs[0]);
    return CVML_OK;
}

}  // namespace

extern const op_def op_def_sum = {
    .name = "sum",
    .attrs = sum_attrs,
    .attr_count = sizeof(sum_attrs) / sizeof(sum_attrs[0]),
    .param_size = sizeof(sum_param),
    .fixed_inputs = 1,
    .num_outputs = 1,
    .infer_shape = reduce_infer_shape,
    .infer_precision = sum_infer_precision,
    .gas_base = sum_gas_base,
};
