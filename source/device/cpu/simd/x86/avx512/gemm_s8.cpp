/* The int8 GEMM at avx512 (VNNI): the 8 x 48 micro-kernel on packed B or, in taps
 * mode, straight on conv2d's channel-interleaved image; B's packing (64 columns of 4
 * rows per step, interleave4.h) and the narrow tail's dot products along K. */
#include <string.h>

#include "device/cpu/simd/gemm_s8_impl.h"
#include "device/cpu/simd/x86/avx512/epilogue_avx512.h"
#include "device/cpu/simd/x86/avx512/interleave4.h"

#if CVML_SIMD_X86
#include <immintrin.h>
/* GCC 12's AVX-512 headers trip this on their own _mm512_undefined_* helpers. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace gemm_impl {
namespace {

/* ---- avx512 (VNNI) -------------------------------------------------------------------- */

/* Four weight bytes as one int32 lane value (unaligned). */
inline int32_t load_a(const int8_t* p) {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* GCC 12 copies the accumulator of _mm512_dpbusd_epi32 through the stack on every
 * step; the instruction itself accumulates in place. */
#define dpbusd(acc, b, a) __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(b), "v"(a))

/* Where k4 step k4 of B starts for the micro-kernels (vector j of it is panel_bytes
 * further on): packed B holds the steps 64 bytes apart; in taps mode (conv2d on a
 * channel-interleaved image, nothing packed) each step is the image at its own offset,
 * and the 16-column vectors are consecutive. */
template <bool Taps>
inline const uint8_t* b_step(const uint8_t* b, const int64_t* boff, int32_t k4) {
    return Taps ? b + boff[k4] : b + static_cast<size_t>(k4) * 64;
}

/* One step of row r: B's vectors v0..v2 (NC of them) times the row's 4 weight bytes,
 * into the row's accumulators, in column order. */
template <int NC>
CVML_TARGET_AVX512 inline __attribute__((always_inline)) void ukr_row(__m512i& c0, __m512i& c1,
                                                                      __m512i& c2, __m512i v0,
                                                                      __m512i v1, __m512i v2,
                                                                      const int8_t* a) {
    const __m512i w = _mm512_set1_epi32(load_a(a));
    dpbusd(c0, v0, w);
    if constexpr (NC > 1) dpbusd(c1, v1, w);
    if constexpr (NC > 2) dpbusd(c2, v2, w);
}

template <int NC>
CVML_TARGET_AVX512 inline __attribute__((always_inline)) void ukr_store(int32_t* row, __m512i c0,
                                                                        __m512i c1, __m512i c2) {
    _mm512_storeu_si512(row + 0, c0);
    if constexpr (NC > 1) _mm512_storeu_si512(row + 16, c1);
    if constexpr (NC > 2) _mm512_storeu_si512(row + 32, c2);
}

/* What a fused tail (gemm_tail) needs through one tile, set up before its sums. */
struct tail_state {
    cpu_ep::rc_chain c;
    cpu_ep::rc_consts k;
    cpu_ep::tile_lanes lanes;
    const uint16_t* keep; /* the kept columns' masks */
    int8_t* out;
    int64_t at;     /* where row 0's first kept column goes */
    int64_t stride; /* between rows */
};

/* One tile row's sums through the chain and stored: the same operations as the plan's
 * tile function (planned_tile_rc with no bias, the round folded and saturating int8
 * output) on the accumulators themselves. */
template <int Kind>
CVML_TARGET_AVX512 inline __attribute__((always_inline)) void tail_row(const tail_state& s,
                                                                       __m512i v0, __m512i v1,
                                                                       __m512i v2, int64_t at) {
    constexpr bool Add = (Kind & GEMM_TAIL_ADD) != 0;
    cpu_ep::compact_kept(s.lanes, s.keep, v0, v1, v2);
    const __m512i none = _mm512_setzero_si512();  // no bias: it is in the sums
    const int64_t* pos = s.lanes.pos;
    const __mmask16* m = s.lanes.m;
    cpu_ep::store16_i8_sat(
        s.out, at + pos[0], m[0],
        cpu_ep::rc_apply<Add, false, 1, true, 0>(s.c, s.k, v0, none, at + pos[0], m[0]));
    cpu_ep::store16_i8_sat(
        s.out, at + pos[1], m[1],
        cpu_ep::rc_apply<Add, false, 1, true, 0>(s.c, s.k, v1, none, at + pos[1], m[1]));
    cpu_ep::store16_i8_sat(
        s.out, at + pos[2], m[2],
        cpu_ep::rc_apply<Add, false, 1, true, 0>(s.c, s.k, v2, none, at + pos[2], m[2]));
}

/* The micro-kernel: 8 rows x NC 16-column vectors of the tile, over k4n steps of K.
 * Named accumulators (GCC spills an array of vectors to the stack); those of columns
 * past NC are never used and vanish. Tail 0: the sums go to the tile buffer; else
 * (NC 3 only) through the fused tail of that kind (ts). */
template <int NC, bool Taps, int Tail = 0>
CVML_TARGET_AVX512 void ukr_avx512(const int8_t* a, size_t rs, size_t ks, const uint8_t* b,
                                   size_t panel_bytes, int32_t k4n, const int32_t* start,
                                   int32_t* tile, const int64_t* boff,
                                   const tail_state* ts = nullptr) {
    __m512i c00 = _mm512_set1_epi32(start[0]), c01 = c00, c02 = c00;
    __m512i c10 = _mm512_set1_epi32(start[1]), c11 = c10, c12 = c10;
    __m512i c20 = _mm512_set1_epi32(start[2]), c21 = c20, c22 = c20;
    __m512i c30 = _mm512_set1_epi32(start[3]), c31 = c30, c32 = c30;
    __m512i c40 = _mm512_set1_epi32(start[4]), c41 = c40, c42 = c40;
    __m512i c50 = _mm512_set1_epi32(start[5]), c51 = c50, c52 = c50;
    __m512i c60 = _mm512_set1_epi32(start[6]), c61 = c60, c62 = c60;
    __m512i c70 = _mm512_set1_epi32(start[7]), c71 = c70, c72 = c70;
    for (int32_t k4 = 0; k4 < k4n; ++k4) {
        const uint8_t* bk = b_step<Taps>(b, boff, k4);
        const __m512i v0 = _mm512_loadu_si512(bk);
        const __m512i v1 = NC > 1 ? _mm512_loadu_si512(bk + panel_bytes) : v0;
        const __m512i v2 = NC > 2 ? _mm512_loadu_si512(bk + 2 * panel_bytes) : v0;
        const int8_t* ak = a + static_cast<size_t>(k4) * ks;
        ukr_row<NC>(c00, c01, c02, v0, v1, v2, ak + 0 * rs);
        ukr_row<NC>(c10, c11, c12, v0, v1, v2, ak + 1 * rs);
        ukr_row<NC>(c20, c21, c22, v0, v1, v2, ak + 2 * rs);
        ukr_row<NC>(c30, c31, c32, v0, v1, v2, ak + 3 * rs);
        ukr_row<NC>(c40, c41, c42, v0, v1, v2, ak + 4 * rs);
        ukr_row<NC>(c50, c51, c52, v0, v1, v2, ak + 5 * rs);
        ukr_row<NC>(c60, c61, c62, v0, v1, v2, ak + 6 * rs);
        ukr_row<NC>(c70, c71, c72, v0, v1, v2, ak + 7 * rs);
    }
    if constexpr (Tail != 0) {
        static_assert(NC == 3, "a fused tail takes whole tiles");
        const int64_t st = ts->stride;
        tail_row<Tail>(*ts, c00, c01, c02, ts->at + 0 * st);
        tail_row<Tail>(*ts, c10, c11, c12, ts->at + 1 * st);
        tail_row<Tail>(*ts, c20, c21, c22, ts->at + 2 * st);
        tail_row<Tail>(*ts, c30, c31, c32, ts->at + 3 * st);
        tail_row<Tail>(*ts, c40, c41, c42, ts->at + 4 * st);
        tail_row<Tail>(*ts, c50, c51, c52, ts->at + 5 * st);
        tail_row<Tail>(*ts, c60, c61, c62, ts->at + 6 * st);
        tail_row<Tail>(*ts, c70, c71, c72, ts->at + 7 * st);
        return;
    }
    ukr_store<NC>(tile + 0 * GEMM_NT, c00, c01, c02);
    ukr_store<NC>(tile + 1 * GEMM_NT, c10, c11, c12);
    ukr_store<NC>(tile + 2 * GEMM_NT, c20, c21, c22);
    ukr_store<NC>(tile + 3 * GEMM_NT, c30, c31, c32);
    ukr_store<NC>(tile + 4 * GEMM_NT, c40, c41, c42);
    ukr_store<NC>(tile + 5 * GEMM_NT, c50, c51, c52);
    ukr_store<NC>(tile + 6 * GEMM_NT, c60, c61, c62);
    ukr_store<NC>(tile + 7 * GEMM_NT, c70, c71, c72);
}

/* The whole-tile micro-kernel through the fused tail of kind `kind`. */
template <bool Taps>
void ukr_tail_for(int32_t kind, const int8_t* a, size_t rs, size_t ks, const uint8_t* b,
                  size_t panel_bytes, int32_t k4n, const int32_t* start, const int64_t* boff,
                  const tail_state* ts) {
    if (kind & GEMM_TAIL_ADD)
        ukr_avx512<3, Taps, GEMM_TAIL_ON | GEMM_TAIL_ADD>(a, rs, ks, b, panel_bytes, k4n, start,
                                                          nullptr, boff, ts);
    else
        ukr_avx512<3, Taps, GEMM_TAIL_ON>(a, rs, ks, b, panel_bytes, k4n, start, nullptr, boff, ts);
}

/* A fused tail's state for the tiles of one call (gemm_tail); `at` is set per tile. */
CVML_TARGET_AVX512 void tail_state_of(const gemm_tail* t, tail_state* s) {
    memcpy(&s->c, t->chain, sizeof s->c);
    s->k = cpu_ep::rc_consts_of(s->c);
    cpu_ep::tile_lanes_of(t->keep, &s->lanes);
    s->keep = t->keep->mask;
    s->out = t->out;
    s->stride = t->out_stride;
    s->at = t->out_first;
}

/* The micro-kernel for a tile of `nc` 16-column vectors. */
template <bool Taps>
void ukr_for(int32_t nc, const int8_t* a, size_t rs, size_t ks, const uint8_t* b,
             size_t panel_bytes, int32_t k4n, const int32_t* start, int32_t* tile,
             const int64_t* boff) {
    if (nc == 3)
        ukr_avx512<3, Taps>(a, rs, ks, b, panel_bytes, k4n, start, tile, boff);
    else if (nc == 2)
        ukr_avx512<2, Taps>(a, rs, ks, b, panel_bytes, k4n, start, tile, boff);
    else
        ukr_avx512<1, Taps>(a, rs, ks, b, panel_bytes, k4n, start, tile, boff);
}

}  // namespace

namespace {

/* Where the micro-kernel reads the weights of rows m0..: row r of step k4 at
 * *ap + r * *rs + k4 * *ks. */
void weights_at(const gemm_weights* a, int32_t m0, const int8_t** ap, size_t* rs, size_t* ks) {
    if (a->plain && m0 + GEMM_MR <= a->M) {
        // Rows straight from the caller's int8 [M][K] array; the bytes a row's last
        // group reads past K meet B's zero padding rows.
        *ap = a->plain + static_cast<size_t>(m0) * static_cast<size_t>(a->lda);
        *rs = static_cast<size_t>(a->lda);
        *ks = 4;
    } else {
        // Packed blocks; in plain mode only the last, partial block is packed.
        size_t blk = a->plain ? 0 : static_cast<size_t>(m0 / GEMM_MR);
        *ap = static_cast<const int8_t*>(a->data) + blk * GEMM_MR * static_cast<size_t>(a->Kp);
        *rs = 4;
        *ks = GEMM_MR * 4;
    }
}

}  // namespace

void tile_avx512(const gemm_weights* a, const uint8_t* b, int32_t m0, int32_t n0, int32_t cols,
                 int32_t* tile) {
    int32_t k4n = a->Kp / 4;
    size_t panel_bytes = static_cast<size_t>(k4n) * 64;
    const uint8_t* bp = b + static_cast<size_t>(n0 / 16) * panel_bytes;
    const int32_t* start = a->start + m0;
    int32_t nc = (cols + 15) / 16;
    const int8_t* ap;
    size_t rs, ks;
    weights_at(a, m0, &ap, &rs, &ks);
    ukr_for<false>(nc, ap, rs, ks, bp, panel_bytes, k4n, start, tile, nullptr);
}

/* A tile in taps mode: 8 whole rows of in-place weights (gemm_narrow_ok), B read from
 * the image at img + boff[k4] + 4 * n. */
void tile_taps_avx512(const gemm_weights* a, const uint8_t* img, const int64_t* boff, int32_t m0,
                      int32_t n0, int32_t cols, int32_t* tile) {
    const int32_t k4n = a->Kp / 4;
    const uint8_t* bp = img + static_cast<size_t>(n0) * 4;
    const int8_t* ap = a->plain + static_cast<size_t>(m0) * static_cast<size_t>(a->lda);
    const size_t rs = static_cast<size_t>(a->lda);
    const int32_t* start = a->start + m0;
    const int32_t nc = (cols + 15) / 16;
    ukr_for<true>(nc, ap, rs, 4, bp, 64, k4n, start, tile, boff);
}

namespace {

/* The next row block's output lines of a whole tile's columns (GEMM_NT bytes a row: one
 * or two lines), fetched for writing (gemm_tail::own_ahead). */
inline void own_rows_ahead(const gemm_tail* tail, int64_t at) {
    for (int r = 0; r < GEMM_MR; ++r) {
        const int64_t first = at + (GEMM_MR + r) * tail->out_stride;
        if (first + GEMM_NT > tail->out_size) return;
        simd_prefetch_for_write(tail->out + first);
        simd_prefetch_for_write(tail->out + first + GEMM_NT - 1);
    }
}

}  // namespace

/* gemm_run_tiles_tail and gemm_run_tiles_taps_tail at avx512: the tail's state is set up
 * once per call (a strip's tiles share their kept columns); whole tiles go through it,
 * the others to fn. */
void run_tiles_tail_avx512(const gemm_weights* a, const uint8_t* b, const int64_t* boff, int32_t N,
                           int64_t t0, int64_t t1, const gemm_tail* tail, gemm_tile_fn fn,
                           void* arg) {
    alignas(64) int32_t tile[GEMM_MR * GEMM_NT];
    tail_state ts;
    tail_state_of(tail, &ts);
    const int32_t k4n = a->Kp / 4;
    const size_t panel_bytes = boff ? 64 : static_cast<size_t>(k4n) * 64;
    tile_walk w(a->M, N, t0);
    for (int64_t t = t0; t < t1; ++t, w.next()) {
        const int32_t m0 = w.m0, n0 = w.n0, rows = w.rows, cols = w.cols;
        if (rows < GEMM_MR || cols <= 32) {
            if (boff)
                tile_taps_avx512(a, b, boff, m0, n0, cols, tile);
            else
                tile_avx512(a, b, m0, n0, cols, tile);
            fn(arg, m0, rows, n0, cols, tile);
            continue;
        }
        ts.at = tail->out_first + static_cast<int64_t>(m0) * tail->out_stride;
        if (tail->own_ahead && cols == GEMM_NT && m0 + 2 * GEMM_MR <= a->M)
            own_rows_ahead(tail, ts.at);
        if (boff) {
            const int8_t* ap = a->plain + static_cast<size_t>(m0) * static_cast<size_t>(a->lda);
            ukr_tail_for<true>(tail->kind, ap, static_cast<size_t>(a->lda), 4,
                               b + static_cast<size_t>(n0) * 4, 64, k4n, a->start + m0, boff, &ts);
            continue;
        }
        const int8_t* ap;
        size_t rs, ks;
        weights_at(a, m0, &ap, &rs, &ks);
        ukr_tail_for<false>(tail->kind, ap, rs, ks, b + static_cast<size_t>(n0 / 16) * panel_bytes,
                            panel_bytes, k4n, a->start + m0, nullptr, &ts);
    }
}

namespace {

/* 64 columns of 4 rows at once (interleave4.h). Columns past n read as 0 (never stored
 * by the caller). */
CVML_TARGET_AVX512 inline __attribute__((always_inline)) void pack64_panels(
    const int8_t* const rows[4], int32_t n, int32_t avail, __m512i p[4]) {
    const __mmask64 m = simd_bits64(0, avail);
    interleave4_panels(
        _mm512_maskz_loadu_epi8(m, rows[0] + n), _mm512_maskz_loadu_epi8(m, rows[1] + n),
        _mm512_maskz_loadu_epi8(m, rows[2] + n), _mm512_maskz_loadu_epi8(m, rows[3] + n), p);
}

}  // namespace

/* gemm_interleave4 at avx512: 64 pixels per step, the padding by load masks. */
CVML_TARGET_AVX512 void interleave4_avx512(const int8_t* const rows[4], int64_t lo, int64_t w,
                                           int64_t wq, uint8_t* dst) {
    for (int64_t j = 0; j < wq; j += 64) {
        const __mmask64 m = simd_bits64(lo - j, lo + w - j);
        __m512i r[4];
        for (int i = 0; i < 4; ++i)
            r[i] =
                rows[i] ? _mm512_maskz_loadu_epi8(m, rows[i] + (j - lo)) : _mm512_setzero_si512();
        __m512i p[4];
        interleave4_panels(r[0], r[1], r[2], r[3], p);
        const int64_t left = (wq - j) * 4;  // bytes of this row still to write
        for (int i = 0; i < 4 && 64 * i < left; ++i)
            _mm512_mask_storeu_epi8(dst + 4 * j + 64 * i, simd_bits64(0, left - 64 * i), p[i]);
    }
}

namespace {

CVML_TARGET_AVX512 inline __attribute__((always_inline)) void pack64_body(
    const int8_t* const rows[4], int32_t n, int32_t avail, int32_t panels, uint8_t* dst,
    size_t panel_bytes) {
    __m512i p[4];
    pack64_panels(rows, n, avail, p);
    for (int32_t i = 0; i < panels; ++i)
        _mm512_storeu_si512(dst + static_cast<size_t>(i) * panel_bytes, p[i]);
}

}  // namespace

CVML_TARGET_AVX512 void pack64_avx512(const int8_t* const rows[4], int32_t n, int32_t avail,
                                      int32_t panels, uint8_t* dst, size_t panel_bytes) {
    pack64_body(rows, n, avail, panels, dst, panel_bytes);
}

/* All row groups of a strip (gemm_pack_b_rows at avx512): one loop with the 64-column
 * step inlined, since a strip's 48 columns make each group a single step and a call
 * and level dispatch per group cost as much as the unpacks. */
namespace {

/* The rows of group k4 (four rows inside K, rows[i] = base + off[i]) as Panels panels of
 * the N <= 48 columns the load mask m keeps. */
template <int Panels>
CVML_TARGET_AVX512 inline __attribute__((always_inline)) void pack_strip_group(
    const int8_t* const rows[GEMM_KG], __mmask64 m, uint8_t* dst, size_t panel_bytes) {
    __m512i p[4];
    interleave4_panels(_mm512_maskz_loadu_epi8(m, rows[0]), _mm512_maskz_loadu_epi8(m, rows[1]),
                       _mm512_maskz_loadu_epi8(m, rows[2]), _mm512_maskz_loadu_epi8(m, rows[3]), p);
    _mm512_storeu_si512(dst, p[0]);
    if (Panels > 1) _mm512_storeu_si512(dst + panel_bytes, p[1]);
    if (Panels > 2) _mm512_storeu_si512(dst + 2 * panel_bytes, p[2]);
}

/* pack_rows_avx512 for one strip (N <= 48 columns, Panels of them): the load mask and
 * the panels are the same for every group, and only the last group can reach past K,
 * so the loop over the groups has no per-group decisions (they took as long as the
 * unpacks). */
template <int Panels>
CVML_TARGET_AVX512 void pack_strip_rows(const int8_t* base, const int64_t* offsets,
                                        const int8_t* pad, int32_t N, int32_t K, uint8_t* packed) {
    const size_t panel_bytes = static_cast<size_t>(round_up(K, GEMM_KG) / 4) * 64;
    const __mmask64 m = simd_bits64(0, N);
    const int32_t whole = K / GEMM_KG;
    for (int32_t k4 = 0; k4 < whole; ++k4) {
        const int64_t* off = offsets + k4 * GEMM_KG;
        const int8_t* rows[GEMM_KG] = {base + off[0], base + off[1], base + off[2], base + off[3]};
        pack_strip_group<Panels>(rows, m, packed + static_cast<size_t>(k4) * 64, panel_bytes);
    }
    if (whole * GEMM_KG == K) return;
    const int8_t* rows[GEMM_KG];
    group_rows(base, offsets, pad, K, whole, rows);
    pack_strip_group<Panels>(rows, m, packed + static_cast<size_t>(whole) * 64, panel_bytes);
}

}  // namespace

CVML_TARGET_AVX512 void pack_rows_avx512(const int8_t* base, const int64_t* offsets,
                                         const int8_t* pad, int32_t N, int32_t K, uint8_t* packed) {
    if (N > 32 && N <= 48) return pack_strip_rows<3>(base, offsets, pad, N, K, packed);
    if (N > 16 && N <= 32) return pack_strip_rows<2>(base, offsets, pad, N, K, packed);
    if (N > 0 && N <= 16) return pack_strip_rows<1>(base, offsets, pad, N, K, packed);
    const size_t panel_bytes = static_cast<size_t>(round_up(K, GEMM_KG) / 4) * 64;
    const int32_t Np = round_up(N, 16);
    for (int32_t k4 = 0; k4 * GEMM_KG < K; ++k4) {
        const int8_t* rows[GEMM_KG];
        group_rows(base, offsets, pad, K, k4, rows);
        uint8_t* dst = packed + static_cast<size_t>(k4) * 64;
        for (int32_t n = 0; n < Np; n += 64) {
            const int32_t panels = (Np - n) / 16 < 4 ? (Np - n) / 16 : 4;
            pack64_body(rows, n, N - n, panels, dst + static_cast<size_t>(n / 16) * panel_bytes,
                        panel_bytes);
        }
    }
}

namespace {

/* gemm_pack_b_select at avx512: each row group packed as 64 consecutive columns, then
 * every output panel picked from two of those panels with one vpermt2d. Panel 0 always
 * starts in flat panel 0 and panel 2 in flat panel 2 (conv2d's selections; checked
 * below), so only panel 1's source varies: one loop per case keeps every vector in a
 * register. */
template <int Panels, int From1>
CVML_TARGET_AVX512 inline __attribute__((always_inline)) void pack_select_group(
    const int8_t* const rows[GEMM_KG], __m512i i0, __m512i i1, __m512i i2, uint8_t* dst,
    size_t panel_bytes) {
    __m512i p[4];
    pack64_panels(rows, 0, 64, p);
    _mm512_storeu_si512(dst, _mm512_permutex2var_epi32(p[0], i0, p[1]));
    if (Panels > 1)
        _mm512_storeu_si512(dst + panel_bytes,
                            _mm512_permutex2var_epi32(p[From1], i1, p[From1 + 1]));
    if (Panels > 2)
        _mm512_storeu_si512(dst + 2 * panel_bytes, _mm512_permutex2var_epi32(p[2], i2, p[3]));
}

/* Only the last group can reach past K, so the others take their rows straight from the
 * offsets (as pack_strip_rows). */
template <int Panels, int From1>
CVML_TARGET_AVX512 void pack_select_loop(const int8_t* base, const int64_t* offsets,
                                         const int8_t* pad, int32_t K, const __m512i idx[3],
                                         uint8_t* packed) {
    const size_t panel_bytes = static_cast<size_t>(round_up(K, GEMM_KG) / 4) * 64;
    const __m512i i0 = idx[0], i1 = idx[1], i2 = idx[2];
    const int32_t whole = K / GEMM_KG;
    for (int32_t k4 = 0; k4 < whole; ++k4) {
        const int64_t* off = offsets + k4 * GEMM_KG;
        const int8_t* rows[GEMM_KG] = {base + off[0], base + off[1], base + off[2], base + off[3]};
        pack_select_group<Panels, From1>(rows, i0, i1, i2, packed + static_cast<size_t>(k4) * 64,
                                         panel_bytes);
    }
    if (whole * GEMM_KG == K) return;
    const int8_t* rows[GEMM_KG];
    group_rows(base, offsets, pad, K, whole, rows);
    pack_select_group<Panels, From1>(rows, i0, i1, i2, packed + static_cast<size_t>(whole) * 64,
                                     panel_bytes);
}

}  // namespace

CVML_TARGET_AVX512 void pack_select_avx512(const int8_t* base, const int64_t* offsets,
                                           const int8_t* pad, int32_t K, const gemm_select* sel,
                                           uint8_t* packed) {
    __m512i idx[3];
    for (int32_t i = 0; i < 3; ++i)
        idx[i] =
            _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sel->idx[i])));
    if (sel->panels == 3 && sel->from[1] == 2)
        pack_select_loop<3, 2>(base, offsets, pad, K, idx, packed);
    else if (sel->panels == 3)
        pack_select_loop<3, 1>(base, offsets, pad, K, idx, packed);
    else if (sel->panels == 2 && sel->from[1] == 2)
        pack_select_loop<2, 2>(base, offsets, pad, K, idx, packed);
    else if (sel->panels == 2)
        pack_select_loop<2, 1>(base, offsets, pad, K, idx, packed);
    else
        pack_select_loop<1, 1>(base, offsets, pad, K, idx, packed);
}

namespace {

/* The 16 lanes' sum, wrapping: _mm512_reduce_add_epi32 adds them as signed ints, whose
 * overflow (sums that wrap, as upstream's do) is undefined behaviour. */
CVML_TARGET_AVX512 inline uint32_t sum_lanes(__m512i v) {
    const __m256i h = _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
    __m128i q = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
    q = _mm_add_epi32(q, _mm_shuffle_epi32(q, 0x4E));
    q = _mm_add_epi32(q, _mm_shuffle_epi32(q, 0xB1));
    return static_cast<uint32_t>(_mm_cvtsi128_si32(q));
}

/* 4 rows x C columns of a narrow tail: dot products along K, 64 bytes per step. Row r
 * of A is a + r * lda (read exactly: the last step is masked); column j of B is
 * b + j * stride, zero past K. */
template <int C>
CVML_TARGET_AVX512 void narrow4_avx512(const int8_t* a, size_t lda, int32_t K, const uint8_t* b,
                                       size_t stride, const int32_t* start, int32_t* tile,
                                       const int8_t* ahead) {
    __m512i acc[4][C];
#pragma GCC unroll 4
    for (int r = 0; r < 4; ++r)
#pragma GCC unroll 4
        for (int j = 0; j < C; ++j) acc[r][j] = _mm512_setzero_si512();
    for (int32_t k = 0; k < K; k += 64) {
        const __mmask64 m = simd_bits64(0, K - k);
        __m512i bv[C];
#pragma GCC unroll 4
        for (int j = 0; j < C; ++j)
            bv[j] = _mm512_loadu_si512(b + static_cast<size_t>(j) * stride + k);
#pragma GCC unroll 4
        for (int r = 0; r < 4; ++r) {
            if (ahead)
                _mm_prefetch(
                    reinterpret_cast<const char*>(ahead + static_cast<size_t>(r) * lda + k),
                    _MM_HINT_T1);
            const __m512i av = _mm512_maskz_loadu_epi8(m, a + static_cast<size_t>(r) * lda + k);
#pragma GCC unroll 4
            for (int j = 0; j < C; ++j) dpbusd(acc[r][j], bv[j], av);
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < 4; ++r)
#pragma GCC unroll 4
        for (int j = 0; j < C; ++j)
            tile[r * GEMM_NT + j] =
                static_cast<int32_t>(sum_lanes(acc[r][j]) + static_cast<uint32_t>(start[r]));
}

}  // namespace

CVML_TARGET_AVX512 void narrow_block_avx512(const gemm_weights* a, const uint8_t* b, size_t stride,
                                            int32_t c, int32_t m0, int32_t* tile, bool stream) {
    const size_t lda = static_cast<size_t>(a->lda);
    for (int32_t r = 0; r < GEMM_MR; r += 4) {
        const int8_t* ar = a->plain + static_cast<size_t>(m0 + r) * lda;
        const int8_t* ahead = narrow_rows_ahead(a, m0 + r, stream);
        const int32_t* start = a->start + m0 + r;
        int32_t* t = tile + r * GEMM_NT;
        if (c == 1)
            narrow4_avx512<1>(ar, lda, a->K, b, stride, start, t, ahead);
        else if (c == 2)
            narrow4_avx512<2>(ar, lda, a->K, b, stride, start, t, ahead);
        else if (c == 3)
            narrow4_avx512<3>(ar, lda, a->K, b, stride, start, t, ahead);
        else
            narrow4_avx512<4>(ar, lda, a->K, b, stride, start, t, ahead);
    }
}

}  // namespace gemm_impl

#endif
