/* conv2d at avx512, groups > 1 (conv2d_grouped.cpp dispatches): the int32
 * multiply-add rows, and the depthwise kernels for an int8-stored input, vpmulld over
 * the phase image or vpdpbusd straight from the input with the fused tail in registers. */
#include <string.h>

#include "device/cpu/cpu_paths.h"
#include "device/cpu/op/conv2d_fast.h"
#include "device/cpu/simd/x86/avx512/phase_row_writer.h"
#include "device/cpu/simd/x86/avx512/epilogue_avx512.h"

#if CVML_SIMD_X86

namespace cpu_conv2d {
namespace {

/* depthwise_image at avx512 with column stride 1 or 2: input rows written whole, zeros
 * included (phase_row_writer); only the padding rows above and below are cleared. */
template <int SW>
CVML_TARGET_AVX512 void depthwise_image_sw(const conv_grouped* f, const int8_t* x, int8_t* img) {
    const conv_geom& g = f->g;
    const int64_t plane = f->dw.hq * f->wq;
    for (int64_t r = 0; r < f->dw.hq * g.sh; ++r) {
        if (r >= g.ph && r < g.ph + g.h) continue;
        for (int64_t pc = 0; pc < SW; ++pc)
            memset(img + f->dw.row_at[r] + pc * plane, 0, static_cast<size_t>(f->wq));
    }
    const phase_row_writer<SW> writer(g.w, g.pw, f->wq);
    const __m512i zero = _mm512_setzero_si512();
    for (int64_t h = 0; h < g.h; ++h)
        writer.write(x + h * g.w, zero, plane, img + f->dw.row_at[h + g.ph]);
}

}  // namespace

void depthwise_image_avx512(const conv_grouped* f, const int8_t* x, int8_t* img) {
    if (f->g.sw == 1)
        depthwise_image_sw<1>(f, x, img);
    else
        depthwise_image_sw<2>(f, x, img);
}

CVML_TARGET_AVX512 void acc_row_avx512(uint32_t* acc, const int32_t* src, uint32_t w, int64_t n) {
    acc_row_body(acc, src, w, n);
}

CVML_TARGET_AVX512 void depthwise_plane_avx512(const conv_grouped* f, const int8_t* img,
                                               const int64_t* taps, const int32_t* w,
                                               int32_t* acc) {
    const conv_geom& g = f->g;
    const int64_t nt = g.kh * g.kw;
    for (int64_t y = 0; y < g.oh; ++y) {
        const int8_t* base = img + y * f->wq;
        for (int64_t x = 0; x < g.ow; x += 16) {
            const int64_t n = g.ow - x < 16 ? g.ow - x : 16;
            const __mmask16 m = static_cast<__mmask16>((1u << n) - 1u);
            __m512i v = _mm512_setzero_si512();
            for (int64_t t = 0; t < nt; ++t) {
                const __m512i xv =
                    _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, base + taps[t] + x));
                v = _mm512_add_epi32(v, _mm512_mullo_epi32(xv, _mm512_set1_epi32(w[t])));
            }
            _mm512_storeu_si512(acc + y * g.ow + x, v);
        }
    }
}

namespace {

/* Depthwise with vpdpbusd straight from the int8 input: no image, no acc plane.
 * vpdpbusd takes 4 consecutive bytes per 32-bit lane; lane x of group g must hold the
 * inputs of taps 4g..4g+3 of output column x, which are bytes sw * x + (4g + j) * dw of
 * one 64-byte load (relative to output column 0 of its chunk). Each 128-bit lane (4
 * output columns) finds its bytes in a 16-byte window that starts at dword sw * L, so a
 * vpermd puts that window in the lane and a vpshufb picks the taps (a zero for j past
 * kw, whose weight byte is 0). The load's mask leaves padding columns 0; XOR 0x80 makes
 * every byte x + 128 for the unsigned operand, and 128 * (the weights of the rows read)
 * is taken back. Rows above and below the input are skipped, so that sum is per output
 * row. Upstream multiplies int32 values; int8 inputs and weights give the same exact
 * products, and every sum wraps mod 2^32 like upstream's. */
struct dw_shuffles {
    __m512i perm, offset;
    __m512i pick[4]; /* per group, at most ceil(kw / 4) <= 4 are used (kw <= 16) */
};

CVML_TARGET_AVX512 void dw_shuffles_of(const conv_geom& g, int64_t groups, dw_shuffles* d) {
    alignas(64) int32_t perm[16];
    for (int l = 0; l < 4; ++l)
        for (int j = 0; j < 4; ++j) perm[4 * l + j] = static_cast<int32_t>(g.sw * l + j);
    d->perm = _mm512_load_si512(perm);
    d->offset = _mm512_set1_epi8(static_cast<char>(0x80));
    for (int64_t grp = 0; grp < groups && grp < 4; ++grp) {
        alignas(64) int8_t pick[64];
        for (int l = 0; l < 4; ++l)
            for (int i = 0; i < 4; ++i)
                for (int j = 0; j < 4; ++j) {
                    const int64_t tap = 4 * grp + j;
                    pick[16 * l + 4 * i + j] =
                        tap < g.kw ? static_cast<int8_t>(g.sw * i + j * g.dw) : int8_t{-128};
                }
        d->pick[grp] = _mm512_load_si512(pick);
    }
}

/* Input bytes for 16 output columns of one tap group, as vpdpbusd's unsigned operand. */
CVML_TARGET_AVX512 inline __m512i dw_operand(const dw_shuffles& d, int grp, const int8_t* p,
                                             bool edge, uint64_t mask) {
    const __m512i raw = edge ? _mm512_maskz_loadu_epi8(mask, p) : _mm512_loadu_si512(p);
    return _mm512_xor_si512(_mm512_shuffle_epi8(_mm512_permutexvar_epi32(d.perm, raw), d.pick[grp]),
                            d.offset);
}

#define DW_DPBUSD(acc, b, w) __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(b), "v"(w))

/* The node's fused tail, applied to the sums in registers and stored in the output's
 * storage: the same steps, in the same order, as epilogue_apply. The bias (and a folded
 * rounding addend, conv_base::round_folded) is already in the sums. */
struct dw_tail {
    const epilogue* ep;
    bool matched;
    bool sat; /* rc_apply's Sat */
    cpu_ep::rc_chain rc;
    cpu_ep::rc_consts k;
    void* out;
    int32_t storage;
};

CVML_TARGET_AVX512 void dw_tail_of(const epilogue* ep, const ir_tensor* y, dw_tail* t) {
    t->ep = ep;
    t->matched = cpu_ep::match_rc_chain(ep, &t->rc);
    t->sat = t->matched && cpu_ep::rc_saturates_to_i8(t->rc, y->storage);
    if (t->matched) t->k = cpu_ep::rc_consts_of(t->rc);
    t->out = y->data;
    t->storage = y->storage;
}

/* Sums v of outputs [at, at + 16) (lanes past m are not stored). */
CVML_TARGET_AVX512 inline __attribute__((always_inline)) void dw_tail_store(const dw_tail& t,
                                                                            __m512i v, int64_t at,
                                                                            __mmask16 m) {
    const __m512i none = _mm512_setzero_si512();  // no bias here
    if (t.sat) {
        v = t.rc.add ? cpu_ep::rc_apply<true, false, -1, true>(t.rc, t.k, v, none, at, m)
                     : cpu_ep::rc_apply<false, false, -1, true>(t.rc, t.k, v, none, at, m);
        cpu_ep::store16_i8_sat(t.out, at, m, v);
        return;
    }
    if (t.matched) {
        v = t.rc.add ? cpu_ep::rc_apply<true, false>(t.rc, t.k, v, none, at, m)
                     : cpu_ep::rc_apply<false, false>(t.rc, t.k, v, none, at, m);
    } else {
        for (int32_t s = 0; s < t.ep->step_count; ++s)
            v = cpu_ep::step_avx512(t.ep->steps[s], v, at, m);
    }
    cpu_ep::store16_512(t.out, t.storage, at, m, v);
}

/* NC (2..4) consecutive 16-column chunks of one output row, from output `at` on, `left`
 * of them inside the row, through the saturating int8 tail (no added operand) and
 * stored with one masked store. On Zen 4 four 16-byte masked stores a row took a third
 * of MobileNet-v1's 112x112 depthwise layer on one thread; one store of the row's
 * bytes gathered in a register does not. A single chunk keeps its 16-byte store (a
 * 64-byte one was slower there, 14x14 planes 1.4x). */
template <int NC>
CVML_TARGET_AVX512 inline __attribute__((always_inline)) void dw_row_store_sat(
    const dw_tail& t, const __m512i (&sums)[4], int64_t at, int64_t left) {
    static_assert(NC >= 2 && NC <= 4, "one store for 2 to 4 chunks");
    const __m512i none = _mm512_setzero_si512();  // no bias here
    __m128i bytes[NC];
    for (int k = 0; k < NC; ++k) {
        bytes[k] = _mm512_cvtsepi32_epi8(
            cpu_ep::rc_apply<false, false, -1, true>(t.rc, t.k, sums[k], none, 0, 0));
    }
    int8_t* out = static_cast<int8_t*>(t.out) + at;
    if (NC == 2) {
        const __m256i row = _mm256_inserti128_si256(_mm256_castsi128_si256(bytes[0]), bytes[1], 1);
        _mm256_mask_storeu_epi8(out, static_cast<__mmask32>(simd_bits64(0, left)), row);
        return;
    }
    __m512i row = _mm512_castsi128_si512(bytes[0]);
    row = _mm512_inserti32x4(row, bytes[1], 1);
    row = _mm512_inserti32x4(row, bytes[2], 2);
    if (NC == 4) row = _mm512_inserti32x4(row, bytes[3], 3);
    _mm512_mask_storeu_epi8(out, simd_bits64(0, left), row);
}

/* One output row's sums, NC (1..4) consecutive 16-column chunks from chunk c on: NC
 * independent sums, so their vpdpbusd chains overlap. `row` is where chunk c's first
 * kernel row starts (r0), `start` the sums' start (minus the +128's correction), `at`
 * the row's first output element. */
template <int G, int NC>
CVML_TARGET_AVX512 void dw_chunks(const conv_grouped* f, const dw_shuffles& d, const dw_tail& t,
                                  const int8_t* row, int64_t r0, int64_t r1, const int32_t* w4,
                                  int64_t c, __m512i start, int64_t at) {
    const conv_geom& g = f->g;
    const int64_t row_step = g.dh * g.w, chunk_step = 16 * g.sw;
    const uint64_t* masks = f->dw.direct.masks + c * G;
    bool edge = false;
    for (int i = 0; i < NC * G; ++i) edge |= masks[i] != ~uint64_t{0};
    __m512i v0 = start, v1 = start, v2 = start, v3 = start;
    for (int64_t r = r0; r < r1; ++r, row += row_step)
        for (int grp = 0; grp < G; ++grp) {
            const __m512i w = _mm512_set1_epi32(w4[r * G + grp]);
            const int8_t* p = row + 4 * grp * g.dw;
            DW_DPBUSD(v0, dw_operand(d, grp, p, edge, masks[grp]), w);
            if (NC > 1) DW_DPBUSD(v1, dw_operand(d, grp, p + chunk_step, edge, masks[G + grp]), w);
            if (NC > 2)
                DW_DPBUSD(v2, dw_operand(d, grp, p + 2 * chunk_step, edge, masks[2 * G + grp]), w);
            if (NC > 3)
                DW_DPBUSD(v3, dw_operand(d, grp, p + 3 * chunk_step, edge, masks[3 * G + grp]), w);
        }
    const __m512i sums[4] = {v0, v1, v2, v3};
    for (int k = 0; k < NC; ++k) {
        const int64_t x = 16 * (c + k);
        dw_tail_store(t, sums[k], at + x, cpu_ep::lanes_from(x, g.ow));
    }
}

/* The operands of NC chunks of input row ih (one group of taps; zeros outside); EDGE:
 * some chunk's bytes cross an edge of the row (masked loads). */
template <int NC, bool EDGE>
CVML_TARGET_AVX512 inline void dw_row_operands(const dw_shuffles& d, const conv_geom& g,
                                               const int8_t* col, int64_t ih, const uint64_t* masks,
                                               __m512i* op) {
    if (ih < 0 || ih >= g.h) {
#pragma GCC unroll 4
        for (int k = 0; k < NC; ++k) op[k] = d.offset;
        return;
    }
#pragma GCC unroll 4
    for (int k = 0; k < NC; ++k)
        op[k] = dw_operand(d, 0, col + ih * g.w + 16 * k * g.sw, EDGE, masks[k]);
}

/* Row stride SH (1 or 2, < KH), row dilation 1, kh == KH, one group of taps: each input
 * row is made into operands once and used by every output row that reads it. A block of
 * NC chunks slides down the plane with the operands of the KH rows under it in
 * registers, SH new ones per output row; rows above and below the input are operands of
 * zeros (0x80, the +128 of 0), so the correction is the whole kernel's. The loops over
 * rows and chunks are unrolled by pragma: left to GCC, blocks of 2-4 chunks kept op[][]
 * on the stack (MobileNet-v1's 112-, 56- and 28-wide layers took 1.4-1.8x as long). */
template <int KH, int SH, int NC, bool EDGE>
CVML_TARGET_AVX512 void dw_slide(const conv_grouped* f, const dw_shuffles& d, const dw_tail& tail,
                                 const int8_t* x, const int32_t* w4, int64_t c, __m512i start,
                                 int64_t plane_at) {
    static_assert(SH < KH, "every output row shares rows with the next");
    const conv_geom& g = f->g;
    const dw_tail t = tail;  // a local copy: the tail's constants stay in registers
    const uint64_t* masks = f->dw.direct.masks + c;
    const int8_t* col = x + 16 * c * g.sw - g.pw;
    __m512i w[KH];
    for (int r = 0; r < KH; ++r) w[r] = _mm512_set1_epi32(w4[r]);
    __m512i op[KH][NC];  // op[r]: input row y * SH - ph + r
#pragma GCC unroll 4
    for (int r = 0; r < KH - SH; ++r) dw_row_operands<NC, EDGE>(d, g, col, r - g.ph, masks, op[r]);
    __mmask16 m[NC];
    for (int k = 0; k < NC; ++k) m[k] = cpu_ep::lanes_from(16 * (c + k), g.ow);
    const bool one_store = t.sat && !t.rc.add;
    for (int64_t y = 0; y < g.oh; ++y) {
#pragma GCC unroll 4
        for (int r = KH - SH; r < KH; ++r)
            dw_row_operands<NC, EDGE>(d, g, col, y * SH - g.ph + r, masks, op[r]);
        __m512i sums[4];
#pragma GCC unroll 4
        for (int k = 0; k < NC; ++k) {
            sums[k] = start;
#pragma GCC unroll 4
            for (int r = 0; r < KH; ++r) DW_DPBUSD(sums[k], op[r][k], w[r]);
        }
        const int64_t at = plane_at + y * g.ow + 16 * c;
        if constexpr (NC >= 2) {
            if (one_store) {
                dw_row_store_sat<NC>(t, sums, at, g.ow - 16 * c);
            } else {
#pragma GCC unroll 4
                for (int k = 0; k < NC; ++k) dw_tail_store(t, sums[k], at + 16 * k, m[k]);
            }
        } else {
            dw_tail_store(t, sums[0], at, m[0]);
        }
#pragma GCC unroll 4
        for (int r = 0; r < KH - SH; ++r)
#pragma GCC unroll 4
            for (int k = 0; k < NC; ++k) op[r][k] = op[r + SH][k];
    }
}

/* Where the sums of output channel o start when every kernel row is read (the sliding
 * kernels: rows outside the input are operands of the value 0): `add` less the +128's
 * correction for the whole kernel, wrapping. */
inline int32_t dw_whole_start(const conv_grouped* f, int64_t o, int32_t add) {
    const int32_t corr = f->dw.direct.corr[o * (f->g.kh + 1) + f->g.kh];
    return static_cast<int32_t>(static_cast<uint32_t>(add) - static_cast<uint32_t>(corr));
}

/* dw_slide with the edge case (some chunk's bytes cross an edge of the row) chosen once
 * for the block, not at every row. */
template <int KH, int SH, int NC>
CVML_TARGET_AVX512 inline void dw_slide_block(const conv_grouped* f, const dw_shuffles& d,
                                              const dw_tail& t, const int8_t* x, const int32_t* w4,
                                              int64_t c, __m512i start, int64_t plane_at) {
    const uint64_t* masks = f->dw.direct.masks + c;
    bool edge = false;
    for (int k = 0; k < NC; ++k) edge |= masks[k] != ~uint64_t{0};
    if (edge)
        dw_slide<KH, SH, NC, true>(f, d, t, x, w4, c, start, plane_at);
    else
        dw_slide<KH, SH, NC, false>(f, d, t, x, w4, c, start, plane_at);
}

template <int KH, int SH>
CVML_TARGET_AVX512 void depthwise_plane_slide(const conv_grouped* f, const dw_shuffles& d,
                                              const dw_tail& t, const int8_t* x, int64_t plane,
                                              int32_t add) {
    const conv_geom& g = f->g;
    const int64_t o = plane % g.o;
    const int32_t* w4 = f->dw.direct.w4 + o * KH;
    const __m512i start = _mm512_set1_epi32(dw_whole_start(f, o, add));
    const int64_t at = plane * g.oh * g.ow;
    int64_t c = 0;
    for (; c + 4 <= f->dw.direct.chunks; c += 4)
        dw_slide_block<KH, SH, 4>(f, d, t, x, w4, c, start, at);
    switch (f->dw.direct.chunks - c) {
        case 3:
            dw_slide_block<KH, SH, 3>(f, d, t, x, w4, c, start, at);
            break;
        case 2:
            dw_slide_block<KH, SH, 2>(f, d, t, x, w4, c, start, at);
            break;
        case 1:
            dw_slide_block<KH, SH, 1>(f, d, t, x, w4, c, start, at);
            break;
        default:
            break;
    }
}

/* A 1x1 kernel, stride 1, no padding (MRT's batch-norm scales): every output is
 * w * x + add of the input value at the same place, so the plane is one flat run. */
CVML_TARGET_AVX512 void depthwise_plane_pointwise(const conv_grouped* f, const dw_shuffles& d,
                                                  const dw_tail& tail, const int8_t* x,
                                                  int64_t plane, int32_t add) {
    (void)d;
    const conv_geom& g = f->g;
    const dw_tail t = tail;  // a local copy: the tail's constants stay in registers
    const __m512i w = _mm512_set1_epi32(f->wg[plane % g.o]), b = _mm512_set1_epi32(add);
    const int64_t n = g.oh * g.ow, at = plane * n;
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = cpu_ep::lanes_from(i, n);
        const __m512i v = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, x + i));
        dw_tail_store(t, _mm512_add_epi32(_mm512_mullo_epi32(v, w), b), at + i, m);
    }
}

/* Two planes at once, for outputs at most 8 wide (MobileNet-v1's 7x7 layers): a 16-column
 * chunk of one plane would leave 9 of its 16 lanes idle, so output columns 0..7 of
 * plane a run in lanes 0..7 and those of plane b in lanes 8..15. A two-source vpermt2d
 * takes 128-bit lanes 0 and 1's windows from a's input row and lanes 2 and 3's from b's,
 * and the pick is the one-plane pick (the same offsets within each lane); the weights
 * and starts are a's in the low half and b's in the high half. Only for the saturating
 * int8 tail with no added operand (dw_pair_fits), which reads nothing per element. */
struct dw_pair {
    __m512i from_two; /* vpermt2d indices */
    __m512i pick;
};

CVML_TARGET_AVX512 dw_pair dw_pair_of(const conv_geom& g, const dw_shuffles& d) {
    alignas(64) int32_t idx[16];
    for (int l = 0; l < 4; ++l)
        for (int j = 0; j < 4; ++j)
            idx[4 * l + j] = static_cast<int32_t>((l < 2 ? 0 : 16) + g.sw * (l % 2) + j);
    return {_mm512_load_si512(idx), d.pick[0]};
}

bool dw_pair_fits(const conv_geom& g, int64_t groups, const dw_tail& t) {
    return groups == 1 && g.dh == 1 && g.kh == 3 && (g.sh == 1 || g.sh == 2) && g.ow <= 8 &&
           t.sat && !t.rc.add;
}

/* Input row ih of both planes as one operand (zeros outside the input). */
CVML_TARGET_AVX512 inline __m512i dw_pair_operand(const dw_shuffles& d, const dw_pair& pr,
                                                  const conv_geom& g, const int8_t* col_a,
                                                  const int8_t* col_b, int64_t ih, uint64_t mask) {
    if (ih < 0 || ih >= g.h) return d.offset;
    const __m512i a = _mm512_maskz_loadu_epi8(mask, col_a + ih * g.w);
    const __m512i b = _mm512_maskz_loadu_epi8(mask, col_b + ih * g.w);
    return _mm512_xor_si512(
        _mm512_shuffle_epi8(_mm512_permutex2var_epi32(a, pr.from_two, b), pr.pick), d.offset);
}

template <int SH>
CVML_TARGET_AVX512 void dw_slide_pair(const conv_grouped* f, const dw_shuffles& d,
                                      const dw_pair& pr, const dw_tail& tail, const int8_t* xa,
                                      const int8_t* xb, int64_t pa, int64_t pb, int32_t add_a,
                                      int32_t add_b) {
    constexpr int KH = 3;
    const conv_geom& g = f->g;
    const dw_tail t = tail;  // a local copy: the tail's constants stay in registers
    const int64_t oa = pa % g.o, ob = pb % g.o;
    const __m512i start = _mm512_inserti64x4(_mm512_set1_epi32(dw_whole_start(f, oa, add_a)),
                                             _mm256_set1_epi32(dw_whole_start(f, ob, add_b)), 1);
    __m512i w[KH];
    for (int r = 0; r < KH; ++r)
        w[r] = _mm512_inserti64x4(_mm512_set1_epi32(f->dw.direct.w4[oa * KH + r]),
                                  _mm256_set1_epi32(f->dw.direct.w4[ob * KH + r]), 1);
    const uint64_t mask = f->dw.direct.masks[0];
    const int8_t* col_a = xa - g.pw;
    const int8_t* col_b = xb - g.pw;
    __m512i op[KH];  // op[r]: input row y * SH - ph + r
    for (int r = 0; r < KH - SH; ++r)
        op[r] = dw_pair_operand(d, pr, g, col_a, col_b, r - g.ph, mask);
    const __mmask16 low = static_cast<__mmask16>((1u << g.ow) - 1u);
    const __mmask16 high = static_cast<__mmask16>(low << 8);
    const __m512i none = _mm512_setzero_si512();
    for (int64_t y = 0; y < g.oh; ++y) {
        for (int r = KH - SH; r < KH; ++r)
            op[r] = dw_pair_operand(d, pr, g, col_a, col_b, y * SH - g.ph + r, mask);
        __m512i v = start;
        for (int r = 0; r < KH; ++r) DW_DPBUSD(v, op[r], w[r]);
        v = cpu_ep::rc_apply<false, false, -1, true>(t.rc, t.k, v, none, 0, low);
        cpu_ep::store16_i8_sat(t.out, (pa * g.oh + y) * g.ow, low, v);
        cpu_ep::store16_i8_sat(t.out, (pb * g.oh + y) * g.ow - 8, high, v);
        for (int r = 0; r < KH - SH; ++r) op[r] = op[r + SH];
    }
}

/* A kernel that takes whole planes of this shape (pointwise or sliding), or null. */
typedef void (*dw_plane_fn)(const conv_grouped*, const dw_shuffles&, const dw_tail&, const int8_t*,
                            int64_t, int32_t);

dw_plane_fn dw_plane_for(const conv_geom& g, int64_t groups) {
    if (g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0)
        return depthwise_plane_pointwise;
    if (groups != 1 || g.dh != 1) return nullptr;
    if (g.kh == 3 && g.sh == 1) return depthwise_plane_slide<3, 1>;
    if (g.kh == 3 && g.sh == 2) return depthwise_plane_slide<3, 2>;
    if (g.kh == 5 && g.sh == 1) return depthwise_plane_slide<5, 1>;
    if (g.kh == 5 && g.sh == 2) return depthwise_plane_slide<5, 2>;
    return nullptr;
}

/* Output plane t (channel o = t % channels) from its input plane x, through the tail. */
template <int G>
CVML_TARGET_AVX512 void depthwise_plane_direct(const conv_grouped* f, const dw_shuffles& d,
                                               const dw_tail& t, const int8_t* x, int64_t plane,
                                               int32_t add) {
    const conv_geom& g = f->g;
    const int64_t o = plane % g.o;
    const int32_t* w4 = f->dw.direct.w4 + o * g.kh * G;
    const int32_t* corr = f->dw.direct.corr + o * (g.kh + 1);
    for (int64_t y = 0; y < g.oh; ++y) {
        // Kernel rows r0..r1 read input rows inside the image.
        const int64_t top = y * g.sh - g.ph;
        int64_t r0 = 0, r1 = g.kh;
        while (r0 < r1 && top + r0 * g.dh < 0) ++r0;
        while (r1 > r0 && top + (r1 - 1) * g.dh >= g.h) --r1;
        const __m512i start = _mm512_set1_epi32(
            static_cast<int32_t>(static_cast<uint32_t>(add) + static_cast<uint32_t>(corr[r0]) -
                                 static_cast<uint32_t>(corr[r1])));
        const int8_t* first = x + (top + r0 * g.dh) * g.w - g.pw;
        const int64_t at = (plane * g.oh + y) * g.ow;
        int64_t c = 0;
        for (; c + 4 <= f->dw.direct.chunks; c += 4)
            dw_chunks<G, 4>(f, d, t, first + c * 16 * g.sw, r0, r1, w4, c, start, at);
        const int8_t* rest = first + c * 16 * g.sw;
        switch (f->dw.direct.chunks - c) {
            case 3:
                dw_chunks<G, 3>(f, d, t, rest, r0, r1, w4, c, start, at);
                break;
            case 2:
                dw_chunks<G, 2>(f, d, t, rest, r0, r1, w4, c, start, at);
                break;
            case 1:
                dw_chunks<G, 1>(f, d, t, rest, r0, r1, w4, c, start, at);
                break;
            default:
                break;
        }
    }
}

}  // namespace

CVML_TARGET_AVX512 void depthwise_direct_avx512(const conv_grouped* f, const ir_tensor* xt,
                                                const ir_tensor* yt, const epilogue* ep,
                                                const int32_t* bias, int64_t p0, int64_t p1) {
    const conv_geom& g = f->g;
    dw_shuffles d;
    dw_shuffles_of(g, f->dw.direct.groups, &d);
    dw_tail t;
    dw_tail_of(ep, yt, &t);
    const dw_plane_fn whole = dw_plane_for(g, f->dw.direct.groups);
    const bool pairs = dw_pair_fits(g, f->dw.direct.groups, t);
    if (pairs && p0 == 0) cpu_path_taken(CPU_PATH_DW_PAIRS);
    const dw_pair pr = dw_pair_of(g, d);
    const int8_t* in = static_cast<const int8_t*>(xt->data);
    // Plane p's input, and what its sums start from besides the +128's correction,
    // wrapping like the tail's add would: the bias and, when folded, the rounding addend.
    const auto input_of = [&](int64_t p) {
        return in + (p / g.o * g.c + (p % g.o / g.opg) * g.ic) * g.h * g.w;
    };
    const auto add_of = [&](int64_t p) {
        return static_cast<int32_t>(static_cast<uint32_t>(bias ? bias[p % g.o] : 0) +
                                    static_cast<uint32_t>(f->dw.direct.half));
    };
    const int64_t plane_bytes = g.oh * g.ow * yt->storage;  // the storage is its element size
    // The next planes' output lines fetched for writing (conv2d_fast.h); planes of up to
    // 4 KB: a 112x112 plane's 196 lines at once slowed that layer down.
    const bool own_ahead = plane_bytes <= kDwOwnAheadBytes;
    // Planes computed in pairs (7x7) store a few bytes of a line at a time, and their
    // stores still waited for lines the other core held with the lines fetched ahead: the
    // thread's lines are claimed first, as at avx2 (the 7x7 layer on two threads 0.0140 ->
    // 0.0125 ms; the 14x14 layers, whose whole rows the fetches cover, ran slower claimed).
    if (pairs) dw_claim_output(f, yt, ep, p0, p1);
    for (int64_t p = p0; p < p1; ++p) {
        // This step's planes: p, and p + 1 where two share a vector.
        const int64_t step = pairs && p + 1 < p1 ? 2 : 1;
        const int64_t ahead = p1 - (p + step) < step ? p1 - (p + step) : step;
        if (own_ahead && ahead > 0)
            simd_prefetch_lines_for_write(
                static_cast<const char*>(yt->data) + (p + step) * plane_bytes, ahead * plane_bytes);
        if (step == 2) {
            const auto slide = g.sh == 1 ? dw_slide_pair<1> : dw_slide_pair<2>;
            slide(f, d, pr, t, input_of(p), input_of(p + 1), p, p + 1, add_of(p), add_of(p + 1));
            ++p;
            continue;
        }
        const int8_t* x = input_of(p);
        const int32_t add = add_of(p);
        if (whole) {
            whole(f, d, t, x, p, add);
            continue;
        }
        switch (f->dw.direct.groups) {
            case 1:
                depthwise_plane_direct<1>(f, d, t, x, p, add);
                break;
            case 2:
                depthwise_plane_direct<2>(f, d, t, x, p, add);
                break;
            case 3:
                depthwise_plane_direct<3>(f, d, t, x, p, add);
                break;
            default:
                depthwise_plane_direct<4>(f, d, t, x, p, add);
                break;
        }
    }
}

}  // namespace cpu_conv2d

#endif
