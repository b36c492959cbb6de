/* The fused tail's pieces at avx512, each one upstream operator's int32 semantics with
 * wrap-around as in epilogue.h: shared by the epilogue (epilogue.cpp here) and the
 * depthwise conv2d (conv2d_depthwise.cpp here), which puts its sums through the chain
 * in registers. */
#pragma once

#include <stdint.h>

#include "device/cpu/simd/epilogue_chain.h"

#if CVML_SIMD_X86
#include <immintrin.h>
/* GCC 12's AVX-512 headers trip these on their own _mm512_undefined_* helpers wherever
 * the functions below are inlined. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace cpu_ep {

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
 * signed saturation (vpmovsdb), which is that min, so it is not done here. Always
 * inlined: an out-of-line copy reads the constants through a reference, so its callers
 * keep them on the stack (the depthwise tails were 1.3x slower so on 14x14 planes). */
template <bool Add, bool Bias = true, int Folded = -1, bool Sat = false, int Pre = -1>
CVML_TARGET_AVX512 inline __attribute__((always_inline)) __m512i rc_apply(const rc_chain& c,
                                                                          const rc_consts& k,
                                                                          __m512i v, __m512i vb,
                                                                          int64_t at, __mmask16 m) {
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

/* 16 values to int8 with signed saturation, masked (register form: see store16_512). */
CVML_TARGET_AVX512 inline void store16_i8_sat(void* out, int64_t i, __mmask16 m, __m512i v) {
    __m128i n = _mm512_cvtsepi32_epi8(v);
    __asm__("" : "+v"(n));
    _mm_mask_storeu_epi8(static_cast<int8_t*>(out) + i, m, n);
}

CVML_TARGET_AVX512 inline __m512i lanes_of(const ep_tile_keep* k, int j) {
    return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(k->lanes[j])));
}

/* Where a tile row's three vectors go once compacted: the kept lanes of vector j are
 * written from pos[j] under mask m[j], compacted by the lane permutation idx[j]
 * (vpcompressd does the same but is microcoded on some cores, Zen 4; vpermd is one
 * fast instruction). Built once per tile. */
struct tile_lanes {
    int64_t pos[3];
    __mmask16 m[3];
    __m512i idx0, idx1, idx2;
};

CVML_TARGET_AVX512 inline void tile_lanes_of(const ep_tile_keep* k, tile_lanes* t) {
    for (int32_t j = 0, p = 0; j < 3; ++j) {
        const int n = j < k->vectors ? __builtin_popcount(k->mask[j]) : 0;
        t->pos[j] = p;
        t->m[j] = static_cast<__mmask16>((1u << n) - 1u);
        p += n;
    }
    t->idx0 = lanes_of(k, 0);
    t->idx1 = lanes_of(k, 1);
    t->idx2 = lanes_of(k, 2);
}

/* A tile row's three vectors, each compacted to its kept lanes. */
CVML_TARGET_AVX512 inline __attribute__((always_inline)) void compact_kept(const tile_lanes& t,
                                                                           const uint16_t* keep,
                                                                           __m512i& v0, __m512i& v1,
                                                                           __m512i& v2) {
    if (keep[0] != 0xFFFF) v0 = _mm512_permutexvar_epi32(t.idx0, v0);
    if (keep[1] != 0xFFFF) v1 = _mm512_permutexvar_epi32(t.idx1, v1);
    if (keep[2] != 0xFFFF) v2 = _mm512_permutexvar_epi32(t.idx2, v2);
}

/* Tile row `src`'s three vectors, each compacted to its kept lanes. */
CVML_TARGET_AVX512 inline void load_kept(const tile_lanes& t, const uint16_t* keep,
                                         const int32_t* src, __m512i& v0, __m512i& v1,
                                         __m512i& v2) {
    v0 = _mm512_loadu_si512(src);
    v1 = _mm512_loadu_si512(src + 16);
    v2 = _mm512_loadu_si512(src + 32);
    compact_kept(t, keep, v0, v1, v2);
}

}  // namespace cpu_ep

#endif
