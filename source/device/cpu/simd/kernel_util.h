/* Helpers the fast kernels share: the fused tail as an epilogue, per-thread slots. */
#pragma once

#include "device/cpu/cpu_kernel.h"
#include "device/cpu/cpu_runtime.h"
#include "device/cpu/simd/epilogue.h"
#include "device/cpu/simd/simd.h"
#include "device/cpu/simd/simd_config.h"
#include "operator/op_def.h"
#include "utility/platform.h"

#ifndef CVML_WITH_THREADS
#error "CVML_WITH_THREADS (0 or 1) comes with the library's objects: cpu_threads() reads it"
#endif

/* Appends the node's fused tail (ctx->tail) to `ep`; operands are read at run time
 * because their buffers are placed after the kernels' prerun. The device leaves room
 * for two steps of the node's own. */
static inline void cpu_tail_append(const cpu_node_ctx* ctx, epilogue* ep) {
    if (!ctx->tail) return;
    for (int32_t i = 0; i < ctx->tail->count; ++i) {
        const cpu_tail_step* s = &ctx->tail->steps[i];
        epilogue_add_step(ep, &s->step, s->operand ? s->operand->data : nullptr,
                          s->operand ? s->operand->storage : 0);
    }
}

static inline void cpu_tail_epilogue(const cpu_node_ctx* ctx, epilogue* ep) {
    ep->step_count = 0;
    cpu_tail_append(ctx, ep);
}

/* The threads that run a kernel's chunks at once, each with its own scratch slot.
 * Without CVML_WITH_THREADS the caller runs the chunks one after the other: one slot
 * serves them all, and the count is a constant the compiler folds. */
static inline int cpu_threads(const cpu_node_ctx* ctx) {
#if CVML_WITH_THREADS
    return ctx->rt && ctx->rt->pool ? thread_pool_threads(ctx->rt->pool) : 1;
#else
    (void)ctx;
    return 1;
#endif
}

static inline int cpu_level(const cpu_node_ctx* ctx) {
#if CVML_CPU_FAST_PATHS
    return ctx->rt ? ctx->rt->simd_level : CPU_SIMD_SCALAR;
#else
    (void)ctx;
    return CPU_SIMD_SCALAR;
#endif
}

/* The record of the node's level (simd_config.h), for the fast paths: NULL in builds
 * without them. */
static inline const cpu_simd_config* cpu_config(const cpu_node_ctx* ctx) {
#if CVML_CPU_FAST_PATHS
    return ctx->rt ? ctx->rt->simd : cpu_simd_config_of(CPU_SIMD_SCALAR);
#else
    (void)ctx;
    return nullptr;
#endif
}

/* The plain reference loops: the scalar level with fusion and narrow storage off. Never
 * on bare metal, where fusion is always on (cpu_runtime.h). */
static inline bool cpu_reference(const cpu_node_ctx* ctx) {
    return !CVML_BARE_METAL && cpu_level(ctx) == CPU_SIMD_SCALAR && !(ctx->rt && ctx->rt->fusion);
}

/* Runs fn(arg, slot, slot + 1) once per thread slot: with n == threads, the pool's
 * static split gives chunk k exactly index k, so slot k owns scratch slot k. */
static inline void cpu_for_each_slot(const cpu_node_ctx* ctx, cpu_range_fn fn, void* arg) {
    cpu_parallel_for(ctx, cpu_threads(ctx), fn, arg);
}

static inline int32_t cpu_load(const ir_tensor* t, int64_t i) {
    return ir_storage_load(t->data, t->storage, i);
}

static inline void cpu_store(const ir_tensor* t, int64_t i, int32_t v) {
    ir_storage_store(t->data, t->storage, i, v);
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

/* Where a stride-2 row's input columns go: padded column x + pad lands in phase
 * (x + pad) % 2 at index (x + pad) / 2, the two phases `phase_stride` apart, so the even
 * input columns start at *even and the odd ones at *odd. */
static inline void cpu_phase_row2_starts(int64_t pad, int64_t phase_stride, int8_t* dst,
                                         int8_t** even, int8_t** odd) {
    const int64_t pe = pad % 2;
    *even = dst + pe * phase_stride + pad / 2;
    *odd = dst + (1 - pe) * phase_stride + (pad + 1) / 2;
}

/* The same for an int8 row and stride 2, vectorized (the level's deinterleave). */
static inline void cpu_phase_row2_i8(int level, const int8_t* src, int64_t w, int64_t pad,
                                     int64_t phase_stride, int8_t* dst) {
    int8_t *even, *odd;
    cpu_phase_row2_starts(pad, phase_stride, dst, &even, &odd);
    simd_deinterleave2_i8(level, src, w, even, odd);
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

/* ---- element-wise kernels at the SIMD levels ----------------------------------------
 * The operator's own steps then its fused tail, over int8, int16 or int32 storage. */

/* The vector path takes an operator that is a step (op_def.step on input 0); any
 * other stays on its scalar loop. These are out of line (kernel_util.cpp): every
 * element-wise kernel calls them, and inlined they were a copy per kernel (800 bytes of
 * a microcontroller's image for cifar_resnet20's four). */
int cpu_ew_prerun(cpu_node_ctx* ctx, int inputs);

/* `ep` holds the operator's own steps; appends the fused tail and applies it all to
 * input `input`, element by element, into output 0. */
int cpu_ew_run(cpu_node_ctx* ctx, epilogue* ep, int32_t input);

/* In its epilogue form an element-wise kernel may write over input 0: each chunk of it is
 * read before the same chunk of the output is written (cpu_kernel.writes_over_input). */
int32_t cpu_ew_writes_over_input(const cpu_node_ctx* ctx, size_t* scratch_bytes);

/* The operator's own step (op_def.step on input 0; cpu_ew_prerun checked there is one)
 * then its fused tail. */
int cpu_ew_run_step(cpu_node_ctx* ctx);
