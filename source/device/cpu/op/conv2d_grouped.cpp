/* conv2d at the SIMD levels, groups > 1: int32 multiply-adds over a zero-padded plane,
 * and the depthwise kernels (vpmulld, vpdpbusd, vpmaddwd) for an int8-stored input. The
 * vector kernels are in simd/x86/avx512/conv2d_grouped.cpp and simd/x86/avx2/; this
 * file prepares and dispatches, and holds the plain loops. */
#include <stdlib.h>
#include <string.h>

#include "device/cpu/op/conv2d_fast.h"
#include "device/cpu/simd/kernel_util.h"
#include "device/cpu/simd/simd.h"
#include "utility/error.h"
#include "utility/memory.h"

namespace cpu_conv2d {

namespace {

struct grouped_args {
    cpu_node_ctx* ctx;
    const conv_grouped* f;
    const epilogue* ep;
    const int32_t* bias;
};

/* Output planes [begin, end), in thread `thread`'s scratch. */
void grouped_planes(void* arg, int64_t begin, int64_t end, int thread) {
    const grouped_args* a = static_cast<const grouped_args*>(arg);
    const conv_grouped* f = a->f;
    const conv_geom& g = f->g;
    const ir_tensor* xt = a->ctx->inputs[0];
    const int32_t* wt = f->wg;
    const ir_tensor* yt = a->ctx->outputs[0];
    void (*acc_row)(uint32_t*, const int32_t*, uint32_t, int64_t) = f->cfg->acc_row;
    const int64_t plane = g.oh * g.ow;
    // acc rows are wq apart, like the phase planes' rows: with stride 1 a tap is then one
    // flat run over all rows (the columns past ow are computed and dropped).
    const int64_t acc_len = g.oh * f->wq;
    uint8_t* base = static_cast<uint8_t*>(a->ctx->scratch) + f->plane_bytes * thread;
    uint32_t* acc = reinterpret_cast<uint32_t*>(base);
    int32_t* ph = reinterpret_cast<int32_t*>(base + align64(static_cast<size_t>(acc_len) * 4));
    for (int64_t t = begin; t < end; ++t) {
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
                           a->bias ? a->bias[o] : 0, yt->data, yt->storage, t * plane + y * g.ow,
                           g.ow);
    }
}

/* ---- depthwise (one input channel per output channel, int8-stored input) ------------
 * Upstream multiplies int32 values here; an int8-stored input holds them exactly, and
 * each product and sum is computed in int32 lanes with wrap-around, so the bytes are
 * upstream's. At avx512 the direct vpdpbusd kernel (depthwise_plane_direct), at avx2
 * the direct vpmaddwd one (depthwise_direct_avx2), reads the input in place where its
 * domain allows. Otherwise, per plane: the input channel as a stride-phase int8 image
 * (like the groups == 1 image), every output row folded tap by tap in vector
 * registers, and the plane written through the fused tail in one run. */

/* Offsets of the taps in a plane's phase image, for output (0, 0). */
void depthwise_taps(const conv_grouped* f, int64_t* taps) {
    const conv_geom& g = f->g;
    const int64_t plane = f->dw.hq * f->wq;
    for (int64_t r = 0; r < g.kh; ++r)
        for (int64_t s = 0; s < g.kw; ++s) {
            const int64_t row = r * g.dh, col = s * g.dw;
            taps[r * g.kw + s] =
                ((row % g.sh) * g.sw + col % g.sw) * plane + (row / g.sh) * f->wq + col / g.sw;
        }
}

void depthwise_image(const conv_grouped* f, const int8_t* x, int8_t* img) {
    const conv_geom& g = f->g;
    const int64_t plane = f->dw.hq * f->wq;
    if (f->cfg->dw_image && g.sw <= f->cfg->dw_image_max_sw) {
        f->cfg->dw_image(f, x, img);
        return;
    }
    memset(img, 0, static_cast<size_t>(g.sh * g.sw * plane));
    for (int64_t h = 0; h < g.h; ++h) {
        int8_t* row = img + f->dw.row_at[h + g.ph];
        if (g.sw == 1) {
            memcpy(row + g.pw, x + h * g.w, static_cast<size_t>(g.w));
        } else if (g.sw == 2) {
            cpu_phase_row2_i8(f->level, x + h * g.w, g.w, g.pw, plane, row);
        } else {
            cpu_phase_row(x + h * g.w, g.w, g.pw, g.sw, plane, row);
        }
    }
}

/* Output planes [begin, end), in thread `thread`'s scratch where the kernel needs it. */
void depthwise_planes(void* arg, int64_t begin, int64_t end, int thread) {
    const grouped_args* a = static_cast<const grouped_args*>(arg);
    const conv_grouped* f = a->f;
    const conv_geom& g = f->g;
    const ir_tensor* xt = a->ctx->inputs[0];
    const ir_tensor* yt = a->ctx->outputs[0];
    const cpu_simd_config* cfg = f->cfg;
    // A 1x1 kernel with stride 1 and no padding reads the input as it is, where the level
    // has the kernel for it.
    const bool flat = cfg->dw_1x1 && g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 &&
                      g.ph == 0 && g.pw == 0 && g.oh == g.h && g.ow == g.w;
    const int64_t out_plane = g.oh * g.ow;
    if (f->dw.direct.w4) {
        cfg->dw_direct(f, xt, yt, a->ep, a->bias, begin, end);
        return;
    }
    uint8_t* base = static_cast<uint8_t*>(a->ctx->scratch) + f->plane_bytes * thread;
    int32_t* acc = reinterpret_cast<int32_t*>(base);
    int8_t* img = reinterpret_cast<int8_t*>(base + f->dw.acc_bytes);
    for (int64_t t = begin; t < end; ++t) {
        const int64_t n = t / g.o, o = t % g.o;
        const int64_t c = (o / g.opg) * g.ic;
        const int8_t* x = static_cast<const int8_t*>(xt->data) + (n * g.c + c) * g.h * g.w;
        if (flat) {
            cfg->dw_1x1(x, f->wg[o], out_plane, acc);
            epilogue_apply(f->level, a->ep, acc, STORAGE_INT32, 0, a->bias ? a->bias[o] : 0,
                           yt->data, yt->storage, t * out_plane, out_plane);
            continue;
        }
        depthwise_image(f, x, img);
        cfg->dw_plane(f, img, f->dw.taps, f->wg + o * g.kh * g.kw, acc);
        epilogue_apply(f->level, a->ep, acc, STORAGE_INT32, 0, a->bias ? a->bias[o] : 0, yt->data,
                       yt->storage, t * out_plane, out_plane);
    }
}

/* The direct depthwise (the record's dw_direct), when it applies: the level has one,
 * the shape is in its record's domain (avx512: column stride <= 2, every 128-bit lane's
 * taps within its 16-byte window, 3 * sw + 3 * dw <= 15, at most 4 tap groups; avx2:
 * column stride <= 2, 3 * sw + 3 * dw <= 9, kw <= 8, at most 32 input rows spanned), and
 * every weight is within int8. */
int depthwise_direct_prerun(conv_grouped* f) {
    const conv_geom& g = f->g;
    const cpu_simd_config* cfg = f->cfg;
    if (!cfg->dw_direct || g.sw > cfg->dw_direct_max_sw ||
        3 * g.sw + 3 * g.dw > cfg->dw_direct_window || g.kw > cfg->dw_direct_max_kw ||
        (g.kh - 1) * g.dh + 1 > cfg->dw_direct_max_rows)
        return CVML_OK;
    const int64_t nw = g.o * g.kh * g.kw;
    for (int64_t i = 0; i < nw; ++i)
        if (f->wg[i] < -128 || f->wg[i] > 127) return CVML_OK;
    const int64_t groups = (g.kw + 3) / 4;
    f->dw.direct.groups = groups;
    f->dw.direct.chunks = (g.ow + 15) / 16;
    f->dw.direct.w4 =
        static_cast<int32_t*>(cvml_mem_calloc(static_cast<size_t>(g.o * g.kh * groups), 4));
    f->dw.direct.corr =
        static_cast<int32_t*>(cvml_mem_calloc(static_cast<size_t>(g.o * (g.kh + 1)), 4));
    f->dw.direct.masks = static_cast<uint64_t*>(
        cvml_mem_calloc(static_cast<size_t>(f->dw.direct.chunks * groups), 8));
    if (!f->dw.direct.w4 || !f->dw.direct.corr || !f->dw.direct.masks)
        return cvml_fail_out_of_memory();
    for (int64_t o = 0; o < g.o; ++o) {
        uint32_t sum = 0;
        for (int64_t r = 0; r < g.kh; ++r) {
            f->dw.direct.corr[o * (g.kh + 1) + r] = static_cast<int32_t>(128u * sum);
            for (int64_t sk = 0; sk < g.kw; ++sk) {
                const int32_t v = f->wg[(o * g.kh + r) * g.kw + sk];
                sum += static_cast<uint32_t>(v);
                uint32_t& dword =
                    reinterpret_cast<uint32_t&>(f->dw.direct.w4[(o * g.kh + r) * groups + sk / 4]);
                dword |= static_cast<uint32_t>(static_cast<uint8_t>(v)) << (8 * (sk % 4));
            }
        }
        f->dw.direct.corr[o * (g.kh + 1) + g.kh] = static_cast<int32_t>(128u * sum);
    }
    // The load of chunk c, group grp starts at input column 16 * c * sw + 4 * grp * dw - pw.
    for (int64_t c = 0; c < f->dw.direct.chunks; ++c)
        for (int64_t grp = 0; grp < groups; ++grp) {
            const int64_t first = 16 * c * g.sw + 4 * grp * g.dw - g.pw;
            f->dw.direct.masks[c * groups + grp] = simd_bits64(-first, g.w - first);
        }
    cpu_path_taken(CPU_PATH_DW_VNNI);
    return CVML_OK;
}

}  // namespace

/* groups > 1: int32 weights, per-thread plane scratch, and the depthwise tap table
 * (that path is taken at run time when the input is stored as int8). */
int grouped_prerun(cpu_node_ctx* ctx, conv_grouped* f, size_t* scratch_bytes) {
    const conv_geom& g = f->g;
    const int64_t nw = g.o * g.ic * g.kh * g.kw;
    f->wg =
        static_cast<int32_t*>(cvml_mem_alloc(sizeof(int32_t) * static_cast<size_t>(nw ? nw : 1)));
    if (!f->wg) return cvml_fail_out_of_memory();
    for (int64_t i = 0; i < nw; ++i) f->wg[i] = cpu_load(ctx->inputs[1], i);
    f->hp = g.h + 2 * g.ph;
    // acc and phase rows get one column of slack, so whole vectors fit.
    f->wq = (g.w + 2 * g.pw + g.sw - 1) / g.sw + 1;
    // The flat stride-1 runs read up to a row and a tap offset past the last plane.
    f->plane_bytes =
        align64(static_cast<size_t>(g.oh * f->wq) * 4) +
        align64(static_cast<size_t>(g.sw * f->hp * f->wq + 2 * f->wq + g.kw * g.dw) * 4 + 64);
    if (g.ic == 1) {
        f->dw.hq = (f->hp + g.sh - 1) / g.sh;
        f->dw.taps = static_cast<int64_t*>(
            cvml_mem_alloc(sizeof(int64_t) * static_cast<size_t>(g.kh * g.kw)));
        if (!f->dw.taps) return cvml_fail_out_of_memory();
        depthwise_taps(f, f->dw.taps);
        f->dw.row_at = phase_row_table(g, f->dw.hq, f->wq);
        if (!f->dw.row_at) return cvml_fail_out_of_memory();
        int rc = depthwise_direct_prerun(f);
        if (rc) return rc;
        // The direct kernel needs no scratch; the others a plane of sums and its image.
        if (!f->dw.direct.w4) {
            f->dw.acc_bytes = align64(static_cast<size_t>(g.oh * g.ow + 16) * 4);
            f->dw.image_bytes =
                align64(static_cast<size_t>(g.sh * g.sw * f->dw.hq * f->wq + 2 * f->wq + 128));
            const size_t dw = f->dw.acc_bytes + f->dw.image_bytes;
            if (dw > f->plane_bytes) f->plane_bytes = dw;
        }
    }
    *scratch_bytes = f->plane_bytes * static_cast<size_t>(f->threads);
    return CVML_OK;
}

void conv_grouped_run(cpu_node_ctx* ctx, const conv_grouped* f, const epilogue* ep,
                      const int32_t* bias) {
    grouped_args a = {ctx, f, ep, bias};
    const int64_t planes = f->g.n * f->g.o;
    if (f->dw.taps && ctx->inputs[0]->storage == STORAGE_INT8)
        cpu_parallel_for_at(ctx, planes, depthwise_planes, &a);
    else
        cpu_parallel_for_at(ctx, planes, grouped_planes, &a);
}

void conv_grouped_free(conv_grouped* f) {
    if (!f) return;
    cvml_mem_free(f->wg);
    cvml_mem_free(f->dw.taps);
    cvml_mem_free(f->dw.row_at);
    cvml_mem_free(f->dw.direct.w4);
    cvml_mem_free(f->dw.direct.masks);
    cvml_mem_free(f->dw.direct.corr);
    cvml_mem_free(f);
}

}  // namespace cpu_conv2d
