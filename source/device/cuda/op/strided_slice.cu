/* strided_slice on CUDA: the gather from each axis's clamped begin, stepping by the
 * stride (backwards when negative), with the operator's own per-axis rule. A node whose
 * axes disagree with its shape stays on the CPU, which reports it. */
#include "gather.cuh"
// The operator's per-axis rule, header-only and shared with the CPU so the two cannot
// drift; its parameters are read through the plugin ABI.
#include "operator/strided_slice.h"

namespace {

void copy_tuple(const cuda_tuple& from, attr_tuple* to) {
    to->count = from.count;
    for (int32_t i = 0; i < from.count; ++i) to->values[i] = from.values[i];
}

strided_slice_param slice_params_of(const cuda_node_ctx* ctx) {
    const cuda_params p = params_of(ctx);
    strided_slice_param sp = {};
    copy_tuple(p.tuple("begin"), &sp.begin);
    copy_tuple(p.tuple("end"), &sp.end);
    copy_tuple(p.tuple("stride"), &sp.stride);
    return sp;
}

int strided_slice_supports(const cuda_node_ctx* ctx) {
    const strided_slice_param sp = slice_params_of(ctx);
    const strided_slice_param* p = &sp;
    const cuda_tensor* x = ctx->inputs[0];
    const cuda_tensor* y = ctx->outputs[0];
    if (x->ndim != y->ndim || x->ndim < 1) return 0;
    for (int32_t d = 0; d < x->ndim; ++d) {
        int64_t first, stride, size;
        if (strided_slice_axis(p, d, x->dims[d], &first, &stride, &size) != STRIDED_SLICE_OK ||
            size != y->dims[d])
            return 0;
    }
    return 1;
}

int strided_slice_run(cuda_node_ctx* ctx) {
    const strided_slice_param sp = slice_params_of(ctx);
    const strided_slice_param* p = &sp;
    const cuda_tensor *x = ctx->inputs[0], *y = ctx->outputs[0];
    int64_t in_strides[CVML_MAX_DIMS];
    row_major_strides(x, in_strides);
    gather_map m = {};
    m.ndim = x->ndim;
    for (int32_t d = 0; d < x->ndim; ++d) {
        int64_t first, stride, size;
        if (strided_slice_axis(p, d, x->dims[d], &first, &stride, &size) != STRIDED_SLICE_OK ||
            size != y->dims[d])
            return cuda_fail(CVML_ERR_RUNTIME, "strided_slice: axis %d disagrees with its shape",
                             d);
        m.dims[d] = size;
        m.div[d] = 1;
        m.mod[d] = size;
        // size > 1 implies |stride| < n, so only then is the product formed (as on the CPU).
        m.stride[d] = size > 1 ? stride * in_strides[d] : 0;
        m.base += first * in_strides[d];
    }
    return gather_launch(ctx, m);
}

}  // namespace

extern const cuda_kernel cuda_kernel_strided_slice = {"strided_slice", strided_slice_supports,
                                                      nullptr, strided_slice_run, nullptr};
