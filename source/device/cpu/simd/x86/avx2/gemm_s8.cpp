/* The int8 GEMM at avx2 (vpmaddubsw): the 4 x 16 micro-kernels on int8-packed B, their
 * exact fallback, and B's packing. */
#include <string.h>

#include "device/cpu/simd/gemm_s8_impl.h"
#include "device/cpu/simd/x86/avx2/epilogue_avx2.h"
#include "device/cpu/simd/x86/avx2/madd_acc.h"

#if CVML_SIMD_X86
#include <immintrin.h>

namespace gemm_impl {
namespace {

/* ---- avx2 (vpmaddubsw) ------------------------------------------------------------------
 * B is packed as int8 in panels of 8 columns, each k4 step one ymm holding every
 * column's 4 values in turn (the avx512 layout at half the width), so the sums of a
 * column stay in its own int32 lane: no reduction across lanes. The weights are int8
 * rows read in place; a row's 4 bytes are broadcast to every column.
 *
 * vpmaddubsw multiplies unsigned by signed bytes and saturates its pair sums to int16.
 * Two forms keep it exact:
 *  - B without negative values (the packer's head says so: nearly every convolution
 *    reads a relu's or a clip's output) is the unsigned operand as it is, the weights
 *    the signed one: a pair sum is within 2 * 127 * 128 = 32,512 < 32,768, whatever
 *    the weights (-128 included). Three instructions a product pair of vectors.
 *  - Any other B: |x| and w with its bits flipped where x is negative (madd_acc.h's
 *    madd_acc_flipped), exact for every weight. A negative x then adds |x| * ~w =
 *    x * w + x, so each column's sums start from the sum of the magnitudes of its
 *    negative values, which the packers leave after the panel's K steps
 *    (gemm_s8_impl.h's avx2 layout), and end at the sums of x * w. The packers leave
 *    |x| and x's sign masks too (write_signed_form), both loaded: the form is bound by
 *    its vector instructions, of which making them took 4 a step of 8 products
 *    (ResNet-18's stem at avx2 is 2-4.5% faster for loading them).
 * vpmaddwd against ones then widens the pairs to int32 exactly. */

#define AVX2_ROWS 4

/* Four weight bytes as one int32 (unaligned). */
inline int32_t load_a(const int8_t* p) {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* One step of a row: its 4 weight bytes at a times B's panels (|x| in u0, u1, which is
 * x itself in the unsigned form; x's sign masks in m0, m1 in the signed one), into the
 * row's accumulators. */
template <int NC, bool UNSIGNED_B>
CVML_TARGET_AVX2 inline __attribute__((always_inline)) void ukr_row(__m256i& c0, __m256i& c1,
                                                                    __m256i u0, __m256i m0,
                                                                    __m256i u1, __m256i m1,
                                                                    __m256i ones, const int8_t* a) {
    const __m256i w = _mm256_set1_epi32(load_a(a));
    if (UNSIGNED_B) {
        cpu_avx2::madd_acc(c0, u0, w, ones);
        if (NC > 1) cpu_avx2::madd_acc(c1, u1, w, ones);
    } else {
        // In a fixed order (madd_acc.h): the flipped weights would spill.
        cpu_avx2::madd_acc_flipped(c0, u0, m0, w, ones);
        if (NC > 1) cpu_avx2::madd_acc_flipped(c1, u1, m1, w, ones);
    }
}

CVML_TARGET_AVX2 inline __m256i load32(const void* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

/* Where a panel's sums start: 0, or in the signed form its columns' sums of the
 * magnitudes of their negative values, after its k4n steps. */
template <bool UNSIGNED_B>
CVML_TARGET_AVX2 inline __m256i panel_start(const int8_t* panel, int32_t k4n) {
    if (UNSIGNED_B) return _mm256_setzero_si256();
    return _mm256_loadu_si256(
        reinterpret_cast<const __m256i*>(panel + static_cast<size_t>(k4n) * 32));
}

/* Where a micro-kernel's sums go. tile_sink: the tile buffer, at the kernel's first row
 * and column. */
struct tile_sink {
    int32_t* tile;
    /* Where row r's sums start (before panel_start's): the tile takes sums alone. */
    CVML_TARGET_AVX2 __m256i start(int) const { return _mm256_setzero_si256(); }
    CVML_TARGET_AVX2 void put(int r, int p, __m256i v) const {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(tile + r * GEMM_NT + p * AVX2_PANEL), v);
    }
    /* Both panels of row r. */
    CVML_TARGET_AVX2 void put_row(int r, __m256i v0, __m256i v1) const {
        put(r, 0, v0);
        put(r, 1, v1);
    }
};

/* tail_sink: the fused tail (gemm_tail), its chain of shape S. Row r's sums plus its
 * bias through the matched chain, stored as int8 from output element at + r * stride on,
 * the first `cols` (of the kernel's 8 or 16) columns. */
template <cpu_ep::rc_shape S>
struct tail_sink {
    const cpu_ep::rc_chain* rc;
    const cpu_ep::rc_consts8* k;
    int8_t* out;
    int64_t at, stride;
    const int32_t* bias; /* the kernel's first row's, or NULL */
    int32_t addend;      /* added to each row's bias (gemm_tail::addend) */
    int32_t cols;
    bool packs; /* the chain's outputs lie within int8 (rc_saturates_to_i8) */
    /* Where row r's sums start: its bias (plus the addend), so that the kernel's sums
     * end with it added (the same int32 values: addition mod 2^32 in any order) and the
     * tail adds none, two vector adds and a broadcast a row fewer. */
    CVML_TARGET_AVX2 __m256i start(int r) const {
        if (!bias && !addend) return _mm256_setzero_si256();
        return _mm256_set1_epi32(cpu_ep::rc_bias_plus(bias, r, addend));
    }
    /* Sums v (their row's bias in them) of outputs i .. i + c - 1 through the chain. */
    CVML_TARGET_AVX2 __m256i chain(__m256i v, int64_t i, int32_t c) const {
        return cpu_ep::rc_apply8_as<S>(*rc, *k, v, i, c);
    }
    CVML_TARGET_AVX2 void put(int r, int p, __m256i v) const {
        const int32_t c = cols - p * AVX2_PANEL < AVX2_PANEL ? cols - p * AVX2_PANEL : AVX2_PANEL;
        if (c <= 0) return;
        const int64_t i = at + r * stride + p * AVX2_PANEL;
        v = chain(v, i, c);
        if (c == AVX2_PANEL)
            cpu_ep::store8_256(out, STORAGE_INT8, i, v);
        else
            cpu_ep::store_part8(out, STORAGE_INT8, i, c, v);
    }
    /* Both panels of row r: where all 16 columns are stored and the values lie within
     * int8, narrowed together by packs (one store instead of two byte gathers). */
    CVML_TARGET_AVX2 void put_row(int r, __m256i v0, __m256i v1) const {
        if (!packs || cols < 2 * AVX2_PANEL) {
            put(r, 0, v0);
            put(r, 1, v1);
            return;
        }
        const int64_t i = at + r * stride;
        cpu_ep::store16_i8(out, i, chain(v0, i, AVX2_PANEL), chain(v1, i + AVX2_PANEL, AVX2_PANEL));
    }
};

/* One k4 step of the 4 x 16 kernel on unsigned B, as asm text: B's two panels at
 * B_AT(%[b]) and B_AT(%[b],%[pb]), the 4 rows' weights at A_AT(%[a]) lda apart; a row's
 * 4 bytes broadcast to %[w] and multiplied by both panels into its accumulators C0, C1. */
// clang-format off
#define CVML_AVX2_ROW(W_AT, C0, C1)                                \
    "vpbroadcastd " W_AT ", %[w]\n\t"                              \
    "vpmaddubsw %[w], %[u0], %[t]\n\t"                             \
    "vpmaddwd %[ones], %[t], %[t]\n\t"                             \
    "vpaddd %[t], %[" C0 "], %[" C0 "]\n\t"                        \
    "vpmaddubsw %[w], %[u1], %[t]\n\t"                             \
    "vpmaddwd %[ones], %[t], %[t]\n\t"                             \
    "vpaddd %[t], %[" C1 "], %[" C1 "]\n\t"
#define CVML_AVX2_U16_STEP(B_AT, A_AT)                             \
    "vmovdqu " B_AT "(%[b]), %[u0]\n\t"                            \
    "vmovdqu " B_AT "(%[b],%[pb]), %[u1]\n\t"                      \
    CVML_AVX2_ROW(A_AT "(%[a])", "c00", "c01")                     \
    CVML_AVX2_ROW(A_AT "(%[a],%[lda])", "c10", "c11")              \
    CVML_AVX2_ROW(A_AT "(%[a],%[lda],2)", "c20", "c21")            \
    CVML_AVX2_ROW(A_AT "(%[a],%[lda3])", "c30", "c31")
// clang-format on

/* The k4 loop of the 4 x 16 kernel on unsigned B (nearly every layer's), as one asm
 * block: c[r][p] += row r of a times panel p of b over k4n steps. Written as madd_acc
 * steps, GCC kept two of the eight accumulators outside the registers their asm
 * operands want and copied each in and out every step: 38 instructions a step where 33
 * do (counted under qemu; the loop is a quarter of MobileNet-v1's instructions at avx2).
 * Unrolled twice, an odd first step alone. */
CVML_TARGET_AVX2 inline __attribute__((always_inline)) void k_loop_unsigned_4x16(
    const int8_t* a, size_t lda, const int8_t* b, size_t panel_bytes, int32_t k4n, __m256i ones,
    __m256i& c00, __m256i& c01, __m256i& c10, __m256i& c11, __m256i& c20, __m256i& c21,
    __m256i& c30, __m256i& c31) {
    const int8_t* const b_end = b + static_cast<size_t>(k4n) * 32;
    const size_t lda3 = 3 * lda;
    const int64_t odd = k4n & 1;
    __m256i u0, u1, w, t;
    // clang-format off
    __asm__(
        "test %[odd], %[odd]\n\t"
        "jz 2f\n\t"
        CVML_AVX2_U16_STEP("0", "0")
        "add $32, %[b]\n\t"
        "add $4, %[a]\n\t"
        "2:\n\t"
        "cmp %[b], %[b_end]\n\t"
        "je 3f\n\t"
        "1:\n\t"
        CVML_AVX2_U16_STEP("0", "0")
        CVML_AVX2_U16_STEP("32", "4")
        "add $64, %[b]\n\t"
        "add $8, %[a]\n\t"
        "cmp %[b], %[b_end]\n\t"
        "jne 1b\n\t"
        "3:"
        : [c00] "+x"(c00), [c01] "+x"(c01), [c10] "+x"(c10), [c11] "+x"(c11),
          [c20] "+x"(c20), [c21] "+x"(c21), [c30] "+x"(c30), [c31] "+x"(c31), [u0] "=&x"(u0),
          [u1] "=&x"(u1), [w] "=&x"(w), [t] "=&x"(t), [b] "+r"(b), [a] "+r"(a)
        : [b_end] "r"(b_end), [pb] "r"(panel_bytes), [lda] "r"(lda), [lda3] "r"(lda3),
          [ones] "x"(ones), [odd] "r"(odd)
        : "cc", "memory");
    // clang-format on
}
#undef CVML_AVX2_U16_STEP
#undef CVML_AVX2_ROW

/* Where row r's sums of a panel start: the sink's start for the row (its bias, where it
 * adds one) plus the panel's (panel_start). */
template <bool UNSIGNED_B, typename Sink>
CVML_TARGET_AVX2 inline __attribute__((always_inline)) __m256i row_start(const Sink& sink, int r,
                                                                         __m256i panel) {
    return UNSIGNED_B ? sink.start(r) : _mm256_add_epi32(panel, sink.start(r));
}

/* Rows a, a + lda, .. (AVX2_ROWS of them) times NC panels of B (panel_bytes apart),
 * over k4n steps of K, into the sink; UNSIGNED_B: B holds no negative value. Named
 * accumulators (GCC spills an array of vectors to the stack). Inlined into tile_halves,
 * one call a tile: a call a kernel, each with its sink built in the stack, had cost
 * the short-K layers (MobileNet-v1 at avx2: its stem and 32-deep pointwise layer 3-12%,
 * the 64-deep one 1-5%). */
template <int NC, bool UNSIGNED_B, typename Sink>
CVML_TARGET_AVX2 inline __attribute__((always_inline)) void ukr_avx2(const int8_t* a, size_t lda,
                                                                     const int8_t* b,
                                                                     size_t panel_bytes,
                                                                     size_t masks_at, int32_t k4n,
                                                                     const Sink& sink) {
    const __m256i ones = _mm256_set1_epi16(1);
    const __m256i p0 = panel_start<UNSIGNED_B>(b, k4n);
    const __m256i p1 = NC > 1 ? panel_start<UNSIGNED_B>(b + panel_bytes, k4n) : p0;
    __m256i c00 = row_start<UNSIGNED_B>(sink, 0, p0), c10 = row_start<UNSIGNED_B>(sink, 1, p0);
    __m256i c20 = row_start<UNSIGNED_B>(sink, 2, p0), c30 = row_start<UNSIGNED_B>(sink, 3, p0);
    __m256i c01 = row_start<UNSIGNED_B>(sink, 0, p1), c11 = row_start<UNSIGNED_B>(sink, 1, p1);
    __m256i c21 = row_start<UNSIGNED_B>(sink, 2, p1), c31 = row_start<UNSIGNED_B>(sink, 3, p1);
    if (NC == 2 && UNSIGNED_B)
        k_loop_unsigned_4x16(a, lda, b, panel_bytes, k4n, ones, c00, c01, c10, c11, c20, c21, c30,
                             c31);
    else
        for (int32_t k4 = 0; k4 < k4n; ++k4) {
            const int8_t* bk = b + static_cast<size_t>(k4) * 32;
            const __m256i u0 = load32(bk);
            const __m256i u1 = NC > 1 ? load32(bk + panel_bytes) : u0;
            const __m256i m0 = UNSIGNED_B ? u0 : load32(bk + masks_at);
            const __m256i m1 = UNSIGNED_B || NC == 1 ? u1 : load32(bk + panel_bytes + masks_at);
            const int8_t* ak = a + static_cast<size_t>(k4) * 4;
            ukr_row<NC, UNSIGNED_B>(c00, c01, u0, m0, u1, m1, ones, ak);
            ukr_row<NC, UNSIGNED_B>(c10, c11, u0, m0, u1, m1, ones, ak + lda);
            ukr_row<NC, UNSIGNED_B>(c20, c21, u0, m0, u1, m1, ones, ak + 2 * lda);
            ukr_row<NC, UNSIGNED_B>(c30, c31, u0, m0, u1, m1, ones, ak + 3 * lda);
        }
    const __m256i c[AVX2_ROWS][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}};
#pragma GCC unroll 4
    for (int r = 0; r < AVX2_ROWS; ++r) {
        if (NC == 2)
            sink.put_row(r, c[r][0], c[r][1]);
        else
            sink.put(r, 0, c[r][0]);
    }
}

/* The 4-row halves of a tile in 16-column steps, B with or without negative values (its
 * sign masks masks_at bytes after its steps); sink_at(row, column) gives the sink of the
 * kernel starting there. */
template <bool UNSIGNED_B, typename SinkAt>
CVML_TARGET_AVX2 void tile_halves(const int8_t* ap, size_t lda, const int8_t* bp,
                                  size_t panel_bytes, size_t masks_at, int32_t k4n, int32_t cols,
                                  const SinkAt& sink_at) {
    for (int32_t half = 0; half < GEMM_MR / AVX2_ROWS; ++half)
        for (int32_t c = 0; c < cols; c += 2 * AVX2_PANEL) {
            const int8_t* ar = ap + static_cast<size_t>(half * AVX2_ROWS) * lda;
            const int8_t* bc = bp + static_cast<size_t>(c / AVX2_PANEL) * panel_bytes;
            const auto sink = sink_at(half * AVX2_ROWS, c);
            if (cols - c > AVX2_PANEL)
                ukr_avx2<2, UNSIGNED_B>(ar, lda, bc, panel_bytes, masks_at, k4n, sink);
            else
                ukr_avx2<1, UNSIGNED_B>(ar, lda, bc, panel_bytes, masks_at, k4n, sink);
        }
}

/* Row block m0's weights: rows read in place, or zero-padded rows (all of them when
 * packed, the last partial block in plain mode). */
void weights_at(const gemm_weights* a, int32_t m0, const int8_t** ap, size_t* lda) {
    if (a->plain && m0 + GEMM_MR <= a->M) {
        *ap = a->plain + static_cast<size_t>(m0) * static_cast<size_t>(a->lda);
        *lda = static_cast<size_t>(a->lda);
        return;
    }
    const size_t blk = a->plain ? 0 : static_cast<size_t>(m0);
    *ap = static_cast<const int8_t*>(a->data) + blk * static_cast<size_t>(a->Kp);
    *lda = static_cast<size_t>(a->Kp);
}

/* B's panels from column n0 on, and its panels' size. */
const int8_t* b_panels(const gemm_weights* a, const int8_t* b, int32_t n0, size_t* panel_bytes) {
    *panel_bytes = avx2_panel_bytes(a->Kp);
    return b + AVX2_B_HEAD + static_cast<size_t>(n0 / AVX2_PANEL) * *panel_bytes;
}

/* Where the signed form's sign masks are, from its steps (0: B is unsigned). */
size_t b_masks_at(const int8_t* b) {
    int64_t at;
    memcpy(&at, b + AVX2_B_MASKS_AT, sizeof at);
    return static_cast<size_t>(at);
}

}  // namespace

void tile_avx2(const gemm_weights* a, const int8_t* b, int32_t m0, int32_t n0, int32_t cols,
               int32_t* tile) {
    const int32_t k4n = a->Kp / 4;
    size_t panel_bytes;
    const int8_t* bp = b_panels(a, b, n0, &panel_bytes);
    const int8_t* ap;
    size_t lda;
    weights_at(a, m0, &ap, &lda);
    const auto sink_at = [tile](int32_t r, int32_t c) { return tile_sink{tile + r * GEMM_NT + c}; };
    if (b[0] == 1)
        tile_halves<true>(ap, lda, bp, panel_bytes, 0, k4n, cols, sink_at);
    else
        tile_halves<false>(ap, lda, bp, panel_bytes, b_masks_at(b), k4n, cols, sink_at);
}

namespace {

/* run_tiles_tail_avx2 for a chain rc of shape S. */
template <cpu_ep::rc_shape S>
void run_tiles_tail_as(const gemm_weights* a, const int8_t* b, int32_t N, int64_t t0, int64_t t1,
                       const gemm_tail* tail, const cpu_ep::rc_chain& rc, gemm_tile_fn fn,
                       void* arg) {
    alignas(64) int32_t tile[GEMM_MR * GEMM_NT];
    const cpu_ep::rc_consts8 k = cpu_ep::rc_consts8_of(rc);
    const bool packs = cpu_ep::rc_saturates_to_i8(rc, STORAGE_INT8);
    const bool unsigned_b = b[0] == 1;
    const size_t masks_at = b_masks_at(b);
    const int32_t k4n = a->Kp / 4;
    tile_walk w(a->M, N, t0);
    for (int64_t t = t0; t < t1; ++t, w.next()) {
        const int32_t m0 = w.m0, n0 = w.n0, rows = w.rows, cols = w.cols;
        if (rows < GEMM_MR || tail->keep->count != cols) {
            tile_avx2(a, b, m0, n0, cols, tile);
            fn(arg, m0, rows, n0, cols, tile);
            continue;
        }
        size_t panel_bytes;
        const int8_t* bp = b_panels(a, b, n0, &panel_bytes);
        const int8_t* ap;
        size_t lda;
        weights_at(a, m0, &ap, &lda);
        const int64_t at = tail->out_first + static_cast<int64_t>(m0) * tail->out_stride;
        const auto sink_at = [&](int32_t r, int32_t c) {
            return tail_sink<S>{&rc,
                                &k,
                                tail->out,
                                at + r * tail->out_stride + c,
                                tail->out_stride,
                                tail->bias ? tail->bias + m0 + r : nullptr,
                                tail->addend,
                                cols - c,
                                packs};
        };
        if (unsigned_b)
            tile_halves<true>(ap, lda, bp, panel_bytes, 0, k4n, cols, sink_at);
        else
            tile_halves<false>(ap, lda, bp, panel_bytes, masks_at, k4n, cols, sink_at);
    }
}

}  // namespace

/* gemm_run_tiles_tail at avx2: a whole row block whose every column is kept goes through
 * the chain in the micro-kernel, in its copy for the chain's shape, chosen here: with
 * the chain's flags tested at every vector, the tail had taken a tenth of the
 * micro-kernels' time on MobileNet-v1 (gemm_tail_plan takes no prefix, so `any` is a
 * folded chain's). The others (a partial last block, flat strips' tiles that drop
 * columns) go through the tile buffer and fn. */
void run_tiles_tail_avx2(const gemm_weights* a, const int8_t* b, int32_t N, int64_t t0, int64_t t1,
                         const gemm_tail* tail, gemm_tile_fn fn, void* arg) {
    cpu_ep::rc_chain rc;
    memcpy(&rc, tail->chain, sizeof rc);
    switch (cpu_ep::rc_shape_of(rc)) {
        case cpu_ep::rc_shape::shift_clip:
            run_tiles_tail_as<cpu_ep::rc_shape::shift_clip>(a, b, N, t0, t1, tail, rc, fn, arg);
            break;
        case cpu_ep::rc_shape::shift_clip_add:
            run_tiles_tail_as<cpu_ep::rc_shape::shift_clip_add>(a, b, N, t0, t1, tail, rc, fn, arg);
            break;
        default:
            run_tiles_tail_as<cpu_ep::rc_shape::any>(a, b, N, t0, t1, tail, rc, fn, arg);
            break;
    }
}

namespace {

/* Columns n .. n + 15 of 4 rows into two panels (at p0 and p0 + panel_bytes); their
 * values ORed into seen (the sign bits tell whether B has a negative value). */
CVML_TARGET_AVX2 inline __attribute__((always_inline)) void pack16(const int8_t* const rows[4],
                                                                   int32_t n, int8_t* p0,
                                                                   size_t panel_bytes,
                                                                   __m128i& seen) {
    __m128i r[4];
    for (int i = 0; i < 4; ++i) {
        r[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[i] + n));
        seen = _mm_or_si128(seen, r[i]);
    }
    // Byte pairs of rows 0, 1 and of rows 2, 3, then their 16-bit pairs: each column's 4.
    const __m128i lo01 = _mm_unpacklo_epi8(r[0], r[1]), lo23 = _mm_unpacklo_epi8(r[2], r[3]);
    const __m128i hi01 = _mm_unpackhi_epi8(r[0], r[1]), hi23 = _mm_unpackhi_epi8(r[2], r[3]);
    _mm256_storeu_si256(
        reinterpret_cast<__m256i*>(p0),
        _mm256_set_m128i(_mm_unpackhi_epi16(lo01, lo23), _mm_unpacklo_epi16(lo01, lo23)));
    _mm256_storeu_si256(
        reinterpret_cast<__m256i*>(p0 + panel_bytes),
        _mm256_set_m128i(_mm_unpackhi_epi16(hi01, hi23), _mm_unpacklo_epi16(hi01, hi23)));
}

/* Group k4 of B (rows[i] NULL past K: zeros) into its panels: column c's 4 values at
 * (c % 8) * 4 of the step, columns N .. (rounded up to a panel) zeros. Returns whether
 * a packed value is negative. */
CVML_TARGET_AVX2 inline __attribute__((always_inline)) bool pack_group(
    const int8_t* const rows[GEMM_KG], int32_t N, size_t panel_bytes, int32_t k4, int8_t* packed) {
    int8_t* step = packed + static_cast<size_t>(k4) * 32;
    int32_t n = 0;
    __m128i seen = _mm_setzero_si128();
    if (rows[0] && rows[1] && rows[2] && rows[3])
        for (; n + 16 <= N; n += 16)
            pack16(rows, n, step + static_cast<size_t>(n / AVX2_PANEL) * panel_bytes, panel_bytes,
                   seen);
    bool negative = _mm_movemask_epi8(seen) != 0;
    const int32_t Np = round_up(N, AVX2_PANEL);
    for (; n < Np; ++n)
        for (int i = 0; i < GEMM_KG; ++i) {
            const int8_t v = rows[i] && n < N ? rows[i][n] : 0;
            negative |= v < 0;
            step[static_cast<size_t>(n / AVX2_PANEL) * panel_bytes +
                 static_cast<size_t>(n % AVX2_PANEL) * 4 + static_cast<size_t>(i)] = v;
        }
    return negative;
}

/* The head of a packed B (AVX2_B_HEAD bytes): whether it holds no negative value, and
 * where the signed form's masks are (masks_at bytes after the steps; 0 when unsigned). */
void write_head(int8_t* packed, bool unsigned_b, size_t masks_at) {
    memset(packed, 0, AVX2_B_HEAD);
    packed[0] = unsigned_b ? 1 : 0;
    const int64_t at = static_cast<int64_t>(masks_at);
    memcpy(packed + AVX2_B_MASKS_AT, &at, sizeof at);
}

/* B of `count` panels (k4n steps each) into the signed form: each step's x as |x| (-128's
 * is 128 as an unsigned byte) and its sign masks count * panel_bytes further on, each
 * panel's starts (its columns' sums of the magnitudes of their negative values) after its
 * steps. Returns where the masks are, from the steps. */
CVML_TARGET_AVX2 size_t write_signed_form(int8_t* panels, int32_t count, int32_t k4n,
                                          size_t panel_bytes) {
    const size_t masks_at = static_cast<size_t>(count) * panel_bytes;
    const __m256i zero = _mm256_setzero_si256(), ones8 = _mm256_set1_epi8(1);
    const __m256i ones16 = _mm256_set1_epi16(1);
    for (int32_t p = 0; p < count; ++p) {
        int8_t* panel = panels + static_cast<size_t>(p) * panel_bytes;
        __m256i sum = zero;
        for (int32_t k4 = 0; k4 < k4n; ++k4) {
            int8_t* step = panel + k4 * 32;
            const __m256i x = load32(step);
            // The magnitudes of the negative values, in pairs, then by column.
            const __m256i mag = _mm256_abs_epi8(_mm256_min_epi8(x, zero));
            sum =
                _mm256_add_epi32(sum, _mm256_madd_epi16(_mm256_maddubs_epi16(mag, ones8), ones16));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(step), _mm256_abs_epi8(x));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(step + masks_at),
                                _mm256_cmpgt_epi8(zero, x));
        }
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(panel + static_cast<size_t>(k4n) * 32), sum);
    }
    return masks_at;
}

/* Whether any of B's values is negative (x in every step still). */
CVML_TARGET_AVX2 bool any_negative(const int8_t* panels, int32_t count, int32_t k4n,
                                   size_t panel_bytes) {
    __m256i seen = _mm256_setzero_si256();
    for (int32_t p = 0; p < count; ++p)
        for (int32_t k4 = 0; k4 < k4n; ++k4)
            seen = _mm256_or_si256(seen, load32(panels + static_cast<size_t>(p) * panel_bytes +
                                                static_cast<size_t>(k4) * 32));
    return _mm256_movemask_epi8(seen) != 0;
}

/* The head and, where B has a negative value, the signed form. */
CVML_TARGET_AVX2 void finish_b(int8_t* packed, bool negative, int32_t count, int32_t k4n,
                               size_t panel_bytes) {
    const size_t masks_at =
        negative ? write_signed_form(packed + AVX2_B_HEAD, count, k4n, panel_bytes) : 0;
    write_head(packed, !negative, masks_at);
}

}  // namespace

/* One group at a time (in order: gemm_pack_b_group): the last one completes B, its
 * panels' sums and the head read from the packed values. */
CVML_TARGET_AVX2 void pack_group_avx2(const int8_t* const rows[GEMM_KG], int32_t N, int32_t Kp,
                                      int32_t k4, int8_t* packed) {
    const size_t panel_bytes = avx2_panel_bytes(Kp);
    pack_group(rows, N, panel_bytes, k4, packed + AVX2_B_HEAD);
    if (k4 + 1 < Kp / 4) return;
    const int32_t panels = round_up(N, AVX2_PANEL) / AVX2_PANEL;
    finish_b(packed, any_negative(packed + AVX2_B_HEAD, panels, Kp / 4, panel_bytes), panels,
             Kp / 4, panel_bytes);
}

/* All row groups of B (gemm_pack_b_rows at avx2), the group's packing inlined: a call
 * and a level dispatch per group cost as much as its unpacks. */
CVML_TARGET_AVX2 void pack_rows_avx2(const int8_t* base, const int64_t* offsets, int32_t N,
                                     int32_t K, int8_t* packed) {
    const int32_t Kp = round_up(K, GEMM_KG);
    const size_t panel_bytes = avx2_panel_bytes(Kp);
    bool negative = false;
    for (int32_t k4 = 0; k4 * GEMM_KG < K; ++k4) {
        // Rows past K pack to zeros: the weights read in place have other bytes there.
        const int8_t* rows[GEMM_KG];
        group_rows(base, offsets, nullptr, K, k4, rows);
        negative |= pack_group(rows, N, panel_bytes, k4, packed + AVX2_B_HEAD);
    }
    finish_b(packed, negative, round_up(N, AVX2_PANEL) / AVX2_PANEL, Kp / 4, panel_bytes);
}

/* A channel-interleaved image's row (gemm_interleave4 at avx2, for broadcast mode):
 * dst[4 * j + i] = rows[i][j - lo] where 0 <= j - lo < w and rows[i] is given, else 0,
 * for j < wq; the bytes are x itself (this level's gemm_taps_zero is 0). Sixteen pixels
 * a step where all four rows are given, interleaved as pack16 interleaves B (its two
 * "panels" 32 bytes apart are then one run). */
CVML_TARGET_AVX2 void interleave4_avx2(const int8_t* const rows[4], int64_t lo, int64_t w,
                                       int64_t wq, uint8_t* dst) {
    int64_t j = 0;
    if (rows[0] && rows[1] && rows[2] && rows[3]) {
        for (; j < lo && j < wq; ++j)
            for (int i = 0; i < 4; ++i) dst[4 * j + i] = 0;
        const int64_t end = lo + w < wq ? lo + w : wq;
        __m128i seen = _mm_setzero_si128();
        for (; j + 16 <= end; j += 16)
            pack16(rows, static_cast<int32_t>(j - lo), reinterpret_cast<int8_t*>(dst + 4 * j), 32,
                   seen);
    }
    for (; j < wq; ++j)
        for (int i = 0; i < 4; ++i) {
            const int64_t x = j - lo;
            dst[4 * j + i] = rows[i] && x >= 0 && x < w ? static_cast<uint8_t>(rows[i][x]) : 0;
        }
}

namespace {

/* 16 bytes of 32 (lo, hi) picked by idx (each < 32): pshufb on both halves, bit 4 of
 * the index choosing between them. */
CVML_TARGET_AVX2 inline __m128i pick16(__m128i lo, __m128i hi, __m128i idx) {
    const __m128i from_hi = _mm_slli_epi16(idx, 3);  // bit 4 to each byte's sign bit
    return _mm_blendv_epi8(_mm_shuffle_epi8(lo, idx), _mm_shuffle_epi8(hi, idx), from_hi);
}

/* One row group of a dense strip: each row's 64 consecutive columns, output panel pair p
 * (16 columns) picked from 16-column groups from[p] and from[p] + 1, then interleaved
 * into B's two 8-column panels of that pair as pack16 does. */
CVML_TARGET_AVX2 inline void select_group(const int8_t* const rows[GEMM_KG], const gemm_select* sel,
                                          const __m128i idx[3], int8_t* step, size_t panel_bytes,
                                          __m128i& seen) {
    for (int32_t p = 0; p < sel->panels; ++p) {
        alignas(16) int8_t picked[GEMM_KG][16];
        for (int i = 0; i < GEMM_KG; ++i) {
            const int8_t* src = rows[i] + 16 * sel->from[p];
            const __m128i v =
                pick16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src)),
                       _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 16)), idx[p]);
            _mm_store_si128(reinterpret_cast<__m128i*>(picked[i]), v);
        }
        const int8_t* const picked_rows[GEMM_KG] = {picked[0], picked[1], picked[2], picked[3]};
        pack16(picked_rows, 0, step + static_cast<size_t>(2 * p) * panel_bytes, panel_bytes, seen);
    }
}

}  // namespace

/* gemm_pack_b_select at avx2. Rows past K pack to zeros (the weights read in place
 * have other bytes there), from a row of zeros rather than pad. */
CVML_TARGET_AVX2 void pack_select_avx2(const int8_t* base, const int64_t* offsets, int32_t K,
                                       const gemm_select* sel, int8_t* packed) {
    static const int8_t zeros[64] = {0};
    const int32_t Kp = round_up(K, GEMM_KG);
    const size_t panel_bytes = avx2_panel_bytes(Kp);
    __m128i idx[3];
    for (int32_t p = 0; p < 3; ++p)
        idx[p] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(sel->idx[p]));
    __m128i seen = _mm_setzero_si128();
    for (int32_t k4 = 0; k4 * GEMM_KG < K; ++k4) {
        const int8_t* rows[GEMM_KG];
        group_rows(base, offsets, zeros, K, k4, rows);
        select_group(rows, sel, idx, packed + AVX2_B_HEAD + static_cast<size_t>(k4) * 32,
                     panel_bytes, seen);
    }
    finish_b(packed, _mm_movemask_epi8(seen) != 0, 2 * sel->panels, Kp / 4, panel_bytes);
}

namespace {

/* A narrow tail's accumulators: 4 weight rows against C (1 or 2) columns, named (GCC
 * kept an array of them in the stack, a store and a load on every one's chain each
 * step, as it had the GEMM's). */
struct narrow_acc {
    __m256i r0c0, r0c1, r1c0, r1c1, r2c0, r2c1, r3c0, r3c1;
};

/* One row's 32 weight bytes at w against the columns' (x in x0, x1; |x| in u0, u1). With
 * UNSIGNED_X (no column holds a negative x: nearly every convolution reads a relu's
 * output) x is vpmaddubsw's unsigned operand as it is, exact for any weight; else |x|
 * is, with the weights given x's sign, exact as in the tiles for weights within +-127. */
template <int C, bool UNSIGNED_X>
CVML_TARGET_AVX2 inline __attribute__((always_inline)) void narrow_row(__m256i& s0, __m256i& s1,
                                                                       const int8_t* w, __m256i x0,
                                                                       __m256i u0, __m256i x1,
                                                                       __m256i u1, __m256i ones) {
    const __m256i wr = load32(w);
    if (UNSIGNED_X) {
        cpu_avx2::madd_acc(s0, u0, wr, ones);
        if (C > 1) cpu_avx2::madd_acc(s1, u1, wr, ones);
    } else {
        cpu_avx2::madd_acc_signed(s0, u0, x0, wr, ones);
        if (C > 1) cpu_avx2::madd_acc_signed(s1, u1, x1, wr, ones);
    }
}

/* A narrow tail's 32-byte step: 4 weight rows (w0 and lda apart) against C columns
 * (col0, col1), whose bytes are x + 128 (gemm_run_narrow): x flipped back, widened
 * against ones. */
template <int C, bool UNSIGNED_X>
CVML_TARGET_AVX2 inline __attribute__((always_inline)) void narrow_step(
    const int8_t* w0, size_t lda, const uint8_t* col0, const uint8_t* col1, narrow_acc& s) {
    const __m256i flip = _mm256_set1_epi8(-128), ones = _mm256_set1_epi16(1);
    const __m256i x0 = _mm256_xor_si256(load32(col0), flip);
    const __m256i x1 = C > 1 ? _mm256_xor_si256(load32(col1), flip) : x0;
    const __m256i u0 = UNSIGNED_X ? x0 : _mm256_abs_epi8(x0);
    const __m256i u1 = UNSIGNED_X || C == 1 ? x1 : _mm256_abs_epi8(x1);
    narrow_row<C, UNSIGNED_X>(s.r0c0, s.r0c1, w0, x0, u0, x1, u1, ones);
    narrow_row<C, UNSIGNED_X>(s.r1c0, s.r1c1, w0 + lda, x0, u0, x1, u1, ones);
    narrow_row<C, UNSIGNED_X>(s.r2c0, s.r2c1, w0 + 2 * lda, x0, u0, x1, u1, ones);
    narrow_row<C, UNSIGNED_X>(s.r3c0, s.r3c1, w0 + 3 * lda, x0, u0, x1, u1, ones);
}

/* Whether the c columns' K values (bytes x + 128) hold no negative x. */
CVML_TARGET_AVX2 bool narrow_cols_unsigned(const uint8_t* b, size_t stride, int32_t c, int32_t K) {
    __m256i all = _mm256_set1_epi8(-1);
    uint8_t rest = 0xFF;
    for (int32_t j = 0; j < c; ++j) {
        const uint8_t* col = b + static_cast<size_t>(j) * stride;
        int32_t k = 0;
        for (; k + 32 <= K; k += 32)
            all = _mm256_and_si256(all,
                                   _mm256_loadu_si256(reinterpret_cast<const __m256i*>(col + k)));
        for (; k < K; ++k) rest &= col[k];
    }
    return _mm256_movemask_epi8(all) == -1 && (rest & 0x80u) != 0;
}

CVML_TARGET_AVX2 inline int32_t sum_lanes(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    return _mm_cvtsi128_si32(s);
}

/* 4 rows (a, a + lda, ..) times C narrow columns (b, b + stride) along K into the tile.
 * The rows' last partial step comes from a zeroed copy: the weights are the caller's
 * rows, read no further than K, and the columns' bytes past K meet zeros. */
template <int C, bool UNSIGNED_X>
CVML_TARGET_AVX2 void narrow_rows_avx2(const int8_t* a, size_t lda, int32_t K, const uint8_t* b,
                                       size_t stride, int32_t* tile, const int8_t* ahead) {
    const __m256i zero = _mm256_setzero_si256();
    narrow_acc s = {zero, zero, zero, zero, zero, zero, zero, zero};
    const uint8_t* b1 = C > 1 ? b + stride : b;
    const int32_t whole = K / 32 * 32;
    for (int32_t k = 0; k < whole; k += 32) {
        if (ahead && k % 64 == 0)
            for (int r = 0; r < 4; ++r)
                _mm_prefetch(
                    reinterpret_cast<const char*>(ahead + static_cast<size_t>(r) * lda + k),
                    _MM_HINT_T1);
        narrow_step<C, UNSIGNED_X>(a + k, lda, b + k, b1 + k, s);
    }
    if (whole < K) {
        alignas(32) int8_t rest[4][32] = {};
        for (int r = 0; r < 4; ++r)
            memcpy(rest[r], a + static_cast<size_t>(r) * lda + whole,
                   static_cast<size_t>(K - whole));
        narrow_step<C, UNSIGNED_X>(rest[0], 32, b + whole, b1 + whole, s);
    }
    const __m256i sums[4][2] = {
        {s.r0c0, s.r0c1}, {s.r1c0, s.r1c1}, {s.r2c0, s.r2c1}, {s.r3c0, s.r3c1}};
    for (int r = 0; r < 4; ++r)
        for (int j = 0; j < C; ++j) tile[r * GEMM_NT + j] = sum_lanes(sums[r][j]);
}

/* The exact fallback for weights holding -128: one product at a time (sums wrap). */
void narrow_block_scalar(const int8_t* a, size_t lda, int32_t K, const uint8_t* b, size_t stride,
                         int32_t c, int32_t* tile) {
    for (int32_t r = 0; r < GEMM_MR; ++r)
        for (int32_t j = 0; j < c; ++j) {
            const int8_t* ar = a + static_cast<size_t>(r) * lda;
            const uint8_t* bj = b + static_cast<size_t>(j) * stride;
            uint32_t acc = 0;
            for (int32_t k = 0; k < K; ++k)
                acc +=
                    static_cast<uint32_t>(static_cast<int32_t>(ar[k]) *
                                          static_cast<int32_t>(static_cast<int8_t>(bj[k] ^ 0x80u)));
            tile[r * GEMM_NT + j] = static_cast<int32_t>(acc);
        }
}

/* One block's rows, 4 at a time, the columns in pairs (8 sums, each column with its
 * |x|, fill the 16 registers); a pair's second pass over the rows reads them from L1. */
template <bool UNSIGNED_X>
CVML_TARGET_AVX2 void narrow_block_rows(const gemm_weights* a, const int8_t* block,
                                        const uint8_t* b, size_t stride, int32_t c, int32_t m0,
                                        int32_t* tile, bool stream) {
    const size_t lda = static_cast<size_t>(a->lda);
    for (int32_t r = 0; r < GEMM_MR; r += 4) {
        const int8_t* ar = block + static_cast<size_t>(r) * lda;
        const int8_t* ahead = narrow_rows_ahead(a, m0 + r, stream);
        int32_t* t = tile + r * GEMM_NT;
        for (int32_t j = 0; j < c; j += 2) {
            const uint8_t* bj = b + static_cast<size_t>(j) * stride;
            if (c - j >= 2)
                narrow_rows_avx2<2, UNSIGNED_X>(ar, lda, a->K, bj, stride, t + j, ahead);
            else
                narrow_rows_avx2<1, UNSIGNED_X>(ar, lda, a->K, bj, stride, t + j, ahead);
        }
    }
}

}  // namespace

/* gemm_run_narrow's block at avx2: the unsigned form where no column holds a negative
 * value (a check of c * K bytes per block of 8 * c * K products: it saves a third of
 * the multiply pipes' work), else the signed one, or for weights holding -128 the
 * exact scalar loop. */
CVML_TARGET_AVX2 void narrow_block_avx2(const gemm_weights* a, const uint8_t* b, size_t stride,
                                        int32_t c, int32_t m0, int32_t* tile, bool stream) {
    const size_t lda = static_cast<size_t>(a->lda);
    const int8_t* block = a->plain + static_cast<size_t>(m0) * lda;
    if (narrow_cols_unsigned(b, stride, c, a->K))
        narrow_block_rows<true>(a, block, b, stride, c, m0, tile, stream);
    else if (!a->has_min)
        narrow_block_rows<false>(a, block, b, stride, c, m0, tile, stream);
    else
        narrow_block_scalar(block, lda, a->K, b, stride, c, tile);
}

}  // namespace gemm_impl

#endif
