/* Helpers the fast kernels share: the fused tail as an epilogue, per-thread slots. */
#pragma once

#include "device/cpu/cpu_kernel.h"
#include "device/cpu/cpu_runtime.h"
#include "device/cpu/simd/epilogue.h"

/* The node's fused tail (ctx->tail) as an epilogue; operands are read at run time
 * because their buffers are placed after the kernels' prerun. */
static inline void cpu_tail_epilogue(const cpu_node_ctx* ctx, epilogue* ep) {
    ep->step_count = 0;
    if (!ctx->tail) return;
    for (int32_t i = 0; i < ctx->tail->count; ++i) {
        const cpu_tail_step* s = &ctx->tail->steps[i];
        if (s->kind == CPU_TAIL_RSHIFT)
            epilogue_add_rshift(ep, s->a, s->b);
        else if (s->kind == CPU_TAIL_CLIP)
            epilogue_add_clip(ep, s->a, s->b);
        else if (s->kind == CPU_TAIL_ADD)
            epilogue_add_add(ep, s->operand->data, s->operand->storage);
    }
}

static inline int cpu_threads(const cpu_node_ctx* ctx) {
    return ctx->rt && ctx->rt->pool ? thread_pool_threads(ctx->rt->pool) : 1;
}

static inline int cpu_level(const cpu_node_ctx* ctx) {
    return ctx->rt ? ctx->rt->simd_level : CPU_SIMD_SCALAR;
}

/* Runs fn(arg, slot, slot + 1) once per thread slot: with n == threads, the pool's
 * static split gives chunk k exactly index k, so slot k owns scratch slot k. */
static inline void cpu_for_each_slot(const cpu_node_ctx* ctx, cpu_range_fn fn, void* arg) {
    cpu_parallel_for(ctx, cpu_threads(ctx), fn, arg);
}

static inline int32_t cpu_load(const ir_tensor* t, int64_t i) {
    if (t->storage == STORAGE_INT8) return static_cast<const int8_t*>(t->data)[i];
    if (t->storage == STORAGE_INT16) return static_cast<const int16_t*>(t->data)[i];
    return static_cast<const int32_t*>(t->data)[i];
}

/* Scatters one input row of `w` values into its column phases: dst[p*phase_stride + j]
 * receives column x + pad, where x + pad = j*s + p (no division per element). */
template <typename In, typename Out>
static inline void cpu_phase_row(const In* src, int64_t w, int64_t pad, int64_t s,
                                 int64_t phase_stride, Out* dst) {
    if (s == 1) {
        for (int64_t x = 0; x < w; ++x) dst[pad + x] = static_cast<Out>(src[x]);
        return;
    }
    int64_t p = pad % s, j = pad / s;
    for (int64_t x = 0; x < w; ++x) {
        dst[p * phase_stride + j] = static_cast<Out>(src[x]);
        if (++p == s) {
            p = 0;
            ++j;
        }
    }
}

/* The same from a tensor in any storage, starting at element `base`. */
template <typename Out>
static inline void cpu_phase_row_any(const ir_tensor* t, int64_t base, int64_t w, int64_t pad,
                                     int64_t s, int64_t phase_stride, Out* dst) {
    if (t->storage == STORAGE_INT8)
        cpu_phase_row(static_cast<const int8_t*>(t->data) + base, w, pad, s, phase_stride, dst);
    else if (t->storage == STORAGE_INT16)
        cpu_phase_row(static_cast<const int16_t*>(t->data) + base, w, pad, s, phase_stride, dst);
    else
        cpu_phase_row(static_cast<const int32_t*>(t->data) + base, w, pad, s, phase_stride, dst);
}
