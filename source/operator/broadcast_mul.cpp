/* broadcast_mul: NumPy-broadcast a * b (wrapping); precision p0 + p1. */
#include "operator/op_def.h"
#include "operator/op_common.h"
#include "operator/op_elemwise.h"

namespace {

int infer_precision_sum(op_infer_ctx* ctx) {
    ctx->outputs[0]->precision = ctx->inputs[0]->precision + ctx->inputs[1]->precision;
    return CVML_OK;
}

/* Input `input` times a one-element constant, keeping its shape, is x scaled by a
 * constant (MRT's requantization): a step (cvml_ops.h) whose factor is the constant. */
int broadcast_mul_step(const ir_graph* g, const ir_node* node, int32_t input, cvml_step* step) {
    if (node->input_count != 2 || node->output_count != 1 || input < 0 || input > 1) return 0;
    const ir_tensor* x = g->tensors[node->inputs[input]];
    const ir_tensor* c = g->tensors[node->inputs[1 - input]];
    const ir_tensor* y = g->tensors[node->outputs[0]];
    if (c->kind != TENSOR_CONST || !c->data || ir_tensor_element_count(c) != 1 ||
        y->ndim != x->ndim)
        return 0;
    for (int32_t d = 0; d < x->ndim; ++d)
        if (y->dims[d] != x->dims[d]) return 0;
    *step = {CVML_STEP_MUL, ir_storage_load(c->data, c->storage, 0), 0, 0};
    return 1;
}

}  // namespace

extern constexpr op_def op_def_broadcast_mul = {
    .name = "broadcast_mul",
    .fixed_inputs = 2,
    .num_outputs = 1,
    .infer_shape = op_infer_shape_broadcast,
    .infer_precision = infer_precision_sum,
    .step = broadcast_mul_step,
};

/* Upstream's aliases of broadcast_mul (op_alias_of). */
CVML_OP_ALIAS(mul_symbol, "__mul_symbol__", op_def_broadcast_mul);
CVML_OP_ALIAS(multiply, "multiply", op_def_broadcast_mul);
