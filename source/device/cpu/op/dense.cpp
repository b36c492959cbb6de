/* dense on the CPU: Y[m, u] = Σ_k X[m, k]·W[u, k] (+ b[u]) in int32 with wrap-around
 * (upstream casts nothing here, unlike conv2d's groups == 1 path). Rows of X and W are
 * contiguous, so each output is one streaming dot product; work is split over outputs. */
#include "operator/dense.h"

#include <stdlib.h>
#include <string.h>

#include "device/cpu/cpu_kernel.h"
#include "device/cpu/simd/gemm_s8.h"
#include "device/cpu/simd/kernel_util.h"
#include "device/cpu/simd/simd.h"
#include "utility/error.h"
#include "utility/memory.h"

namespace {

struct dense_args {
    const int32_t* x;
    const ir_tensor* w; /* any storage: int8 weights are read as stored */
    const int32_t* bias;
    int32_t* y;
    int64_t k, units;
};

/* acc + the dot product of an int32 row and a weight row of type T (wrapping). */
template <typename T>
uint32_t dot_row(uint32_t acc, const int32_t* xr, const void* weights, int64_t k) {
    const T* wr = static_cast<const T*>(weights);
    for (int64_t i = 0; i < k; ++i)
        acc += static_cast<uint32_t>(xr[i]) * static_cast<uint32_t>(static_cast<int32_t>(wr[i]));
    return acc;
}

void dense_range(void* arg, int64_t begin, int64_t end) {
    const dense_args* a = static_cast<const dense_args*>(arg);
    const int storage = a->w->storage;
    for (int64_t t = begin; t < end; ++t) {
        const int64_t m = t / a->units;
        const int64_t u = t % a->units;
        const int32_t* xr = a->x + m * a->k;
        const int64_t wsize = storage == STORAGE_INT8 ? 1 : storage == STORAGE_INT16 ? 2 : 4;
        const uint8_t* wr = static_cast<const uint8_t*>(a->w->data) + u * a->k * wsize;
        uint32_t acc = a->bias ? static_cast<uint32_t>(a->bias[u]) : 0u;
        if (storage == STORAGE_INT8)
            acc = dot_row<int8_t>(acc, xr, wr, a->k);
        else if (storage == STORAGE_INT16)
            acc = dot_row<int16_t>(acc, xr, wr, a->k);
        else
            acc = dot_row<int32_t>(acc, xr, wr, a->k);
        a->y[t] = static_cast<int32_t>(acc);
    }
}

/* ---- fast path (SIMD levels) -------------------------------------------------------------
 * Upstream multiplies dense operands as int32, so the int8 GEMM is used only when every
 * input value fits int8: always for an int8-stored input (a proven bound), else after a
 * check of this run's values (either way the bits are the same). Weights have precision
 * <= 8 (verified), so they are int8 exactly. The fused tail is applied per output. */

struct dense_fast {
    int level;
    int64_t batch, k, units;
    gemm_weights w;
    int8_t* w8;       /* the weights as int8 when the device handed them over as int32 */
    bool narrow;      /* a batch of at most gemm_narrow_cols, by dot products (gemm_run_narrow) */
    bool bias_folded; /* the GEMM's sums include the constant bias (gemm_weights_fold_bias) */
    size_t b_bytes;
};

struct dense_tile_args {
    const dense_fast* f;
    const epilogue* ep;
    const int32_t* bias;
    const ir_tensor* y;
    const void* packed;
};

void dense_tile(void* arg, int32_t m0, int32_t rows, int32_t n0, int32_t cols,
                const int32_t* tile) {
    const dense_tile_args* a = static_cast<const dense_tile_args*>(arg);
    for (int32_t r = 0; r < rows; ++r)
        for (int32_t c = 0; c < cols; ++c) {
            const int64_t u = m0 + r, b = n0 + c, i = b * a->f->units + u;
            int32_t v = cvml_wrap_add(tile[r * GEMM_NT + c], a->bias ? a->bias[u] : 0);
            cpu_store(a->y, i, epilogue_value(a->ep, v, i));
        }
}

void dense_tiles(void* arg, int64_t begin, int64_t end) {
    const dense_tile_args* a = static_cast<const dense_tile_args*>(arg);
    gemm_run_tiles(&a->f->w, a->packed, static_cast<int32_t>(a->f->batch), begin, end, dense_tile,
                   arg);
}

/* A batch of at most gemm_narrow_cols rows: dot products along K per block of 8 units
 * (avx512's 16-column tile would compute 15 padding columns of 16 at batch 1). */
void dense_narrow_blocks(void* arg, int64_t begin, int64_t end) {
    const dense_tile_args* a = static_cast<const dense_tile_args*>(arg);
    gemm_run_narrow(&a->f->w, static_cast<const uint8_t*>(a->packed),
                    static_cast<int32_t>(a->f->batch), 0, begin, end, dense_tile, arg);
}

/* The batch's rows as narrow columns: K values x + 128 as u8, zeros up to the stride. */
void dense_gather_narrow(const dense_fast* f, const ir_tensor* x, uint8_t* dst) {
    const size_t stride = gemm_narrow_stride(static_cast<int32_t>(f->k));
    for (int64_t b = 0; b < f->batch; ++b) {
        uint8_t* col = dst + stride * static_cast<size_t>(b);
        for (int64_t i = 0; i < f->k; ++i)
            col[i] = static_cast<uint8_t>(static_cast<uint8_t>(cpu_load(x, b * f->k + i)) ^ 0x80u);
        memset(col + f->k, 0, stride - static_cast<size_t>(f->k));
    }
}

struct dense_wide_args {
    const dense_fast* f;
    const cpu_node_ctx* ctx;
    const epilogue* ep;
    const int32_t* bias;
};

/* Exact int32 products when an input value lies outside int8. */
void dense_wide_range(void* arg, int64_t begin, int64_t end) {
    const dense_wide_args* a = static_cast<const dense_wide_args*>(arg);
    const ir_tensor* x = a->ctx->inputs[0];
    const ir_tensor* w = a->ctx->inputs[1];
    const ir_tensor* y = a->ctx->outputs[0];
    for (int64_t t = begin; t < end; ++t) {
        const int64_t m = t / a->f->units, u = t % a->f->units;
        uint32_t acc = a->bias ? static_cast<uint32_t>(a->bias[u]) : 0u;
        for (int64_t i = 0; i < a->f->k; ++i)
            acc += static_cast<uint32_t>(cpu_load(x, m * a->f->k + i)) *
                   static_cast<uint32_t>(cpu_load(w, u * a->f->k + i));
        cpu_store(y, t, epilogue_value(a->ep, static_cast<int32_t>(acc), t));
    }
}

int dense_fast_run(cpu_node_ctx* ctx, const dense_fast* f) {
    const dense_param* p = static_cast<const dense_param*>(ctx->param);
    const int32_t* bias = p->use_bias ? cpu_in(ctx, 2) : nullptr;
    epilogue ep;
    cpu_tail_epilogue(ctx, &ep);
    const ir_tensor* x = ctx->inputs[0];
    bool fits = x->storage == STORAGE_INT8;
    if (!fits) {
        fits = true;
        for (int64_t i = 0; i < f->batch * f->k && fits; ++i) {
            int32_t v = cpu_load(x, i);
            fits = v >= -128 && v <= 127;
        }
    }
    if (!fits) {
        dense_wide_args a = {f, ctx, &ep, bias};
        cpu_parallel_for(ctx, f->batch * f->units, dense_wide_range, &a);
        return CVML_OK;
    }
    // The int8 GEMM's sums may hold the bias already; the int32 loops above add it.
    const int32_t* tile_bias = f->bias_folded ? nullptr : bias;
    uint8_t* packed = static_cast<uint8_t*>(ctx->scratch);
    if (f->narrow) {
        dense_gather_narrow(f, x, packed);
        dense_tile_args a = {f, &ep, tile_bias, ctx->outputs[0], packed};
        cpu_parallel_for(ctx, f->units / GEMM_MR, dense_narrow_blocks, &a);
        return CVML_OK;
    }
    int8_t* rows = reinterpret_cast<int8_t*>(packed + f->b_bytes);
    for (int64_t k4 = 0; k4 * GEMM_KG < f->k; ++k4) {
        const int8_t* r[GEMM_KG];
        for (int i = 0; i < GEMM_KG; ++i) {
            const int64_t kk = k4 * GEMM_KG + i;
            if (kk >= f->k) {
                r[i] = nullptr;
                continue;
            }
            int8_t* row = rows + i * f->batch;
            for (int64_t b = 0; b < f->batch; ++b)
                row[b] = static_cast<int8_t>(cpu_load(x, b * f->k + kk));
            r[i] = row;
        }
        gemm_pack_b_group(f->level, r, static_cast<int32_t>(f->batch), static_cast<int32_t>(f->k),
                          static_cast<int32_t>(k4), packed);
    }
    dense_tile_args a = {f, &ep, tile_bias, ctx->outputs[0], packed};
    cpu_parallel_for(
        ctx, gemm_tile_count(static_cast<int32_t>(f->units), static_cast<int32_t>(f->batch)),
        dense_tiles, &a);
    return CVML_OK;
}

int dense_fast_prerun(cpu_node_ctx* ctx, size_t* scratch_bytes) {
    const ir_tensor* x = ctx->inputs[0];
    const ir_tensor* w = ctx->inputs[1];
    // The device hands this path its weights as stored (int8 when their precision
    // allows), which the reference loops cannot read: sizes past the GEMM's are refused.
    if (x->dims[0] > INT32_MAX / 4 || x->dims[1] > INT32_MAX / 4 || w->dims[0] > INT32_MAX / 4)
        return cvml_fail(CVML_ERR_RUNTIME, "dense: %lld x %lld by %lld units is too large",
                         static_cast<long long>(x->dims[0]), static_cast<long long>(x->dims[1]),
                         static_cast<long long>(w->dims[0]));
    dense_fast* f = static_cast<dense_fast*>(cvml_mem_calloc(1, sizeof(dense_fast)));
    if (!f) return cvml_fail_out_of_memory();
    f->level = cpu_level(ctx);
    f->batch = x->dims[0];
    f->k = x->dims[1];
    f->units = w->dims[0];
    const int8_t* w8 = nullptr;
    if (w->storage == STORAGE_INT8) {
        w8 = static_cast<const int8_t*>(w->data);
    } else {
        const size_t n = static_cast<size_t>(f->units * f->k);
        f->w8 = static_cast<int8_t*>(cvml_mem_alloc(n + 64));
        if (!f->w8) {
            cvml_mem_free(f);
            return cvml_fail_out_of_memory();
        }
        memset(f->w8 + n, 0, 64);
        for (size_t i = 0; i < n; ++i)
            f->w8[i] = static_cast<int8_t>(cpu_load(w, static_cast<int64_t>(i)));
        w8 = f->w8;
    }
    int rc = gemm_weights_plain(f->level, w8, static_cast<int32_t>(f->units),
                                static_cast<int32_t>(f->k), &f->w);
    if (rc) {
        cvml_mem_free(f->w8);
        cvml_mem_free(f);
        return rc;
    }
    const dense_param* p = static_cast<const dense_param*>(ctx->param);
    if (p->use_bias && ctx->inputs[2]->kind == TENSOR_CONST)
        f->bias_folded = gemm_weights_fold_bias(&f->w, cpu_in(ctx, 2)) != 0;
    f->narrow = f->batch <= gemm_narrow_cols(&f->w);
    if (f->narrow) {
        *scratch_bytes =
            gemm_narrow_stride(static_cast<int32_t>(f->k)) * static_cast<size_t>(f->batch);
    } else {
        f->b_bytes =
            (gemm_b_bytes(f->level, static_cast<int32_t>(f->k), static_cast<int32_t>(f->batch)) +
             63) &
            ~static_cast<size_t>(63);
        *scratch_bytes = f->b_bytes + static_cast<size_t>(GEMM_KG * f->batch) + 64;
    }
    ctx->state = f;
    ctx->caps = CPU_CAP_TAIL | CPU_CAP_NARROW_OUT | CPU_CAP_INT16 | CPU_CAP_NARROW_IN(0);
    return CVML_OK;
}

void dense_postrun(cpu_node_ctx* ctx) {
    dense_fast* f = static_cast<dense_fast*>(ctx->state);
    if (CVML_CPU_FAST_PATHS && f) {
        gemm_weights_free(&f->w);
        cvml_mem_free(f->w8);
    }
    cvml_mem_free(f);
    ctx->state = nullptr;
}

int dense_prerun(cpu_node_ctx* ctx, size_t* scratch_bytes) {
    *scratch_bytes = 0;
    const ir_tensor* x = ctx->inputs[0];
    const ir_tensor* w = ctx->inputs[1];
    const ir_tensor* y = ctx->outputs[0];
    if (x->ndim != 2 || w->ndim != 2 || y->ndim != 2 || w->dims[1] != x->dims[1] ||
        y->dims[0] != x->dims[0] || y->dims[1] != w->dims[0])
        return cvml_fail(CVML_ERR_RUNTIME, "dense: input, weight and output shapes disagree");
    // The scalar loops read the weights as stored. The fast path packs constant weights
    // here; a weight that is a graph input or an operator output has no values yet, so
    // it takes the loops that read it per run.
    if (cpu_level(ctx) != CPU_SIMD_SCALAR && ctx->inputs[1]->kind == TENSOR_CONST)
        return dense_fast_prerun(ctx, scratch_bytes);
    ctx->caps = CPU_CAP_NARROW_IN(1);
    return CVML_OK;
}

int dense_run(cpu_node_ctx* ctx) {
    if (CVML_CPU_FAST_PATHS && ctx->state)
        return dense_fast_run(ctx, static_cast<const dense_fast*>(ctx->state));
    const dense_param* p = static_cast<const dense_param*>(ctx->param);
    dense_args a;
    a.x = cpu_in(ctx, 0);
    a.w = ctx->inputs[1];
    a.bias = p->use_bias ? cpu_in(ctx, 2) : nullptr;
    a.y = cpu_out(ctx, 0);
    a.k = ctx->inputs[0]->dims[1];
    a.units = ctx->outputs[0]->dims[1];
    cpu_parallel_for(ctx, ctx->outputs[0]->dims[0] * a.units, dense_range, &a);
    return CVML_OK;
}

}  // namespace

extern const cpu_kernel cpu_kernel_dense = {
    .op = "dense",
    .prerun = dense_prerun,
    .run = dense_run,
    .postrun = dense_postrun,
    .narrow_consts = CPU_CAP_NARROW_IN(1),
};
