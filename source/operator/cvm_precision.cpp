/* cvm_precision: y = bit length of |x|, 0 -> 1. Output precision is fixed at 6
 * (upstream MaxPrecision<6>): a bit length is at most 32. */
#include "operator/op_def.h"
#include "operator/op_common.h"
#include "operator/op_elemwise.h"

namespace {

int infer_precision_6(op_infer_ctx* ctx) {
    ctx->outputs[0]->precision = 6;
    return CVML_OK;
}

}  // namespace

extern const op_def op_def_cvm_precision = {
    .name = "cvm_precision",
    .fixed_inputs = 1,
    .num_outputs = 1,
    .infer_shape = op_infer_shape_same_as_input0,
    .infer_precision = infer_precision_6,
    .may_share_input_storage = 1,
};
