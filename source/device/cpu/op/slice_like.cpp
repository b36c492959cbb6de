/* slice_like on the CPU: the leading block of the data, read with the data's strides. */
#include "device/cpu/cpu_kernel.h"
#include "device/cpu/op/shape_copy.h"

namespace {

int slice_like_run(cpu_node_ctx* ctx) {
    const ir_tensor* x = ctx->inputs[0];
    const ir_tensor* y = ctx->outputs[0];
    shape_copy::gather g = {};
    g.src = cpu_in(ctx, 0);
    g.dst = cpu_out(ctx, 0);
    g.ndim = y->ndim;
    shape_copy::row_major_strides(x, g.strides);
    for (int32_t d = 0; d < y->ndim; ++d) g.dims[d] = y->dims[d];
    shape_copy::gather_run(ctx, &g);
    return CVML_OK;
}

}  // namespace

extern const cpu_kernel cpu_kernel_slice_like = {
    .op = "slice_like",
    .run = slice_like_run,
};
