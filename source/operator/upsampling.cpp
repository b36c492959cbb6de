/* upsampling: nearest neighbour, y[h, w] = x[h / scale, w / scale] over NCHW. The shape
 * rules are upstream VERIFYs (logic errors). */
#include "operator/upsampling.h"

#include <inttypes.h>
#include <stddef.h>

#include "operator/nn_attr.h"
#include "operator/op_common.h"

namespace {

const attr_spec upsampling_attrs[] = {
    {"scale", ATTR_INT, nullptr, offsetof(upsampling_param, scale), 0, 0, nullptr},
    {"layout", ATTR_STRING, "NCHW", offsetof(upsampling_param, layout), 0, 0, nullptr},
    {"method", ATTR_STRING, "NEAREST_NEIGHBOR", offsetof(upsampling_param, method), 0, 0, nullptr},
};

int upsampling_infer_shape(op_infer_ctx* ctx) {
    const upsampling_param* p = static_cast<const upsampling_param*>(ctx->param);
    const ir_tensor* x = ctx->inputs[0];
    if (x->ndim != 4)
        return cvml_fail(CVML_ERR_LOGIC, "dimension should be 4D, got %" PRId32 "-D", x->ndim);
    if (!nn_str_eq(&p->method, "NEAREST_NEIGHBOR"))
        return cvml_fail(CVML_ERR_LOGIC, "only accept method = NEAREST_NEIGHBOR vs. %s",
                         p->method.value);
    int rc = nn_verify_attr_range(p->scale, "UpSampling.scale", 1);
    if (rc) return rc;
    if (!nn_str_eq(&p->layout, "NCHW"))
        return cvml_fail(CVML_ERR_LOGIC, "UpSampling only supported NCHW layout vs. %s",
                         p->layout.value);
    ir_tensor* y = ctx->outputs[0];
    op_copy_shape(y, x);
    y->dims[2] = x->dims[2] * p->scale;
    y->dims[3] = x->dims[3] * p->scale;
    return CVML_OK;
}

}  // namespace

extern const op_def op_def_upsampling = {
    .name = "upsampling",
    .attrs = upsampling_attrs,
    .attr_count = sizeof(upsampling_attrs) / sizeof(upsampling_attrs[0]),
    .param_size = sizeof(upsampling_param),
    .fixed_inputs = 1,
    .num_outputs = 1,
    .infer_shape = upsampling_infer_shape,
    .infer_precision = op_infer_precision_same_as_input0,
};
