/* Helpers the fast kernels share: the fused tail as an epilogue, per-thread slots. */
#pragma once

#include "device/cpu/cpu_kernel.h"
#include "device/cpu/cpu_runtime.h"
#include "device/cpu/simd/epilogue.h"
#include "device/cpu/simd/simd.h"
#include "operator/op_def.h"

#if CVML_SIMD_X86
#include <immintrin.h>
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

#if CVML_SIMD_X86
/* Writes int8 input rows into the phase rows of a padded image at avx512, column stride
 * SW = 1 or 2 (conv2d's images, max_pool2d's planes). Lane L of the 64 values loaded
 * for chunk c is padded column 64c + L; lanes with no input read as `fill` (0 for a
 * convolution, -128 for a max pool). With stride 2 the even and odd bytes are the two
 * phase rows (vpmovwb, no VBMI). Each phase row [0, wq) is written whole by masked
 * stores, so nothing is cleared first, and a masked-off lane never touches memory. The
 * masks are the same for every row of a tensor: made once, at construction. */
template <int SW>
struct phase_row_writer {
    static constexpr int64_t kMaxChunks = 8;
    static constexpr int64_t kOut = 64 / SW; /* phase row bytes per chunk */
    int64_t w, pad, wq, chunks;
    __mmask64 load[kMaxChunks], store[kMaxChunks];

    CVML_TARGET_AVX512 phase_row_writer(int64_t w_, int64_t pad_, int64_t wq_)
        : w(w_), pad(pad_), wq(wq_), chunks((wq_ + kOut - 1) / kOut) {
        for (int64_t c = 0; c < chunks && c < kMaxChunks; ++c) {
            load[c] = load_mask(c);
            store[c] = store_mask(c);
        }
    }
    __mmask64 load_mask(int64_t c) const { return simd_bits64(pad - 64 * c, pad + w - 64 * c); }
    __mmask64 store_mask(int64_t c) const { return simd_bits64(0, wq - kOut * c); }

    /* in: the row's first input value; row: its phase-0 row, phase 1 phase_stride on. */
    CVML_TARGET_AVX512 void write(const int8_t* in, __m512i fill, int64_t phase_stride,
                                  int8_t* row) const {
        in -= pad;
        for (int64_t c = 0; c < chunks; ++c) {
            const __mmask64 lm = c < kMaxChunks ? load[c] : load_mask(c);
            const __mmask64 sm = c < kMaxChunks ? store[c] : store_mask(c);
            const __m512i v = _mm512_mask_loadu_epi8(fill, lm, in + 64 * c);
            if (SW == 1) {
                _mm512_mask_storeu_epi8(row + 64 * c, sm, v);
                continue;
            }
            const __mmask32 sm32 = static_cast<__mmask32>(sm);
            _mm256_mask_storeu_epi8(row + 32 * c, sm32, _mm512_cvtepi16_epi8(v));
            _mm256_mask_storeu_epi8(row + phase_stride + 32 * c, sm32,
                                    _mm512_cvtepi16_epi8(_mm512_srli_epi16(v, 8)));
        }
    }
};
#endif

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
    if (cpu_level(ctx) == CPU_SIMD_SCALAR || !op_node_step(ctx->graph, ctx->node, 0, &step))
        return CVML_OK;
    static const int fast_marker = 1;
    ctx->state = const_cast<int*>(&fast_marker);  // no postrun: nothing is owned
    ctx->caps = CPU_CAP_TAIL | CPU_CAP_NARROW_OUT | CPU_CAP_INT16 | CPU_CAP_NARROW_IN(0) |
                (inputs > 1 ? CPU_CAP_NARROW_IN(1) : 0u);
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
