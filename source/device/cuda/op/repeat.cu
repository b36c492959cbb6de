/* repeat on CUDA: output index a along the axis reads input index a / repeats. */
#include "gather.cuh"

namespace {

int repeat_run(cuda_node_ctx* ctx) {
    const cuda_params p = params_of(ctx);
    const cuda_tensor *x = ctx->inputs[0], *y = ctx->outputs[0];
    const int64_t given = p.get("axis");
    const int32_t axis = static_cast<int32_t>(given < 0 ? given + x->ndim : given);
    const int64_t repeats = p.get("repeats");
    gather_map m = {};
    m.ndim = x->ndim;
    row_major_strides(x, m.stride);
    for (int32_t d = 0; d < x->ndim; ++d) {
        m.dims[d] = y->dims[d];
        m.div[d] = d == axis ? repeats : 1;
        m.mod[d] = x->dims[d];
    }
    return gather_launch(ctx, m);
}

}  // namespace

extern const cuda_kernel cuda_kernel_repeat = {"repeat", nullptr, nullptr, repeat_run, nullptr};
