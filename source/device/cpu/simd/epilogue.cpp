#include "device/cpu/simd/epilogue.h"

#include <string.h>

#include "device/cpu/simd/epilogue_simd.h"
#include "device/cpu/simd/simd.h"
#include "graph/graph.h"

#if CVML_SIMD_X86
#include <immintrin.h>  // GCC 12's header warnings: silenced in epilogue_simd.h
#endif

namespace {

using namespace cpu_ep;

inline int32_t wrap_add32(int32_t a, int32_t b) {
    return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}

int push(epilogue* ep, const ep_step& s) {
    if (ep->step_count >= EP_MAX_STEPS) return 0;
    ep->steps[ep->step_count++] = s;
    return 1;
}

void apply_scalar(const epilogue* ep, const void* in, int32_t in_storage, int64_t in_index,
                  int32_t bias, void* out, int32_t out_storage, int64_t out_index, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        int32_t v = wrap_add32(ir_storage_load(in, in_storage, in_index + i), bias);
        ir_storage_store(out, out_storage, out_index + i, epilogue_value(ep, v, out_index + i));
    }
}

#if CVML_SIMD_X86

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

/* Tile row `src`'s three vectors, each compacted to its kept lanes. */
CVML_TARGET_AVX512 inline void load_kept(const tile_lanes& t, const uint16_t* keep,
                                         const int32_t* src, __m512i& v0, __m512i& v1,
                                         __m512i& v2) {
    v0 = _mm512_loadu_si512(src);
    v1 = _mm512_loadu_si512(src + 16);
    v2 = _mm512_loadu_si512(src + 32);
    if (keep[0] != 0xFFFF) v0 = _mm512_permutexvar_epi32(t.idx0, v0);
    if (keep[1] != 0xFFFF) v1 = _mm512_permutexvar_epi32(t.idx1, v1);
    if (keep[2] != 0xFFFF) v2 = _mm512_permutexvar_epi32(t.idx2, v2);
}

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

typedef void (*planned_fn)(const ep_tile_plan*, const int32_t*, int32_t, int32_t,
                           const ep_tile_keep*, const int32_t*, void*, int64_t, int64_t);

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

#endif

/* Plain pairs from i (even) on: no vectorizer games with alternating destinations. */
void deinterleave2_tail(const int8_t* src, int64_t i, int64_t n, int8_t* even, int8_t* odd) {
    for (; i + 1 < n; i += 2) {
        even[i / 2] = src[i];
        odd[i / 2] = src[i + 1];
    }
    if (i < n) even[i / 2] = src[i];
}

#if CVML_SIMD_X86
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
#endif

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
                v = wrap_add32(v >> (st.shift - 1), 1) >> 1;
                break;
            case EP_SRA31:
                v = v >> 31;
                break;
            case EP_SRA:
                v = v >> st.shift;
                break;
            case EP_MUL:
                v = static_cast<int32_t>(static_cast<uint32_t>(v) *
                                         static_cast<uint32_t>(st.factor));
                break;
            case EP_ADD:
                v = wrap_add32(v, ir_storage_load(st.src, st.src_storage, index));
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
#if CVML_SIMD_X86
    if (vec && level == CPU_SIMD_AVX512) {
        apply_avx512(ep, in, in_storage, in_index, bias, out, out_storage, out_index, n);
        return;
    }
    if (vec && level == CPU_SIMD_AVX2) {
        apply_avx2(ep, in, in_storage, in_index, bias, out, out_storage, out_index, n);
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

#if CVML_SIMD_X86
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
#if CVML_SIMD_X86
    if (p->level == CPU_SIMD_AVX512 && tile_vector_storage(p->ep, p->out_storage)) {
        apply_tile_avx512(p->ep, tile, tile_stride, rows, keep, bias, out, p->out_storage,
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
#if CVML_SIMD_X86
    rc_chain rc;
    if (!tile_vector_storage(ep, out_storage) || !match_rc_chain(ep, &rc)) return;
    memcpy(plan->chain, &rc, sizeof rc);
    if (level == CPU_SIMD_AVX2) {
        plan->run = planned_tile_avx2;
        return;
    }
    if (level != CPU_SIMD_AVX512) return;
    // A bias folded into the GEMM's sums (gemm_weights_fold_bias) is no add here.
    const bool sat = rc_saturates_to_i8(rc, out_storage);
    plan->run = rc.add ? (has_bias ? planned_tile_rc_for<true, true>(rc, sat)
                                   : planned_tile_rc_for<true, false>(rc, sat))
                       : (has_bias ? planned_tile_rc_for<false, true>(rc, sat)
                                   : planned_tile_rc_for<false, false>(rc, sat));
#else
    (void)has_bias;  // no matched chains without the x86 kernels
#endif
}

void epilogue_apply_tile(int level, const epilogue* ep, const int32_t* tile, int32_t tile_stride,
                         int32_t rows, const ep_tile_keep* keep, const int32_t* bias, void* out,
                         int32_t out_storage, int64_t out_first, int64_t out_stride) {
    ep_tile_plan plan;
    epilogue_plan_tile(level, ep, bias != nullptr, out_storage, &plan);
    epilogue_apply_tile_planned(&plan, tile, tile_stride, rows, keep, bias, out, out_first,
                                out_stride);
}

void simd_narrow_i32_i8(int level, const int32_t* src, int64_t n, int8_t* dst) {
#if CVML_SIMD_X86
    if (level == CPU_SIMD_AVX512) {
        narrow_avx512(src, n, dst);
        return;
    }
#else
    (void)level;
#endif
    for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<int8_t>(src[i]);
}

int64_t simd_compact_i32(int level, const int32_t* src, const uint16_t* keep, int32_t vectors,
                         int32_t* dst) {
#if CVML_SIMD_X86
    if (level == CPU_SIMD_AVX512) return compact_avx512(src, keep, vectors, dst);
#else
    (void)level;
#endif
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
#if CVML_SIMD_X86
    if (level == CPU_SIMD_AVX512) {
        deinterleave2_avx512(src, n, even, odd);
        return;
    }
#else
    (void)level;
#endif
    deinterleave2_tail(src, 0, n, even, odd);
}
