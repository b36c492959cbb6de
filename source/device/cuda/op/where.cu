/* where on CUDA. Same-shape condition: element-wise cond != 0 ? x : y. 1-D condition:
 * row r of the output (x viewed as (shape[0], rest)) is x's row r when cond[r] != 0,
 * else y's; whole rows, as the CPU kernel (divergence D6: upstream copies row_size
 * bytes and leaves the rest stale). */
#include "cuda_kernel.h"

namespace {

__global__ void where_kernel(const int32_t* cond, const int32_t* x, const int32_t* y, int32_t* out,
                             int64_t row, int64_t n) {
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x)
        out[i] = cond[row == 1 ? i : i / row] != 0 ? x[i] : y[i];
}

/* Verification leaves cond with x's shape or (x.shape[0],); anything else stays on
 * the CPU. */
int where_supports(const cuda_node_ctx* ctx) {
    const int64_t n = cuda_count(ctx->outputs[0]);
    const int64_t c = cuda_count(ctx->inputs[0]);
    if (cuda_count(ctx->inputs[1]) != n || cuda_count(ctx->inputs[2]) != n) return 0;
    return c == n || (c > 0 && n % c == 0);
}

int where_run(cuda_node_ctx* ctx) {
    const int64_t n = cuda_count(ctx->outputs[0]);
    const int64_t c = cuda_count(ctx->inputs[0]);
    if (n == 0) return CVML_OK;
    CUDA_LAUNCH(where_kernel, cuda_blocks(n), 256, ctx->stream, ctx->in[0], ctx->in[1], ctx->in[2],
                ctx->out[0], c == n ? 1 : n / c, n);
    return CVML_OK;
}

}  // namespace

extern const cuda_kernel cuda_kernel_where = {"where", where_supports, nullptr, where_run, nullptr};
