/* tile on CUDA: the input is right-aligned with the output (size-1 leading axes when
 * reps is longer than its rank) and each axis wraps at the input's extent. */
#include "gather.cuh"

namespace {

int tile_run(cuda_node_ctx* ctx) {
    const cuda_tensor *x = ctx->inputs[0], *y = ctx->outputs[0];
    int64_t in_strides[CVML_MAX_DIMS];
    row_major_strides(x, in_strides);
    const int32_t lead = y->ndim - x->ndim;
    if (lead < 0) return cuda_fail(CVML_ERR_RUNTIME, "tile: output rank below input rank");
    gather_map m = {};
    m.ndim = y->ndim;
    for (int32_t d = 0; d < y->ndim; ++d) {
        m.dims[d] = y->dims[d];
        m.div[d] = 1;
        m.mod[d] = d < lead ? 1 : x->dims[d - lead];
        m.stride[d] = d < lead ? 0 : in_strides[d - lead];
    }
    return gather_launch(ctx, m);
}

}  // namespace

extern const cuda_kernel cuda_kernel_tile = {"tile", nullptr, nullptr, tile_run, nullptr};
