/* conv2d on the CPU, byte-exact with upstream's CPU kernels:
 * - groups == 1 (upstream's im2col + int8 GEMM path) casts input and weight values to
 *   int8 (static_cast<int8_t>) before multiplying; the casts land in scratch once per run;
 * - groups > 1 multiplies the int32 values as they are;
 * - every sum wraps mod 2^32 (upstream's -O3 build), so the accumulation order is free.
 * Work is split over (batch, output channel) planes; each plane is written by one call. */
#include "operator/conv2d.h"

#include <stdlib.h>
#include <string.h>

#include "device/cpu/cpu_kernel.h"
#include "device/cpu/simd/gemm_s8.h"
#include "device/cpu/simd/kernel_util.h"
#include "device/cpu/simd/simd.h"
#include "utility/error.h"

namespace {

struct conv_geom {
    int64_t n, c, h, w;    /* input */
    int64_t o, ic, kh, kw; /* weight (o, ic = c / groups, kh, kw) */
    int64_t oh, ow;        /* output spatial */
    int64_t sh, sw, ph, pw, dh, dw;
    int64_t opg; /* output channels per group */
};

template <typename T>
struct conv_args {
    conv_geom g;
    const T* x;
    const T* w;
    const int32_t* bias; /* nullptr without bias */
    int32_t* y;
};

/* First and one-past-last output column whose input column ow*s + off lies in [0, W). */
inline void col_range(int64_t off, int64_t s, int64_t w, int64_t ow, int64_t* lo, int64_t* hi) {
    int64_t a = off >= 0 ? 0 : (-off + s - 1) / s;
    int64_t last = w - 1 - off; /* ow*s <= last */
    int64_t b = last < 0 ? 0 : last / s + 1;
    if (b > ow) b = ow;
    if (a > b) a = b;
    *lo = a;
    *hi = b;
}

template <typename T>
void conv_planes(void* arg, int64_t begin, int64_t end) {
    const conv_args<T>* a = static_cast<const conv_args<T>*>(arg);
    const conv_geom& g = a->g;
    const int64_t plane = g.oh * g.ow;
    for (int64_t t = begin; t < end; ++t) {
        const int64_t n = t / g.o;
        const int64_t o = t % g.o;
        uint32_t* acc = reinterpret_cast<uint32_t*>(a->y + t * plane);
        const uint32_t init = a->bias ? static_cast<uint32_t>(a->bias[o]) : 0u;
        for (int64_t i = 0; i < plane; ++i) acc[i] = init;
        const int64_t c0 = (o / g.opg) * g.ic;
        for (int64_t ic = 0; ic < g.ic; ++ic) {
            const T* xp = a->x + ((n * g.c + c0 + ic) * g.h) * g.w;
            const T* wp = a->w + ((o * g.ic + ic) * g.kh) * g.kw;
            for (int64_t r = 0; r < g.kh; ++r) {
                for (int64_t s = 0; s < g.kw; ++s) {
                    const uint32_t wv =
                        static_cast<uint32_t>(static_cast<int32_t>(wp[r * g.kw + s]));
                    if (wv == 0) continue;
                    const int64_t coff = s * g.dw - g.pw;
                    int64_t lo, hi;
                    col_range(coff, g.sw, g.w, g.ow, &lo, &hi);
                    if (lo >= hi) continue;
                    for (int64_t y = 0; y < g.oh; ++y) {
                        const int64_t ih = y * g.sh + r * g.dh - g.ph;
                        if (ih < 0 || ih >= g.h) continue;
                        const T* xr = xp + ih * g.w;
                        uint32_t* ar = acc + y * g.ow;
                        for (int64_t x = lo; x < hi; ++x)
                            ar[x] += wv * static_cast<uint32_t>(
                                              static_cast<int32_t>(xr[x * g.sw + coff]));
                    }
                }
            }
        }
    }
}

struct cast_args {
    const int32_t* src;
    int8_t* dst;
};

void cast_range(void* arg, int64_t begin, int64_t end) {
    const cast_args* a = static_cast<const cast_args*>(arg);
    for (int64_t i = begin; i < end; ++i) a->dst[i] = static_cast<int8_t>(a->src[i]);
}

conv_geom make_geom(const cpu_node_ctx* ctx) {
    const conv2d_param* p = static_cast<const conv2d_param*>(ctx->param);
    const ir_tensor* x = ctx->inputs[0];
    const ir_tensor* w = ctx->inputs[1];
    const ir_tensor* y = ctx->outputs[0];
    conv_geom g;
    g.n = x->dims[0];
    g.c = x->dims[1];
    g.h = x->dims[2];
    g.w = x->dims[3];
    g.o = w->dims[0];
    g.ic = w->dims[1];
    g.kh = w->dims[2];
    g.kw = w->dims[3];
    g.oh = y->dims[2];
    g.ow = y->dims[3];
    g.sh = p->strides.values[0];
    g.sw = p->strides.values[1];
    g.ph = p->padding.values[0];
    g.pw = p->padding.values[1];
    g.dh = p->dilation.values[0];
    g.dw = p->dilation.values[1];
    g.opg = g.o / p->groups;
    return g;
}

/* ---- fast paths (SIMD levels) ---------------------------------------------------------
 * groups == 1: im2col rows of the int8-cast input packed for the exact int8 GEMM, the
 * weights packed once here. groups > 1: per output plane, int32 multiply-adds over a
 * zero-padded copy of the input plane split by column phase so every row read is
 * contiguous (no cast: upstream's grouped path multiplies int32 values). Both write
 * through the fused tail (kernel_util.h), in the output's storage. */

struct conv_fast {
    int level;
    int threads;
    conv_geom g;
    int64_t N, K;
    gemm_weights w;
    size_t b_bytes, rows_bytes, x8_bytes; /* groups == 1 scratch parts */
    int64_t hp, wp, wq;                   /* groups > 1: padded plane and phase width */
    size_t plane_bytes;                   /* groups > 1: per-thread scratch */
};

size_t align64(size_t v) {
    return (v + 63) & ~static_cast<size_t>(63);
}

/* The image zero-padded and split by column phase (sw), so that every im2col row
 * segment is a contiguous run: xph[((ic*sw + p)*hp + h)*wq + j] = xpad[ic][h][j*sw + p]. */
struct phase_args {
    const conv_fast* f;
    const ir_tensor* x;
    int64_t base; /* first element of the image in x */
    int8_t* xph;
};

void phase_range(void* arg, int64_t begin, int64_t end) {
    const phase_args* a = static_cast<const phase_args*>(arg);
    const conv_fast* f = a->f;
    const conv_geom& g = f->g;
    for (int64_t ic = begin; ic < end; ++ic) {
        int8_t* dst = a->xph + ic * g.sw * f->hp * f->wq;
        const bool copy_rows = a->x->storage == STORAGE_INT8 && g.sw == 1;
        if (copy_rows) {
            // Only the border needs zeros: rows are copied whole below.
            memset(dst, 0, static_cast<size_t>(g.ph * f->wq));
            memset(dst + (g.ph + g.h) * f->wq, 0,
                   static_cast<size_t>((f->hp - g.ph - g.h) * f->wq));
        } else {
            memset(dst, 0, static_cast<size_t>(g.sw * f->hp * f->wq));
        }
        for (int64_t h = 0; h < g.h; ++h) {
            const int64_t src = a->base + (ic * g.h + h) * g.w;
            if (copy_rows) {
                int8_t* d = dst + (h + g.ph) * f->wq;
                memset(d, 0, static_cast<size_t>(g.pw));
                memcpy(d + g.pw, static_cast<const int8_t*>(a->x->data) + src,
                       static_cast<size_t>(g.w));
                memset(d + g.pw + g.w, 0, static_cast<size_t>(f->wq - g.pw - g.w));
                continue;
            }
            // Upstream's groups == 1 path casts every input value to int8.
            cpu_phase_row_any(a->x, src, g.w, g.pw, g.sw, f->hp * f->wq, dst + (h + g.ph) * f->wq);
        }
    }
}

/* Row k = (ic, r, s) of the im2col matrix from the phase-split image, in 16-byte
 * chunks: a chunk may run past the row end into the next row's start (rewritten next)
 * or into the buffers' 64-byte tails. */
void im2col_row(const conv_fast* f, const int8_t* xph, int64_t k, int8_t* row) {
    const conv_geom& g = f->g;
    const int64_t ic = k / (g.kh * g.kw), r = (k / g.kw) % g.kh, s = k % g.kw;
    const int64_t col = s * g.dw, p = col % g.sw, off = col / g.sw;
    const int8_t* plane = xph + (ic * g.sw + p) * f->hp * f->wq + off;
    for (int64_t y = 0; y < g.oh; ++y) {
        const int8_t* src = plane + (y * g.sh + r * g.dh) * f->wq;
        int8_t* dst = row + y * g.ow;
        for (int64_t x = 0; x < g.ow; x += 16) memcpy(dst + x, src + x, 16);
    }
}

struct pack_args {
    const conv_fast* f;
    const int8_t* x; /* direct: the int8 image; else the phase-split image */
    bool direct;
    uint8_t* rows; /* per slot: GEMM_KG rows of N */
    void* packed;
};

void pack_slot(void* arg, int64_t begin, int64_t end) {
    const pack_args* a = static_cast<const pack_args*>(arg);
    const conv_fast* f = a->f;
    const int64_t k4n = (f->K + GEMM_KG - 1) / GEMM_KG;
    for (int64_t slot = begin; slot < end; ++slot) {
        int8_t* buf =
            reinterpret_cast<int8_t*>(a->rows + static_cast<size_t>(slot) * f->rows_bytes);
        for (int64_t k4 = k4n * slot / f->threads; k4 < k4n * (slot + 1) / f->threads; ++k4) {
            const int8_t* rows[GEMM_KG];
            for (int i = 0; i < GEMM_KG; ++i) {
                int64_t k = k4 * GEMM_KG + i;
                if (k >= f->K) {
                    rows[i] = nullptr;
                } else if (a->direct) {
                    rows[i] = a->x + k * f->N;
                } else {
                    int8_t* row = buf + static_cast<size_t>(i) * static_cast<size_t>(f->N);
                    im2col_row(f, a->x, k, row);
                    rows[i] = row;
                }
            }
            gemm_pack_b_group(f->level, rows, static_cast<int32_t>(f->N),
                              static_cast<int32_t>(f->K), static_cast<int32_t>(k4), a->packed);
        }
    }
}

struct cast8_args {
    const ir_tensor* t;
    int64_t base;
    int8_t* dst;
};

void cast8_range(void* arg, int64_t begin, int64_t end) {
    const cast8_args* a = static_cast<const cast8_args*>(arg);
    const int32_t* src = static_cast<const int32_t*>(a->t->data) + a->base;
    for (int64_t i = begin; i < end; ++i) a->dst[i] = static_cast<int8_t>(src[i]);
}

struct gemm_args {
    const conv_fast* f;
    const void* packed;
    const epilogue* ep;
    const int32_t* bias;
    void* out;
    int32_t out_storage;
    int64_t out_base;
};

void conv_tile(void* arg, int32_t m0, int32_t rows, int32_t n0, int32_t cols, const int32_t* tile) {
    const gemm_args* a = static_cast<const gemm_args*>(arg);
    for (int32_t r = 0; r < rows; ++r) {
        const int64_t m = m0 + r;
        epilogue_apply(a->f->level, a->ep, tile + r * GEMM_NT, STORAGE_INT32, 0,
                       a->bias ? a->bias[m] : 0, a->out, a->out_storage,
                       a->out_base + m * a->f->N + n0, cols);
    }
}

void gemm_range(void* arg, int64_t begin, int64_t end) {
    const gemm_args* a = static_cast<const gemm_args*>(arg);
    gemm_run_tiles(&a->f->w, a->packed, static_cast<int32_t>(a->f->N), begin, end, conv_tile, arg);
}

int conv_gemm_run(cpu_node_ctx* ctx, const conv_fast* f, const epilogue* ep, const int32_t* bias) {
    const conv_geom& g = f->g;
    uint8_t* scratch = static_cast<uint8_t*>(ctx->scratch);
    void* packed = scratch;
    uint8_t* rows = scratch + f->b_bytes;
    int8_t* x8buf =
        reinterpret_cast<int8_t*>(rows + f->rows_bytes * static_cast<size_t>(f->threads));
    const ir_tensor* xt = ctx->inputs[0];
    const ir_tensor* yt = ctx->outputs[0];
    const int64_t chw = g.c * g.h * g.w;
    const bool direct = g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 &&
                        g.pw == 0 && g.oh == g.h && g.ow == g.w;
    for (int64_t n = 0; n < g.n; ++n) {
        const int8_t* x8;
        if (direct && xt->storage == STORAGE_INT8) {
            x8 = static_cast<const int8_t*>(xt->data) + n * chw;
        } else if (direct) {
            // Upstream's groups == 1 path casts every input value to int8.
            cast8_args c = {xt, n * chw, x8buf};
            cpu_parallel_for(ctx, chw, cast8_range, &c);
            x8 = x8buf;
        } else {
            phase_args pa = {f, xt, n * chw, x8buf};
            cpu_parallel_for(ctx, g.c, phase_range, &pa);
            x8 = x8buf;
        }
        pack_args pa = {f, x8, direct, rows, packed};
        cpu_for_each_slot(ctx, pack_slot, &pa);
        gemm_args ga = {f, packed, ep, bias, yt->data, yt->storage, n * g.o * f->N};
        cpu_parallel_for(ctx,
                         gemm_tile_count(static_cast<int32_t>(g.o), static_cast<int32_t>(f->N)),
                         gemm_range, &ga);
    }
    return CVML_OK;
}

/* acc[i] += w * src[i], wrapping; one copy per instruction set so each vectorizes. */
#define CONV_ACC_ROW_BODY \
    for (int64_t i = 0; i < n; ++i) acc[i] += w * static_cast<uint32_t>(src[i]);
#if CVML_SIMD_X86
CVML_TARGET_AVX512 void acc_row_avx512(uint32_t* acc, const int32_t* src, uint32_t w,
                                       int64_t n){CONV_ACC_ROW_BODY} CVML_TARGET_AVX2
    void acc_row_avx2(uint32_t* acc, const int32_t* src, uint32_t w, int64_t n) {
    CONV_ACC_ROW_BODY
}
#endif
void acc_row_plain(uint32_t* acc, const int32_t* src, uint32_t w, int64_t n) {
    CONV_ACC_ROW_BODY
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
    const int32_t* wt = static_cast<const int32_t*>(a->ctx->inputs[1]->data);
    const ir_tensor* yt = a->ctx->outputs[0];
    void (*acc_row)(uint32_t*, const int32_t*, uint32_t, int64_t) = acc_row_plain;
#if CVML_SIMD_X86
    if (f->level == CPU_SIMD_AVX512) acc_row = acc_row_avx512;
    if (f->level == CPU_SIMD_AVX2) acc_row = acc_row_avx2;
#endif
    const int64_t planes = g.n * g.o, plane = g.oh * g.ow;
    for (int64_t slot = begin; slot < end; ++slot) {
        uint8_t* base = static_cast<uint8_t*>(a->ctx->scratch) + f->plane_bytes * slot;
        uint32_t* acc = reinterpret_cast<uint32_t*>(base);
        int32_t* ph = reinterpret_cast<int32_t*>(base + align64(static_cast<size_t>(plane) * 4));
        for (int64_t t = planes * slot / f->threads; t < planes * (slot + 1) / f->threads; ++t) {
            const int64_t n = t / g.o, o = t % g.o;
            memset(acc, 0, static_cast<size_t>(plane) * 4);
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
                        for (int64_t y = 0; y < g.oh; ++y)
                            acc_row(acc + y * g.ow,
                                    ph + (p * f->hp + y * g.sh + r * g.dh) * f->wq + off, wv, g.ow);
                    }
            }
            epilogue_apply(f->level, a->ep, acc, STORAGE_INT32, 0, a->bias ? a->bias[o] : 0,
                           yt->data, yt->storage, t * plane, plane);
        }
    }
}

int conv_fast_prerun(cpu_node_ctx* ctx, const conv_geom& g, size_t* scratch_bytes) {
    conv_fast* f = static_cast<conv_fast*>(calloc(1, sizeof(conv_fast)));
    if (!f) return cvml_fail(CVML_ERR_RUNTIME, "out of memory");
    const conv2d_param* p = static_cast<const conv2d_param*>(ctx->param);
    f->level = cpu_level(ctx);
    f->threads = cpu_threads(ctx);
    f->g = g;
    f->N = g.oh * g.ow;
    f->K = g.ic * g.kh * g.kw;
    if (p->groups == 1) {
        if (f->K > INT32_MAX / 2 || f->N > INT32_MAX / 2 || g.o > INT32_MAX / 2) {
            free(f);
            return cvml_fail(CVML_ERR_RUNTIME, "conv2d: sizes too large");
        }
        int rc = gemm_weights_pack(f->level, cpu_in(ctx, 1), static_cast<int32_t>(g.o),
                                   static_cast<int32_t>(f->K), &f->w);
        if (rc) {
            free(f);
            return rc;
        }
        f->b_bytes =
            align64(gemm_b_bytes(f->level, static_cast<int32_t>(f->K), static_cast<int32_t>(f->N)));
        f->rows_bytes = align64(static_cast<size_t>(GEMM_KG * f->N) + 64);
        f->hp = g.h + 2 * g.ph;
        f->wp = g.w + 2 * g.pw;
        f->wq = (f->wp + g.sw - 1) / g.sw + 16;
        size_t phased = static_cast<size_t>(g.c * g.sw * f->hp * f->wq);
        size_t flat = static_cast<size_t>(g.c * g.h * g.w);
        f->x8_bytes = align64((phased > flat ? phased : flat) + 64);
        *scratch_bytes = f->b_bytes + f->rows_bytes * static_cast<size_t>(f->threads) + f->x8_bytes;
    } else {
        f->hp = g.h + 2 * g.ph;
        f->wp = g.w + 2 * g.pw;
        f->wq = (f->wp + g.sw - 1) / g.sw + 1;
        f->plane_bytes = align64(static_cast<size_t>(f->N) * 4) +
                         align64(static_cast<size_t>(g.sw * f->hp * f->wq) * 4 + 64);
        *scratch_bytes = f->plane_bytes * static_cast<size_t>(f->threads);
    }
    ctx->state = f;
    ctx->caps = CPU_CAP_TAIL | CPU_CAP_NARROW_OUT | CPU_CAP_NARROW_IN(0);
    return CVML_OK;
}

int conv_fast_run(cpu_node_ctx* ctx, const conv_fast* f) {
    const conv2d_param* p = static_cast<const conv2d_param*>(ctx->param);
    const int32_t* bias = p->use_bias ? cpu_in(ctx, 2) : nullptr;
    epilogue ep;
    cpu_tail_epilogue(ctx, &ep);
    if (p->groups == 1) return conv_gemm_run(ctx, f, &ep, bias);
    grouped_args a = {ctx, f, &ep, bias};
    cpu_for_each_slot(ctx, grouped_slot, &a);
    return CVML_OK;
}

void conv2d_postrun(cpu_node_ctx* ctx) {
    conv_fast* f = static_cast<conv_fast*>(ctx->state);
    if (f) gemm_weights_free(&f->w);
    free(f);
    ctx->state = nullptr;
}

int conv2d_prerun(cpu_node_ctx* ctx, size_t* scratch_bytes) {
    const conv2d_param* p = static_cast<const conv2d_param*>(ctx->param);
    const conv_geom g = make_geom(ctx);
    // Verification (D5) guarantees these; a kernel must still never index past its buffers.
    if (g.o != p->channels || g.ic * p->groups != g.c || ctx->outputs[0]->dims[1] != g.o ||
        ctx->outputs[0]->dims[0] != g.n)
        return cvml_fail(CVML_ERR_RUNTIME, "conv2d: weight and output shapes disagree");
    *scratch_bytes = 0;
    // The reference loops are the scalar level; the others take the fast paths.
    if (cpu_level(ctx) != CPU_SIMD_SCALAR) return conv_fast_prerun(ctx, g, scratch_bytes);
    if (p->groups == 1)
        *scratch_bytes = static_cast<size_t>(g.n * g.c * g.h * g.w + g.o * g.ic * g.kh * g.kw);
    return CVML_OK;
}

int conv2d_run(cpu_node_ctx* ctx) {
    if (ctx->state) return conv_fast_run(ctx, static_cast<const conv_fast*>(ctx->state));
    const conv2d_param* p = static_cast<const conv2d_param*>(ctx->param);
    const conv_geom g = make_geom(ctx);
    const int32_t* bias = p->use_bias ? cpu_in(ctx, 2) : nullptr;
    if (p->groups == 1) {
        const int64_t nx = g.n * g.c * g.h * g.w;
        const int64_t nw = g.o * g.ic * g.kh * g.kw;
        int8_t* x8 = static_cast<int8_t*>(ctx->scratch);
        int8_t* w8 = x8 + nx;
        cast_args cx = {cpu_in(ctx, 0), x8};
        cpu_parallel_for(ctx, nx, cast_range, &cx);
        cast_args cw = {cpu_in(ctx, 1), w8};
        cpu_parallel_for(ctx, nw, cast_range, &cw);
        conv_args<int8_t> a = {g, x8, w8, bias, cpu_out(ctx, 0)};
        cpu_parallel_for(ctx, g.n * g.o, conv_planes<int8_t>, &a);
    } else {
        conv_args<int32_t> a = {g, cpu_in(ctx, 0), cpu_in(ctx, 1), bias, cpu_out(ctx, 0)};
        cpu_parallel_for(ctx, g.n * g.o, conv_planes<int32_t>, &a);
    }
    return CVML_OK;
}

const cpu_kernel conv2d_kernel = {"conv2d", conv2d_prerun, conv2d_run, conv2d_postrun};

}  // namespace

int register_cpu_op_conv2d(void) {
    return cpu_kernel_registry_add(&conv2d_kernel);
}
int unregister_cpu_op_conv2d(void) {
    return cpu_kernel_registry_remove(&conv2d_kernel);
}
