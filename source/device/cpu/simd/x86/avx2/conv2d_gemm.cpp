/* conv2d at avx2, groups == 1 (op/conv2d_gemm.cpp dispatches): the image rows of an
 * int8-stored input, at column stride 1 each padded row written whole, zeros included,
 * with 16-byte stores, at column stride 2 split between the column phases. The generic
 * rows are a memset, a memcpy and a memset a row, each a libc call for a few dozen
 * bytes: with these, ResNet-18's image rows and their memsets went from 3.0% to 1.9% of
 * its time at avx2 (perf). */
#include "device/cpu/op/conv2d_fast.h"
#include "device/cpu/simd/epilogue_chain.h"
#include "device/cpu/simd/kernel_util.h"

#if CVML_SIMD_X86
#include <immintrin.h>

namespace cpu_conv2d {
namespace {

/* Writes padded rows [0, wq) of an image at column stride 1: the input row's w values
 * from column pw on, zeros around them. Chunks of 16 bytes, the last one ending at wq
 * (overlapping the one before it, with the same bytes), so nothing is written past the
 * row; each chunk loads the 16 input bytes under it and keeps those inside the row. The
 * chunks' masks are the same for every row: made once, at construction (rows of more than
 * kMaxChunks chunks make the rest as they go). */
struct row_writer16 {
    static constexpr int64_t kMaxChunks = 8;
    int64_t w, pw, wq, chunks;
    __m128i keep[kMaxChunks];

    CVML_TARGET_AVX2 row_writer16(int64_t w_, int64_t pw_, int64_t wq_)
        : w(w_), pw(pw_), wq(wq_), chunks(wq_ >= 16 ? (wq_ + 15) / 16 : 0) {
        for (int64_t i = 0; i < chunks && i < kMaxChunks; ++i) keep[i] = mask(at(i));
    }

    /* Whether rows this wide are written here (narrower ones take the generic rows). */
    bool fits() const { return chunks > 0; }

    /* Chunk i's first padded column. */
    int64_t at(int64_t i) const { return i + 1 < chunks ? 16 * i : wq - 16; }

    static int8_t clamp16(int64_t v) { return static_cast<int8_t>(v < 0 ? 0 : (v > 16 ? 16 : v)); }

    /* The lanes of the chunk at padded column c0 that hold input: [pw - c0, pw + w - c0). */
    CVML_TARGET_AVX2 __m128i mask(int64_t c0) const {
        const __m128i lane = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        const __m128i lo = _mm_set1_epi8(static_cast<int8_t>(clamp16(pw - c0) - 1));
        const __m128i hi = _mm_set1_epi8(clamp16(pw + w - c0));
        return _mm_and_si128(_mm_cmpgt_epi8(lane, lo), _mm_cmpgt_epi8(hi, lane));
    }

    /* Row `row` from input row `in`; the chunks load bytes [in - pw, in - pw + wq). */
    CVML_TARGET_AVX2 void write(const int8_t* in, int8_t* row) const {
        for (int64_t i = 0; i < chunks; ++i) {
            const int64_t c0 = at(i);
            const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in - pw + c0));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(row + c0),
                             _mm_and_si128(v, i < kMaxChunks ? keep[i] : mask(c0)));
        }
    }
};

/* Column stride 2: each read row's columns split between the two column phases, the
 * zeros only around them, without the level dispatch of the generic rows (a call per
 * row of 28 or 56 bytes: ResNet-18's 1x1 stride-2 convs). */
void image_rows_sw2(const conv_gemm* f, const int8_t* x, int8_t* img, int64_t begin, int64_t end) {
    const conv_geom& g = f->g;
    const int64_t plane = f->hq * f->wq;
    int64_t ic = begin / g.h, h = begin % g.h;
    for (int64_t item = begin; item < end; ++item, ++h) {
        int8_t* channel = image_item(f, img, &ic, &h);
        const int64_t hp = h + g.ph;
        if (!f->row_read[hp]) continue;
        image_zero_row2_around(f, channel, hp);
        int8_t *even, *odd;
        cpu_phase_row2_starts(g.pw, plane, channel + f->row_at[hp], &even, &odd);
        cpu_ep::deinterleave2_avx2(x + item * g.w, g.w, even, odd);
    }
}

}  // namespace

void image_rows_i8_avx2(const conv_gemm* f, const int8_t* x, int8_t* img, int64_t begin,
                        int64_t end) {
    const conv_geom& g = f->g;
    if (g.sw == 2) {
        image_rows_sw2(f, x, img, begin, end);
        return;
    }
    const row_writer16 writer(g.w, g.pw, f->wq);
    // The chunks of a row read from pw bytes before it to wq - pw - w bytes after it: rows
    // whose reads would leave the image's input (its first and last rows) take the
    // generic copy, as do rows under 16 bytes.
    const int64_t x_bytes = g.c * g.h * g.w;
    int64_t ic = begin / g.h, h = begin % g.h;
    for (int64_t item = begin; item < end; ++item, ++h) {
        int8_t* channel = image_item(f, img, &ic, &h);
        if (!f->row_read[h + g.ph]) continue;
        const int8_t* in = x + item * g.w;
        int8_t* row = channel + f->row_at[h + g.ph];
        const int64_t first = item * g.w - g.pw;
        if (writer.fits() && first >= 0 && first + f->wq <= x_bytes)
            writer.write(in, row);
        else
            image_copy_row(f, in, row);
    }
}

}  // namespace cpu_conv2d

#endif
