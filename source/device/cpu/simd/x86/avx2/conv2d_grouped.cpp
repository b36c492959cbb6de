/* conv2d at avx2, groups > 1 (conv2d_grouped.cpp dispatches): the int32 multiply-add
 * rows, and the depthwise kernels for an int8-stored input: vpmulld over the phase
 * image, or vpmaddwd straight from the input (depthwise_direct_avx2). */
#include <string.h>

#include "device/cpu/op/conv2d_fast.h"
#include "device/cpu/simd/simd.h"
#include "device/cpu/simd/x86/avx2/epilogue_avx2.h"

#if CVML_SIMD_X86
#include <immintrin.h>

namespace cpu_conv2d {

CVML_TARGET_AVX2 void acc_row_avx2(uint32_t* acc, const int32_t* src, uint32_t w, int64_t n) {
    acc_row_body(acc, src, w, n);
}

CVML_TARGET_AVX2 void depthwise_plane_avx2(const conv_grouped* f, const int8_t* img,
                                           const int64_t* taps, const int32_t* w, int32_t* acc) {
    const conv_geom& g = f->g;
    const int64_t nt = g.kh * g.kw;
    for (int64_t y = 0; y < g.oh; ++y) {
        const int8_t* base = img + y * f->wq;
        // Whole groups of 8 read up to 7 values past the row: the image has that slack,
        // and acc rows are followed by the next row (or the plane's slack).
        for (int64_t x = 0; x < g.ow; x += 8) {
            __m256i v = _mm256_setzero_si256();
            for (int64_t t = 0; t < nt; ++t) {
                int64_t bytes;
                memcpy(&bytes, base + taps[t] + x, 8);
                const __m256i xv = _mm256_cvtepi8_epi32(_mm_cvtsi64_si128(bytes));
                v = _mm256_add_epi32(v, _mm256_mullo_epi32(xv, _mm256_set1_epi32(w[t])));
            }
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + y * g.ow + x), v);
        }
    }
}

namespace {

/* ---- the direct depthwise at avx2 (depthwise_direct_avx2) ---------------------------
 * AVX2 has no vpdpbusd, and vpmaddubsw's int16 pair sums saturate for int8 operands
 * (255 * 128 * 2 > 32767 with the +128 offset), so the kernel multiplies int16 pairs with
 * vpmaddwd: lane x of a vector holds the inputs of two taps (s, s + 1) of one kernel row
 * for output column x, sign-extended, and the weight vector the pair (w_s, w_s+1) (0 for
 * the half past kw). Each product and pair sum is exact (|x|, |w| <= 128: at most 2^15),
 * and the sums wrap mod 2^32 like upstream's. No offset, so no correction: padding and
 * rows outside the input are zeros (rows are skipped). Operands of 8 output columns
 * (a chunk), per input row:
 *  - column stride 1: the bytes at columns x + s * dw and x + (s + 1) * dw of two 8-byte
 *    loads interleaved (vpunpcklbw) and sign-extended to words (vpmovsxbw); an odd last
 *    tap is one load sign-extended to dwords (vpmovsxbd), whose high word meets weight 0;
 *  - column stride 2 (dilation 1): bytes 2x + s and 2x + s + 1 are adjacent, so a pair is
 *    one 16-byte load sign-extended to words.
 * A chunk whose bytes cross an edge of the input row masks them (dw2_chunk). 3-row
 * kernels 3 or 4 wide (row dilation 1, row stride 1 or 2) slide down the plane with
 * their operands in registers and the tail fused (dw2_slide); other shapes make each
 * input row's operands once per block of chunks and keep them in a ring of the
 * (kh - 1) * dh + 1 rows an output row spans, so every output row reuses them, and put
 * whole rows of sums through epilogue_apply (dw2_plane). */

constexpr int64_t kDw2RingVectors = 512; /* 16 KB of operands */
constexpr int64_t kDw2SumValues = 4096;  /* 16 KB of sums, whole rows */

struct dw2_plan {
    int64_t np;                /* tap pairs per kernel row, ceil(kw / 2) */
    int64_t span;              /* input bytes a chunk's operands read from its first column */
    int64_t rows;              /* input rows an output row spans, (kh - 1) * dh + 1 */
    int64_t chunks;            /* 8-column chunks of an output row */
    int64_t block;             /* chunks whose operands share the ring */
    const int8_t *begin, *end; /* the input tensor's bytes */
};

template <int SW, int NP>
CVML_TARGET_AVX2 inline void dw2_operands(const int8_t* p, int64_t dw, int64_t kw, __m256i* op) {
    for (int j = 0; j < NP; ++j) {
        const int64_t s = 2 * j;
        if (SW == 1) {
            const __m128i a = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + s * dw));
            if (s + 1 < kw) {
                const __m128i b =
                    _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + (s + 1) * dw));
                op[j] = _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(a, b));
            } else {
                op[j] = _mm256_cvtepi8_epi32(a);
            }
        } else {
            op[j] = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + s)));
        }
    }
}

/* 0xff at bytes [32, 64), so that 32 bytes loaded at kDw2Ones + 32 - lo are 0xff from
 * byte lo on, and at kDw2Ones + 64 - hi up to byte hi. */
alignas(32) const uint8_t kDw2Ones[96] = {
    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,
    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,
    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0};

/* dw2_operands of 2 tap pairs from a chunk's 32 bytes in a register (kw 3 or 4, the
 * domain's dw <= 2 at column stride 1, dw == 1 at 2). */
template <int SW>
CVML_TARGET_AVX2 inline void dw2_operands_reg(__m256i m, int64_t dw, int64_t kw, __m256i* op) {
    const __m128i lo = _mm256_castsi256_si128(m);
    if (SW == 2) {
        op[0] = _mm256_cvtepi8_epi16(lo);
        op[1] = _mm256_cvtepi8_epi16(_mm_alignr_epi8(_mm256_extracti128_si256(m, 1), lo, 2));
        return;
    }
    // Column stride 1: taps at bytes 0, dw, 2 dw, 3 dw of the low half (3 dw + 8 <= 16).
    const __m128i t1 = dw == 1 ? _mm_srli_si128(lo, 1) : _mm_srli_si128(lo, 2);
    const __m128i t2 = dw == 1 ? _mm_srli_si128(lo, 2) : _mm_srli_si128(lo, 4);
    op[0] = _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(lo, t1));
    if (kw > 3) {
        const __m128i t3 = dw == 1 ? _mm_srli_si128(lo, 3) : _mm_srli_si128(lo, 6);
        op[1] = _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(t2, t3));
    } else {
        op[1] = _mm256_cvtepi8_epi32(t2);
    }
}

/* Chunk c's operands from input row `row` into op[0 .. NP). A chunk whose span crosses
 * an edge of the row reads 32 bytes from its first column where they lie inside the
 * input tensor (the neighbouring rows' bytes, or padding's), zeroes the bytes outside
 * the row with a mask and reads the operands from that copy; next to the tensor's ends
 * it copies the row's bytes instead. */
template <int SW, int NP>
CVML_TARGET_AVX2 inline void dw2_chunk(const conv_geom& g, const dw2_plan& d, const int8_t* row,
                                       int64_t c, __m256i* op) {
    const int64_t first = 8 * c * SW - g.pw;
    const int8_t* p = row + first;
    alignas(32) int8_t edge[32];
    if (first < 0 || first + d.span > g.w) {
        const int64_t lo = first < 0 ? (first < -32 ? 32 : -first) : 0;
        const int64_t hi = g.w - first > 32 ? 32 : (g.w - first < 0 ? 0 : g.w - first);
        const uintptr_t at = reinterpret_cast<uintptr_t>(p);
        if (at >= reinterpret_cast<uintptr_t>(d.begin) &&
            at + 32 <= reinterpret_cast<uintptr_t>(d.end)) {
            const __m256i keep = _mm256_and_si256(
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kDw2Ones + 32 - lo)),
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kDw2Ones + 64 - hi)));
            const __m256i m =
                _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), keep);
            if constexpr (NP == 2) {
                // The operands from the register: reading them back from a stored copy
                // waited for the store (the loads straddle its halves).
                dw2_operands_reg<SW>(m, g.dw, g.kw, op);
                return;
            }
            _mm256_store_si256(reinterpret_cast<__m256i*>(edge), m);
        } else {
            memset(edge, 0, sizeof edge);
            if (hi > lo) memcpy(edge + lo, p + lo, static_cast<size_t>(hi - lo));
        }
        p = edge;
    }
    dw2_operands<SW, NP>(p, g.dw, g.kw, op);
}

/* Input row `row`'s operands of chunks c0 .. c0 + nc into ring slot `slot`. */
template <int SW, int NP>
CVML_TARGET_AVX2 void dw2_row(const conv_geom& g, const dw2_plan& d, const int8_t* row, int64_t c0,
                              int64_t nc, __m256i* slot) {
    for (int64_t k = 0; k < nc; ++k) dw2_chunk<SW, NP>(g, d, row, c0 + k, slot + k * NP);
}

/* The node's fused tail on 8 sums in registers, stored in the output's storage: the
 * steps of epilogue_apply at avx2 (apply_avx2), in the same order. */
struct dw2_tail {
    const epilogue* ep;
    bool matched;
    bool sat; /* the saturating int8 tail (dw2_sat_pre) */
    cpu_ep::rc_chain rc;
    cpu_ep::rc_consts8 k;
    void* out;
    int32_t storage;
};

/* Sums v of outputs [at, at + c), c <= 8. */
CVML_TARGET_AVX2 inline __attribute__((always_inline)) void dw2_tail_store(const dw2_tail& t,
                                                                           __m256i v, int64_t at,
                                                                           int64_t c) {
    if (t.matched) {
        v = cpu_ep::rc_apply8(t.rc, t.k, v, at, c);
    } else {
        for (int32_t s = 0; s < t.ep->step_count; ++s)
            v = cpu_ep::step_avx2(t.ep->steps[s], v, at, c);
    }
    if (c == 8)
        cpu_ep::store8_256(t.out, t.storage, at, v);
    else
        cpu_ep::store_part8(t.out, t.storage, at, c, v);
}

/* Input row ih's operands of NC chunks from chunk c on (zeros outside the input); the
 * chunks flagged in `inner` read the row in place. */
template <int SW, int NC>
CVML_TARGET_AVX2 inline void dw2_slide_row(const conv_geom& g, const dw2_plan& d, const int8_t* x,
                                           int64_t ih, int64_t c, const bool (&inner)[NC],
                                           __m256i (&op)[NC][2]) {
    if (ih < 0 || ih >= g.h) {
#pragma GCC unroll 2
        for (int k = 0; k < NC; ++k) op[k][0] = op[k][1] = _mm256_setzero_si256();
        return;
    }
    const int8_t* row = x + ih * g.w;
#pragma GCC unroll 2
    for (int k = 0; k < NC; ++k) {
        if (inner[k])
            dw2_operands<SW, 2>(row + 8 * (c + k) * SW - g.pw, g.dw, g.kw, op[k]);
        else
            dw2_chunk<SW, 2>(g, d, row, c + k, op[k]);
    }
}

/* The saturating int8 tail (dw2_tail::sat): a matched chain of the round (or its folded
 * shift) and a clip to [lo, 127], nothing before or after. The clip's min is the signed
 * saturation of the narrowing packs (vpackssdw, vpacksswb), the same value as
 * max(min(v, 127), lo) for -128 <= lo <= 127. */
CVML_TARGET_AVX2 inline __m256i dw2_sat_pre(const dw2_tail& t, __m256i v) {
    if (t.rc.folded)
        v = _mm256_sra_epi32(v, t.k.sh);
    else
        v = _mm256_srai_epi32(_mm256_add_epi32(_mm256_sra_epi32(v, t.k.sh), t.k.one), 1);
    return _mm256_max_epi32(v, t.k.lo);
}

/* The first n (< 16) bytes of b at out. */
CVML_TARGET_AVX2 inline void dw2_store_part(int8_t* out, __m128i b, int64_t n) {
    alignas(16) int8_t tmp[16];
    _mm_store_si128(reinterpret_cast<__m128i*>(tmp), b);
    for (int64_t i = 0; i < n; ++i) out[i] = tmp[i];
}

/* Kernels of 3 rows (row dilation 1, row stride SH = 1 or 2) and 3 or 4 columns (2 tap
 * pairs): NC chunks slide down the plane with the operands of the 3 input rows under
 * them in registers, SH new rows per output row, and the sums go through the tail in
 * registers. With the saturating int8 tail (SAT) the NC chunks are narrowed into one
 * register and stored at once; a row's last partial store may run into the rows after
 * it where this block covers whole rows and the store stays inside the plane (those
 * rows are written after). The loops over rows and chunks are unrolled by pragma: left
 * to GCC they stayed loops over op[][] on the stack, and the layers took 1.1-2x as long. */
template <int SW, int SH, int NC, bool SAT>
CVML_TARGET_AVX2 void dw2_slide(const conv_geom& g, const dw2_plan& d, const dw2_tail& tail,
                                const int8_t* x, int64_t c, const __m256i* w, __m256i start,
                                int64_t plane_at) {
    const dw2_tail t = tail;  // a local copy: the tail's constants stay in registers
    __m256i op[3][NC][2];     // op[r]: input row y * SH - ph + r
    const int64_t x0 = 8 * c, n = g.ow - x0 < 8 * NC ? g.ow - x0 : 8 * NC;
    const bool whole_row = c == 0 && n == g.ow;
    bool inner[NC];  // the chunk's bytes lie inside every row
    for (int k = 0; k < NC; ++k) {
        const int64_t first = 8 * (c + k) * SW - g.pw;
        inner[k] = first >= 0 && first + d.span <= g.w;
    }
#pragma GCC unroll 2
    for (int r = 0; r < 3 - SH; ++r) dw2_slide_row<SW, NC>(g, d, x, r - g.ph, c, inner, op[r]);
    for (int64_t y = 0; y < g.oh; ++y) {
#pragma GCC unroll 2
        for (int r = 3 - SH; r < 3; ++r)
            dw2_slide_row<SW, NC>(g, d, x, y * SH - g.ph + r, c, inner, op[r]);
        __m256i v[NC];
#pragma GCC unroll 2
        for (int k = 0; k < NC; ++k) {
            v[k] = start;
#pragma GCC unroll 3
            for (int r = 0; r < 3; ++r)
#pragma GCC unroll 2
                for (int j = 0; j < 2; ++j)
                    v[k] = _mm256_add_epi32(v[k], _mm256_madd_epi16(op[r][k][j], w[2 * r + j]));
        }
        const int64_t at = plane_at + y * g.ow + x0;
        if constexpr (SAT) {
            const __m128i b = cpu_ep::pack16_i8(dw2_sat_pre(t, v[0]), dw2_sat_pre(t, v[NC - 1]));
            int8_t* out = static_cast<int8_t*>(t.out) + at;
            if (n == 8 * NC || (whole_row && y * g.ow + 8 * NC <= g.oh * g.ow)) {
                if (NC == 2)
                    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), b);
                else
                    _mm_storel_epi64(reinterpret_cast<__m128i*>(out), b);
            } else {
                dw2_store_part(out, b, n);
            }
        } else {
            for (int k = 0; k < NC; ++k) {
                const int64_t left = n - 8 * k < 8 ? n - 8 * k : 8;
                dw2_tail_store(t, v[k], at + 8 * k, left);
            }
        }
#pragma GCC unroll 2
        for (int r = 0; r < 3 - SH; ++r)
#pragma GCC unroll 2
            for (int k = 0; k < NC; ++k) {
                op[r][k][0] = op[r + SH][k][0];
                op[r][k][1] = op[r + SH][k][1];
            }
    }
}

/* One output plane from its input plane x, sums starting at `start`, through the tail. */
template <int SW, int NP>
CVML_TARGET_AVX2 void dw2_plane(const conv_grouped* f, const dw2_plan& d, const epilogue* ep,
                                const ir_tensor* yt, const int8_t* x, int64_t plane, int32_t start,
                                const __m256i* w, __m256i* ring, int32_t* sums) {
    const conv_geom& g = f->g;
    const int64_t kh = g.kh;
    const __m256i vstart = _mm256_set1_epi32(start);
    const int64_t out0 = plane * g.oh * g.ow;
    for (int64_t c0 = 0; c0 < d.chunks; c0 += d.block) {
        const int64_t nc = d.chunks - c0 < d.block ? d.chunks - c0 : d.block;
        const int64_t n = g.ow - 8 * c0 < 8 * nc ? g.ow - 8 * c0 : 8 * nc;
        // Whole rows go into `sums` one after another and through the tail together.
        const bool whole = nc == d.chunks;
        int64_t built[kDwDirectAvx2MaxRows];
        for (int64_t i = 0; i < d.rows; ++i) built[i] = -1;
        int64_t y0 = 0, held = 0;
        for (int64_t y = 0; y < g.oh; ++y) {
            const int64_t top = y * g.sh - g.ph;
            const __m256i* ops[kDwDirectAvx2MaxRows];
            int64_t used = 0;
            const __m256i* wr[kDwDirectAvx2MaxRows];
            for (int64_t r = 0; r < kh; ++r) {
                const int64_t ih = top + r * g.dh;
                if (ih < 0 || ih >= g.h) continue;
                const int64_t s = ih % d.rows;
                __m256i* slot = ring + s * d.block * NP;
                if (built[s] != ih) {
                    dw2_row<SW, NP>(g, d, x + ih * g.w, c0, nc, slot);
                    built[s] = ih;
                }
                ops[used] = slot;
                wr[used++] = w + r * NP;
            }
            int32_t* out = sums + held;
            for (int64_t k = 0; k < nc; ++k) {
                __m256i v = vstart;
                for (int64_t r = 0; r < used; ++r)
                    for (int j = 0; j < NP; ++j)
                        v = _mm256_add_epi32(v, _mm256_madd_epi16(ops[r][k * NP + j], wr[r][j]));
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8 * k), v);
            }
            held += n;
            if (!whole || held + n > kDw2SumValues || y + 1 == g.oh) {
                const int64_t at = whole ? out0 + y0 * g.ow : out0 + y * g.ow + 8 * c0;
                epilogue_apply(f->level, ep, sums, STORAGE_INT32, 0, 0, yt->data, yt->storage, at,
                               held);
                y0 = y + 1;
                held = 0;
            }
        }
    }
}

/* Small planes (MobileNet-v1's 14x14 and 7x7 ones, and the stride-2 layers onto them):
 * every chunk of their rows crosses the padding, and masking each chunk of each row cost
 * more than its products (the 14x14 layers ran at 1.7x oneDNN's time). Such a plane is
 * copied once into a buffer of kDw2PadStride-byte rows with its padding as zeros, where
 * every chunk reads its bytes in place (dw2_slide on the buffer's geometry). */
constexpr int64_t kDw2PadStride = 64;
constexpr int64_t kDw2PadRows = 40;

/* Whether plane geometry g slides on a padded copy: rows of at most 32 bytes, the padded
 * plane within the buffer, and every chunk's bytes inside a buffer row. */
inline bool dw2_pads_plane(const conv_geom& g, const dw2_plan& d) {
    if (g.w > 32 || g.pw + 32 > kDw2PadStride || g.h + 2 * g.ph > kDw2PadRows) return false;
    return 8 * (d.chunks - 1) * g.sw + d.span <= kDw2PadStride;
}

/* Plane x into buf (zeroed once: only each row's first 32 bytes after the left padding
 * are written, the row's bytes and zeros), 32 bytes a row where they lie inside the input
 * tensor. */
CVML_TARGET_AVX2 inline void dw2_pad_plane(const conv_geom& g, const dw2_plan& d, const int8_t* x,
                                           int8_t* buf) {
    const __m256i keep = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kDw2Ones + 64 - g.w));
    for (int64_t i = 0; i < g.h; ++i) {
        const int8_t* row = x + i * g.w;
        int8_t* dst = buf + (i + g.ph) * kDw2PadStride + g.pw;
        if (d.end - row >= 32)
            _mm256_storeu_si256(
                reinterpret_cast<__m256i*>(dst),
                _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row)), keep));
        else
            memcpy(dst, row, static_cast<size_t>(g.w));
    }
}

/* The output lines of plane p, fetched for writing before it is computed where a plane
 * is small (kDwOwnAheadBytes). MobileNet-v1's 14x14 layers on two threads, per-node
 * minima of two A/B runs of 12 interleaved rounds on a loaded VM: 0.118-0.180 ->
 * 0.069-0.089 ms. */
inline void dw2_own_next_plane(const conv_geom& g, const ir_tensor* yt, int64_t p) {
    const int64_t bytes = g.oh * g.ow * yt->storage;  // the storage is its element size
    if (bytes <= kDwOwnAheadBytes)
        simd_prefetch_lines_for_write(static_cast<const char*>(yt->data) + p * bytes, bytes);
}

/* Planes [p0, p_end); SH > 0: by dw2_slide (3 kernel rows, row stride SH). */
template <int SW, int NP, int SH>
CVML_TARGET_AVX2 void dw2_planes(const conv_grouped* f, const dw2_plan& d, const ir_tensor* xt,
                                 const ir_tensor* yt, const epilogue* ep, const int32_t* bias,
                                 int64_t p0, int64_t p_end) {
    const conv_geom& g = f->g;
    alignas(32) __m256i ring[SH ? 1 : kDw2RingVectors];
    alignas(32) int32_t sums[SH ? 8 : kDw2SumValues + 8];
    __m256i w[kDwDirectAvx2MaxRows * NP];
    dw2_tail t;
    t.ep = ep;
    t.matched = cpu_ep::match_rc_chain(ep, &t.rc);
    t.k = cpu_ep::rc_consts8_of(t.rc);
    t.sat = t.matched && !t.rc.pre && !t.rc.add && cpu_ep::rc_saturates_to_i8(t.rc, yt->storage);
    t.out = yt->data;
    t.storage = yt->storage;
    const int8_t* in = static_cast<const int8_t*>(xt->data);
    // Sliding small planes read a padded copy (dw2_pads_plane): its geometry has the
    // buffer's rows and no padding.
    alignas(32) int8_t padded[SH ? kDw2PadRows * kDw2PadStride : 1];
    const bool pads = SH > 0 && dw2_pads_plane(g, d);
    conv_geom gp = g;
    dw2_plan dp = d;
    if (pads) {
        memset(padded, 0, sizeof padded);
        gp.w = kDw2PadStride;
        gp.h = g.h + 2 * g.ph;
        gp.ph = gp.pw = 0;
        dp.begin = padded;
        dp.end = padded + sizeof padded;
    }
    // The planes come as two plain bounds: GCC allocated this large function's registers
    // worse with them as a {first, end} pair (the 56x56 layer 8-10% slower).
    dw_claim_output(f, yt, ep, p0, p_end);
    for (int64_t p = p0; p < p_end; ++p) {
        const int64_t o = p % g.o;
        const int32_t* wo = f->wg + o * g.kh * g.kw;
        for (int64_t r = 0; r < g.kh; ++r)
            for (int64_t j = 0; j < NP; ++j) {
                const int64_t s = 2 * j;
                const uint32_t lo = static_cast<uint16_t>(wo[r * g.kw + s]);
                const uint32_t hi = s + 1 < g.kw ? static_cast<uint16_t>(wo[r * g.kw + s + 1]) : 0u;
                w[r * NP + j] = _mm256_set1_epi32(static_cast<int32_t>(lo | hi << 16));
            }
        // The bias and, when folded, the rounding addend, wrapping like the tail's add.
        const int32_t start = static_cast<int32_t>(static_cast<uint32_t>(bias ? bias[o] : 0) +
                                                   static_cast<uint32_t>(f->dw.direct.half));
        const int8_t* x = in + (p / g.o * g.c + (o / g.opg) * g.ic) * g.h * g.w;
        if constexpr (SH > 0) {
            const __m256i vstart = _mm256_set1_epi32(start);
            const int64_t at = p * g.oh * g.ow;
            if (p + 1 < p_end) dw2_own_next_plane(g, yt, p + 1);
            const int8_t* src = x;
            if (pads) {
                dw2_pad_plane(g, d, x, padded);
                src = padded;
            }
            // Rows of two chunks slide as one block (one store a row); wider rows chunk by
            // chunk, whose operands stay in registers (two chunks' spilled: MobileNet-v1's
            // 112- and 56-wide layers were about 10% slower that way).
            if (d.chunks == 2) {
                if (t.sat)
                    dw2_slide<SW, SH, 2, true>(gp, dp, t, src, 0, w, vstart, at);
                else
                    dw2_slide<SW, SH, 2, false>(gp, dp, t, src, 0, w, vstart, at);
            } else {
                for (int64_t c = 0; c < d.chunks; ++c)
                    if (t.sat)
                        dw2_slide<SW, SH, 1, true>(gp, dp, t, src, c, w, vstart, at);
                    else
                        dw2_slide<SW, SH, 1, false>(gp, dp, t, src, c, w, vstart, at);
            }
        } else {
            dw2_plane<SW, NP>(f, d, ep, yt, x, p, start, w, ring, sums);
        }
    }
}

template <int SW>
CVML_TARGET_AVX2 void dw2_dispatch(const conv_grouped* f, const dw2_plan& d, const ir_tensor* xt,
                                   const ir_tensor* yt, const epilogue* ep, const int32_t* bias,
                                   int64_t p0, int64_t p1) {
    const conv_geom& g = f->g;
    switch (d.np) {
        case 1:
            dw2_planes<SW, 1, 0>(f, d, xt, yt, ep, bias, p0, p1);
            break;
        case 2:
            if (g.kh == 3 && g.dh == 1 && g.sh == 1)
                dw2_planes<SW, 2, 1>(f, d, xt, yt, ep, bias, p0, p1);
            else if (g.kh == 3 && g.dh == 1 && g.sh == 2)
                dw2_planes<SW, 2, 2>(f, d, xt, yt, ep, bias, p0, p1);
            else
                dw2_planes<SW, 2, 0>(f, d, xt, yt, ep, bias, p0, p1);
            break;
        case 3:
            dw2_planes<SW, 3, 0>(f, d, xt, yt, ep, bias, p0, p1);
            break;
        default:
            dw2_planes<SW, 4, 0>(f, d, xt, yt, ep, bias, p0, p1);
            break;
    }
}

}  // namespace

CVML_TARGET_AVX2 void depthwise_direct_avx2(const conv_grouped* f, const ir_tensor* xt,
                                            const ir_tensor* yt, const epilogue* ep,
                                            const int32_t* bias, int64_t p0, int64_t p1) {
    const conv_geom& g = f->g;
    dw2_plan d;
    d.np = (g.kw + 1) / 2;
    d.span = g.sw == 1 ? (g.kw - 1) * g.dw + 8 : 2 * (d.np - 1) + 16;
    d.rows = (g.kh - 1) * g.dh + 1;
    d.chunks = (g.ow + 7) / 8;
    d.begin = static_cast<const int8_t*>(xt->data);
    d.end = d.begin + g.n * g.c * g.h * g.w;
    const int64_t fit = kDw2RingVectors / (d.rows * d.np);
    d.block = d.chunks < fit ? d.chunks : fit;
    // Column stride 2 comes with dilation 1 (the record's window, 3 * sw + 3 * dw <= 9).
    if (g.sw == 1) {
        dw2_dispatch<1>(f, d, xt, yt, ep, bias, p0, p1);
    } else {
        dw2_dispatch<2>(f, d, xt, yt, ep, bias, p0, p1);
    }
}

}  // namespace cpu_conv2d

#endif
