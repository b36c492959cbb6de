/* The fused tail's chains as the vector code sees them, shared by the epilogue's
 * dispatch (epilogue.cpp) and its kernels per instruction set (x86/avx512/epilogue.cpp,
 * x86/avx2/epilogue.cpp, arm/aarch64/neon/epilogue.cpp, whose entry points are declared
 * here) and by kernels that put their sums through the chain in registers (the avx512
 * depthwise conv2d). */
#pragma once

#include <stdint.h>

#include "device/cpu/simd/epilogue.h"
#include "device/cpu/simd/simd.h"
#include "graph/graph.h"

namespace cpu_ep {

/* The chains most convolutions end in, for code without a step dispatch per row:
 * cvm_right_shift (round, clip), then optionally a residual add and a clip (relu, clip
 * and cvm_clip all merge into it). Before them MRT's requantization may come: a round
 * (or its folded shift) and a clip, each optional, then a multiply by a constant
 * (broadcast_mul by a scale). */
enum rc_pre_parts {
    RC_PRE_MUL = 1,   /* the prefix is there (its multiply always is) */
    RC_PRE_ROUND = 2, /* it starts with EP_ROUND (pre_shift) */
    RC_PRE_SRA = 4,   /* it starts with EP_SRA (pre_shift) */
    RC_PRE_CLIP = 8,  /* then EP_CLIP (pre_lo, pre_hi) */
};

struct rc_chain {
    int32_t shift; /* EP_ROUND's (or EP_SRA's) b */
    bool folded;   /* EP_SRA: the round's + 2^(b-1) is in the values (no prefix) */
    int32_t lo, hi;
    const ep_step* add; /* the residual's EP_ADD, or NULL */
    int32_t lo2, hi2;
    int32_t pre; /* rc_pre_parts, 0 without a prefix */
    int32_t pre_shift, pre_lo, pre_hi, factor;
};

/* The requantization prefix from steps[0], if any, into c: the index of the step after
 * its multiply, or 0 (and c untouched) without one. */
inline int32_t match_rc_prefix(const epilogue* ep, rc_chain* c) {
    const ep_step* s = ep->steps;
    rc_chain p = {};
    int32_t i = 0;
    if (i < ep->step_count && (s[i].kind == EP_ROUND || s[i].kind == EP_SRA)) {
        p.pre |= s[i].kind == EP_ROUND ? RC_PRE_ROUND : RC_PRE_SRA;
        p.pre_shift = s[i++].shift;
    }
    if (i < ep->step_count && s[i].kind == EP_CLIP) {
        p.pre |= RC_PRE_CLIP;
        p.pre_lo = s[i].lo;
        p.pre_hi = s[i++].hi;
    }
    if (i >= ep->step_count || s[i].kind != EP_MUL) return 0;
    c->pre = p.pre | RC_PRE_MUL;
    c->pre_shift = p.pre_shift;
    c->pre_lo = p.pre_lo;
    c->pre_hi = p.pre_hi;
    c->factor = s[i].factor;
    return i + 1;
}

inline bool match_rc_chain(const epilogue* ep, rc_chain* c) {
    *c = {};  // callers read its constants even when it does not match
    const int32_t first = match_rc_prefix(ep, c);
    const ep_step* s = ep->steps + first;
    const int32_t n = ep->step_count - first;
    // With a prefix the main round is never the folded one (that is steps[0]).
    if (n < 2 || (s[0].kind != EP_ROUND && (first > 0 || s[0].kind != EP_SRA)) ||
        s[1].kind != EP_CLIP)
        return false;
    c->shift = s[0].shift;
    c->folded = s[0].kind == EP_SRA;
    c->lo = s[1].lo;
    c->hi = s[1].hi;
    if (n == 2) return true;
    if (n != 4 || s[2].kind != EP_ADD || s[3].kind != EP_CLIP) return false;
    c->add = &s[2];
    c->lo2 = s[3].lo;
    c->hi2 = s[3].hi;
    return true;
}

/* Whether a matched chain's int8 outputs may skip its last min and narrow with signed
 * saturation instead (rc_apply's Sat): the clip is to [lo, 127] with -128 <= lo <= 127. */
inline bool rc_saturates_to_i8(const rc_chain& c, int32_t out_storage) {
    const int32_t lo = c.add ? c.lo2 : c.lo, hi = c.add ? c.hi2 : c.hi;
    return out_storage == STORAGE_INT8 && hi == 127 && lo >= -128 && lo <= hi;
}

/* A plan's tile function (ep_tile_plan::run). */
typedef void (*planned_fn)(const ep_tile_plan*, const int32_t*, int32_t, int32_t,
                           const ep_tile_keep*, const int32_t*, void*, int64_t, int64_t);

/* The scalar level's entries in its record (simd_config.h), in epilogue.cpp. */
void apply_scalar(const epilogue* ep, const void* in, int32_t in_storage, int64_t in_index,
                  int32_t bias, void* out, int32_t out_storage, int64_t out_index, int64_t n);
void narrow_scalar(const int32_t* src, int64_t n, int8_t* dst);
int64_t compact_scalar(const int32_t* src, const uint16_t* keep, int32_t vectors, int32_t* dst);
void deinterleave2_scalar(const int8_t* src, int64_t n, int8_t* even, int8_t* odd);

#if CVML_SIMD_X86
/* A level's tile function for a matched chain (epilogue_plan_tile), in epilogue.cpp. */
void plan_tile_avx512(const epilogue* ep, bool has_bias, int32_t out_storage, ep_tile_plan* plan);
void plan_tile_avx2(const epilogue* ep, bool has_bias, int32_t out_storage, ep_tile_plan* plan);
/* ---- avx512 (x86/avx512/epilogue.cpp) */
void apply_avx512(const epilogue* ep, const void* in, int32_t in_storage, int64_t in_index,
                  int32_t bias, void* out, int32_t out_storage, int64_t out_index, int64_t n);
void apply_tile_avx512(const epilogue* ep, const int32_t* tile, int32_t tile_stride, int32_t rows,
                       const ep_tile_keep* k, const int32_t* bias, void* out, int32_t out_storage,
                       int64_t out_first, int64_t out_stride);
/* The tile function of a matched chain, with or without a bias per row, saturating to
 * int8 (rc_saturates_to_i8) or not. */
planned_fn planned_tile_avx512(const rc_chain& rc, bool has_bias, bool sat);
void narrow_avx512(const int32_t* src, int64_t n, int8_t* dst);
int64_t compact_avx512(const int32_t* src, const uint16_t* keep, int32_t vectors, int32_t* dst);
void deinterleave2_avx512(const int8_t* src, int64_t n, int8_t* even, int8_t* odd);
/* ---- avx2 (x86/avx2/epilogue.cpp) */
void apply_avx2(const epilogue* ep, const void* in, int32_t in_storage, int64_t in_index,
                int32_t bias, void* out, int32_t out_storage, int64_t out_index, int64_t n);
void planned_tile_avx2(const ep_tile_plan* p, const int32_t* tile, int32_t tile_stride,
                       int32_t rows, const ep_tile_keep* keep, const int32_t* bias, void* out,
                       int64_t out_first, int64_t out_stride);
void narrow_avx2(const int32_t* src, int64_t n, int8_t* dst);
void deinterleave2_avx2(const int8_t* src, int64_t n, int8_t* even, int8_t* odd);
#endif

#if CVML_SIMD_AARCH64
void plan_tile_neon(const epilogue* ep, bool has_bias, int32_t out_storage, ep_tile_plan* plan);
/* ---- aarch64, the neon and dotprod levels (arm/aarch64/neon/epilogue.cpp) */
void apply_neon(const epilogue* ep, const void* in, int32_t in_storage, int64_t in_index,
                int32_t bias, void* out, int32_t out_storage, int64_t out_index, int64_t n);
void planned_tile_neon(const ep_tile_plan* p, const int32_t* tile, int32_t tile_stride,
                       int32_t rows, const ep_tile_keep* keep, const int32_t* bias, void* out,
                       int64_t out_first, int64_t out_stride);
/* The same for a chain without a match (each step in turn). */
void planned_steps_neon(const ep_tile_plan* p, const int32_t* tile, int32_t tile_stride,
                        int32_t rows, const ep_tile_keep* keep, const int32_t* bias, void* out,
                        int64_t out_first, int64_t out_stride);
/* simd_compact_i32 for vectors <= 3. */
int64_t compact_neon(const int32_t* src, const uint16_t* keep, int32_t vectors, int32_t* dst);
void narrow_neon(const int32_t* src, int64_t n, int8_t* dst);
void deinterleave2_neon(const int8_t* src, int64_t n, int8_t* even, int8_t* odd);
#endif

}  // namespace cpu_ep
