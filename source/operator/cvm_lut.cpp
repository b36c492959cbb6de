/* cvm_lut(data, table): y = take(table, data) without an axis, so data values are
 * clipped indices into the flattened table. The output has data's shape and the
 * table's precision; in_dim must equal the table's size (upstream VERIFY). */
#include <inttypes.h>
#include <stddef.h>

#include "operator/cvm_lut.h"
#include "operator/op_common.h"
#include "operator/op_def.h"
#include "utility/error.h"

namespace {

const attr_spec cvm_lut_attrs[] = {
    {"in_dim", ATTR_INT, nullptr, offsetof(cvm_lut_param, in_dim), 0, 0, nullptr},
};

int cvm_lut_infer_shape(op_infer_ctx* ctx) {
    const cvm_lut_param* p = static_cast<const cvm_lut_param*>(ctx->param);
    int64_t table_size = ir_tensor_element_count(ctx->inputs[1]);
    if (table_size != p->in_dim)
        return cvml_fail(CVML_ERR_LOGIC,
                         "cvm_lut in_dim %" PRId32 " differs from the table size %lld", p->in_dim,
                         static_cast<long long>(table_size));
    op_copy_shape(ctx->outputs[0], ctx->inputs[0]);
    return CVML_OK;
}

int cvm_lut_infer_precision(op_infer_ctx* ctx) {
    ctx->outputs[0]->precision = ctx->inputs[1]->precision;
    return CVML_OK;
}

}  // namespace

extern const op_def op_def_cvm_lut = {
    .name = "cvm_lut",
    .attrs = cvm_lut_attrs,
    .attr_count = 1,
    .param_size = sizeof(cvm_lut_param),
    .fixed_inputs = 2,
    .num_outputs = 1,
    .infer_shape = cvm_lut_infer_shape,
    .infer_precision = cvm_lut_infer_precision,
};
