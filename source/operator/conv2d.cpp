/* conv2d: 2-D convolution, NCHW data, OIHW weight, optional bias (upstream
 * src/top/nn/convolution.cc). Shape rules are upstream's VERIFYs (logic errors), plus
 * divergence D5: a given weight shape must equal (channels, C/groups, kh, kw), which
 * upstream never checks and then overruns its buffers. */
#include "operator/conv2d.h"

#include <inttypes.h>
#include <stddef.h>

#include "operator/conv2d_geom.h"
#include "operator/nn_attr.h"
#include "operator/op_common.h"

namespace {

const attr_spec conv2d_attrs[] = {
    {"channels", ATTR_INT, nullptr, offsetof(conv2d_param, channels), 0, 0, nullptr},
    {"kernel_size", ATTR_TUPLE, nullptr, offsetof(conv2d_param, kernel_size), 0, 0, nullptr},
    {"strides", ATTR_TUPLE, "(1, 1)", offsetof(conv2d_param, strides), 0, 0, nullptr},
    {"padding", ATTR_TUPLE, "(0, 0)", offsetof(conv2d_param, padding), 0, 0, nullptr},
    {"dilation", ATTR_TUPLE, "(1, 1)", offsetof(conv2d_param, dilation), 0, 0, nullptr},
    {"groups", ATTR_INT, "1", offsetof(conv2d_param, groups), 0, 0, nullptr},
    {"layout", ATTR_STRING, "NCHW", offsetof(conv2d_param, layout), 0, 0, nullptr},
    {"kernel_layout", ATTR_STRING, "OIHW", offsetof(conv2d_param, kernel_layout), 0, 0, nullptr},
    {"out_layout", ATTR_STRING, "__undef__", offsetof(conv2d_param, out_layout), 0, 0, nullptr},
    {"out_dtype", ATTR_STRING, "same", offsetof(conv2d_param, out_dtype), 0, 0,
     nn_dtype_or_same_names},
    {"use_bias", ATTR_BOOL, "True", offsetof(conv2d_param, use_bias), 0, 0, nullptr},
};

int32_t conv2d_num_inputs(const void* param) {
    return static_cast<const conv2d_param*>(param)->use_bias ? 3 : 2;
}

int conv2d_infer_shape(op_infer_ctx* ctx) {
    const conv2d_param* p = static_cast<const conv2d_param*>(ctx->param);
    if (!nn_str_eq(&p->layout, "NCHW"))
        return cvml_fail(CVML_ERR_LOGIC, "Conv2D only supported layout: NCHW vs. %s",
                         p->layout.value);
    if (!nn_str_eq(&p->kernel_layout, "OIHW"))
        return cvml_fail(CVML_ERR_LOGIC, "Conv2D only supported kernel layout: OIHW vs. %s",
                         p->kernel_layout.value);
    // An undefined out_layout means "same as layout".
    if (!nn_str_eq(&p->out_layout, "__undef__") && !nn_str_eq(&p->out_layout, "") &&
        !nn_str_eq(&p->out_layout, "NCHW"))
        return cvml_fail(CVML_ERR_LOGIC, "Conv2D only supported out_layout NCHW vs. %s",
                         p->out_layout.value);
    const ir_tensor* x = ctx->inputs[0];
    if (x->ndim != 4) return cvml_fail(CVML_ERR_LOGIC, "Input data should be 4D");
    if (p->kernel_size.count != 2)
        return cvml_fail(CVML_ERR_LOGIC, "kernel_size must have 2 values, got %" PRId32,
                         p->kernel_size.count);
    if (p->padding.count != 2)
        return cvml_fail(CVML_ERR_LOGIC, "padding must have 2 values, got %" PRId32,
                         p->padding.count);
    int rc = nn_verify_attr_range(p->padding.values[0], "Conv2D.padding[0]");
    if (!rc) rc = nn_verify_attr_range(p->padding.values[1], "Conv2D.padding[1]");
    if (rc) return rc;
    if (p->strides.count != 2)
        return cvml_fail(CVML_ERR_LOGIC, "incorrect stride size: %" PRId32, p->strides.count);
    rc = nn_verify_attr_range(p->strides.values[0], "Conv2D.strides[0]", 1);
    if (!rc) rc = nn_verify_attr_range(p->strides.values[1], "Conv2D.strides[1]", 1);
    if (rc) return rc;
    if (p->dilation.count != 2)
        return cvml_fail(CVML_ERR_LOGIC, "incorrect dilate size: %" PRId32, p->dilation.count);
    rc = nn_verify_attr_range(p->dilation.values[0], "Conv2D.dilation[0]", 1);
    if (!rc) rc = nn_verify_attr_range(p->dilation.values[1], "Conv2D.dilation[1]", 1);
    if (rc) return rc;
    if (!(p->groups > 0 && x->dims[1] % p->groups == 0 && p->channels % p->groups == 0))
        return cvml_fail(CVML_ERR_LOGIC,
                         "Conv2D only supported groups (1 or in_channels %" PRId32 ") vs. %" PRId32,
                         p->channels, p->groups);

    if (p->use_bias) {
        const int64_t bshape[1] = {p->channels};
        rc = nn_expect_input_shape(ctx->inputs[2], "bias", bshape, 1);
        if (rc) return rc;
    }
    // A kernel size no weight can have (D5 refuses it against the weight's shape at load)
    // is refused here already, before the dilated size below could overflow.
    rc = nn_verify_attr_range(p->kernel_size.values[0], "Conv2D.kernel_size[0]", 1, INT32_MAX);
    if (!rc)
        rc = nn_verify_attr_range(p->kernel_size.values[1], "Conv2D.kernel_size[1]", 1, INT32_MAX);
    if (rc) return rc;
    const int64_t dk_h = conv2d_dilated_extent(p->kernel_size.values[0], p->dilation.values[0]);
    const int64_t dk_w = conv2d_dilated_extent(p->kernel_size.values[1], p->dilation.values[1]);
    ir_tensor* y = ctx->outputs[0];
    y->ndim = 4;
    y->dims[0] = x->dims[0];
    y->dims[1] = p->channels;
    y->dims[2] = conv2d_out_extent(x->dims[2], p->padding.values[0], p->kernel_size.values[0],
                                   p->strides.values[0], p->dilation.values[0]);
    y->dims[3] = conv2d_out_extent(x->dims[3], p->padding.values[1], p->kernel_size.values[1],
                                   p->strides.values[1], p->dilation.values[1]);
    if (dk_h > x->dims[2] + 2 * p->padding.values[0])
        return cvml_fail(CVML_ERR_LOGIC, "kernel size exceed input (%lld vs. %lld)",
                         static_cast<long long>(dk_h),
                         static_cast<long long>(x->dims[2] + 2 * p->padding.values[0]));
    if (dk_w > x->dims[3] + 2 * p->padding.values[1])
        return cvml_fail(CVML_ERR_LOGIC, "kernel size exceed input (%lld vs. %lld)",
                         static_cast<long long>(dk_w),
                         static_cast<long long>(x->dims[3] + 2 * p->padding.values[1]));
    return CVML_OK;
}

/* D5: upstream only infers a missing weight shape and trusts a given one, then writes
 * past its buffers; cvm-lite refuses the model at load. */
int conv2d_verify_load(op_infer_ctx* ctx) {
    const conv2d_param* p = static_cast<const conv2d_param*>(ctx->param);
    const ir_tensor* x = ctx->inputs[0];
    const ir_tensor* w = ctx->inputs[1];
    const int64_t wshape[4] = {p->channels, x->dims[1] / p->groups, p->kernel_size.values[0],
                               p->kernel_size.values[1]};
    bool same = w->ndim == 4;
    for (int i = 0; same && i < 4; ++i) same = w->dims[i] == wshape[i];
    if (!same) {
        char want[96], got[96];
        return cvml_fail(CVML_ERR_LOGIC,
                         "weight shape %s disagrees with channels, C/groups and kernel_size %s",
                         nn_dims_str(w->dims, w->ndim, got, sizeof got),
                         nn_dims_str(wshape, 4, want, sizeof want));
    }
    return CVML_OK;
}

int conv2d_infer_precision(op_infer_ctx* ctx) {
    const conv2d_param* p = static_cast<const conv2d_param*>(ctx->param);
    const int32_t px = ctx->inputs[0]->precision;
    const int32_t pw = ctx->inputs[1]->precision;
    if (px > 8) return cvml_fail(CVML_ERR_LOGIC, "Conv2D input must be INT8 vs. INT%" PRId32, px);
    if (pw > 8) return cvml_fail(CVML_ERR_LOGIC, "Conv2D weight must be INT8 vs. INT%" PRId32, pw);
    const ir_tensor* w = ctx->inputs[1];
    if (w->ndim != 4) return cvml_fail(CVML_ERR_LOGIC, "Conv2D weight must be 4-D");
    int32_t prec = px + pw + op_bits(nn_size(w) / w->dims[0]);
    if (p->use_bias) {
        const int32_t pb = ctx->inputs[2]->precision;
        prec = (prec > pb ? prec : pb) + 1;
    }
    ctx->outputs[0]->precision = prec;
    return CVML_OK;
}

int conv2d_gas_base(const op_infer_ctx* ctx, int64_t* base) {
    const conv2d_param* p = static_cast<const conv2d_param*>(ctx->param);
    const ir_tensor* w = ctx->inputs[1];
    *base = 3 * nn_size(w) / w->dims[0] + (p->use_bias ? 1 : 0);
    return CVML_OK;
}

}  // namespace

extern const op_def op_def_conv2d = {
    .name = "conv2d",
    .attrs = conv2d_attrs,
    .attr_count = sizeof(conv2d_attrs) / sizeof(conv2d_attrs[0]),
    .param_size = sizeof(conv2d_param),
    .pair_tuples = 1,
    .fixed_inputs = 3,
    .num_inputs = conv2d_num_inputs,
    .num_outputs = 1,
    .infer_shape = conv2d_infer_shape,
    .infer_precision = conv2d_infer_precision,
    .gas_base = conv2d_gas_base,
    .verify_load = conv2d_verify_load,
};
