/* concatenate on CUDA: each output row (the dims before `axis`) is the inputs' matching
 * blocks laid end to end; one copy launch per input writes its column band of every
 * row, all on the graph's stream. */
#include "cuda_kernel.h"

namespace {

__global__ void band_kernel(const int32_t* x, int32_t* y, int64_t len, int64_t out_row,
                            int64_t offset, int64_t n) {
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const int64_t row = i / len;
        y[row * out_row + offset + (i - row * len)] = x[i];
    }
}

int32_t concat_axis(const cuda_node_ctx* ctx, const cuda_tensor* y) {
    const int32_t axis = static_cast<int32_t>(params_of(ctx).get("axis"));
    return axis < 0 ? axis + y->ndim : axis;
}

int concatenate_supports(const cuda_node_ctx* ctx) {
    const cuda_tensor* y = ctx->outputs[0];
    const int32_t axis = concat_axis(ctx, y);
    if (axis < 0 || axis >= y->ndim || ctx->input_count < 1) return 0;
    int64_t total = 0;
    for (int32_t i = 0; i < ctx->input_count; ++i) {
        const cuda_tensor* x = ctx->inputs[i];
        if (x->ndim != y->ndim) return 0;
        for (int32_t d = 0; d < y->ndim; ++d)
            if (d != axis && x->dims[d] != y->dims[d]) return 0;
        total += x->dims[axis];
    }
    return total == y->dims[axis];
}

int concatenate_run(cuda_node_ctx* ctx) {
    const cuda_tensor* y = ctx->outputs[0];
    const int32_t axis = concat_axis(ctx, y);
    int64_t outer = 1, inner = 1;
    for (int32_t d = 0; d < axis; ++d) outer *= y->dims[d];
    for (int32_t d = axis + 1; d < y->ndim; ++d) inner *= y->dims[d];
    const int64_t out_row = y->dims[axis] * inner;
    int64_t offset = 0;
    for (int32_t i = 0; i < ctx->input_count; ++i) {
        const int64_t len = ctx->inputs[i]->dims[axis] * inner;
        const int64_t n = outer * len;
        if (n > 0)
            CUDA_LAUNCH(band_kernel, cuda_blocks(n), 256, ctx->stream, ctx->in[i], ctx->out[0], len,
                        out_row, offset, n);
        offset += len;
    }
    return CVML_OK;
}

}  // namespace

extern const cuda_kernel cuda_kernel_concatenate = {"concatenate", concatenate_supports, nullptr,
                                                    concatenate_run, nullptr};
