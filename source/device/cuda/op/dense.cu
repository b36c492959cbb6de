/* dense on CUDA: Y[m, u] = Σ_k X[m, k]·W[u, k] (+ b[u]) in int32 with wrap-around, no
 * int8 cast (unlike conv2d's groups == 1 path). One warp per output reads both rows
 * coalesced; the lanes' partial sums combine in uint32, so the order of the additions
 * does not change the bytes (addition mod 2^32 is associative). */
#include "cuda_kernel.h"

namespace {

constexpr unsigned kThreads = 256;
constexpr unsigned kWarps = kThreads / 32;

__global__ void dense_kernel(const int32_t* x, const int32_t* w, const int32_t* bias, int32_t* y,
                             int64_t k, int64_t units, int64_t n) {
    const unsigned lane = threadIdx.x & 31u;
    for (int64_t t = blockIdx.x * static_cast<int64_t>(kWarps) + threadIdx.x / 32u; t < n;
         t += static_cast<int64_t>(gridDim.x) * kWarps) {
        const int64_t m = t / units, u = t - (t / units) * units;
        const int32_t* xr = x + m * k;
        const int32_t* wr = w + u * k;
        uint32_t acc = 0;
        for (int64_t i = lane; i < k; i += 32)
            acc += static_cast<uint32_t>(xr[i]) * static_cast<uint32_t>(wr[i]);
        for (unsigned off = 16; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off);
        if (lane == 0) {
            if (bias) acc += static_cast<uint32_t>(bias[u]);
            y[t] = static_cast<int32_t>(acc);
        }
    }
}

int dense_supports(const cuda_node_ctx* ctx) {
    const bool use_bias = params_of(ctx).get("use_bias") != 0;
    const cuda_tensor* x = ctx->inputs[0];
    const cuda_tensor* w = ctx->inputs[1];
    const cuda_tensor* y = ctx->outputs[0];
    if (ctx->input_count != (use_bias ? 3 : 2)) return 0;
    return x->ndim == 2 && w->ndim == 2 && y->ndim == 2 && w->dims[1] == x->dims[1] &&
           y->dims[0] == x->dims[0] && y->dims[1] == w->dims[0];
}

int dense_run(cuda_node_ctx* ctx) {
    const bool use_bias = params_of(ctx).get("use_bias") != 0;
    const int64_t n = cuda_count(ctx->outputs[0]);
    const int64_t units = ctx->outputs[0]->dims[1];
    if (n == 0) return CVML_OK;
    int64_t blocks = (n + kWarps - 1) / kWarps;
    if (blocks > CVML_CUDA_MAX_BLOCKS) blocks = CVML_CUDA_MAX_BLOCKS;
    CUDA_LAUNCH(dense_kernel, static_cast<unsigned>(blocks), kThreads, ctx->stream, ctx->in[0],
                ctx->in[1], use_bias ? ctx->in[2] : nullptr, ctx->out[0], ctx->inputs[0]->dims[1],
                units, n);
    return CVML_OK;
}

}  // namespace

extern const cuda_kernel cuda_kernel_dense = {"dense", dense_supports, nullptr, dense_run, nullptr};
