/* The fused tail's pieces at avx2, eight int32 values a vector, each one upstream
 * operator's int32 semantics with wrap-around as in epilogue.h: shared by the epilogue
 * (epilogue.cpp here) and the GEMM (gemm_s8.cpp here), which puts a tile's sums through
 * a matched chain in registers. */
#pragma once

#include <stdint.h>
#include <string.h>

#include "device/cpu/simd/epilogue_chain.h"

#if CVML_SIMD_X86
#include <immintrin.h>

namespace cpu_ep {

CVML_TARGET_AVX2 inline __m256i load8_256(const void* p, int32_t storage, int64_t i) {
    if (storage == STORAGE_INT8)
        return _mm256_cvtepi8_epi32(
            _mm_loadl_epi64(reinterpret_cast<const __m128i*>(static_cast<const int8_t*>(p) + i)));
    if (storage == STORAGE_INT16)
        return _mm256_cvtepi16_epi32(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const int16_t*>(p) + i)));
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(static_cast<const int32_t*>(p) + i));
}

/* The low bytes of 8 int32 lanes (a C cast to int8), in order, as one 64-bit value. */
CVML_TARGET_AVX2 inline uint64_t low_bytes8(__m256i v) {
    const __m256i narrow =
        _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12,
                         -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i b = _mm256_shuffle_epi8(v, narrow);
    return static_cast<uint32_t>(_mm256_extract_epi32(b, 0)) |
           static_cast<uint64_t>(static_cast<uint32_t>(_mm256_extract_epi32(b, 4))) << 32;
}

/* The c (< 8) bytes at s as the low bytes of a 64-bit value, the rest 0. Where c is a
 * constant (broadcast mode's 7 pixels), two loads of 4 (or 2) bytes that overlap where c
 * is not twice that, ORed (the bytes they share are the same), in registers: a memcpy
 * into a 64-bit variable goes through the stack, and its 8-byte load of two 4-byte
 * stores waits for both (no store forwarding), a stall at every tail's add. Where c
 * varies, the memcpy (the register form's branches made the depthwise kernels, which
 * inline their tails several times, 12-15% slower). */
inline uint64_t load_bytes_lt8(const uint8_t* s, int64_t c) {
    if (!__builtin_constant_p(c)) {
        uint64_t bytes = 0;
        memcpy(&bytes, s, static_cast<size_t>(c));
        return bytes;
    }
    if (c >= 4) {
        uint32_t lo, hi;
        memcpy(&lo, s, 4);
        memcpy(&hi, s + c - 4, 4);
        return lo | static_cast<uint64_t>(hi) << (8 * (c - 4));
    }
    if (c >= 2) {
        uint16_t lo, hi;
        memcpy(&lo, s, 2);
        memcpy(&hi, s + c - 2, 2);
        return lo | static_cast<uint64_t>(hi) << (8 * (c - 2));
    }
    return c == 1 ? s[0] : 0;
}

/* The first c (< 8) values from element i, the rest 0; and their store. int8, the
 * storage of nearly every tail's operand and output, moves its c bytes at once (every
 * row of a flat strip's tile ends in such a part). */
CVML_TARGET_AVX2 inline __m256i load_part8(const void* p, int32_t storage, int64_t i, int64_t c) {
    if (storage == STORAGE_INT8) {
        const uint64_t bytes = load_bytes_lt8(static_cast<const uint8_t*>(p) + i, c);
        return _mm256_cvtepi8_epi32(_mm_cvtsi64_si128(static_cast<int64_t>(bytes)));
    }
    alignas(32) int32_t t[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t k = 0; k < c; ++k) t[k] = ir_storage_load(p, storage, i + k);
    return _mm256_load_si256(reinterpret_cast<const __m256i*>(t));
}

CVML_TARGET_AVX2 inline void store_part8(void* p, int32_t storage, int64_t i, int64_t c,
                                         __m256i v) {
    if (storage == STORAGE_INT8) {
        const uint64_t bytes = low_bytes8(v);
        memcpy(static_cast<int8_t*>(p) + i, &bytes, static_cast<size_t>(c));
        return;
    }
    alignas(32) int32_t t[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(t), v);
    for (int64_t k = 0; k < c; ++k) ir_storage_store(p, storage, i + k, t[k]);
}

CVML_TARGET_AVX2 inline void store8_256(void* out, int32_t storage, int64_t i, __m256i v) {
    if (storage == STORAGE_INT8) {
        const uint64_t bytes = low_bytes8(v);
        memcpy(static_cast<int8_t*>(out) + i, &bytes, 8);
        return;
    }
    if (storage == STORAGE_INT16) {  // the low halves (a C cast), in order
        const __m256i narrow =
            _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1, 0, 1, 4, 5,
                             8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1);
        const __m256i b = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(v, narrow), 0x08);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(static_cast<int16_t*>(out) + i),
                         _mm256_castsi256_si128(b));
        return;
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(static_cast<int32_t*>(out) + i), v);
}

/* Two vectors as 16 bytes, v0's then v1's, each value saturated to int8 (so exact for
 * values within int8): one signed saturating pack each way and a dword shuffle. */
CVML_TARGET_AVX2 inline __m128i pack16_i8(__m256i v0, __m256i v1) {
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    const __m256i p = _mm256_packs_epi32(v0, v1);  // per lane: v0's 4, v1's 4
    return _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(_mm256_packs_epi16(p, p), order));
}

/* Two vectors of values within int8 as 16 bytes at out + i, in order. */
CVML_TARGET_AVX2 inline void store16_i8(void* out, int64_t i, __m256i v0, __m256i v1) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(static_cast<int8_t*>(out) + i), pack16_i8(v0, v1));
}

/* c values (8, or fewer at the end of a row) of `src` from element i. */
CVML_TARGET_AVX2 inline __m256i load_n8(const void* src, int32_t storage, int64_t i, int64_t c) {
    return c == 8 ? load8_256(src, storage, i) : load_part8(src, storage, i, c);
}

/* One step on 8 values; EP_ADD reads its c operand values at element `at`. */
CVML_TARGET_AVX2 inline __m256i step_avx2(const ep_step& st, __m256i v, int64_t at, int64_t c) {
    switch (st.kind) {
        case EP_CLIP:
            return _mm256_max_epi32(_mm256_min_epi32(v, _mm256_set1_epi32(st.hi)),
                                    _mm256_set1_epi32(st.lo));
        case EP_ROUND:
            return _mm256_srai_epi32(
                _mm256_add_epi32(_mm256_sra_epi32(v, _mm_cvtsi32_si128(st.shift - 1)),
                                 _mm256_set1_epi32(1)),
                1);
        case EP_SRA31:
            return _mm256_srai_epi32(v, 31);
        case EP_SRA:
            return _mm256_sra_epi32(v, _mm_cvtsi32_si128(st.shift));
        case EP_MUL:
            return _mm256_mullo_epi32(v, _mm256_set1_epi32(st.factor));
        case EP_ADD:
            return _mm256_add_epi32(v, load_n8(st.src, st.src_storage, at, c));
        default:
            return v;
    }
}

/* A matched chain (rc_chain) on 8 values, its constants made once per call. */
struct rc_consts8 {
    __m128i sh;
    __m256i one, lo, hi, lo2, hi2;
};

/* The chain's pieces: its round (b - 1 in k.sh), a clip, its residual add and clip. */
CVML_TARGET_AVX2 inline __m256i rc_round8(const rc_consts8& k, __m256i v) {
    return _mm256_srai_epi32(_mm256_add_epi32(_mm256_sra_epi32(v, k.sh), k.one), 1);
}

CVML_TARGET_AVX2 inline __m256i rc_clip8(__m256i v, __m256i lo, __m256i hi) {
    return _mm256_max_epi32(_mm256_min_epi32(v, hi), lo);
}

CVML_TARGET_AVX2 inline __m256i rc_add8(const rc_chain& c, const rc_consts8& k, __m256i v,
                                        int64_t at, int64_t n) {
    return rc_clip8(_mm256_add_epi32(v, load_n8(c.add->src, c.add->src_storage, at, n)), k.lo2,
                    k.hi2);
}

CVML_TARGET_AVX2 inline __m256i rc_apply8(const rc_chain& c, const rc_consts8& k, __m256i v,
                                          int64_t at, int64_t n) {
    if (c.pre) {
        const __m128i pre_sh =
            _mm_cvtsi32_si128(c.pre & RC_PRE_ROUND ? c.pre_shift - 1 : c.pre_shift);
        if (c.pre & RC_PRE_ROUND)
            v = _mm256_srai_epi32(_mm256_add_epi32(_mm256_sra_epi32(v, pre_sh), k.one), 1);
        else if (c.pre & RC_PRE_SRA)
            v = _mm256_sra_epi32(v, pre_sh);
        if (c.pre & RC_PRE_CLIP)
            v = rc_clip8(v, _mm256_set1_epi32(c.pre_lo), _mm256_set1_epi32(c.pre_hi));
        v = _mm256_mullo_epi32(v, _mm256_set1_epi32(c.factor));
    }
    if (c.folded)
        v = _mm256_sra_epi32(v, k.sh);
    else
        v = rc_round8(k, v);
    v = rc_clip8(v, k.lo, k.hi);
    if (c.add) v = rc_add8(c, k, v, at, n);
    return v;
}

/* The shapes of a matched chain that a caller can fix at compile time, so that the
 * chain's flags are not tested again at every vector: the folded round (a shift, its
 * addend in the values: gemm_tail::addend) and its clip alone (nearly every convolution's
 * tail), the same with a residual add and its clip, or any chain (rc_apply8 as it is). */
enum class rc_shape { shift_clip, shift_clip_add, any };

inline rc_shape rc_shape_of(const rc_chain& c) {
    if (c.pre || !c.folded) return rc_shape::any;
    return c.add ? rc_shape::shift_clip_add : rc_shape::shift_clip;
}

/* A row's or channel's bias (NULL: none) plus the addend of a folded round, wrapping as
 * the sums do (gemm_tail_plan folds only where they cannot). */
inline int32_t rc_bias_plus(const int32_t* bias, int64_t i, int32_t addend) {
    return static_cast<int32_t>(static_cast<uint32_t>(bias ? bias[i] : 0) +
                                static_cast<uint32_t>(addend));
}

/* rc_apply8 for a chain of shape S (rc_shape_of(c) == S). */
template <rc_shape S>
CVML_TARGET_AVX2 inline __m256i rc_apply8_as(const rc_chain& c, const rc_consts8& k, __m256i v,
                                             int64_t at, int64_t n) {
    if (S == rc_shape::any) return rc_apply8(c, k, v, at, n);
    v = rc_clip8(_mm256_sra_epi32(v, k.sh), k.lo, k.hi);
    if (S == rc_shape::shift_clip_add) v = rc_add8(c, k, v, at, n);
    return v;
}

CVML_TARGET_AVX2 inline rc_consts8 rc_consts8_of(const rc_chain& rc) {
    return {_mm_cvtsi32_si128(rc.folded ? rc.shift : rc.shift - 1),
            _mm256_set1_epi32(1),
            _mm256_set1_epi32(rc.lo),
            _mm256_set1_epi32(rc.hi),
            _mm256_set1_epi32(rc.lo2),
            _mm256_set1_epi32(rc.hi2)};
}

/* n int32 values of `in` (plus vb) through a matched chain, 8 at a time. */
CVML_TARGET_AVX2 inline void rc_rows_avx2(const rc_chain& rc, const rc_consts8& k,
                                          const int32_t* in, __m256i vb, void* out,
                                          int32_t out_storage, int64_t out_index, int64_t n) {
    for (int64_t i = 0; i < n; i += 8) {
        const int64_t c = n - i < 8 ? n - i : 8, at = out_index + i;
        __m256i v = _mm256_add_epi32(load_n8(in, STORAGE_INT32, i, c), vb);
        v = rc_apply8(rc, k, v, at, c);
        if (c == 8)
            store8_256(out, out_storage, at, v);
        else
            store_part8(out, out_storage, at, c, v);
    }
}

}  // namespace cpu_ep

#endif
