/* slice_like on CUDA: the leading block of the data (the output's extent on every
 * axis), read with the data's own strides; the second input only shaped the output. */
#include "gather.cuh"

namespace {

int slice_like_supports(const cuda_node_ctx* ctx) {
    const cuda_tensor* x = ctx->inputs[0];
    const cuda_tensor* y = ctx->outputs[0];
    if (x->ndim != y->ndim || x->ndim < 1) return 0;
    for (int32_t d = 0; d < x->ndim; ++d)
        if (y->dims[d] > x->dims[d]) return 0;
    return 1;
}

int slice_like_run(cuda_node_ctx* ctx) {
    const cuda_tensor *x = ctx->inputs[0], *y = ctx->outputs[0];
    gather_map m = {};
    m.ndim = y->ndim;
    row_major_strides(x, m.stride);
    for (int32_t d = 0; d < y->ndim; ++d) {
        m.dims[d] = y->dims[d];
        m.div[d] = 1;
        m.mod[d] = y->dims[d];
    }
    return gather_launch(ctx, m);
}

}  // namespace

extern const cuda_kernel cuda_kernel_slice_like = {"slice_like", slice_like_supports, nullptr,
                                                   slice_like_run, nullptr};
