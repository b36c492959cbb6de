/* upsampling on CUDA: nearest neighbour as the gather, output row i and column j read
 * the input at (i / scale, j / scale) of the same (batch, channel) plane. */
#include "gather.cuh"

namespace {

int upsampling_supports(const cuda_node_ctx* ctx) {
    const int64_t scale = params_of(ctx).get("scale");
    const cuda_tensor* x = ctx->inputs[0];
    const cuda_tensor* y = ctx->outputs[0];
    if (scale < 1 || x->ndim != 4 || y->ndim != 4) return 0;
    for (int32_t d = 0; d < 4; ++d)
        if (y->dims[d] != (d < 2 ? x->dims[d] : x->dims[d] * scale)) return 0;
    return 1;
}

int upsampling_run(cuda_node_ctx* ctx) {
    const int64_t scale = params_of(ctx).get("scale");
    const cuda_tensor *x = ctx->inputs[0], *y = ctx->outputs[0];
    gather_map m = {};
    m.ndim = 4;
    row_major_strides(x, m.stride);
    for (int32_t d = 0; d < 4; ++d) {
        m.dims[d] = y->dims[d];
        m.div[d] = d < 2 ? 1 : scale;
        m.mod[d] = x->dims[d];
    }
    return gather_launch(ctx, m);
}

}  // namespace

extern const cuda_kernel cuda_kernel_upsampling = {"upsampling", upsampling_supports, nullptr,
                                                   upsampling_run, nullptr};
