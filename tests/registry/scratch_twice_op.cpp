/* scratch_twice: y = 2 * x, wrapping. A test operator that tests/scripts/add_operator.sh
 * adds to a scratch copy of the tree (it is not part of the library). */
#include "operator/op_common.h"
#include "operator/op_def.h"

namespace {

int twice_precision(op_infer_ctx* ctx) {
    const int32_t p = ctx->inputs[0]->precision;
    ctx->outputs[0]->precision = p < 32 ? p + 1 : 32;
    return CVML_OK;
}

}  // namespace

extern const op_def op_def_scratch_twice = {
    .name = "scratch_twice",
    .fixed_inputs = 1,
    .num_outputs = 1,
    .infer_shape = op_infer_shape_same_as_input0,
    .infer_precision = twice_precision,
};
