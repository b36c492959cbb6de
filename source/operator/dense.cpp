/* dense: Y = X·Wᵀ (+ b) on a 2-D input (upstream src/top/nn/nn.cc). Unlike conv2d,
 * upstream checks the weight and bias shapes it is given (CVM_ASSIGN_INPUT_SHAPE, a
 * runtime error on mismatch). */
#include "operator/dense.h"

#include <inttypes.h>
#include <stddef.h>

#include "operator/nn_attr.h"
#include "operator/op_common.h"

namespace {

const attr_spec dense_attrs[] = {
    {"units", ATTR_INT, nullptr, offsetof(dense_param, units), 1, 1, nullptr},
    {"use_bias", ATTR_BOOL, "True", offsetof(dense_param, use_bias), 0, 0, nullptr},
};

int32_t dense_num_inputs(const void* param) {
    return static_cast<const dense_param*>(param)->use_bias ? 3 : 2;
}

int dense_infer_shape(op_infer_ctx* ctx) {
    const dense_param* p = static_cast<const dense_param*>(ctx->param);
    const ir_tensor* x = ctx->inputs[0];
    if (x->ndim != 2) return cvml_fail(CVML_ERR_LOGIC, "dense require 2-D data");
    if (ctx->inputs[1]->ndim != 2) return cvml_fail(CVML_ERR_LOGIC, "dense require 2-D weight");
    ir_tensor* y = ctx->outputs[0];
    y->ndim = 2;
    y->dims[0] = x->dims[0];
    y->dims[1] = p->units;
    const int64_t wshape[2] = {p->units, x->dims[1]};
    int rc = nn_expect_input_shape(ctx->inputs[1], "weight", wshape, 2);
    if (rc) return rc;
    if (p->use_bias) {
        const int64_t bshape[1] = {p->units};
        rc = nn_expect_input_shape(ctx->inputs[2], "bias", bshape, 1);
    }
    return rc;
}

int dense_infer_precision(op_infer_ctx* ctx) {
    const dense_param* p = static_cast<const dense_param*>(ctx->param);
    const int32_t px = ctx->inputs[0]->precision;
    const int32_t pw = ctx->inputs[1]->precision;
    if (px > 8) return cvml_fail(CVML_ERR_LOGIC, "Dense input must be INT8 vs. INT%" PRId32, px);
    if (pw > 8) return cvml_fail(CVML_ERR_LOGIC, "Dense weight must be INT8 vs. INT%" PRId32, pw);
    int32_t prec = px + pw + op_bits(ctx->inputs[0]->dims[1]);
    if (p->use_bias) {
        const int32_t pb = ctx->inputs[2]->precision;
        prec = (prec > pb ? prec : pb) + 1;
    }
    ctx->outputs[0]->precision = prec;
    return CVML_OK;
}

int dense_gas_base(const op_infer_ctx* ctx, int64_t* base) {
    const dense_param* p = static_cast<const dense_param*>(ctx->param);
    *base = 3 * ctx->inputs[1]->dims[1] + (p->use_bias ? 1 : 0);
    return CVML_OK;
}

}  // namespace

extern const op_def op_def_dense = {
    .name = "dense",
    .attrs = dense_attrs,
    .attr_count = sizeof(dense_attrs) / sizeof(dense_attrs[0]),
    .param_size = sizeof(dense_param),
    .fixed_inputs = 3,
    .num_inputs = dense_num_inputs,
    .num_outputs = 1,
    .infer_shape = dense_infer_shape,
    .infer_precision = dense_infer_precision,
    .gas_base = dense_gas_base,
};
