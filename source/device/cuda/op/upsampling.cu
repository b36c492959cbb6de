/* upsampling on CUDA: nearest neighbour as the gather, output row i and column j read
 * the input at (i / scale, j / scale) of the same (batch, channel) plane. */
#include "gather.cuh"
#include "operator/upsampling.h"

namespace {

int upsampling_supports(const ir_graph* g, const ir_node* node) {
    const upsampling_param* p = static_cast<const upsampling_param*>(node->param);
    const ir_tensor* x = g->tensors[node->inputs[0]];
    const ir_tensor* y = g->tensors[node->outputs[0]];
    if (p->scale < 1 || x->ndim != 4 || y->ndim != 4) return 0;
    for (int32_t d = 0; d < 4; ++d)
        if (y->dims[d] != (d < 2 ? x->dims[d] : x->dims[d] * p->scale)) return 0;
    return 1;
}

int upsampling_run(cuda_node_ctx* ctx) {
    const upsampling_param* p = static_cast<const upsampling_param*>(ctx->param);
    const ir_tensor *x = ctx->inputs[0], *y = ctx->outputs[0];
    gather_map m = {};
    m.ndim = 4;
    row_major_strides(x, m.stride);
    for (int32_t d = 0; d < 4; ++d) {
        m.dims[d] = y->dims[d];
        m.div[d] = d < 2 ? 1 : p->scale;
        m.mod[d] = x->dims[d];
    }
    return gather_launch(ctx, m);
}

}  // namespace

extern const cuda_kernel cuda_kernel_upsampling = {"upsampling", upsampling_supports, nullptr,
                                                   upsampling_run, nullptr};
