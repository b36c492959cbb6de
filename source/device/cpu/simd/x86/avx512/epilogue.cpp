/* The epilogue (epilogue.h) at avx512: chains applied three vectors per step decode,
 * the matched chains (epilogue_chain.h) with their constants in registers, GEMM tiles
 * compacted in registers, and the int8 narrowing, compaction and deinterleaving. */
#include <string.h>

#include "device/cpu/simd/x86/avx512/epilogue_avx512.h"

#if CVML_SIMD_X86

namespace cpu_ep {
namespace {

/* Three vectors per pass (a GEMM tile row is 48 values), so the step chain is decoded
 * once per 48 values; named vectors, because GCC keeps an array of them on the stack. */
template <bool Add>
CVML_TARGET_AVX512 void apply_rc_avx512(const rc_chain& c, const void* in, int32_t in_storage,
                                        int64_t in_index, int32_t bias, void* out,
                                        int32_t out_storage, int64_t out_index, int64_t n) {
    const rc_consts k = rc_consts_of(c);
    const __m512i vb = _mm512_set1_epi32(bias);
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = lanes_from(i, n);
        const __m512i v = load16_512(in, in_storage, in_index + i, m);
        store16_512(out, out_storage, out_index + i, m,
                    rc_apply<Add>(c, k, v, vb, out_index + i, m));
    }
}

}  // namespace

CVML_TARGET_AVX512 void apply_avx512(const epilogue* ep, const void* in, int32_t in_storage,
                                     int64_t in_index, int32_t bias, void* out, int32_t out_storage,
                                     int64_t out_index, int64_t n) {
    rc_chain rc;
    if (match_rc_chain(ep, &rc)) {
        if (rc.add)
            apply_rc_avx512<true>(rc, in, in_storage, in_index, bias, out, out_storage, out_index,
                                  n);
        else
            apply_rc_avx512<false>(rc, in, in_storage, in_index, bias, out, out_storage, out_index,
                                   n);
        return;
    }
    const __m512i vb = _mm512_set1_epi32(bias);
    for (int64_t i = 0; i < n; i += 48) {
        const __mmask16 m0 = lanes_from(i, n), m1 = lanes_from(i + 16, n),
                        m2 = lanes_from(i + 32, n);
        __m512i v0 = _mm512_add_epi32(load16_512(in, in_storage, in_index + i, m0), vb);
        __m512i v1 = _mm512_add_epi32(load16_512(in, in_storage, in_index + i + 16, m1), vb);
        __m512i v2 = _mm512_add_epi32(load16_512(in, in_storage, in_index + i + 32, m2), vb);
        for (int32_t s = 0; s < ep->step_count; ++s) {
            const ep_step& st = ep->steps[s];
            v0 = step_avx512(st, v0, out_index + i, m0);
            v1 = step_avx512(st, v1, out_index + i + 16, m1);
            v2 = step_avx512(st, v2, out_index + i + 32, m2);
        }
        store16_512(out, out_storage, out_index + i, m0, v0);
        store16_512(out, out_storage, out_index + i + 16, m1, v1);
        store16_512(out, out_storage, out_index + i + 32, m2, v2);
    }
}

namespace {

/* A plan's matched chain (epilogue_plan_tile) through a tile: the same operations in
 * the same order as the generic tile loop, with the constants in registers for the whole
 * tile (Folded, Sat, Pre: rc_apply). */
template <bool Add, bool Bias, bool Folded, bool Sat, bool Pre>
CVML_TARGET_AVX512 void planned_tile_rc(const ep_tile_plan* p, const int32_t* tile,
                                        int32_t tile_stride, int32_t rows, const ep_tile_keep* k,
                                        const int32_t* bias, void* out, int64_t out_first,
                                        int64_t out_stride) {
    rc_chain c;
    memcpy(&c, p->chain, sizeof c);
    const int32_t out_storage = p->out_storage;
    tile_lanes t;
    tile_lanes_of(k, &t);
    const rc_consts v = rc_consts_of(c);
    auto store = [&](int64_t at, __mmask16 m, __m512i x) CVML_TARGET_AVX512 {
        if (Sat)
            store16_i8_sat(out, at, m, x);
        else
            store16_512(out, out_storage, at, m, x);
    };
    for (int32_t r = 0; r < rows; ++r) {
        const __m512i vb = _mm512_set1_epi32(Bias ? bias[r] : 0);
        const int64_t at = out_first + r * out_stride;
        __m512i v0, v1, v2;
        load_kept(t, k->mask, tile + static_cast<int64_t>(r) * tile_stride, v0, v1, v2);
        store(at + t.pos[0], t.m[0],
              rc_apply<Add, Bias, Folded, Sat, Pre>(c, v, v0, vb, at + t.pos[0], t.m[0]));
        store(at + t.pos[1], t.m[1],
              rc_apply<Add, Bias, Folded, Sat, Pre>(c, v, v1, vb, at + t.pos[1], t.m[1]));
        store(at + t.pos[2], t.m[2],
              rc_apply<Add, Bias, Folded, Sat, Pre>(c, v, v2, vb, at + t.pos[2], t.m[2]));
    }
}

static_assert(sizeof(rc_chain) <= sizeof(ep_tile_plan::chain), "a plan holds its chain");

/* The variant for a chain: a prefix never comes with a folded main round. */
template <bool Add, bool Bias>
planned_fn planned_tile_rc_for(const rc_chain& c, bool sat) {
    if (c.pre)
        return sat ? planned_tile_rc<Add, Bias, false, true, true>
                   : planned_tile_rc<Add, Bias, false, false, true>;
    if (c.folded)
        return sat ? planned_tile_rc<Add, Bias, true, true, false>
                   : planned_tile_rc<Add, Bias, true, false, false>;
    return sat ? planned_tile_rc<Add, Bias, false, true, false>
               : planned_tile_rc<Add, Bias, false, false, false>;
}

}  // namespace

planned_fn planned_tile_avx512(const rc_chain& rc, bool has_bias, bool sat) {
    return rc.add ? (has_bias ? planned_tile_rc_for<true, true>(rc, sat)
                              : planned_tile_rc_for<true, false>(rc, sat))
                  : (has_bias ? planned_tile_rc_for<false, true>(rc, sat)
                              : planned_tile_rc_for<false, false>(rc, sat));
}

/* A GEMM tile through any chain, step by step: row r's kept columns are compacted in
 * registers and written from out_first + r * out_stride on; bias[r] is added first. */
CVML_TARGET_AVX512 void apply_tile_avx512(const epilogue* ep, const int32_t* tile,
                                          int32_t tile_stride, int32_t rows, const ep_tile_keep* k,
                                          const int32_t* bias, void* out, int32_t out_storage,
                                          int64_t out_first, int64_t out_stride) {
    tile_lanes t;
    tile_lanes_of(k, &t);
    const int64_t* pos = t.pos;
    const __mmask16* m = t.m;
    for (int32_t r = 0; r < rows; ++r) {
        const __m512i vb = _mm512_set1_epi32(bias ? bias[r] : 0);
        const int64_t at = out_first + r * out_stride;
        __m512i v0, v1, v2;
        load_kept(t, k->mask, tile + static_cast<int64_t>(r) * tile_stride, v0, v1, v2);
        v0 = _mm512_add_epi32(v0, vb);
        v1 = _mm512_add_epi32(v1, vb);
        v2 = _mm512_add_epi32(v2, vb);
        for (int32_t s = 0; s < ep->step_count; ++s) {
            const ep_step& st = ep->steps[s];
            v0 = step_avx512(st, v0, at + pos[0], m[0]);
            v1 = step_avx512(st, v1, at + pos[1], m[1]);
            v2 = step_avx512(st, v2, at + pos[2], m[2]);
        }
        store16_512(out, out_storage, at + pos[0], m[0], v0);
        store16_512(out, out_storage, at + pos[1], m[1], v1);
        store16_512(out, out_storage, at + pos[2], m[2], v2);
    }
}

CVML_TARGET_AVX512 void narrow_avx512(const int32_t* src, int64_t n, int8_t* dst) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                         _mm512_cvtepi32_epi8(_mm512_loadu_si512(src + i)));
    for (; i < n; ++i) dst[i] = static_cast<int8_t>(src[i]);
}

CVML_TARGET_AVX512 int64_t compact_avx512(const int32_t* src, const uint16_t* keep, int32_t vectors,
                                          int32_t* dst) {
    int64_t n = 0;
    for (int32_t j = 0; j < vectors; ++j) {
        const __m512i v = _mm512_loadu_si512(src + 16 * j);
        _mm512_storeu_si512(dst + n, _mm512_maskz_compress_epi32(keep[j], v));
        n += __builtin_popcount(keep[j]);
    }
    return n;
}

CVML_TARGET_AVX512 void deinterleave2_avx512(const int8_t* src, int64_t n, int8_t* even,
                                             int8_t* odd) {
    // Whole 64-byte blocks, then one masked block: rows are often shorter than 64.
    for (int64_t i = 0; i < n; i += 64) {
        const int64_t left = n - i;
        const __mmask64 m =
            left >= 64 ? ~static_cast<__mmask64>(0) : (static_cast<__mmask64>(1) << left) - 1;
        const __m512i v = _mm512_maskz_loadu_epi8(m, src + i);
        const int64_t ne = left >= 64 ? 32 : (left + 1) / 2, no = left >= 64 ? 32 : left / 2;
        _mm256_mask_storeu_epi8(even + i / 2, static_cast<__mmask32>((1ull << ne) - 1),
                                _mm512_cvtepi16_epi8(v));
        _mm256_mask_storeu_epi8(odd + i / 2, static_cast<__mmask32>((1ull << no) - 1),
                                _mm512_cvtepi16_epi8(_mm512_srli_epi16(v, 8)));
    }
}

}  // namespace cpu_ep

#endif
