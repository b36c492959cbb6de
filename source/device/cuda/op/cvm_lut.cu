/* cvm_lut on CUDA: y[i] = table_flat[clip(data[i], 0, size-1)], upstream's take without
 * an axis with the operands swapped. */
#include "unary.cuh"

namespace {

__global__ void lut_kernel(const int32_t* data, const int32_t* table, int32_t* y, int64_t size,
                           int64_t n) {
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x)
        y[i] = table[cvm_clip_index(data[i], size)];
}

/* An empty table would leave the clipped index outside it; the CPU keeps that. */
int cvm_lut_supports(const cuda_node_ctx* ctx) {
    return cuda_count(ctx->inputs[1]) > 0;
}

int cvm_lut_run(cuda_node_ctx* ctx) {
    const int64_t n = cuda_count(ctx->outputs[0]);
    if (n > 0)
        CUDA_LAUNCH(lut_kernel, cuda_blocks(n), 256, ctx->stream, ctx->in[0], ctx->in[1],
                    ctx->out[0], cuda_count(ctx->inputs[1]), n);
    return CVML_OK;
}

}  // namespace

extern const cuda_kernel cuda_kernel_cvm_lut = {"cvm_lut", cvm_lut_supports, nullptr, cvm_lut_run,
                                                nullptr};
