/* max_pool2d over NCHW (upstream src/top/nn/pooling.cc). Padded cells never win; the
 * shape rules, including the ceil_mode check that the last window starts inside the
 * input, are upstream VERIFYs (logic errors). */
#include "operator/max_pool2d.h"

#include <inttypes.h>
#include <stddef.h>

#include "operator/nn_attr.h"
#include "operator/op_common.h"

namespace {

const attr_spec max_pool2d_attrs[] = {
    {"pool_size", ATTR_TUPLE, nullptr, offsetof(max_pool2d_param, pool_size), 0, 0, nullptr},
    {"strides", ATTR_TUPLE, "(1, 1)", offsetof(max_pool2d_param, strides), 0, 0, nullptr},
    {"padding", ATTR_TUPLE, "(0, 0)", offsetof(max_pool2d_param, padding), 0, 0, nullptr},
    {"layout", ATTR_STRING, "NCHW", offsetof(max_pool2d_param, layout), 0, 0, nullptr},
    {"ceil_mode", ATTR_BOOL, "False", offsetof(max_pool2d_param, ceil_mode), 0, 0, nullptr},
};

int max_pool2d_infer_shape(op_infer_ctx* ctx) {
    const max_pool2d_param* p = static_cast<const max_pool2d_param*>(ctx->param);
    const ir_tensor* x = ctx->inputs[0];
    if (x->ndim != 4) return cvml_fail(CVML_ERR_LOGIC, "Pool2D only support input = 4-D: NCHW");
    if (!nn_str_eq(&p->layout, "NCHW"))
        return cvml_fail(CVML_ERR_LOGIC, "Pool2D only supported NCHW layout vs. %s",
                         p->layout.value);
    if (p->padding.count != 1 && p->padding.count != 2)
        return cvml_fail(CVML_ERR_LOGIC,
                         "Pool2D only supported 1-D or 2-D padding, got %" PRId32 " values",
                         p->padding.count);
    int rc = nn_verify_attr_range(p->padding.values[0], "MaxPool2D.padding[0]");
    if (!rc && p->padding.count == 2)
        rc = nn_verify_attr_range(p->padding.values[1], "MaxPool2D.padding[1]");
    if (rc) return rc;
    int64_t tpad_h, tpad_w;
    max_pool2d_pads(p, &tpad_h, &tpad_w);
    const int64_t pad_h = tpad_h * 2, pad_w = tpad_w * 2;
    if (p->pool_size.count != 2)
        return cvml_fail(CVML_ERR_LOGIC, "pool_size must have 2 values, got %" PRId32,
                         p->pool_size.count);
    if (p->strides.count != 2)
        return cvml_fail(CVML_ERR_LOGIC, "strides must have 2 values, got %" PRId32,
                         p->strides.count);
    rc = nn_verify_attr_range(p->strides.values[0], "MaxPool2D.strides[0]", 1);
    if (!rc) rc = nn_verify_attr_range(p->strides.values[1], "MaxPool2D.strides[1]", 1);
    if (!rc)
        rc = nn_verify_attr_range(p->pool_size.values[0], "MaxPool2D.pool_size[0]", 0,
                                  x->dims[2] + pad_h);
    if (!rc)
        rc = nn_verify_attr_range(p->pool_size.values[1], "MaxPool2D.pool_size[1]", 0,
                                  x->dims[3] + pad_w);
    if (rc) return rc;
    if (!(tpad_h < p->pool_size.values[0]) || !(tpad_w < p->pool_size.values[1]))
        return cvml_fail(CVML_ERR_LOGIC, "padding (%lld, %lld) must be less than pool_size",
                         static_cast<long long>(tpad_h), static_cast<long long>(tpad_w));
    const int64_t kh = p->pool_size.values[0], kw = p->pool_size.values[1];
    const int64_t sh = p->strides.values[0], sw = p->strides.values[1];
    ir_tensor* y = ctx->outputs[0];
    op_copy_shape(y, x);
    if (!p->ceil_mode) {
        y->dims[2] = (x->dims[2] + pad_h - kh) / sh + 1;
        y->dims[3] = (x->dims[3] + pad_w - kw) / sw + 1;
    } else {
        y->dims[2] = (x->dims[2] + pad_h - kh + sh - 1) / sh + 1;
        y->dims[3] = (x->dims[3] + pad_w - kw + sw - 1) / sw + 1;
        // The last window must start inside the input (upstream's min_o_h/min_o_w).
        if (!((y->dims[2] - 1) * sh - tpad_h < x->dims[2]) ||
            !((y->dims[3] - 1) * sw - tpad_w < x->dims[3]))
            return cvml_fail(CVML_ERR_LOGIC,
                             "ceil_mode: the last pooling window starts past the "
                             "input");
    }
    return CVML_OK;
}

int max_pool2d_gas_base(const op_infer_ctx* ctx, int64_t* base) {
    const max_pool2d_param* p = static_cast<const max_pool2d_param*>(ctx->param);
    *base = p->pool_size.values[0] * p->pool_size.values[1];
    return CVML_OK;
}

}  // namespace

extern const op_def op_def_max_pool2d = {
    .name = "max_pool2d",
    .attrs = max_pool2d_attrs,
    .attr_count = sizeof(max_pool2d_attrs) / sizeof(max_pool2d_attrs[0]),
    .param_size = sizeof(max_pool2d_param),
    .fixed_inputs = 1,
    .num_outputs = 1,
    .infer_shape = max_pool2d_infer_shape,
    .infer_precision = op_infer_precision_same_as_input0,
    .gas_base = max_pool2d_gas_base,
    .bound = op_bound_of_input0,
};
