/* strided_slice on the CPU: a strided gather starting at the clamped begin of each
 * axis, stepping by stride (negative strides walk backwards). */
#include "operator/strided_slice.h"

#include "device/cpu/cpu_kernel.h"
#include "device/cpu/op/shape_copy.h"
#include "utility/error.h"

#include <inttypes.h>

namespace {

int strided_slice_run(cpu_node_ctx* ctx) {
    const strided_slice_param* p = static_cast<const strided_slice_param*>(ctx->param);
    const ir_tensor* x = ctx->inputs[0];
    const ir_tensor* y = ctx->outputs[0];
    int64_t in_strides[CVML_MAX_DIMS];
    shape_copy::row_major_strides(x, in_strides);
    shape_copy::gather g = {};
    g.src = cpu_in(ctx, 0);
    g.dst = cpu_out(ctx, 0);
    g.ndim = x->ndim;
    for (int32_t d = 0; d < x->ndim; ++d) {
        int64_t first, stride, size;
        if (strided_slice_axis(p, d, x->dims[d], &first, &stride, &size) != STRIDED_SLICE_OK ||
            size != y->dims[d])
            return cvml_fail(CVML_ERR_RUNTIME,
                             "strided_slice: axis %" PRId32 " disagrees with its shape", d);
        g.dims[d] = size;
        /* size > 1 implies |stride| < n, so the product stays small */
        g.strides[d] = size > 1 ? stride * in_strides[d] : 0;
        g.base += first * in_strides[d];
    }
    shape_copy::gather_run(ctx, &g);
    return CVML_OK;
}

}  // namespace

extern const cpu_kernel cpu_kernel_strided_slice = {
    .op = "strided_slice",
    .run = strided_slice_run,
};
