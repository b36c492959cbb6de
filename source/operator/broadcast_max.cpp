/* broadcast_max: NumPy-broadcast max(a, b); precision max(p0, p1). */
#include "operator/op_def.h"
#include "operator/op_common.h"
#include "operator/op_elemwise.h"

namespace {

int infer_precision_max(op_infer_ctx* ctx) {
    int32_t a = ctx->inputs[0]->precision;
    int32_t b = ctx->inputs[1]->precision;
    ctx->outputs[0]->precision = a > b ? a : b;
    return CVML_OK;
}

}  // namespace

extern constexpr op_def op_def_broadcast_max = {
    .name = "broadcast_max",
    .fixed_inputs = 2,
    .num_outputs = 1,
    .infer_shape = op_infer_shape_broadcast,
    .infer_precision = infer_precision_max,
};

/* Upstream's aliases of broadcast_max (op_alias_of). */
CVML_OP_ALIAS(max_symbol, "__max_symbol__", op_def_broadcast_max);
