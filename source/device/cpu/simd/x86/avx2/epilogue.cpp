/* The epilogue (epilogue.h) at avx2: eight values per step, int8/int16/int32 in and
 * out, the matched chains (epilogue_chain.h) with their constants made once per call. */
#include <string.h>

#include "device/cpu/simd/x86/avx2/epilogue_avx2.h"

#if CVML_SIMD_X86
#include <immintrin.h>

namespace cpu_ep {

/* Eight values per pass; a row's last few go through the same vector steps (loaded and
 * stored value by value), so no value takes the scalar chain. */
CVML_TARGET_AVX2 void apply_avx2(const epilogue* ep, const void* in, int32_t in_storage,
                                 int64_t in_index, int32_t bias, void* out, int32_t out_storage,
                                 int64_t out_index, int64_t n) {
    const __m256i vb = _mm256_set1_epi32(bias);
    rc_chain rc;
    const bool matched = match_rc_chain(ep, &rc);
    const rc_consts8 k = rc_consts8_of(rc);
    for (int64_t i = 0; i < n; i += 8) {
        const int64_t c = n - i < 8 ? n - i : 8, at = out_index + i;
        __m256i v = _mm256_add_epi32(load_n8(in, in_storage, in_index + i, c), vb);
        if (matched) {
            v = rc_apply8(rc, k, v, at, c);
        } else {
            for (int32_t s = 0; s < ep->step_count; ++s) v = step_avx2(ep->steps[s], v, at, c);
        }
        if (c == 8)
            store8_256(out, out_storage, at, v);
        else
            store_part8(out, out_storage, at, c, v);
    }
}

/* A plan's matched chain at avx2 (epilogue_plan_tile): each row's kept columns
 * compacted, then the chain 8 values at a time, decided once per plan, not per row. */
CVML_TARGET_AVX2 void planned_tile_avx2(const ep_tile_plan* p, const int32_t* tile,
                                        int32_t tile_stride, int32_t rows, const ep_tile_keep* keep,
                                        const int32_t* bias, void* out, int64_t out_first,
                                        int64_t out_stride) {
    rc_chain rc;
    memcpy(&rc, p->chain, sizeof rc);
    const rc_consts8 k = rc_consts8_of(rc);
    alignas(32) int32_t row[48 + 16];  // a tile row, and simd_compact_i32's slack
    for (int32_t r = 0; r < rows; ++r) {
        const int64_t n =
            simd_compact_i32(CPU_SIMD_AVX2, tile + static_cast<int64_t>(r) * tile_stride,
                             keep->mask, keep->vectors, row);
        rc_rows_avx2(rc, k, row, _mm256_set1_epi32(bias ? bias[r] : 0), out, p->out_storage,
                     out_first + r * out_stride, n);
    }
}

/* int32 to int8 as a C cast (the low byte), 32 values a step: the low bytes masked, so
 * the unsigned saturating packs keep them as they are, then the dwords put in order. */
CVML_TARGET_AVX2 void narrow_avx2(const int32_t* src, int64_t n, int8_t* dst) {
    const __m256i low = _mm256_set1_epi32(0xff), order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256i v[4];
        for (int j = 0; j < 4; ++j)
            v[j] = _mm256_and_si256(
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i + 8 * j)), low);
        const __m256i bytes =
            _mm256_packus_epi16(_mm256_packus_epi32(v[0], v[1]), _mm256_packus_epi32(v[2], v[3]));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i),
                            _mm256_permutevar8x32_epi32(bytes, order));
    }
    narrow_scalar(src + i, n - i, dst + i);
}

/* 32 bytes a step: each 128-bit lane's even bytes to its low half and odd bytes to its
 * high half, then the lanes' halves joined; then a 16- and an 8-byte step the same way
 * (rows of 56 and 28 bytes, ResNet's, left 24 and 12 bytes to the scalar code, which
 * took a quarter of a 1x1 stride-2 conv's image), the last few bytes by the scalar code. */
CVML_TARGET_AVX2 void deinterleave2_avx2(const int8_t* src, int64_t n, int8_t* even, int8_t* odd) {
    const __m256i split = _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15, 0,
                                           2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
    const __m128i split16 = _mm256_castsi256_si128(split);
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m256i v = _mm256_shuffle_epi8(
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)), split);
        const __m256i joined = _mm256_permute4x64_epi64(v, 0xD8);  // qwords 0, 2, 1, 3
        _mm_storeu_si128(reinterpret_cast<__m128i*>(even + i / 2), _mm256_castsi256_si128(joined));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(odd + i / 2),
                         _mm256_extracti128_si256(joined, 1));
    }
    if (i + 16 <= n) {
        const __m128i v =
            _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)), split16);
        _mm_storel_epi64(reinterpret_cast<__m128i*>(even + i / 2), v);
        _mm_storel_epi64(reinterpret_cast<__m128i*>(odd + i / 2), _mm_unpackhi_epi64(v, v));
        i += 16;
    }
    if (i + 8 <= n) {
        // The load's upper 8 bytes are zeros: the even bytes land in lanes 0-3, the odd in 8-11.
        const __m128i v =
            _mm_shuffle_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + i)), split16);
        const int32_t e = _mm_cvtsi128_si32(v), o = _mm_cvtsi128_si32(_mm_srli_si128(v, 8));
        memcpy(even + i / 2, &e, 4);
        memcpy(odd + i / 2, &o, 4);
        i += 8;
    }
    deinterleave2_scalar(src + i, n - i, even + i / 2, odd + i / 2);
}

}  // namespace cpu_ep

#endif
