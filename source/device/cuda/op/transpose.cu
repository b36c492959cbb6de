/* transpose on CUDA: the gather with the input strides permuted (as the CPU kernel);
 * empty axes reverse, negative axes count from the end. */
#include "gather.cuh"

namespace {

int transpose_run(cuda_node_ctx* ctx) {
    const cuda_tuple axes = params_of(ctx).tuple("axes");
    const cuda_tensor *x = ctx->inputs[0], *y = ctx->outputs[0];
    int64_t in_strides[CVML_MAX_DIMS];
    row_major_strides(x, in_strides);
    gather_map m = {};
    m.ndim = x->ndim;
    for (int32_t d = 0; d < x->ndim; ++d) {
        int64_t a = axes.count == 0 ? x->ndim - 1 - d : axes.values[d];
        if (a < 0) a += x->ndim;
        m.dims[d] = y->dims[d];
        m.div[d] = 1;
        m.mod[d] = y->dims[d];
        m.stride[d] = in_strides[a];
    }
    return gather_launch(ctx, m);
}

}  // namespace

extern const cuda_kernel cuda_kernel_transpose = {"transpose", nullptr, nullptr, transpose_run,
                                                  nullptr};
