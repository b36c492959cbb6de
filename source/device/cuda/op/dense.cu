/* dense on CUDA: Y[m, u] = Σ_k X[m, k]·W[u, k] (+ b[u]) in int32 with wrap-around, no
 * int8 cast (unlike conv2d's groups == 1 path).
 *
 * A constant weight of precision <= 8 (the loader checks its values against that bound)
 * is int8 exactly: it is packed once, at prerun, and the product runs on int8 tensor
 * cores (igemm.cuh, as a 1x1 conv on 1x1 images). The input's declared precision is not
 * a bound, so each run packs it to int8 and raises a device flag when a value does not
 * fit; then the GEMM takes its exact int32 path for every tile (the same bytes, as CPU's
 * dense does after its check of the values).
 *
 * Any other weight (computed by the graph, or of a wider precision) takes that exact
 * int32 path at every run. Sums wrap mod 2^32, so their order does not change the bytes. */
#include <limits.h>
#include <stdlib.h>

#include "cuda_kernel.h"
#include "igemm.cuh"

namespace {

/* x8[m][k / 4] = four int8 values of a row (0 past K); *wide = 1 when some value is
 * outside int8 (every writer stores the same 1). */
__global__ void dense_pack_input(const int32_t* x, int32_t* x8, int32_t* wide, igemm::geom g,
                                 int64_t total) {
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const int64_t m = i / g.c4, c4 = i - m * g.c4;
        uint32_t word = 0;
        bool fits = true;
        for (int b = 0; b < 4; ++b) {
            const int64_t c = c4 * 4 + b;
            if (c >= g.c) break;
            const int32_t v = x[m * g.c + c];
            fits = fits && v >= -128 && v <= 127;
            word |= static_cast<uint32_t>(static_cast<uint8_t>(v)) << (8 * b);
        }
        x8[i] = static_cast<int32_t>(word);
        if (!fits) *wide = 1;
    }
}

struct dense_state {
    igemm::geom gemm;
    bool int8_weight;  /* packed at prerun: the tensor-core path when the input fits */
    int32_t* x8;       /* the input as int8 words, [batch][k4] */
    int32_t* w8;       /* the weight packed, [units (padded)][k4 (padded)] */
    int32_t* wide;     /* device flag: an operand does not fit int8 (this run's input) */
    int32_t* counters; /* split K with a tail: per output tile (igemm::counter_count) */
};

bool dense_uses_bias(const cuda_node_ctx* ctx) {
    return params_of(ctx).get("use_bias") != 0;
}

/* A constant of precision <= 8: its values are int8 (the loader checked them). */
bool dense_int8_weight(const cuda_node_ctx* ctx) {
    const cuda_tensor* w = ctx->inputs[1];
    return w->is_const && w->precision >= 1 && w->precision <= 8;
}

igemm::geom dense_geom(const cuda_node_ctx* ctx) {
    igemm::geom g = {};
    g.m = ctx->inputs[0]->dims[0];
    g.pix = 1;
    g.n_out = static_cast<int32_t>(ctx->inputs[1]->dims[0]);
    g.c = static_cast<int32_t>(ctx->inputs[0]->dims[1]);
    g.c4 = (g.c + 3) / 4;
    g.k_words = g.c4;
    g.k_pad = igemm::round_up(g.k_words, igemm::kTileK);
    g.h = g.w = g.kh = g.kw = g.ow = g.sh = g.sw = g.dh = g.dw = 1;
    return g;
}

int dense_supports(const cuda_node_ctx* ctx) {
    const cuda_tensor* x = ctx->inputs[0];
    const cuda_tensor* w = ctx->inputs[1];
    const cuda_tensor* y = ctx->outputs[0];
    if (ctx->input_count != (dense_uses_bias(ctx) ? 3 : 2)) return 0;
    // The GEMM indexes K and the units in int32.
    return x->ndim == 2 && w->ndim == 2 && y->ndim == 2 && w->dims[1] == x->dims[1] &&
           y->dims[0] == x->dims[0] && y->dims[1] == w->dims[0] && x->dims[1] <= INT32_MAX / 4 &&
           w->dims[0] <= INT32_MAX / 4;
}

/* The constant weight's values as int8 words, rows padded with zeros, uploaded. */
int upload_packed_weight(const cuda_node_ctx* ctx, const igemm::geom& g, int32_t* w8) {
    const cvml_ir_tensor* wt = cuda_ir->graph_tensor(ctx->graph, ctx->inputs[1]->index);
    const size_t words = static_cast<size_t>(igemm::weight_words(g));
    uint32_t* host = static_cast<uint32_t*>(calloc(words ? words : 1, sizeof(uint32_t)));
    if (!host) return cuda_fail(CVML_ERR_RUNTIME, "dense: out of memory packing the weight");
    for (int64_t u = 0; u < g.n_out; ++u)
        for (int64_t c = 0; c < g.c; ++c) {
            const int32_t v = cuda_ir->tensor_const_value(wt, u * g.c + c);
            host[u * g.k_pad + c / 4] |= static_cast<uint32_t>(static_cast<uint8_t>(v))
                                         << (8 * (c % 4));
        }
    const int rc =
        cuda_check(cudaMemcpy(w8, host, words * sizeof(uint32_t), cudaMemcpyHostToDevice),
                   "cudaMemcpy (dense weight)");
    free(host);
    return rc;
}

int dense_alloc(size_t words, int32_t** out, const char* what) {
    void* a = nullptr;
    const int rc = cuda_check(cudaMalloc(&a, words * sizeof(int32_t)), what);
    *out = static_cast<int32_t*>(a);
    return rc;
}

int dense_prerun(cuda_node_ctx* ctx) {
    dense_state* st = static_cast<dense_state*>(calloc(1, sizeof(dense_state)));
    if (!st) return cuda_fail(CVML_ERR_RUNTIME, "out of memory");
    ctx->state = st;
    st->gemm = dense_geom(ctx);
    st->int8_weight = dense_int8_weight(ctx);
    const igemm::geom& g = st->gemm;
    ctx->tail_capacity = CUDA_MAX_TAIL;
    int rc = dense_alloc(1, &st->wide, "cudaMalloc (dense flag)");
    const int64_t counters = igemm::counter_count(g);
    if (!rc && counters > 0) {
        rc = dense_alloc(static_cast<size_t>(counters), &st->counters,
                         "cudaMalloc (dense tile counters)");
        if (!rc)
            rc = cuda_check(
                cudaMemset(st->counters, 0, static_cast<size_t>(counters) * sizeof(int32_t)),
                "cudaMemset (dense tile counters)");
    }
    if (!st->int8_weight) {
        if (!rc) rc = cuda_check(cudaMemset(st->wide, 1, sizeof(int32_t)), "cudaMemset (dense)");
        return rc;
    }
    if (!rc)
        rc = dense_alloc(static_cast<size_t>(g.m * g.c4) + 1, &st->x8, "cudaMalloc (dense input)");
    if (!rc)
        rc = dense_alloc(static_cast<size_t>(igemm::weight_words(g)), &st->w8,
                         "cudaMalloc (dense weight)");
    if (!rc) rc = upload_packed_weight(ctx, g, st->w8);
    if (!rc) ctx->unread_inputs |= 1u << 1;  // only w8 is read from now on
    return rc;
}

int dense_run(cuda_node_ctx* ctx) {
    const int32_t* bias = dense_uses_bias(ctx) ? ctx->in[2] : nullptr;
    if (cuda_count(ctx->outputs[0]) == 0) return CVML_OK;
    dense_state* st = static_cast<dense_state*>(ctx->state);
    if (!st) return cuda_fail(CVML_ERR_RUNTIME, "dense: not prepared");
    const igemm::geom& g = st->gemm;
    if (st->int8_weight) {
        const int64_t words = g.m * g.c4;
        const int rc = cuda_check(cudaMemsetAsync(st->wide, 0, sizeof(int32_t), ctx->stream),
                                  "cudaMemsetAsync (dense flag)");
        if (rc) return rc;
        if (words > 0)
            CUDA_LAUNCH(dense_pack_input, cuda_blocks(words), 256, ctx->stream, ctx->in[0], st->x8,
                        st->wide, g, words);
    }
    return igemm::launch(st->x8, st->w8, bias, ctx->out[0], g, st->wide, ctx->in[0],
                         st->int8_weight ? nullptr : ctx->in[1], ctx->tail, st->counters,
                         ctx->stream);
}

void dense_postrun(cuda_node_ctx* ctx) {
    dense_state* st = static_cast<dense_state*>(ctx->state);
    if (!st) return;
    if (st->x8) cudaFree(st->x8);
    if (st->w8) cudaFree(st->w8);
    if (st->wide) cudaFree(st->wide);
    if (st->counters) cudaFree(st->counters);
    free(st);
    ctx->state = nullptr;
}

}  // namespace

extern const cuda_kernel cuda_kernel_dense = {"dense", dense_supports, dense_prerun, dense_run,
                                              dense_postrun};
