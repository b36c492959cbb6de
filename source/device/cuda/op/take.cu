/* take on CUDA. Indices are clipped to [0, n-1] (upstream's kernel), so any index value
 * reads inside the data. Without an axis n is the flattened data's size; with one, the
 * output is (outer, indices, inner) and element (o, j, k) reads data[o, clip(idx[j]), k]. */
#include "unary.cuh"

namespace {

__global__ void take_flat(const int32_t* data, const int32_t* idx, int32_t* y, int64_t axis_n,
                          int64_t n) {
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x)
        y[i] = data[cvm_clip_index(idx[i], axis_n)];
}

__global__ void take_axis(const int32_t* data, const int32_t* idx, int32_t* y, int64_t n_idx,
                          int64_t axis_n, int64_t inner, int64_t n) {
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const int64_t row = i / inner, k = i - row * inner;
        const int64_t o = row / n_idx, j = row - o * n_idx;
        y[i] = data[(o * axis_n + cvm_clip_index(idx[j], axis_n)) * inner + k];
    }
}

/* An empty data tensor would leave the clipped index outside it; the CPU keeps that. */
int take_supports(const cuda_node_ctx* ctx) {
    const cuda_params p = params_of(ctx);
    const cuda_tensor* data = ctx->inputs[0];
    if (cuda_count(data) == 0) return 0;
    if (!p.present("axis")) return 1;
    const int64_t given = p.get("axis");
    const int64_t axis = given < 0 ? given + data->ndim : given;
    return axis >= 0 && axis < data->ndim;
}

int take_run(cuda_node_ctx* ctx) {
    const cuda_params p = params_of(ctx);
    const cuda_tensor* data = ctx->inputs[0];
    const int64_t n_idx = cuda_count(ctx->inputs[1]);
    const int64_t n = cuda_count(ctx->outputs[0]);
    if (n == 0) return CVML_OK;
    if (!p.present("axis")) {
        CUDA_LAUNCH(take_flat, cuda_blocks(n), 256, ctx->stream, ctx->in[0], ctx->in[1],
                    ctx->out[0], cuda_count(data), n);
        return CVML_OK;
    }
    const int64_t given = p.get("axis");
    const int32_t axis = static_cast<int32_t>(given < 0 ? given + data->ndim : given);
    int64_t inner = 1;
    for (int32_t d = axis + 1; d < data->ndim; ++d) inner *= data->dims[d];
    CUDA_LAUNCH(take_axis, cuda_blocks(n), 256, ctx->stream, ctx->in[0], ctx->in[1], ctx->out[0],
                n_idx, data->dims[axis], inner, n);
    return CVML_OK;
}

}  // namespace

extern const cuda_kernel cuda_kernel_take = {"take", take_supports, nullptr, take_run, nullptr};
