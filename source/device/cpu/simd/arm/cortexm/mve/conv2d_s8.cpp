/* conv2d's dot products with Helium/MVE (Cortex-M55). VMLADAVA.S8 multiplies 16 int8
 * pairs and adds their sum to a 32-bit scalar, keeping the low 32 bits.
 *
 * Output pixels go four at a time: their patches are gathered once into a quad column,
 * chunk t holding values 16t .. 16t + 15 of pixel 0, then of pixels 1, 2 and 3, with K
 * rounded up to 16 by zeros. The inner loop (assembly, so that its eight sums stay in
 * registers: VMLADAVA adds into even-numbered ones only) loads 16 values of two weight
 * rows (read in place) and of the four pixels, and makes eight sums: two channels by
 * four pixels: 128 multiply-accumulates in 14 instructions, 30 per pass of two. The
 * last K % 16 weights are loaded predicated (lanes past K read as zero and are not
 * accessed), so weight rows need no padding. */
#include "device/cpu/simd/simd.h"

#if CVML_SIMD_CORTEXM_MVE

/* The hot loops at -O2, in an -Os library too; no packing of the sums into vectors
 * (the SLP vectorizer would spill them through the stack). */
#pragma GCC optimize("O2", "no-tree-slp-vectorize")

#include <arm_mve.h>
#include <stddef.h>

#include "device/cpu/simd/arm/cortexm/conv2d_s8.h"
#include "device/cpu/simd/arm/cortexm/conv2d_plan.h"

namespace {

using cortexm::round16;

/* A quad column: chunk t of 16 values is 64 bytes, pixel p's 16 at 16 p. */
using cortexm::kChunk;
using cortexm::kPixels;
constexpr int32_t kQuadChunk = kPixels * kChunk;

/* One chunk of the inner loop: 16 values of rows w0 and w1 by the four pixels. */
#define CVML_MVE_CHUNK2X4         \
    "vldrb.8 q0, [%[w0]], #16\n"  \
    "vldrb.8 q1, [%[w1]], #16\n"  \
    "vldrb.8 q2, [%[c]], #16\n"   \
    "vmladava.s8 %[a0], q0, q2\n" \
    "vmladava.s8 %[b0], q1, q2\n" \
    "vldrb.8 q3, [%[c]], #16\n"   \
    "vmladava.s8 %[a1], q0, q3\n" \
    "vmladava.s8 %[b1], q1, q3\n" \
    "vldrb.8 q2, [%[c]], #16\n"   \
    "vmladava.s8 %[a2], q0, q2\n" \
    "vmladava.s8 %[b2], q1, q2\n" \
    "vldrb.8 q3, [%[c]], #16\n"   \
    "vmladava.s8 %[a3], q0, q3\n" \
    "vmladava.s8 %[b3], q1, q3\n"

/* Channels two at a time over a quad, all in assembly: what a pass needs beyond its
 * eight sums and two weight pointers lives in this struct, read and written by the
 * loop. */
struct quad_pass {
    const int32_t* bias; /* the next pair's two biases */
    int32_t bias_step;   /* bytes: 8, or 0 for two zeros read again */
    int32_t* out;        /* the next pair's first sum */
    int32_t row_bytes;   /* from channel o's sums to o + 1's */
    int32_t K;
    const int8_t* col;
    int32_t full; /* K / 16, > 0 */
    int32_t pairs;
    int32_t rem; /* K % 16 */
};
// The assembly's offsets.
static_assert(offsetof(quad_pass, bias_step) == 4 && offsetof(quad_pass, out) == 8 &&
                  offsetof(quad_pass, row_bytes) == 12 && offsetof(quad_pass, K) == 16 &&
                  offsetof(quad_pass, col) == 20 && offsetof(quad_pass, full) == 24 &&
                  offsetof(quad_pass, pairs) == 28 && offsetof(quad_pass, rem) == 32,
              "quad_pass layout");

/* For each of st->pairs channel pairs from weight row w0 = w on (w1 = w0 + K): eight
 * sums from the pair's biases over the quad column, stored at out[0 .. 3] (channel o)
 * and from out + row_bytes (o + 1). The chunks run two a pass (an odd count starts at
 * the second), then the last rem values with the weights loaded predicated (lanes
 * past K read as zero and are not accessed; the column is zero there). After a pair,
 * w0 has walked row o to row o + 1's start and w1 row o + 1 to o + 2's: the next pair
 * starts at w1. */
void pairs_quad(const int8_t* w, int32_t K, quad_pass* st) {
    const int8_t *w0 = w, *w1 = w + K;
    int32_t a0, a1, a2, a3, b0, b1, b2, b3;
    const int8_t* c;
    int32_t n;
    __asm__ volatile(
        "0:\n"
        "ldr %[n], [%[st], #0]\n"  // the biases
        "ldrd %[a0], %[b0], [%[n]]\n"
        "ldr %[c], [%[st], #4]\n"
        "add %[n], %[n], %[c]\n"
        "str %[n], [%[st], #0]\n"
        "mov %[a1], %[a0]\n"
        "mov %[a2], %[a0]\n"
        "mov %[a3], %[a0]\n"
        "mov %[b1], %[b0]\n"
        "mov %[b2], %[b0]\n"
        "mov %[b3], %[b0]\n"
        "ldr %[c], [%[st], #20]\n"  // the column and its chunks, two a pass
        "ldr %[n], [%[st], #24]\n"
        "lsrs %[n], %[n], #1\n"
        "bcc 1f\n"
        "adds %[n], %[n], #1\n"
        "b 2f\n"
        "1:\n" CVML_MVE_CHUNK2X4 "2:\n" CVML_MVE_CHUNK2X4
        "subs %[n], %[n], #1\n"
        "bne 1b\n"
        "ldr %[n], [%[st], #32]\n"  // the last K % 16 values
        "cmp %[n], #0\n"
        "beq 3f\n"
        "vctp.8 %[n]\n"
        "vpstt\n"
        "vldrbt.8 q0, [%[w0]]\n"
        "vldrbt.8 q1, [%[w1]]\n"
        "add %[w0], %[w0], %[n]\n"
        "add %[w1], %[w1], %[n]\n"
        "vldrb.8 q2, [%[c]], #16\n"
        "vmladava.s8 %[a0], q0, q2\n"
        "vmladava.s8 %[b0], q1, q2\n"
        "vldrb.8 q3, [%[c]], #16\n"
        "vmladava.s8 %[a1], q0, q3\n"
        "vmladava.s8 %[b1], q1, q3\n"
        "vldrb.8 q2, [%[c]], #16\n"
        "vmladava.s8 %[a2], q0, q2\n"
        "vmladava.s8 %[b2], q1, q2\n"
        "vldrb.8 q3, [%[c]]\n"
        "vmladava.s8 %[a3], q0, q3\n"
        "vmladava.s8 %[b3], q1, q3\n"
        "3:\n"
        "mov %[w0], %[w1]\n"  // the next pair's rows
        "ldr %[c], [%[st], #16]\n"
        "add %[w1], %[w1], %[c]\n"
        "ldr %[c], [%[st], #8]\n"  // the sums
        "ldr %[n], [%[st], #12]\n"
        "strd %[a0], %[a1], [%[c]]\n"
        "strd %[a2], %[a3], [%[c], #8]\n"
        "add %[c], %[c], %[n]\n"
        "strd %[b0], %[b1], [%[c]]\n"
        "strd %[b2], %[b3], [%[c], #8]\n"
        "add %[c], %[c], %[n]\n"
        "str %[c], [%[st], #8]\n"
        "ldr %[n], [%[st], #28]\n"
        "subs %[n], %[n], #1\n"
        "str %[n], [%[st], #28]\n"
        "bne 0b\n"
        : [a0] "=&Te"(a0), [a1] "=&Te"(a1), [a2] "=&Te"(a2), [a3] "=&Te"(a3), [b0] "=&Te"(b0),
          [b1] "=&Te"(b1), [b2] "=&Te"(b2), [b3] "=&Te"(b3), [w0] "+&r"(w0), [w1] "+&r"(w1),
          [c] "=&r"(c), [n] "=&r"(n)
        : [st] "r"(st)
        : "q0", "q1", "q2", "q3", "cc", "memory");
}

/* out[p] = bias + dot(row w, pixel p of the quad column) for the four pixels, one
 * channel (an odd count's last, or all where K < 16). */
void dot1x4(const int8_t* w, const int8_t* col, int32_t full, int32_t rem, int32_t bias,
            int32_t* out) {
    int32_t s0 = bias, s1 = bias, s2 = bias, s3 = bias;
    for (int32_t t = 0; t < full + (rem ? 1 : 0); ++t, w += kChunk, col += kQuadChunk) {
        const int8x16_t v = vldrbq_z_s8(w, vctp8q(static_cast<uint32_t>(t < full ? kChunk : rem)));
        s0 = vmladavaq_s8(s0, v, vldrbq_s8(col));
        s1 = vmladavaq_s8(s1, v, vldrbq_s8(col + kChunk));
        s2 = vmladavaq_s8(s2, v, vldrbq_s8(col + 2 * kChunk));
        s3 = vmladavaq_s8(s3, v, vldrbq_s8(col + 3 * kChunk));
    }
    out[0] = s0;
    out[1] = s1;
    out[2] = s2;
    out[3] = s3;
}

/* Whether every patch offset in the band fits the 16-bit offsets of a gather load. */
bool gather_fits(const cm_conv* cv) {
    return cortexm::band_bytes(cv) <= 65535;
}

/* A patch's offsets repeat: values k and k + 16 P (P = kw / gcd(kw, 16) chunks, 16 P
 * a multiple of kw) are 16 P / kw segments apart in the band, so a table of the first
 * 16 P offsets (fewer when K is shorter) serves every chunk, the pixels' band pointers
 * moving on by `step` bytes after each period. */
struct offset_period {
    int32_t entries; /* the table's, a multiple of 16 */
    int32_t chunks;  /* entries / 16 */
    int32_t step;    /* bytes */
};

offset_period period_of(const cm_conv* cv) {
    const int32_t kw = cv->kw, low_bit = kw & -kw;
    const int32_t chunks = kw / (low_bit < kChunk ? low_bit : kChunk);
    const int32_t entries = cortexm::mve_offset_entries(cv);
    return {entries, entries / kChunk, chunks * kChunk / kw * cortexm::band_width(cv)};
}

/* offsets[k] for k < entries: where value k of a patch is, from its pixel's start in
 * the band; past K zero, a valid place whose loads are predicated off. */
void patch_offsets(const cm_conv* cv, int32_t entries, uint16_t* offsets) {
    const int32_t wb = cortexm::band_width(cv), kw = cv->kw, dw = cv->dw;
    const int32_t n = cv->K < entries ? cv->K : entries;
    int32_t k = 0;
    for (int32_t start = 0; k < n; start += wb)
        for (int32_t s = 0; s < kw && k < n; ++s, ++k)
            offsets[k] = static_cast<uint16_t>(start + s * dw);
    for (; k < entries; ++k) offsets[k] = 0;
}

/* The patches of the four pixels whose band columns start at s0 .. s3 into a quad
 * column, 8 values per gather; zeros from K up to the next multiple of 16. */
void gather_quad(const int8_t* s0, const int8_t* s1, const int8_t* s2, const int8_t* s3,
                 const uint16_t* offsets, const offset_period& period, int32_t K, int8_t* col) {
    for (int32_t left = K; left > 0;) {
        const uint16_t* at = offsets;
        for (int32_t t = 0; t < period.chunks && left > 0;
             ++t, left -= kChunk, col += kQuadChunk, at += kChunk) {
            const uint16x8_t lo = vldrhq_u16(at), hi = vldrhq_u16(at + 8);
            if (left >= kChunk) {
                vstrbq_s16(col, vldrbq_gather_offset_s16(s0, lo));
                vstrbq_s16(col + 8, vldrbq_gather_offset_s16(s0, hi));
                vstrbq_s16(col + 16, vldrbq_gather_offset_s16(s1, lo));
                vstrbq_s16(col + 24, vldrbq_gather_offset_s16(s1, hi));
                vstrbq_s16(col + 32, vldrbq_gather_offset_s16(s2, lo));
                vstrbq_s16(col + 40, vldrbq_gather_offset_s16(s2, hi));
                vstrbq_s16(col + 48, vldrbq_gather_offset_s16(s3, lo));
                vstrbq_s16(col + 56, vldrbq_gather_offset_s16(s3, hi));
                continue;
            }
            const mve_pred16_t p = vctp16q(static_cast<uint32_t>(left));
            const mve_pred16_t q = vctp16q(static_cast<uint32_t>(left > 8 ? left - 8 : 0));
            vstrbq_s16(col, vldrbq_gather_offset_z_s16(s0, lo, p));
            vstrbq_s16(col + 8, vldrbq_gather_offset_z_s16(s0, hi, q));
            vstrbq_s16(col + 16, vldrbq_gather_offset_z_s16(s1, lo, p));
            vstrbq_s16(col + 24, vldrbq_gather_offset_z_s16(s1, hi, q));
            vstrbq_s16(col + 32, vldrbq_gather_offset_z_s16(s2, lo, p));
            vstrbq_s16(col + 40, vldrbq_gather_offset_z_s16(s2, hi, q));
            vstrbq_s16(col + 48, vldrbq_gather_offset_z_s16(s3, lo, p));
            vstrbq_s16(col + 56, vldrbq_gather_offset_z_s16(s3, hi, q));
        }
        s0 += period.step;
        s1 += period.step;
        s2 += period.step;
        s3 += period.step;
    }
}

/* gather_quad without gathers, for bands too large for 16-bit offsets: value k of the
 * patch at src[i] goes to col[(k / 16) * 64 + i * 16 + k % 16]. */
void copy_quad(const cm_conv* cv, const int8_t* const src[kPixels], int8_t* col) {
    const int32_t wb = cortexm::band_width(cv),
                  kp = static_cast<int32_t>(round16(static_cast<size_t>(cv->K)));
    for (int32_t k = 0; k < kp; ++k) {
        const int32_t j = k / cv->kw, from = j * wb + (k - j * cv->kw) * cv->dw;
        for (int32_t i = 0; i < kPixels; ++i)
            col[(k / kChunk) * kQuadChunk + i * kChunk + k % kChunk] = k < cv->K ? src[i][from] : 0;
    }
}

/* The band (cortexm::fill_band's layout, zero-padded, with 16 bytes of slack) with
 * vector stores: all zeros first, then each in-image segment's columns copied 16 at a
 * time (the last few predicated). */
void fill_band_vector(const cm_conv* cv, const int8_t* img, int32_t oy, int8_t* band) {
    const int32_t wb = cortexm::band_width(cv), W = cv->w_in;
    const int8x16_t zero = vdupq_n_s8(0);
    int8_t* end = band + cortexm::band_bytes(cv);
    for (int8_t* at = band; at < end; at += kChunk) vstrbq_s8(at, zero);
    // Band columns [lo, hi) hold input columns [lo - pw, hi - pw).
    const int32_t lo = cv->pw < wb ? cv->pw : wb;
    const int32_t len = (W + cv->pw < wb ? W + cv->pw : wb) - lo;
    if (len <= 0) return;
    const int32_t whole = len / kChunk;
    const mve_pred16_t tail = vctp8q(static_cast<uint32_t>(len % kChunk));
    const size_t plane = static_cast<size_t>(cv->h) * static_cast<size_t>(W);
    const size_t step = static_cast<size_t>(cv->kh) * static_cast<size_t>(wb);
    for (int32_t r = 0; r < cv->kh; ++r) {
        const int32_t iy = oy * cv->sh - cv->ph + r * cv->dh;
        if (iy < 0 || iy >= cv->h) continue;
        const int8_t* from = img + static_cast<size_t>(iy) * W + (lo - cv->pw);
        int8_t* seg = band + static_cast<size_t>(r) * wb + lo;
        for (int32_t c = 0; c < cv->c; ++c, seg += step, from += plane) {
            int32_t j = 0;
            for (int32_t t = 0; t < whole; ++t, j += kChunk)
                vstrbq_s8(seg + j, vldrbq_s8(from + j));
            if (len % kChunk) vstrbq_p_s8(seg + j, vldrbq_z_s8(from + j, tail), tail);
        }
    }
}

/* The sums of every channel for the quad column's four pixels, from the bias: channel
 * o's at out + o * stride (four values). */
void quad_channels(const cm_conv* cv, const int8_t* col, int32_t* out, int32_t stride) {
    const size_t K = static_cast<size_t>(cv->K);
    const int32_t full = cv->K / kChunk, rem = cv->K % kChunk;
    const int32_t* bias = cv->bias;
    int32_t o = 0;
    if (full > 0 && cv->o >= 2) {
        static const int32_t zeros[2] = {0, 0};
        quad_pass st = {bias ? bias : zeros, bias ? 8 : 0, out, stride * 4, cv->K, col, full,
                        cv->o / 2,           rem};
        pairs_quad(cv->w, cv->K, &st);
        o = cv->o & ~1;
    }
    for (; o < cv->o; ++o)
        dot1x4(cv->w + static_cast<size_t>(o) * K, col, full, rem, bias ? bias[o] : 0,
               out + static_cast<size_t>(o) * stride);
}

}  // namespace

/* Its scratch is laid out as cortexm::mve_scratch_bytes (conv2d_plan.h) counts it. */
void cm_conv_row(const cm_conv* cv, int64_t n, int32_t oy, void* scratch, int32_t* sums) {
    const size_t kp = round16(static_cast<size_t>(cv->K));
    const offset_period period = period_of(cv);
    int8_t* band = static_cast<int8_t*>(scratch);
    int8_t* col = band + round16(cortexm::band_bytes(cv));
    uint16_t* offsets = reinterpret_cast<uint16_t*>(col + kPixels * kp);
    const bool gather = gather_fits(cv);
    if (gather) patch_offsets(cv, period.entries, offsets);
    const int8_t* img = cv->x + static_cast<size_t>(n) * static_cast<size_t>(cv->c) *
                                    static_cast<size_t>(cv->h) * static_cast<size_t>(cv->w_in);
    fill_band_vector(cv, img, oy, band);
    const int32_t ow = cv->ow;
    // Pixels four at a time, the last quad moved back to end at the row's end (its first
    // sums written again, the same); a row narrower than a quad repeats its last pixel,
    // and its sums go through the scratch.
    int32_t* narrow = ow < kPixels
                          ? reinterpret_cast<int32_t*>(
                                offsets + round16(2 * static_cast<size_t>(period.entries)) / 2)
                          : nullptr;
    for (int32_t at = 0; at < ow; at += kPixels) {
        const int32_t ox = narrow ? 0 : (at + kPixels <= ow ? at : ow - kPixels);
        const int8_t* src[kPixels];
        for (int32_t i = 0; i < kPixels; ++i)
            src[i] = band +
                     static_cast<size_t>(ox + (i < ow ? i : ow - 1)) * static_cast<size_t>(cv->sw);
        if (gather)
            gather_quad(src[0], src[1], src[2], src[3], offsets, period, cv->K, col);
        else
            copy_quad(cv, src, col);
        quad_channels(cv, col, narrow ? narrow : sums + ox, narrow ? kPixels : ow);
    }
    if (narrow)
        for (int32_t o = 0; o < cv->o; ++o)
            for (int32_t x = 0; x < ow; ++x) sums[o * ow + x] = narrow[o * kPixels + x];
}

#undef CVML_MVE_CHUNK2X4

#endif
