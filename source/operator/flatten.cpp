/* flatten: (d0, d1, ..., dk) -> (d0, d1*...*dk). No attributes; a 1-D input becomes
 * (d0, 1) as upstream builds TShape({d0, 1}). May share its input's storage slot
 * (upstream's in-place list). */
#include "operator/op_common.h"
#include "operator/op_def.h"
#include "operator/shape_rules.h"

namespace {

int flatten_infer_shape(op_infer_ctx* ctx) {
    const ir_tensor* x = ctx->inputs[0];
    int64_t rest = 1;
    for (int32_t i = 1; i < x->ndim; ++i) rest = shape_sat_mul(rest, x->dims[i]);
    const int64_t dims[2] = {x->dims[0], rest};
    return shape_set_output(ctx->outputs[0], dims, 2);
}

}  // namespace

extern const op_def op_def_flatten = {
    .name = "flatten",
    .fixed_inputs = 1,
    .num_outputs = 1,
    .infer_shape = flatten_infer_shape,
    .infer_precision = op_infer_precision_same_as_input0,
    .may_share_input_storage = 1,
    .is_view = 1,
    .bound = op_bound_of_input0,
};
