/* repeat on CUDA: output index a along the axis reads input index a / repeats. */
#include "gather.cuh"
#include "operator/repeat.h"

namespace {

int repeat_run(cuda_node_ctx* ctx) {
    const repeat_param* p = static_cast<const repeat_param*>(ctx->param);
    const ir_tensor *x = ctx->inputs[0], *y = ctx->outputs[0];
    const int32_t axis = p->axis < 0 ? p->axis + x->ndim : p->axis;
    gather_map m = {};
    m.ndim = x->ndim;
    row_major_strides(x, m.stride);
    for (int32_t d = 0; d < x->ndim; ++d) {
        m.dims[d] = y->dims[d];
        m.div[d] = d == axis ? p->repeats : 1;
        m.mod[d] = x->dims[d];
    }
    return gather_launch(ctx, m);
}

}  // namespace

extern const cuda_kernel cuda_kernel_repeat = {"repeat", nullptr, nullptr, repeat_run, nullptr};
