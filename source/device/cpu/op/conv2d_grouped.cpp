/* conv2d at the SIMD levels, groups > 1: int32 multiply-adds over a zero-padded plane,
 * and the depthwise kernels (vpmulld, vpdpbusd) for an int8-stored input. */
#include <stdlib.h>
#include <string.h>

#include "device/cpu/op/conv2d_fast.h"
#include "device/cpu/simd/interleave4.h"
#include "device/cpu/simd/kernel_util.h"
#include "device/cpu/simd/simd.h"
#include "utility/error.h"

#if CVML_SIMD_X86
#include <immintrin.h>
/* GCC 12's AVX-512 headers trip this on their own _mm512_undefined_* helpers. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#endif

namespace cpu_conv2d {
namespace {

/* acc[i] += w * src[i], wrapping; one copy per instruction set so each vectorizes. */
inline void acc_row_body(uint32_t* acc, const int32_t* src, uint32_t w, int64_t n) {
    for (int64_t i = 0; i < n; ++i) acc[i] += w * static_cast<uint32_t>(src[i]);
}
#if CVML_SIMD_X86
CVML_TARGET_AVX512 void acc_row_avx512(uint32_t* acc, const int32_t* src, uint32_t w, int64_t n) {
    acc_row_body(acc, src, w, n);
}
CVML_TARGET_AVX2 void acc_row_avx2(uint32_t* acc, const int32_t* src, uint32_t w, int64_t n) {
    acc_row_body(acc, src, w, n);
}
#endif
void acc_row_plain(uint32_t* acc, const int32_t* src, uint32_t w, int64_t n) {
    acc_row_body(acc, src, w, n);
}

struct grouped_args {
    cpu_node_ctx* ctx;
    const conv_fast* f;
    const epilogue* ep;
    const int32_t* bias;
};

void grouped_slot(void* arg, int64_t begin, int64_t end) {
    const grouped_args* a = static_cast<const grouped_args*>(arg);
    const conv_fast* f = a->f;
    const conv_geom& g = f->g;
    const ir_tensor* xt = a->ctx->inputs[0];
    const int32_t* wt = f->wg;
    const ir_tensor* yt = a->ctx->outputs[0];
    void (*acc_row)(uint32_t*, const int32_t*, uint32_t, int64_t) = acc_row_plain;
#if CVML_SIMD_X86
    if (f->level == CPU_SIMD_AVX512) acc_row = acc_row_avx512;
    if (f->level == CPU_SIMD_AVX2) acc_row = acc_row_avx2;
#endif
    const int64_t planes = g.n * g.o, plane = g.oh * g.ow;
    // acc rows are wq apart, like the phase planes' rows: with stride 1 a tap is then one
    // flat run over all rows (the columns past ow are computed and dropped).
    const int64_t acc_len = g.oh * f->wq;
    for (int64_t slot = begin; slot < end; ++slot) {
        uint8_t* base = static_cast<uint8_t*>(a->ctx->scratch) + f->plane_bytes * slot;
        uint32_t* acc = reinterpret_cast<uint32_t*>(base);
        int32_t* ph = reinterpret_cast<int32_t*>(base + align64(static_cast<size_t>(acc_len) * 4));
        for (int64_t t = planes * slot / f->threads; t < planes * (slot + 1) / f->threads; ++t) {
            const int64_t n = t / g.o, o = t % g.o;
            memset(acc, 0, static_cast<size_t>(acc_len) * 4);
            const int64_t c0 = (o / g.opg) * g.ic;
            for (int64_t ic = 0; ic < g.ic; ++ic) {
                // Zero-padded plane, column phase p of row h at ph[(p*hp + h)*wq + j].
                memset(ph, 0, static_cast<size_t>(g.sw * f->hp * f->wq) * 4);
                const int64_t xbase = (n * g.c + c0 + ic) * g.h * g.w;
                for (int64_t h = 0; h < g.h; ++h)
                    cpu_phase_row_any(xt, xbase + h * g.w, g.w, g.pw, g.sw, f->hp * f->wq,
                                      ph + (h + g.ph) * f->wq);
                const int32_t* wp = wt + ((o * g.ic + ic) * g.kh) * g.kw;
                for (int64_t r = 0; r < g.kh; ++r)
                    for (int64_t s = 0; s < g.kw; ++s) {
                        const uint32_t wv = static_cast<uint32_t>(wp[r * g.kw + s]);
                        if (wv == 0) continue;
                        const int64_t col = s * g.dw, p = col % g.sw, off = col / g.sw;
                        const int32_t* src = ph + (p * f->hp + r * g.dh) * f->wq + off;
                        if (g.sh == 1) {
                            acc_row(acc, src, wv, acc_len);
                            continue;
                        }
                        for (int64_t y = 0; y < g.oh; ++y)
                            acc_row(acc + y * f->wq, src + y * g.sh * f->wq, wv, g.ow);
                    }
            }
            for (int64_t y = 0; y < g.oh; ++y)
                epilogue_apply(f->level, a->ep, acc + y * f->wq, STORAGE_INT32, 0,
                               a->bias ? a->bias[o] : 0, yt->data, yt->storage,
                               t * plane + y * g.ow, g.ow);
        }
    }
}

/* ---- depthwise (one input channel per output channel, int8-stored input) ------------
 * Upstream multiplies int32 values here; an int8-stored input holds them exactly, and
 * each product and sum is computed in int32 lanes with wrap-around, so the bytes are
 * upstream's. Per plane: the input channel as a stride-phase int8 image (like the
 * groups == 1 image), every output row folded tap by tap in vector registers, and the
 * plane written through the fused tail in one run. */

/* Offsets of the taps in a plane's phase image, for output (0, 0). */
void depthwise_taps(const conv_fast* f, int64_t* taps) {
    const conv_geom& g = f->g;
    const int64_t plane = f->hq * f->wq;
    for (int64_t r = 0; r < g.kh; ++r)
        for (int64_t s = 0; s < g.kw; ++s) {
            const int64_t row = r * g.dh, col = s * g.dw;
            taps[r * g.kw + s] =
                ((row % g.sh) * g.sw + col % g.sw) * plane + (row / g.sh) * f->wq + col / g.sw;
        }
}

#if CVML_SIMD_X86
/* depthwise_image at avx512 with column stride 1 or 2: input rows written whole, zeros
 * included (phase_row_writer); only the padding rows above and below are cleared. */
template <int SW>
CVML_TARGET_AVX512 void depthwise_image_avx512(const conv_fast* f, const int8_t* x, int8_t* img) {
    const conv_geom& g = f->g;
    const int64_t plane = f->hq * f->wq;
    for (int64_t r = 0; r < f->hq * g.sh; ++r) {
        if (r >= g.ph && r < g.ph + g.h) continue;
        for (int64_t pc = 0; pc < SW; ++pc)
            memset(img + f->row_at[r] + pc * plane, 0, static_cast<size_t>(f->wq));
    }
    const phase_row_writer<SW> writer(g.w, g.pw, f->wq);
    const __m512i zero = _mm512_setzero_si512();
    for (int64_t h = 0; h < g.h; ++h)
        writer.write(x + h * g.w, zero, plane, img + f->row_at[h + g.ph]);
}
#endif

void depthwise_image(const conv_fast* f, const int8_t* x, int8_t* img) {
    const conv_geom& g = f->g;
    const int64_t plane = f->hq * f->wq;
#if CVML_SIMD_X86
    if (f->level == CPU_SIMD_AVX512 && g.sw <= 2) {
        if (g.sw == 1)
            depthwise_image_avx512<1>(f, x, img);
        else
            depthwise_image_avx512<2>(f, x, img);
        return;
    }
#endif
    memset(img, 0, static_cast<size_t>(g.sh * g.sw * plane));
    for (int64_t h = 0; h < g.h; ++h) {
        int8_t* row = img + f->row_at[h + g.ph];
        if (g.sw == 1) {
            memcpy(row + g.pw, x + h * g.w, static_cast<size_t>(g.w));
        } else if (g.sw == 2) {
            cpu_phase_row2_i8(f->level, x + h * g.w, g.w, g.pw, plane, row);
        } else {
            cpu_phase_row(x + h * g.w, g.w, g.pw, g.sw, plane, row);
        }
    }
}

#if CVML_SIMD_X86
CVML_TARGET_AVX512 void depthwise_plane_avx512(const conv_fast* f, const int8_t* img,
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

/* Depthwise with vpdpbusd (stride 1). Each padded input row is turned once
 * into a row-interleaved row: pixel x holds the kw inputs that output column x reads
 * from it (+128, zeros past kw), so one output row is kh loads and kh vpdpbusd per 16
 * pixels, a kernel row's weights being one broadcast dword. The +128 is taken back with
 * 128 * (sum of the weights). Upstream multiplies int32 values; int8 inputs and weights
 * give the same exact products and sums. */
CVML_TARGET_AVX512 void depthwise_rows_vnni(const conv_fast* f, const int8_t* img, uint8_t* rows) {
    const conv_geom& g = f->g;
    const int64_t* tap = f->dw_taps;       // taps (0, s): column phase and offset of each s
    for (int64_t i = 0; i < f->hq; ++i) {  // stride 1: one row phase
        const int8_t* src = img + i * f->wq;
        uint8_t* dst = rows + static_cast<size_t>(i * f->dw_owp) * 4;
        for (int64_t x = 0; x < f->dw_owp; x += 64) {
            __m512i r[4];
            for (int64_t s = 0; s < 4; ++s)
                r[s] = s < g.kw ? _mm512_loadu_si512(src + tap[s] + x) : _mm512_setzero_si512();
            __m512i p[4];
            interleave4_panels(r[0], r[1], r[2], r[3], p);
            for (int64_t l = 0; l < 4 && x + 16 * l < f->dw_owp; ++l)
                _mm512_storeu_si512(dst + (x + 16 * l) * 4, p[l]);
        }
    }
}

CVML_TARGET_AVX512 void depthwise_plane_vnni(const conv_fast* f, const uint8_t* rows, int64_t o,
                                             int32_t* acc) {
    const conv_geom& g = f->g;
    const int32_t* w4 = f->dw_w4 + o * g.kh;
    const __m512i corr = _mm512_set1_epi32(f->dw_corr[o]);
    const size_t row_bytes = static_cast<size_t>(f->dw_owp) * 4;
    for (int64_t y = 0; y < g.oh; ++y) {
        const uint8_t* rows_y = rows + static_cast<size_t>(y) * row_bytes;
        for (int64_t x = 0; x < g.ow; x += 16) {
            __m512i v = _mm512_setzero_si512();
            for (int64_t r = 0; r < g.kh; ++r)
                v = _mm512_dpbusd_epi32(v, _mm512_loadu_si512(rows_y + f->dw_row_of[r] + x * 4),
                                        _mm512_set1_epi32(w4[r]));
            const int64_t n = g.ow - x < 16 ? g.ow - x : 16;
            _mm512_mask_storeu_epi32(acc + y * g.ow + x, static_cast<__mmask16>((1u << n) - 1u),
                                     _mm512_sub_epi32(v, corr));
        }
    }
}

CVML_TARGET_AVX2 void depthwise_plane_avx2(const conv_fast* f, const int8_t* img,
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
#endif

void depthwise_plane_plain(const conv_fast* f, const int8_t* img, const int64_t* taps,
                           const int32_t* w, int32_t* acc) {
    const conv_geom& g = f->g;
    for (int64_t y = 0; y < g.oh; ++y)
        for (int64_t x = 0; x < g.ow; ++x) {
            uint32_t v = 0;
            for (int64_t t = 0; t < g.kh * g.kw; ++t)
                v += static_cast<uint32_t>(img[y * f->wq + taps[t] + x]) *
                     static_cast<uint32_t>(w[t]);
            acc[y * g.ow + x] = static_cast<int32_t>(v);
        }
}

void depthwise_slot(void* arg, int64_t begin, int64_t end) {
    const grouped_args* a = static_cast<const grouped_args*>(arg);
    const conv_fast* f = a->f;
    const conv_geom& g = f->g;
    const ir_tensor* xt = a->ctx->inputs[0];
    const ir_tensor* yt = a->ctx->outputs[0];
    void (*plane_fn)(const conv_fast*, const int8_t*, const int64_t*, const int32_t*, int32_t*) =
        depthwise_plane_plain;
#if CVML_SIMD_X86
    if (f->level == CPU_SIMD_AVX512) plane_fn = depthwise_plane_avx512;
    if (f->level == CPU_SIMD_AVX2) plane_fn = depthwise_plane_avx2;
#endif
    const int64_t planes = g.n * g.o, out_plane = g.oh * g.ow;
    for (int64_t slot = begin; slot < end; ++slot) {
        uint8_t* base = static_cast<uint8_t*>(a->ctx->scratch) + f->plane_bytes * slot;
        int32_t* acc = reinterpret_cast<int32_t*>(base);
        int8_t* img = reinterpret_cast<int8_t*>(base + f->dw_acc_bytes);
        for (int64_t t = planes * slot / f->threads; t < planes * (slot + 1) / f->threads; ++t) {
            const int64_t n = t / g.o, o = t % g.o;
            const int64_t c = (o / g.opg) * g.ic;
            depthwise_image(f, static_cast<const int8_t*>(xt->data) + (n * g.c + c) * g.h * g.w,
                            img);
#if CVML_SIMD_X86
            if (f->dw_w4) {
                uint8_t* rows = base + f->dw_acc_bytes + f->dw_image_bytes;
                depthwise_rows_vnni(f, img, rows);
                depthwise_plane_vnni(f, rows, o, acc);
            } else
#endif
                plane_fn(f, img, f->dw_taps, f->wg + o * g.kh * g.kw, acc);
            epilogue_apply(f->level, a->ep, acc, STORAGE_INT32, 0, a->bias ? a->bias[o] : 0,
                           yt->data, yt->storage, t * out_plane, out_plane);
        }
    }
}

/* The vpdpbusd depthwise path's weights, when it applies (avx512, kernel width <= 4,
 * every weight within int8) and pays: each interleaved row must serve several output
 * rows (stride 1) and fill most of its 16-pixel vectors (MobileNet-v1: faster at 112,
 * 56 and 28 pixels wide with stride 1, slower at 14 and at stride 2). */
int depthwise_vnni_prerun(conv_fast* f) {
    const conv_geom& g = f->g;
    if (f->level != CPU_SIMD_AVX512 || g.kw > 4 || g.sh != 1 || g.ow < 24) return CVML_OK;
    const int64_t nw = g.o * g.kh * g.kw;
    for (int64_t i = 0; i < nw; ++i)
        if (f->wg[i] < -128 || f->wg[i] > 127) return CVML_OK;
    f->dw_w4 = static_cast<int32_t*>(calloc(static_cast<size_t>(g.o * g.kh), sizeof(int32_t)));
    f->dw_corr = static_cast<int32_t*>(calloc(static_cast<size_t>(g.o), sizeof(int32_t)));
    if (!f->dw_w4 || !f->dw_corr) return cvml_fail(CVML_ERR_RUNTIME, "out of memory");
    for (int64_t o = 0; o < g.o; ++o) {
        int32_t sum = 0;
        for (int64_t r = 0; r < g.kh; ++r) {
            uint32_t dword = 0;
            for (int64_t sk = 0; sk < g.kw; ++sk) {
                const int32_t v = f->wg[(o * g.kh + r) * g.kw + sk];
                sum += v;
                dword |= static_cast<uint32_t>(static_cast<uint8_t>(v)) << (8 * sk);
            }
            f->dw_w4[o * g.kh + r] = static_cast<int32_t>(dword);
        }
        f->dw_corr[o] = 128 * sum;
    }
    f->dw_owp = (g.ow + 15) / 16 * 16;
    f->dw_rows_bytes = align64(static_cast<size_t>(f->hq * f->dw_owp) * 4);
    f->dw_row_of = static_cast<int64_t*>(malloc(sizeof(int64_t) * static_cast<size_t>(g.kh)));
    if (!f->dw_row_of) return cvml_fail(CVML_ERR_RUNTIME, "out of memory");
    for (int64_t r = 0; r < g.kh; ++r) f->dw_row_of[r] = r * g.dh * f->dw_owp * 4;  // stride 1
    __atomic_fetch_add(&dw_vnni_preruns, 1, __ATOMIC_RELAXED);
    return CVML_OK;
}

}  // namespace

/* groups > 1: int32 weights, per-thread plane scratch, and the depthwise tap table
 * (that path is taken at run time when the input is stored as int8). */
int grouped_prerun(cpu_node_ctx* ctx, conv_fast* f, size_t* scratch_bytes) {
    const conv_geom& g = f->g;
    const int64_t nw = g.o * g.ic * g.kh * g.kw;
    f->wg = static_cast<int32_t*>(malloc(sizeof(int32_t) * static_cast<size_t>(nw ? nw : 1)));
    if (!f->wg) return cvml_fail(CVML_ERR_RUNTIME, "out of memory");
    for (int64_t i = 0; i < nw; ++i) f->wg[i] = cpu_load(ctx->inputs[1], i);
    f->hp = g.h + 2 * g.ph;
    f->wp = g.w + 2 * g.pw;
    // acc and phase rows get one column of slack, so whole vectors fit.
    f->wq = (f->wp + g.sw - 1) / g.sw + 1;
    // The flat stride-1 runs read up to a row and a tap offset past the last plane.
    f->plane_bytes =
        align64(static_cast<size_t>(g.oh * f->wq) * 4) +
        align64(static_cast<size_t>(g.sw * f->hp * f->wq + 2 * f->wq + g.kw * g.dw) * 4 + 64);
    if (g.ic == 1) {
        f->hq = (f->hp + g.sh - 1) / g.sh;
        f->dw_taps =
            static_cast<int64_t*>(malloc(sizeof(int64_t) * static_cast<size_t>(g.kh * g.kw)));
        if (!f->dw_taps) return cvml_fail(CVML_ERR_RUNTIME, "out of memory");
        depthwise_taps(f, f->dw_taps);
        int rc = phase_row_table(f);
        if (rc) return rc;
        f->dw_acc_bytes = align64(static_cast<size_t>(g.oh * g.ow + 16) * 4);
        // The vnni rows read 64 pixels from any column below dw_owp, past a row's end.
        f->dw_image_bytes =
            align64(static_cast<size_t>(g.sh * g.sw * f->hq * f->wq + 2 * f->wq + 128));
        rc = depthwise_vnni_prerun(f);
        if (rc) return rc;
        const size_t dw = f->dw_acc_bytes + f->dw_image_bytes + f->dw_rows_bytes;
        if (dw > f->plane_bytes) f->plane_bytes = dw;
    }
    *scratch_bytes = f->plane_bytes * static_cast<size_t>(f->threads);
    return CVML_OK;
}

void conv_grouped_run(cpu_node_ctx* ctx, const conv_fast* f, const epilogue* ep,
                      const int32_t* bias) {
    grouped_args a = {ctx, f, ep, bias};
    if (f->dw_taps && ctx->inputs[0]->storage == STORAGE_INT8)
        cpu_for_each_slot(ctx, depthwise_slot, &a);
    else
        cpu_for_each_slot(ctx, grouped_slot, &a);
}

}  // namespace cpu_conv2d
