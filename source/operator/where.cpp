/* where(condition, x, y): x and y must have the same shape. A condition of the same
 * shape selects element by element; a 1-D condition selects whole rows along axis 0.
 * Divergence D6: upstream accepts any 1-D condition but its kernel copies row_size
 * *bytes* instead of elements, leaving most of the output stale; cvm-lite selects
 * whole rows, and refuses (logic error) a 1-D condition whose length is not x's
 * first dimension, since rows past its end would have no condition to read.
 * The output precision is the *condition's* (upstream SamePrecision takes input 0). */
#include "operator/op_common.h"
#include "operator/op_def.h"
#include "utility/error.h"

namespace {

int where_infer_shape(op_infer_ctx* ctx) {
    const ir_tensor* cond = ctx->inputs[0];
    const ir_tensor* x = ctx->inputs[1];
    const ir_tensor* y = ctx->inputs[2];
    char a[128], b[128];
    if (!op_same_shape(x, y))
        return cvml_fail(CVML_ERR_LOGIC, "x and y must have the same shape: %s vs %s",
                         op_shape_str(x, a, sizeof a), op_shape_str(y, b, sizeof b));
    if (!op_same_shape(cond, x)) {
        if (cond->ndim != 1)
            return cvml_fail(CVML_ERR_LOGIC,
                             "Shape of condition %s must be either equal to x or has dimension "
                             "of 1",
                             op_shape_str(cond, a, sizeof a));
        if (cond->dims[0] != x->dims[0])
            return cvml_fail(CVML_ERR_LOGIC,
                             "1-D condition of length %lld does not match x's first dimension "
                             "%lld",
                             static_cast<long long>(cond->dims[0]),
                             static_cast<long long>(x->dims[0]));
    }
    op_copy_shape(ctx->outputs[0], x);
    return CVML_OK;
}

}  // namespace

extern const op_def op_def_where = {
    .name = "where",
    .fixed_inputs = 3,
    .num_outputs = 1,
    .infer_shape = where_infer_shape,
    .infer_precision = op_infer_precision_same_as_input0,
};
