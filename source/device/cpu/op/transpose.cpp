/* transpose on the CPU: a strided gather with the input strides permuted. Upstream's
 * special (1,2,0) path gives the same values as the general one. */
#include "operator/transpose.h"

#include "device/cpu/cpu_kernel.h"
#include "device/cpu/op/shape_copy.h"

namespace {

int transpose_run(cpu_node_ctx* ctx) {
    const transpose_param* p = static_cast<const transpose_param*>(ctx->param);
    const ir_tensor* x = ctx->inputs[0];
    const ir_tensor* y = ctx->outputs[0];
    const int32_t ndim = x->ndim;
    int64_t in_strides[CVML_MAX_DIMS];
    shape_copy::row_major_strides(x, in_strides);
    shape_copy::gather g = {};
    g.src = cpu_in(ctx, 0);
    g.dst = cpu_out(ctx, 0);
    g.ndim = ndim;
    for (int32_t d = 0; d < ndim; ++d) {
        int64_t a = p->axes.count == 0 ? ndim - 1 - d : p->axes.values[d];
        if (a < 0) a += ndim;
        g.dims[d] = y->dims[d];
        g.strides[d] = in_strides[a];
    }
    shape_copy::gather_run(ctx, &g);
    return CVML_OK;
}

}  // namespace

extern const cpu_kernel cpu_kernel_transpose = {
    .op = "transpose",
    .run = transpose_run,
};
