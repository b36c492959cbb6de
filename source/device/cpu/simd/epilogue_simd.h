/* The fused tail's vector pieces, shared by the epilogue (epilogue.cpp) and kernels that
 * put their sums through the chain in registers (the depthwise conv2d): each is one
 * upstream operator's int32 semantics with wrap-around, as in epilogue.h. */
#pragma once

#include <stdint.h>

#include "device/cpu/simd/epilogue.h"
#include "device/cpu/simd/simd.h"
#include "graph/graph.h"

#if CVML_SIMD_X86
#include <immintrin.h>
/* GCC 12's AVX-512 headers trip these on their own _mm512_undefined_* helpers wherever
 * the functions below are inlined. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#endif

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

#if CVML_SIMD_X86

/* Masked: lanes past the row's end neither read nor write memory. */
CVML_TARGET_AVX512 inline __m512i load16_512(const void* p, int32_t storage, int64_t i,
                                             __mmask16 m) {
    if (storage == STORAGE_INT8)
        return _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, static_cast<const int8_t*>(p) + i));
    if (storage == STORAGE_INT16)
        return _mm512_cvtepi16_epi32(
            _mm256_maskz_loadu_epi16(m, static_cast<const int16_t*>(p) + i));
    return _mm512_maskz_loadu_epi32(m, static_cast<const int32_t*>(p) + i);
}

/* Lanes [i, i + 16) of a row of n, as a mask (empty past the end). */
inline __mmask16 lanes_from(int64_t i, int64_t n) {
    if (n - i >= 16) return static_cast<__mmask16>(0xFFFF);
    if (n <= i) return 0;
    return static_cast<__mmask16>((1u << static_cast<unsigned>(n - i)) - 1u);
}

/* One step on one vector; EP_ADD reads its operand at element `at`. */
CVML_TARGET_AVX512 inline __m512i step_avx512(const ep_step& st, __m512i v, int64_t at,
                                              __mmask16 m) {
    switch (st.kind) {
        case EP_CLIP:
            return _mm512_max_epi32(_mm512_min_epi32(v, _mm512_set1_epi32(st.hi)),
                                    _mm512_set1_epi32(st.lo));
        case EP_ROUND:
            return _mm512_srai_epi32(
                _mm512_add_epi32(_mm512_sra_epi32(v, _mm_cvtsi32_si128(st.shift - 1)),
                                 _mm512_set1_epi32(1)),
                1);
        case EP_SRA31:
            return _mm512_srai_epi32(v, 31);
        case EP_SRA:
            return _mm512_sra_epi32(v, _mm_cvtsi32_si128(st.shift));
        case EP_MUL:
            return _mm512_mullo_epi32(v, _mm512_set1_epi32(st.factor));
        case EP_ADD:
            return _mm512_add_epi32(v, load16_512(st.src, st.src_storage, at, m));
        default:
            return v;
    }
}

CVML_TARGET_AVX512 inline void store16_512(void* out, int32_t storage, int64_t i, __mmask16 m,
                                           __m512i v) {
    // Narrowed in a register, then a masked store: the memory form of vpmovdb/vpmovdw
    // is microcoded on some cores (Zen 4). The empty asm keeps GCC from fusing the two
    // back into that form.
    if (storage == STORAGE_INT8) {
        __m128i n = _mm512_cvtepi32_epi8(v);
        __asm__("" : "+v"(n));
        _mm_mask_storeu_epi8(static_cast<int8_t*>(out) + i, m, n);
    } else if (storage == STORAGE_INT16) {
        __m256i n = _mm512_cvtepi32_epi16(v);
        __asm__("" : "+v"(n));
        _mm256_mask_storeu_epi16(static_cast<int16_t*>(out) + i, m, n);
    } else
        _mm512_mask_storeu_epi32(static_cast<int32_t*>(out) + i, m, v);
}

struct rc_consts {
    __m512i sh, one, lo, hi, lo2, hi2;
    __m512i pre_sh, pre_lo, pre_hi, factor;
};

/* sh: the shift of the first srav (b - 1 for EP_ROUND, b for EP_SRA). */
CVML_TARGET_AVX512 inline rc_consts rc_consts_of(const rc_chain& c) {
    return {_mm512_set1_epi32(c.folded ? c.shift : c.shift - 1),
            _mm512_set1_epi32(1),
            _mm512_set1_epi32(c.lo),
            _mm512_set1_epi32(c.hi),
            _mm512_set1_epi32(c.lo2),
            _mm512_set1_epi32(c.hi2),
            _mm512_set1_epi32(c.pre & RC_PRE_ROUND ? c.pre_shift - 1 : c.pre_shift),
            _mm512_set1_epi32(c.pre_lo),
            _mm512_set1_epi32(c.pre_hi),
            _mm512_set1_epi32(c.factor)};
}

/* The matched chain on one vector. Folded, Pre: 1 or 0 when the caller knows whether
 * the round is folded (rc_chain::folded) or there is a prefix (rc_chain::pre), -1 to
 * read it. Sat: the last clip's upper bound is 127 and the caller narrows to int8 with
 * signed saturation (vpmovsdb), which is that min, so it is not done here. */
template <bool Add, bool Bias = true, int Folded = -1, bool Sat = false, int Pre = -1>
CVML_TARGET_AVX512 inline __m512i rc_apply(const rc_chain& c, const rc_consts& k, __m512i v,
                                           __m512i vb, int64_t at, __mmask16 m) {
    if (Bias) v = _mm512_add_epi32(v, vb);
    if (Pre == 1 || (Pre < 0 && c.pre)) {
        if (c.pre & RC_PRE_ROUND)
            v = _mm512_srai_epi32(_mm512_add_epi32(_mm512_srav_epi32(v, k.pre_sh), k.one), 1);
        else if (c.pre & RC_PRE_SRA)
            v = _mm512_srav_epi32(v, k.pre_sh);
        if (c.pre & RC_PRE_CLIP) v = _mm512_max_epi32(_mm512_min_epi32(v, k.pre_hi), k.pre_lo);
        v = _mm512_mullo_epi32(v, k.factor);
    }
    if (Folded == 1 || (Folded < 0 && c.folded))
        v = _mm512_srav_epi32(v, k.sh);
    else
        v = _mm512_srai_epi32(_mm512_add_epi32(_mm512_srav_epi32(v, k.sh), k.one), 1);
    if (Add) {
        v = _mm512_max_epi32(_mm512_min_epi32(v, k.hi), k.lo);
        v = _mm512_add_epi32(v, load16_512(c.add->src, c.add->src_storage, at, m));
        v = _mm512_max_epi32(Sat ? v : _mm512_min_epi32(v, k.hi2), k.lo2);
    } else {
        v = _mm512_max_epi32(Sat ? v : _mm512_min_epi32(v, k.hi), k.lo);
    }
    return v;
}

/* Whether a matched chain's int8 outputs may skip its last min and narrow with signed
 * saturation instead (rc_apply's Sat): the clip is to [lo, 127] with -128 <= lo <= 127. */
inline bool rc_saturates_to_i8(const rc_chain& c, int32_t out_storage) {
    const int32_t lo = c.add ? c.lo2 : c.lo, hi = c.add ? c.hi2 : c.hi;
    return out_storage == STORAGE_INT8 && hi == 127 && lo >= -128 && lo <= hi;
}

/* 16 values to int8 with signed saturation, masked (register form: see store16_512). */
CVML_TARGET_AVX512 inline void store16_i8_sat(void* out, int64_t i, __mmask16 m, __m512i v) {
    __m128i n = _mm512_cvtsepi32_epi8(v);
    __asm__("" : "+v"(n));
    _mm_mask_storeu_epi8(static_cast<int8_t*>(out) + i, m, n);
}

#endif

}  // namespace cpu_ep
