/* The avx2 epilogue's pieces on 8 values (x86/avx2/epilogue.cpp), shared with kernels
 * that put their sums through the fused tail in registers (the avx2 direct depthwise in
 * x86/avx2/conv2d_grouped.cpp). */
#pragma once

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

/* The first c (< 8) values from element i, the rest 0; and their store. */
CVML_TARGET_AVX2 inline __m256i load_part8(const void* p, int32_t storage, int64_t i, int64_t c) {
    alignas(32) int32_t t[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t k = 0; k < c; ++k) t[k] = ir_storage_load(p, storage, i + k);
    return _mm256_load_si256(reinterpret_cast<const __m256i*>(t));
}

CVML_TARGET_AVX2 inline void store_part8(void* p, int32_t storage, int64_t i, int64_t c,
                                         __m256i v) {
    alignas(32) int32_t t[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(t), v);
    for (int64_t k = 0; k < c; ++k) ir_storage_store(p, storage, i + k, t[k]);
}

CVML_TARGET_AVX2 inline void store8_256(void* out, int32_t storage, int64_t i, __m256i v) {
    if (storage == STORAGE_INT8) {
        const __m256i narrow =
            _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8,
                             12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
        const __m256i b = _mm256_shuffle_epi8(v, narrow);
        const int32_t lo = _mm256_extract_epi32(b, 0), hi = _mm256_extract_epi32(b, 4);
        int8_t* d = static_cast<int8_t*>(out) + i;
        __builtin_memcpy(d, &lo, 4);
        __builtin_memcpy(d + 4, &hi, 4);
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
            v = _mm256_max_epi32(_mm256_min_epi32(v, _mm256_set1_epi32(c.pre_hi)),
                                 _mm256_set1_epi32(c.pre_lo));
        v = _mm256_mullo_epi32(v, _mm256_set1_epi32(c.factor));
    }
    if (c.folded)
        v = _mm256_sra_epi32(v, k.sh);
    else
        v = _mm256_srai_epi32(_mm256_add_epi32(_mm256_sra_epi32(v, k.sh), k.one), 1);
    v = _mm256_max_epi32(_mm256_min_epi32(v, k.hi), k.lo);
    if (c.add) {
        v = _mm256_add_epi32(v, load_n8(c.add->src, c.add->src_storage, at, n));
        v = _mm256_max_epi32(_mm256_min_epi32(v, k.hi2), k.lo2);
    }
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

}  // namespace cpu_ep

#endif
