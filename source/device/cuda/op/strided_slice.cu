/* strided_slice on CUDA: the gather from each axis's clamped begin, stepping by the
 * stride (backwards when negative), with the operator's own per-axis rule. A node whose
 * axes disagree with its shape stays on the CPU, which reports it. */
#include "gather.cuh"
#include "operator/strided_slice.h"

namespace {

int strided_slice_supports(const ir_graph* g, const ir_node* node) {
    const strided_slice_param* p = static_cast<const strided_slice_param*>(node->param);
    const ir_tensor* x = g->tensors[node->inputs[0]];
    const ir_tensor* y = g->tensors[node->outputs[0]];
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
    const strided_slice_param* p = static_cast<const strided_slice_param*>(ctx->param);
    const ir_tensor *x = ctx->inputs[0], *y = ctx->outputs[0];
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
