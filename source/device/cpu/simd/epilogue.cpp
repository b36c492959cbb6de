#include "device/cpu/simd/epilogue.h"

#include <string.h>

#include "device/cpu/simd/arm/cortexm/epilogue.h"
#include "device/cpu/simd/epilogue_chain.h"
#include "device/cpu/simd/simd.h"
#include "device/cpu/simd/simd_config.h"
#include "graph/graph.h"

namespace {

using namespace cpu_ep;

int push(epilogue* ep, const ep_step& s) {
    if (ep->step_count >= EP_MAX_STEPS) return 0;
    ep->steps[ep->step_count++] = s;
    return 1;
}

/* Plain pairs from i (even) on: no vectorizer games with alternating destinations. */
void deinterleave2_tail(const int8_t* src, int64_t i, int64_t n, int8_t* even, int8_t* odd) {
    for (; i + 1 < n; i += 2) {
        even[i / 2] = src[i];
        odd[i / 2] = src[i + 1];
    }
    if (i < n) even[i / 2] = src[i];
}

}  // namespace

void cpu_ep::apply_scalar(const epilogue* ep, const void* in, int32_t in_storage, int64_t in_index,
                          int32_t bias, void* out, int32_t out_storage, int64_t out_index,
                          int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        int32_t v = cvml_wrap_add(ir_storage_load(in, in_storage, in_index + i), bias);
        ir_storage_store(out, out_storage, out_index + i, epilogue_value(ep, v, out_index + i));
    }
}

namespace {

/* int16 is vectorized at the avx512 level only (the avx2 path takes int8 and int32). */
bool vector_storage(int32_t s) {
    return s == STORAGE_INT8 || s == STORAGE_INT16 || s == STORAGE_INT32;
}

}  // namespace

int epilogue_add_rshift(epilogue* ep, int32_t p, int32_t b) {
    ep_step s = {};
    if (p == 1) {
        s.kind = EP_CLIP;  // upstream's kernel outputs 0 whatever x is
        return push(ep, s);
    }
    if (b >= 31) {
        s.kind = EP_SRA31;
        return push(ep, s);
    }
    s.kind = EP_ROUND;
    s.shift = b;
    if (!push(ep, s)) return 0;
    if (p + b >= 32) return 1;  // upstream skips the clip here
    int32_t alpha = static_cast<int32_t>((1u << (p - 1)) - 1u);
    return epilogue_add_clip(ep, -alpha, alpha);
}

int epilogue_fold_round(epilogue* ep) {
    if (ep->step_count == 0 || ep->steps[0].kind != EP_ROUND) return 0;
    ep->steps[0].kind = EP_SRA;
    return 1;
}

int epilogue_add_clip(epilogue* ep, int32_t lo, int32_t hi) {
    // A clip right after a clip is one clip. Each computes max(min(v, hi), lo), which
    // is clamping to [lo, max(lo, hi)]; clamping to [a1, b1] then to [a2, b2] is
    // clamping to [c(a1), c(b1)], c being the second clamp, as both are monotone.
    if (ep->step_count > 0 && ep->steps[ep->step_count - 1].kind == EP_CLIP) {
        ep_step& prev = ep->steps[ep->step_count - 1];
        const int32_t a1 = prev.lo, b1 = prev.hi > prev.lo ? prev.hi : prev.lo;
        const int32_t a2 = lo, b2 = hi > lo ? hi : lo;
        prev.lo = a1 < a2 ? a2 : a1 > b2 ? b2 : a1;
        prev.hi = b1 < a2 ? a2 : b1 > b2 ? b2 : b1;
        return 1;
    }
    ep_step s = {};
    s.kind = EP_CLIP;
    s.lo = lo;
    s.hi = hi;
    return push(ep, s);
}

int epilogue_add_add(epilogue* ep, const void* src, int32_t src_storage) {
    ep_step s = {};
    s.kind = EP_ADD;
    s.src = src;
    s.src_storage = src_storage;
    return push(ep, s);
}

int epilogue_add_mul(epilogue* ep, int32_t factor) {
    ep_step s = {};
    s.kind = EP_MUL;
    s.factor = factor;
    return push(ep, s);
}

int epilogue_add_step(epilogue* ep, const cvml_step* step, const void* src, int32_t src_storage) {
    switch (step->kind) {
        case CVML_STEP_CLIP:
            return epilogue_add_clip(ep, step->a, step->b);
        case CVML_STEP_RIGHT_SHIFT:
            return epilogue_add_rshift(ep, step->a, step->b);
        case CVML_STEP_MUL:
            return epilogue_add_mul(ep, step->a);
        case CVML_STEP_ADD:
            return epilogue_add_add(ep, src, src_storage);
        default:
            return 0;
    }
}

int32_t epilogue_value(const epilogue* ep, int32_t v, int64_t index) {
    for (int32_t s = 0; s < ep->step_count; ++s) {
        const ep_step& st = ep->steps[s];
        switch (st.kind) {
            case EP_CLIP:
                v = v > st.hi ? st.hi : v;
                v = v < st.lo ? st.lo : v;
                break;
            case EP_ROUND:
                v = cvml_wrap_add(v >> (st.shift - 1), 1) >> 1;
                break;
            case EP_SRA31:
                v = v >> 31;
                break;
            case EP_SRA:
                v = v >> st.shift;
                break;
            case EP_MUL:
                v = cvml_wrap_mul(v, st.factor);
                break;
            case EP_ADD:
                v = cvml_wrap_add(v, ir_storage_load(st.src, st.src_storage, index));
                break;
            default:
                break;
        }
    }
    return v;
}

void epilogue_apply(int level, const epilogue* ep, const void* in, int32_t in_storage,
                    int64_t in_index, int32_t bias, void* out, int32_t out_storage,
                    int64_t out_index, int64_t n) {
    bool vec = vector_storage(in_storage) && vector_storage(out_storage);
    for (int32_t s = 0; s < ep->step_count; ++s)
        if (ep->steps[s].kind == EP_ADD) {
            vec = vec && vector_storage(ep->steps[s].src_storage);
        }
#if CVML_CPU_FAST_PATHS
    if (vec) {
        cpu_simd_config_of(level)->ep_apply(ep, in, in_storage, in_index, bias, out, out_storage,
                                            out_index, n);
        return;
    }
#elif CVML_SIMD_CORTEXM
    (void)level;
    if (vec) {
        cm_epilogue_apply(ep, in, in_storage, in_index, bias, out, out_storage, out_index, n);
        return;
    }
#else
    (void)level;
    (void)vec;
#endif
    apply_scalar(ep, in, in_storage, in_index, bias, out, out_storage, out_index, n);
}

void epilogue_tile_keep(ep_tile_keep* k, const uint16_t mask[3], int32_t cols) {
    memset(k, 0, sizeof *k);
    k->vectors = (cols + 15) / 16;
    for (int32_t j = 0; j < k->vectors; ++j) {
        k->mask[j] = mask[j];
        for (int32_t b = 0, n = 0; b < 16; ++b)
            if (mask[j] >> b & 1) {
                k->lanes[j][n++] = static_cast<uint8_t>(b);
                ++k->count;
            }
    }
}

namespace {

#if CVML_SIMD_X86 || CVML_SIMD_AARCH64
/* Whether the tile's output and every residual operand are in a storage the vector
 * paths read and write. */
bool tile_vector_storage(const epilogue* ep, int32_t out_storage) {
    bool vec = vector_storage(out_storage);
    for (int32_t s = 0; s < ep->step_count; ++s)
        if (ep->steps[s].kind == EP_ADD) vec = vec && vector_storage(ep->steps[s].src_storage);
    return vec;
}
#endif

/* Any chain, a step at a time. */
void planned_generic(const ep_tile_plan* p, const int32_t* tile, int32_t tile_stride, int32_t rows,
                     const ep_tile_keep* keep, const int32_t* bias, void* out, int64_t out_first,
                     int64_t out_stride) {
#if CVML_CPU_FAST_PATHS
    const cpu_simd_config* cfg = cpu_simd_config_of(p->level);
    if (cfg->ep_apply_tile && tile_vector_storage(p->ep, p->out_storage)) {
        cfg->ep_apply_tile(p->ep, tile, tile_stride, rows, keep, bias, out, p->out_storage,
                           out_first, out_stride);
        return;
    }
#endif
    int32_t row[48 + 16];
    for (int32_t r = 0; r < rows; ++r) {
        simd_compact_i32(p->level, tile + static_cast<int64_t>(r) * tile_stride, keep->mask,
                         keep->vectors, row);
        epilogue_apply(p->level, p->ep, row, STORAGE_INT32, 0, bias ? bias[r] : 0, out,
                       p->out_storage, out_first + r * out_stride, keep->count);
    }
}

}  // namespace

void epilogue_plan_tile(int level, const epilogue* ep, int has_bias, int32_t out_storage,
                        ep_tile_plan* plan) {
    memset(plan, 0, sizeof *plan);
    plan->level = level;
    plan->ep = ep;
    plan->out_storage = out_storage;
    plan->run = planned_generic;
#if CVML_CPU_FAST_PATHS
    const cpu_simd_config* cfg = cpu_simd_config_of(level);
    if (cfg->ep_plan_tile) cfg->ep_plan_tile(ep, has_bias != 0, out_storage, plan);
#else
    (void)level;
    (void)has_bias;  // no matched chains without the vector kernels
#endif
}

#if CVML_SIMD_X86
void cpu_ep::plan_tile_avx2(const epilogue* ep, bool has_bias, int32_t out_storage,
                            ep_tile_plan* plan) {
    (void)has_bias;
    rc_chain rc;
    if (!tile_vector_storage(ep, out_storage) || !match_rc_chain(ep, &rc)) return;
    memcpy(plan->chain, &rc, sizeof rc);
    plan->run = planned_tile_avx2;
}

void cpu_ep::plan_tile_avx512(const epilogue* ep, bool has_bias, int32_t out_storage,
                              ep_tile_plan* plan) {
    rc_chain rc;
    if (!tile_vector_storage(ep, out_storage) || !match_rc_chain(ep, &rc)) return;
    memcpy(plan->chain, &rc, sizeof rc);
    // A bias folded into the GEMM's sums (gemm_weights_fold_bias) is no add here.
    const bool sat = rc_saturates_to_i8(rc, out_storage);
    plan->run = planned_tile_avx512(rc, has_bias, sat);
}
#endif

#if CVML_SIMD_AARCH64
void cpu_ep::plan_tile_neon(const epilogue* ep, bool has_bias, int32_t out_storage,
                            ep_tile_plan* plan) {
    (void)has_bias;
    rc_chain rc;
    if (!tile_vector_storage(ep, out_storage)) return;
    if (!match_rc_chain(ep, &rc)) {
        plan->run = planned_steps_neon;
        return;
    }
    memcpy(plan->chain, &rc, sizeof rc);
    plan->run = planned_tile_neon;
}
#endif

void epilogue_apply_tile(int level, const epilogue* ep, const int32_t* tile, int32_t tile_stride,
                         int32_t rows, const ep_tile_keep* keep, const int32_t* bias, void* out,
                         int32_t out_storage, int64_t out_first, int64_t out_stride) {
    ep_tile_plan plan;
    epilogue_plan_tile(level, ep, bias != nullptr, out_storage, &plan);
    epilogue_apply_tile_planned(&plan, tile, tile_stride, rows, keep, bias, out, out_first,
                                out_stride);
}

void simd_narrow_i32_i8(int level, const int32_t* src, int64_t n, int8_t* dst) {
#if CVML_CPU_FAST_PATHS
    cpu_simd_config_of(level)->narrow_i32_i8(src, n, dst);
#else
    (void)level;
    cpu_ep::narrow_scalar(src, n, dst);
#endif
}

void cpu_ep::narrow_scalar(const int32_t* src, int64_t n, int8_t* dst) {
    for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<int8_t>(src[i]);
}

int64_t simd_compact_i32(int level, const int32_t* src, const uint16_t* keep, int32_t vectors,
                         int32_t* dst) {
#if CVML_CPU_FAST_PATHS
    const cpu_simd_config* cfg = cpu_simd_config_of(level);
    if (vectors <= cfg->compact_max_vectors) return cfg->compact_i32(src, keep, vectors, dst);
#else
    (void)level;
#endif
    return cpu_ep::compact_scalar(src, keep, vectors, dst);
}

int64_t cpu_ep::compact_scalar(const int32_t* src, const uint16_t* keep, int32_t vectors,
                               int32_t* dst) {
    int64_t n = 0;
    for (int32_t j = 0; j < vectors; ++j) {
        if (keep[j] == 0xFFFF) {  // most groups of a flat strip: no column dropped
            memcpy(dst + n, src + 16 * j, 16 * sizeof(int32_t));
            n += 16;
            continue;
        }
        for (int b = 0; b < 16; ++b)
            if (keep[j] >> b & 1) dst[n++] = src[16 * j + b];
    }
    return n;
}

void simd_deinterleave2_i8(int level, const int8_t* src, int64_t n, int8_t* even, int8_t* odd) {
#if CVML_CPU_FAST_PATHS
    cpu_simd_config_of(level)->deinterleave2_i8(src, n, even, odd);
#else
    (void)level;
    cpu_ep::deinterleave2_scalar(src, n, even, odd);
#endif
}

void cpu_ep::deinterleave2_scalar(const int8_t* src, int64_t n, int8_t* even, int8_t* odd) {
    deinterleave2_tail(src, 0, n, even, odd);
}
