/* The CPU algorithm shared by sum and max, ported from upstream's CPU reduce kernel so
 * that its quirks come out bit for bit (FORMAT.md §7, ref_interp.py reduce_general):
 * - exclude with every axis listed: identity copy;
 * - axis = () without exclude: one accumulator that starts at 0 (so max of all-negative
 *   data is 0);
 * - otherwise each output's base input index is computed by dropping the output's
 *   size-1 dims and pairing what is left right-to-left with the non-reduced input axes,
 *   which is wrong when a kept input axis of size 1 sits right of a larger kept axis;
 *   the reduced elements are then folded from that base, starting with the first one.
 * Sums wrap mod 2^32. Outputs are independent, so work is split over them. The input
 * may be stored as int8 or int16 (reduce_prerun): a global pool's sum then reads the
 * int8 tensor its convolution wrote with the tail in the GEMM's registers, where an int32
 * tensor kept that conv on the tile path (ResNet-18's last conv 9% slower on one thread,
 * MobileNet-v1's 7%; the sums themselves about even). Where upstream's mapping is the
 * true one for trailing axes (a global pool) output i folds the run at i * axis_size,
 * with no divisions per output (a fifth of the sums' time saved). */
#pragma once

#include <string.h>

#include "device/cpu/cpu_kernel.h"
#include "device/cpu/cpu_runtime.h"
#include "device/cpu/simd/simd.h"
#include "operator/reduce.h"

enum reduce_kind { REDUCE_SUM = 0, REDUCE_MAX = 1 };

/* Narrow inputs pay where a convolution's GEMM writes int8 through its fused tail (x86,
 * aarch64); a build with scalar kernels only (a microcontroller) keeps reading int32 and
 * keeps its code size (scripts/test_mcu.sh's budget). */
constexpr bool kReduceNarrowIn = CVML_SIMD_X86 || CVML_SIMD_AARCH64;

struct reduce_plan {
    const void* x;
    int32_t storage; /* the input's (enum tensor_storage) */
    int32_t* y;
    int32_t ndim;
    int64_t xdims[CVML_MAX_DIMS];
    int64_t every[CVML_MAX_DIMS]; /* row-major strides of x */
    int32_t real[CVML_MAX_DIMS];  /* reduced axes, ascending */
    int32_t real_count;
    int64_t axis_size;          /* elements folded into one output */
    int64_t ysh[CVML_MAX_DIMS]; /* output dims other than 1 */
    int32_t ysh_count;
    uint8_t flag[CVML_MAX_DIMS]; /* axis reduced */
    bool trailing;               /* the reduced axes are the last ones: each fold is one run */
    bool linear; /* trailing, and the mapping is the true one: output i folds the run at
                    i * axis_size (no kept size-1 axis right of a larger kept one) */
    int kind;
};

static inline int32_t reduce_fold(int kind, int32_t t, int32_t v) {
    if (kind == REDUCE_SUM) return cvml_wrap_add(t, v);
    return v > t ? v : t;
}

/* The fold of n consecutive values from the first on. Wrapping sums and maxima do not
 * depend on the order, so the loop is split in lanes the compiler can vectorize. */
static inline int32_t reduce_run_of(int kind, const int32_t* x, int64_t n) {
    if (kind == REDUCE_SUM) {
        uint32_t s = 0;
        for (int64_t k = 0; k < n; ++k) s += static_cast<uint32_t>(x[k]);
        return static_cast<int32_t>(s);
    }
    int32_t t = x[0];
    for (int64_t k = 1; k < n; ++k) t = x[k] > t ? x[k] : t;
    return t;
}

static inline int32_t reduce_load(const reduce_plan* p, int64_t i) {
    if (!kReduceNarrowIn) return static_cast<const int32_t*>(p->x)[i];
    return ir_storage_load(p->x, p->storage, i);
}

/* The same over a narrow input, value by value (a global pool's runs are short: 49). */
static inline int32_t reduce_run_narrow(const reduce_plan* p, int64_t at) {
    int32_t t = reduce_load(p, at);
    for (int64_t k = 1; k < p->axis_size; ++k) t = reduce_fold(p->kind, t, reduce_load(p, at + k));
    return t;
}

static inline int32_t reduce_run_stored(const reduce_plan* p, int64_t at) {
    if (!kReduceNarrowIn || p->storage == STORAGE_INT32)
        return reduce_run_of(p->kind, static_cast<const int32_t*>(p->x) + at, p->axis_size);
    return reduce_run_narrow(p, at);
}

static inline void reduce_general_range(void* arg, int64_t begin, int64_t end) {
    const reduce_plan* p = static_cast<const reduce_plan*>(arg);
    if (p->linear) {  // a global pool: no divisions per output
        for (int64_t i = begin; i < end; ++i) p->y[i] = reduce_run_stored(p, i * p->axis_size);
        return;
    }
    for (int64_t i = begin; i < end; ++i) {
        int64_t in_i = 0, o_i = i;
        int32_t xj = p->ndim - 1;
        for (int32_t j = p->ysh_count - 1; j >= 0; --j) {
            const int64_t col = o_i % p->ysh[j];
            o_i /= p->ysh[j];
            // Upstream: while (xj >= 0 && flag[xj--]); — skips reduced axes and steps
            // past the kept one it stops on.
            while (xj >= 0 && p->flag[xj--]) {
            }
            in_i += col * p->every[xj + 1];
        }
        if (p->trailing) {
            p->y[i] = reduce_run_stored(p, in_i);
            continue;
        }
        int32_t t = reduce_load(p, in_i);
        // Odometer over the reduced axes, last axis fastest, as upstream's mixed radix.
        int64_t counter[CVML_MAX_DIMS] = {0};
        int64_t off = 0;
        for (int64_t k = 1; k < p->axis_size; ++k) {
            for (int32_t r = p->real_count - 1; r >= 0; --r) {
                const int32_t a = p->real[r];
                if (++counter[r] < p->xdims[a]) {
                    off += p->every[a];
                    break;
                }
                off -= (counter[r] - 1) * p->every[a];
                counter[r] = 0;
            }
            t = reduce_fold(p->kind, t, reduce_load(p, in_i + off));
        }
        p->y[i] = t;
    }
}

/* Both reduces read their input in any storage where kReduceNarrowIn (and write int32),
 * unless the plan is for builds that may not (a portable or Cortex-M compiled plan). */
static inline int reduce_prerun(cpu_node_ctx* ctx, size_t* scratch_bytes) {
    *scratch_bytes = 0;
    const bool other_builds = ctx->rt && (ctx->rt->portable || ctx->rt->cortexm != CPU_CM_NONE);
    ctx->caps = kReduceNarrowIn && !other_builds ? CPU_CAP_NARROW_IN(0) | CPU_CAP_INT16 : 0u;
    return CVML_OK;
}

static inline int reduce_run(cpu_node_ctx* ctx, int kind) {
    const reduce_param* prm = static_cast<const reduce_param*>(ctx->param);
    const ir_tensor* xt = ctx->inputs[0];
    const ir_tensor* yt = ctx->outputs[0];
    reduce_plan p;
    memset(&p, 0, sizeof p);
    p.x = xt->data;
    p.storage = xt->storage;
    p.y = cpu_out(ctx, 0);
    p.ndim = xt->ndim;
    p.kind = kind;
    for (int32_t i = 0; i < p.ndim; ++i) p.xdims[i] = xt->dims[i];
    // The kernel's own axis set: listed axes normalised, complemented under exclude
    // (axis = () with exclude therefore reduces everything, from x[0]).
    for (int32_t i = 0; i < prm->axis.count; ++i) {
        int64_t a = prm->axis.values[i];
        if (a < 0) a += p.ndim;
        if (a < 0 || a >= p.ndim) return cvml_fail(CVML_ERR_RUNTIME, "reduce: axis out of range");
        p.flag[a] = 1;
    }
    if (prm->exclude)
        for (int32_t i = 0; i < p.ndim; ++i) p.flag[i] = !p.flag[i];
    for (int32_t i = 0; i < p.ndim; ++i)
        if (p.flag[i]) p.real[p.real_count++] = i;
    const int64_t xsize = ir_tensor_element_count(xt);
    const int64_t ysize = ir_tensor_element_count(yt);
    if (p.real_count == 0 && prm->exclude) {
        if (ysize != xsize) return cvml_fail(CVML_ERR_RUNTIME, "reduce: identity size mismatch");
        for (int64_t i = 0; i < xsize; ++i) p.y[i] = reduce_load(&p, i);
        return CVML_OK;
    }
    if (p.real_count == 0) {
        int32_t t = 0;
        for (int64_t i = 0; i < xsize; ++i) t = reduce_fold(kind, t, reduce_load(&p, i));
        for (int64_t i = 0; i < ysize; ++i) p.y[i] = t;
        return CVML_OK;
    }
    p.every[p.ndim - 1] = 1;
    for (int32_t i = p.ndim - 2; i >= 0; --i) p.every[i] = p.xdims[i + 1] * p.every[i + 1];
    p.axis_size = 1;
    for (int32_t r = 0; r < p.real_count; ++r) p.axis_size *= p.xdims[p.real[r]];
    p.trailing = p.real[0] == p.ndim - p.real_count;  // real is ascending and distinct
    p.linear = p.trailing;
    for (int32_t i = 1; i < p.ndim - p.real_count; ++i)
        if (p.xdims[i] == 1 && p.xdims[i - 1] != 1) p.linear = false;
    for (int32_t i = 0; i < yt->ndim; ++i)
        if (yt->dims[i] != 1) p.ysh[p.ysh_count++] = yt->dims[i];
    // The mapping only ever reads inside x (each paired input axis is at or right of the
    // output dim's true axis), but a kernel must not trust that blindly.
    int32_t kept = 0;
    for (int32_t i = 0; i < p.ndim; ++i) kept += !p.flag[i];
    if (p.ysh_count > kept) return cvml_fail(CVML_ERR_RUNTIME, "reduce: output shape mismatch");
    cpu_parallel_for(ctx, ysize, reduce_general_range, &p);
    return CVML_OK;
}
