/* Helpers the fast kernels share: the fused tail as an epilogue, per-thread slots. */
#pragma once

#include "device/cpu/cpu_kernel.h"
#include "device/cpu/cpu_runtime.h"
#include "device/cpu/simd/epilogue.h"
#include "device/cpu/simd/simd.h"
#include "operator/op_def.h"

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

static inline int cpu_threads(const cpu_node_ctx* ctx) {
    return ctx->rt && ctx->rt->pool ? thread_pool_threads(ctx->rt->pool) : 1;
}

/* Whether this build has vector levels for the fast paths to run at (x86-64, aarch64
 * Linux). Without them (a microcontroller, CVML_WITH_SIMD=OFF) every kernel runs its
 * scalar loops, cpu_level() is a constant, and a kernel tests this before its fast-path
 * state so that the fast paths' code is not linked at all (docs/embedded.md: 14 KB on a
 * Cortex-M). */
#define CVML_CPU_FAST_PATHS (CVML_SIMD_X86 || CVML_SIMD_AARCH64)

static inline int cpu_level(const cpu_node_ctx* ctx) {
#if CVML_CPU_FAST_PATHS
    return ctx->rt ? ctx->rt->simd_level : CPU_SIMD_SCALAR;
#else
    (void)ctx;
    return CPU_SIMD_SCALAR;
#endif
}

/* The plain reference loops: the scalar level with fusion and narrow storage off. */
static inline bool cpu_reference(const cpu_node_ctx* ctx) {
    return cpu_level(ctx) == CPU_SIMD_SCALAR && !(ctx->rt && ctx->rt->fusion);
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

/* The same for an int8 row and stride 2, vectorized: padded column x + pad lands in
 * phase (x + pad) % 2 at index (x + pad) / 2, the two phases `phase_stride` apart. */
static inline void cpu_phase_row2_i8(int level, const int8_t* src, int64_t w, int64_t pad,
                                     int64_t phase_stride, int8_t* dst) {
    const int64_t pe = pad % 2;
    simd_deinterleave2_i8(level, src, w, dst + pe * phase_stride + pad / 2,
                          dst + (1 - pe) * phase_stride + (pad + 1) / 2);
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
 * other stays on its scalar loop. */
static inline int cpu_ew_prerun(cpu_node_ctx* ctx, int inputs) {
    cvml_step step;
    if (cpu_reference(ctx) || !op_node_step(ctx->graph, ctx->node, 0, &step)) return CVML_OK;
    static const int fast_marker = 1;
    ctx->state = const_cast<int*>(&fast_marker);  // no postrun: nothing is owned
    // epilogue_apply goes forward a chunk at a time, each chunk read whole before stored.
    ctx->caps = CPU_CAP_TAIL | CPU_CAP_NARROW_OUT | CPU_CAP_INT16 | CPU_CAP_NARROW_IN(0) |
                (inputs > 1 ? CPU_CAP_NARROW_IN(1) : 0u) | CPU_CAP_TAIL_IN_PLACE;
    return CVML_OK;
}

typedef struct cpu_ew_args {
    int level;
    const epilogue* ep;
    const ir_tensor* x;
    const ir_tensor* y;
} cpu_ew_args;

static inline void cpu_ew_range(void* arg, int64_t begin, int64_t end) {
    const cpu_ew_args* a = static_cast<const cpu_ew_args*>(arg);
    epilogue_apply(a->level, a->ep, a->x->data, a->x->storage, begin, 0, a->y->data, a->y->storage,
                   begin, end - begin);
}

/* `ep` holds the operator's own steps; the tail is appended here. */
static inline int cpu_ew_run(cpu_node_ctx* ctx, epilogue* ep) {
    cpu_tail_append(ctx, ep);
    cpu_ew_args a = {cpu_level(ctx), ep, ctx->inputs[0], ctx->outputs[0]};
    cpu_parallel_for(ctx, ir_tensor_element_count(ctx->outputs[0]), cpu_ew_range, &a);
    return CVML_OK;
}

/* In its epilogue form an element-wise kernel may write over input 0: each chunk of it is
 * read before the same chunk of the output is written (cpu_kernel.writes_over_input). */
static inline int32_t cpu_ew_writes_over_input(const cpu_node_ctx* ctx, size_t*) {
    return ctx->state ? 0 : -1;
}

/* The operator's own step (op_def.step on input 0; cpu_ew_prerun checked there is one)
 * then its fused tail. */
static inline int cpu_ew_run_step(cpu_node_ctx* ctx) {
    cvml_step step = {};
    op_node_step(ctx->graph, ctx->node, 0, &step);
    const ir_tensor* y = step.kind == CVML_STEP_ADD ? ctx->inputs[step.operand] : nullptr;
    epilogue ep = {};
    epilogue_add_step(&ep, &step, y ? y->data : nullptr, y ? y->storage : 0);
    return cpu_ew_run(ctx, &ep);
}
