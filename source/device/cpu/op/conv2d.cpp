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
 * groups == 1: an implicit im2col. The int8-cast input is copied once per image into a
 * zero-padded image split into stride phases (below), in which every im2col row is a
 * contiguous run; strips of GEMM_NT columns are packed from it straight into the GEMM's
 * B layout and multiplied with the weights, packed once at prerun (or used in place).
 * groups > 1 (no cast: upstream's grouped path multiplies int32 values): depthwise on an
 * int8-stored input folds each output row tap by tap in vector registers (below);
 * otherwise, per output plane, int32 multiply-adds over a zero-padded copy of the input
 * plane split by column phase so every row read is contiguous. All write through the
 * fused tail (kernel_util.h), in the output's storage. */

struct conv_fast {
    int level;
    int threads;
    conv_geom g;
    int64_t N, K;
    gemm_weights w;
    /* groups == 1 */
    bool direct;    /* 1x1, stride 1, no padding: the input itself is the image */
    int64_t hq, wq; /* rows and columns of one phase plane */
    int64_t nf;     /* GEMM columns: oh rows of wq (the wq - ow last ones dropped) */
    size_t strip_bytes, image_bytes;
    int64_t* taps;            /* where im2col row k starts in the image */
    int64_t* row_at;          /* padded row r: its start in a channel's image (phase 0) */
    bool* row_read;           /* padded row r is read by a tap (a 1x1 stride-2 conv reads
                                 every other row): the others are not built */
    int64_t channel_stride;   /* sh * sw phase planes */
    int64_t strips;           /* GEMM_NT-column strips of the GEMM columns */
    bool tail_merged;         /* a narrow last strip is run with the one before it */
    size_t packed_bytes;      /* a packed strip; then, when tail_merged, the tail's columns */
    struct strip_keep* keeps; /* per strip: its stored columns */
    /* Dense mode (avx512, when it saves work): the GEMM columns are the N output pixels,
     * not nf flat columns, so no column is computed to be dropped; each strip is packed
     * from the flat columns it spans (dense_strip), and a last strip of at most
     * GEMM_NARROW columns is done by dot products (gemm_run_narrow). */
    bool dense;
    struct dense_strip* dstrips;
    /* Taps mode (avx512, stride 1, small weights, not dense): the image is channel-
     * interleaved by 4 ([C/4][hq][wq][4], u8 x + 128), so every k4 step of B is a 64-byte
     * load from it at boff[k4] and nothing is packed (packing wrote 9 bytes per image
     * byte of a 3x3 conv); the weights are a copy whose K runs (group of 4 channels, r, s,
     * channel in the group). Only where the copy is small: it doubles those weights. */
    bool taps4;
    int8_t* w4;
    int64_t* boff;
    int64_t groups4;              /* ceil(C / 4) */
    int8_t pad_row[GEMM_NT + 64]; /* im2col rows past K: -128, which packs to u8 0 */
    /* groups > 1 */
    int64_t hp, wp;
    size_t plane_bytes; /* per-thread scratch */
    int64_t* dw_taps;   /* depthwise: tap offsets in the plane image */
    size_t dw_acc_bytes;
    /* Depthwise with vpdpbusd (avx512, stride 1, kernel width <= 4, int8 weights): per channel,
     * each kernel row's weights as one dword (zeros past kw), and 128 * their sum. */
    int32_t* dw_w4;
    int32_t* dw_corr;
    int64_t dw_owp;        /* row stride of the row-interleaved image, in pixels */
    int64_t* dw_row_of;    /* kernel row r: its row of that image for output row 0, in bytes */
    size_t dw_rows_bytes;  /* that image */
    size_t dw_image_bytes; /* the phase image */
    int32_t* wg;           /* the weights as int32 */
};

size_t align64(size_t v) {
    return (v + 63) & ~static_cast<size_t>(63);
}

/* The image: zero-padded (ph, pw) and split into sh x sw phases of hq x wq values,
 * phase (pr, pc) holding padded rows pr, pr + sh, ... and columns pc, pc + sw, ...:
 *   img[((ic*sh + pr)*sw + pc)*hq*wq + i*wq + j] = xpad[ic][i*sh + pr][j*sw + pc].
 * Output (y, x) then reads tap (r, s) at taps[k] + y*wq + x, so GEMM column y*wq + x
 * is one flat run per tap over every output row; columns x >= ow read padding or the
 * next row and are computed but never stored. */
struct image_args {
    const conv_fast* f;
    const ir_tensor* x;
    int64_t base; /* first element of the image in x */
    int8_t* img;
};

/* Zeros padded row r of a channel's image (its segment in every column phase). */
void image_zero_row(const conv_fast* f, int8_t* channel, int64_t r) {
    const int64_t plane = f->hq * f->wq;
    for (int64_t pc = 0; pc < f->g.sw; ++pc)
        memset(channel + f->row_at[r] + pc * plane, 0, static_cast<size_t>(f->wq));
}

/* Image rows are built item by item, an item being input row h of channel ic, stepped
 * by the caller (++h) without dividing. Returns the item's channel image, after moving
 * to the next channel past its last row and zeroing the padding rows above and below
 * the channel at its first and last row. */
inline int8_t* image_item(const image_args* a, int64_t* ic, int64_t* h) {
    const conv_fast* f = a->f;
    const conv_geom& g = f->g;
    if (*h == g.h) {
        *h = 0;
        ++*ic;
    }
    int8_t* channel = a->img + *ic * f->channel_stride;
    if (*h == 0)
        for (int64_t r = 0; r < g.ph; ++r) image_zero_row(f, channel, r);
    if (*h == g.h - 1)
        for (int64_t r = g.ph + g.h; r < f->hq * g.sh; ++r) image_zero_row(f, channel, r);
    return channel;
}

#if CVML_SIMD_X86
/* image_rows for an int8 input with column stride 1 or 2 at avx512 (every convolution
 * after the first): lane L of 64 loaded from the input row holds padded column L (the
 * load mask leaves the padding zero), and with stride 2 its even and odd lanes are the
 * two column phases; one masked store per phase row writes the values and the zeros
 * around them (a masked-off lane never touches memory), so nothing is cleared first.
 * The masks are the same for every row and made once per call. */
template <int SW>
CVML_TARGET_AVX512 void image_rows_i8_avx512(const image_args* a, int64_t begin, int64_t end) {
    const conv_fast* f = a->f;
    const conv_geom& g = f->g;
    constexpr int kMaxChunks = 8;
    constexpr int64_t kOut = 64 / SW;  // phase row bytes per 64 input lanes
    const int64_t chunks = (f->wq + kOut - 1) / kOut;
    __mmask64 load[kMaxChunks], store[kMaxChunks];
    auto load_mask = [&](int64_t c) { return simd_bits64(g.pw - 64 * c, g.pw + g.w - 64 * c); };
    auto store_mask = [&](int64_t c) { return simd_bits64(0, f->wq - kOut * c); };
    for (int64_t c = 0; c < chunks && c < kMaxChunks; ++c) {
        load[c] = load_mask(c);
        store[c] = store_mask(c);
    }
    const int64_t plane = f->hq * f->wq;
    const int8_t* x = static_cast<const int8_t*>(a->x->data) + a->base;
    int64_t ic = begin / g.h, h = begin % g.h;
    for (int64_t item = begin; item < end; ++item, ++h) {
        int8_t* channel = image_item(a, &ic, &h);
        if (!f->row_read[h + g.ph]) continue;
        const int8_t* in = x + item * g.w - g.pw;
        int8_t* row = channel + f->row_at[h + g.ph];
        for (int64_t c = 0; c < chunks; ++c) {
            const __mmask64 lm = c < kMaxChunks ? load[c] : load_mask(c);
            const __mmask64 sm = c < kMaxChunks ? store[c] : store_mask(c);
            const __m512i v = _mm512_maskz_loadu_epi8(lm, in + 64 * c);
            if (SW == 1) {
                _mm512_mask_storeu_epi8(row + 64 * c, sm, v);
                continue;
            }
            const __mmask32 sm32 = static_cast<__mmask32>(sm);
            _mm256_mask_storeu_epi8(row + 32 * c, sm32, _mm512_cvtepi16_epi8(v));
            _mm256_mask_storeu_epi8(row + plane + 32 * c, sm32,
                                    _mm512_cvtepi16_epi8(_mm512_srli_epi16(v, 8)));
        }
    }
}
#endif

/* One int32 input row (stride 1 or 2) into its phase row(s), cast to int8 as upstream's
 * groups == 1 path does, in vector-sized chunks. */
void image_row_from_i32(const conv_fast* f, const int32_t* src, int8_t* row) {
    const conv_geom& g = f->g;
    if (g.sw == 1) {
        simd_narrow_i32_i8(f->level, src, g.w, row + g.pw);
        return;
    }
    int8_t chunk[256];
    for (int64_t x = 0; x < g.w; x += 256) {  // x even: chunk parity is the row's
        const int64_t n = g.w - x < 256 ? g.w - x : 256;
        simd_narrow_i32_i8(f->level, src + x, n, chunk);
        cpu_phase_row2_i8(f->level, chunk, n, g.pw, f->hq * f->wq, row + x / 2);
    }
}

/* Items are input rows (ic, h), so even a 3-channel image splits evenly over threads;
 * the first and last row of a channel also zero the padding rows above and below.
 * Rows are a few dozen bytes, so (ic, h) are stepped and row starts looked up rather
 * than divided out: four 64-bit divisions per row took most of this function's time. */
void image_rows(void* arg, int64_t begin, int64_t end) {
    const image_args* a = static_cast<const image_args*>(arg);
    const conv_fast* f = a->f;
    const conv_geom& g = f->g;
    const int64_t plane = f->hq * f->wq;
#if CVML_SIMD_X86
    if (a->x->storage == STORAGE_INT8 && f->level == CPU_SIMD_AVX512) {
        if (g.sw == 1) {
            image_rows_i8_avx512<1>(a, begin, end);
            return;
        }
        if (g.sw == 2) {
            image_rows_i8_avx512<2>(a, begin, end);
            return;
        }
    }
#endif
    int64_t ic = begin / g.h, h = begin % g.h;
    for (int64_t item = begin; item < end; ++item, ++h) {
        int8_t* channel = image_item(a, &ic, &h);
        if (!f->row_read[h + g.ph]) continue;
        const int64_t src = a->base + item * g.w;
        const int64_t hp = h + g.ph;
        int8_t* row = channel + f->row_at[hp];
        if (a->x->storage == STORAGE_INT8 && g.sw == 1) {
            const int8_t* in = static_cast<const int8_t*>(a->x->data) + src;
            memset(row, 0, static_cast<size_t>(g.pw));
            memcpy(row + g.pw, in, static_cast<size_t>(g.w));
            memset(row + g.pw + g.w, 0, static_cast<size_t>(f->wq - g.pw - g.w));
            continue;
        }
        image_zero_row(f, channel, hp);
        if (a->x->storage == STORAGE_INT32 && g.sw <= 2) {
            image_row_from_i32(f, static_cast<const int32_t*>(a->x->data) + src, row);
        } else if (a->x->storage == STORAGE_INT8 && g.sw == 2) {
            cpu_phase_row2_i8(f->level, static_cast<const int8_t*>(a->x->data) + src, g.w, g.pw,
                              plane, row);
        } else {
            // Upstream's groups == 1 path casts every input value to int8.
            cpu_phase_row_any(a->x, src, g.w, g.pw, g.sw, plane, row);
        }
    }
}

struct cast8_args {
    int level;
    const ir_tensor* t;
    int64_t base;
    int8_t* dst;
};

void cast8_range(void* arg, int64_t begin, int64_t end) {
    const cast8_args* a = static_cast<const cast8_args*>(arg);
    if (a->t->storage == STORAGE_INT32) {
        simd_narrow_i32_i8(a->level, static_cast<const int32_t*>(a->t->data) + a->base + begin,
                           end - begin, a->dst + begin);
        return;
    }
    for (int64_t i = begin; i < end; ++i)
        a->dst[i] = static_cast<int8_t>(cpu_load(a->t, a->base + i));
}

/* A strip is GEMM_NT GEMM columns (one n-tile): each thread packs its own strips into a
 * small buffer that stays in cache while every output channel block is computed over
 * it, so a conv2d has one parallel region per image after the image copy. */
struct strip_args {
    const conv_fast* f;
    const int8_t* img;
    bool padded; /* img has slack after it, so packing may read whole 16-column groups */
    const epilogue* ep;
    const int32_t* bias;
    void* out;
    int32_t out_storage;
    int64_t out_base;
    uint8_t* scratch; /* per slot: strip_bytes */
};

/* The GEMM columns of a strip that are stored (x < ow): they are consecutive output
 * pixels from `first` on, so a tile row is compacted and written as one run. Built at
 * prerun, one per strip. */
struct strip_keep {
    int64_t first;
    ep_tile_keep tile;
};

struct strip_tile_args {
    const strip_args* s;
    const strip_keep* keep;
};

void strip_tile(void* arg, int32_t m0, int32_t rows, int32_t n0, int32_t cols,
                const int32_t* tile) {
    (void)n0;
    (void)cols;
    const strip_tile_args* t = static_cast<const strip_tile_args*>(arg);
    const strip_args* a = t->s;
    const strip_keep* k = t->keep;
    if (k->tile.count == 0) return;
    epilogue_apply_tile(a->f->level, a->ep, tile, GEMM_NT, rows, &k->tile,
                        a->bias ? a->bias + m0 : nullptr, a->out, a->out_storage,
                        a->out_base + m0 * a->f->N + k->first, a->f->N);
}

/* Dense mode: where strip st starts among the flat columns, and how its columns are
 * picked from the 64 flat ones from there (unused by a narrow strip). */
struct dense_strip {
    int64_t flat0;
    gemm_select sel;
};

/* Flat column of output pixel p (row p / ow, column p % ow). */
inline int64_t flat_of(const conv_fast* f, int64_t p) {
    return p / f->g.ow * f->wq + p % f->g.ow;
}

int32_t strip_cols(const conv_fast* f, int64_t st) {
    const int64_t n = f->dense ? f->N : f->nf, n0 = st * GEMM_NT;
    return static_cast<int32_t>(n - n0 < GEMM_NT ? n - n0 : GEMM_NT);
}

/* A last strip of a few columns (N % 48 <= GEMM_NARROW, flat or dense) is done by dot
 * products along K rather than a 16-column tile. */
bool strip_is_narrow(const conv_fast* f, int64_t st) {
    return !f->taps4 && strip_cols(f, st) <= GEMM_NARROW && gemm_narrow_ok(&f->w);
}

/* Fills d for dense strip st; false when its columns do not fit the selection (more
 * than 64 flat columns, or a panel spread over more than two flat panels). */
bool dense_strip_of(const conv_fast* f, int64_t st, dense_strip* d) {
    memset(d, 0, sizeof *d);
    const int64_t p0 = st * GEMM_NT;
    const int32_t cols = strip_cols(f, st);
    d->flat0 = flat_of(f, p0);
    if (flat_of(f, p0 + cols - 1) - d->flat0 >= 64) return false;
    d->sel.panels = (cols + 15) / 16;
    for (int32_t i = 0; i < d->sel.panels; ++i) {
        const int64_t from = (flat_of(f, p0 + 16 * i) - d->flat0) / 16;
        d->sel.from[i] = static_cast<int32_t>(from);
        for (int32_t j = 0; j < 16 && 16 * i + j < cols; ++j) {
            const int64_t rel = flat_of(f, p0 + 16 * i + j) - d->flat0 - 16 * from;
            if (rel >= 32) return false;
            d->sel.idx[i][j] = static_cast<uint8_t>(rel);
        }
    }
    return gemm_select_ok(&d->sel) != 0;
}

/* The 16-column vectors computed for n GEMM columns, in halves: 48-column strips, and a
 * narrow tail (dot products) counted as one half. */
int64_t half_vectors(int64_t n) {
    const int64_t rest = n % GEMM_NT;
    return 6 * (n / GEMM_NT) + (rest == 0 ? 0 : rest <= GEMM_NARROW ? 1 : 2 * ((rest + 15) / 16));
}

/* Dense mode pays when it saves at least 5% of the 16-column vectors computed (its
 * packing does a little more work). */
bool dense_pays(const conv_fast* f) {
    if (f->level != CPU_SIMD_AVX512 || f->direct || f->nf == f->N || !gemm_narrow_ok(&f->w))
        return false;
    return 20 * half_vectors(f->N) <= 19 * half_vectors(f->nf);
}

/* Dense columns are all output pixels (n0 + c); a flat column y * wq + x is pixel
 * y * ow + x when x < ow, and dropped otherwise. */
void strip_keep_of(const conv_fast* f, int64_t n0, int32_t cols, strip_keep* k) {
    uint16_t mask[GEMM_NT / 16] = {0, 0, 0};
    k->first = -1;
    for (int32_t c = 0; c < cols; ++c) {
        int64_t pixel = n0 + c;
        if (!f->dense) {
            const int64_t y = pixel / f->wq, x = pixel % f->wq;
            if (x >= f->g.ow) continue;
            pixel = y * f->g.ow + x;
        }
        if (k->first < 0) k->first = pixel;
        mask[c / 16] = static_cast<uint16_t>(mask[c / 16] | (1u << (c % 16)));
    }
    epilogue_tile_keep(&k->tile, mask, cols);
}

void pack_strip(const strip_args* a, int64_t n0, int32_t cols, void* packed) {
    const conv_fast* f = a->f;
    // With slack after the image, whole 16-column groups are read (the extra columns
    // are dropped); the input tensor itself is read exactly.
    const int32_t width = a->padded ? (cols + 15) / 16 * 16 : cols;
    gemm_pack_b_rows(f->level, a->img + n0, f->taps, f->pad_row, width, static_cast<int32_t>(f->K),
                     packed);
}

/* A narrow strip's columns for gemm_run_narrow: each one's K image values as u8 x + 128,
 * zeros after them. */
void gather_narrow(const strip_args* a, int64_t p0, int32_t cols, uint8_t* dst) {
    const conv_fast* f = a->f;
    const size_t stride = gemm_narrow_stride(static_cast<int32_t>(f->K));
    for (int32_t j = 0; j < cols; ++j) {
        const int8_t* src = a->img + (f->dense ? flat_of(f, p0 + j) : p0 + j);
        uint8_t* col = dst + stride * static_cast<size_t>(j);
        for (int64_t k = 0; k < f->K; ++k)
            col[k] = static_cast<uint8_t>(static_cast<uint8_t>(src[f->taps[k]]) ^ 0x80u);
        memset(col + f->K, 0, stride - static_cast<size_t>(f->K));
    }
}

/* Packs strip st and runs output channel blocks [mb0, mb1) over it. */
void strip_run(const strip_args* a, int64_t st, int64_t mb0, int64_t mb1, void* packed) {
    const conv_fast* f = a->f;
    const int64_t n0 = st * GEMM_NT;
    const int32_t cols = strip_cols(f, st);
    strip_tile_args ta = {a, &f->keeps[st]};
    if (f->taps4) {
        gemm_run_tiles_taps(&f->w, reinterpret_cast<const uint8_t*>(a->img) + n0 * 4, f->boff, cols,
                            mb0, mb1, strip_tile, &ta);
        return;
    }
    if (strip_is_narrow(f, st)) {
        uint8_t* b = static_cast<uint8_t*>(packed);
        gather_narrow(a, n0, cols, b);
        gemm_run_narrow(&f->w, b, cols, static_cast<int32_t>(n0), mb0, mb1, strip_tile, &ta);
        return;
    }
    if (f->dense) {
        const dense_strip& d = f->dstrips[st];
        gemm_pack_b_select(f->level, a->img + d.flat0, f->taps, f->pad_row,
                           static_cast<int32_t>(f->K), &d.sel, packed);
    } else {
        pack_strip(a, n0, cols, packed);
    }
    if (!f->tail_merged || st != f->strips - 2) {
        gemm_run_tiles(&f->w, packed, cols, mb0, mb1, strip_tile, &ta);
        return;
    }
    // The narrow tail goes block by block with the strip before it, so each block's
    // weights are read from memory once for both (deep layers: weights >> L2).
    uint8_t* tail = static_cast<uint8_t*>(packed) + f->packed_bytes;
    const int32_t tail_cols = strip_cols(f, st + 1);
    gather_narrow(a, n0 + GEMM_NT, tail_cols, tail);
    strip_tile_args tail_ta = {a, &f->keeps[st + 1]};
    for (int64_t mb = mb0; mb < mb1; ++mb) {
        gemm_run_tiles(&f->w, packed, cols, mb, mb + 1, strip_tile, &ta);
        gemm_run_narrow(&f->w, tail, tail_cols, static_cast<int32_t>(n0 + GEMM_NT), mb, mb + 1,
                        strip_tile, &tail_ta);
    }
}

void strip_slot(void* arg, int64_t begin, int64_t end) {
    const strip_args* a = static_cast<const strip_args*>(arg);
    const conv_fast* f = a->f;
    const conv_geom& g = f->g;
    const int64_t strips = f->strips - (f->tail_merged ? 1 : 0);
    const int64_t mblocks = (g.o + GEMM_MR - 1) / GEMM_MR;
    // With a few strips per thread or more, each thread takes whole strips. With fewer
    // (deep layers: 7x7 outputs) the output channels are split into parts too, and the
    // items (part, strip) are dealt part-major, so every thread gets a share of every
    // strip (strips differ in width: the last is narrow); a thread packs each strip
    // it touches once and runs its consecutive parts over it.
    int64_t mparts = 1;
    if (strips < 4 * f->threads) {
        mparts = (4 * f->threads + strips - 1) / strips;
        if (mparts > mblocks) mparts = mblocks;
    }
    const int64_t items = strips * mparts;
    for (int64_t slot = begin; slot < end; ++slot) {
        void* packed = a->scratch + f->strip_bytes * static_cast<size_t>(slot);
        const int64_t i0 = items * slot / f->threads, i1 = items * (slot + 1) / f->threads;
        if (mparts == 1) {
            for (int64_t st = i0; st < i1; ++st) strip_run(a, st, 0, mblocks, packed);
            continue;
        }
        for (int64_t st = 0; st < strips; ++st) {
            // Parts mp with i0 <= mp * strips + st < i1.
            const int64_t lo = i0 - st <= 0 ? 0 : (i0 - st + strips - 1) / strips;
            const int64_t hi = i1 - 1 - st < 0 ? -1 : (i1 - 1 - st) / strips;
            if (lo > hi) continue;
            strip_run(a, st, mblocks * lo / mparts, mblocks * (hi + 1) / mparts, packed);
        }
    }
}

/* The c4 image of taps mode. Items are (group of 4 channels, input row); the first and
 * last row of a group also fill the padding rows (0x80: the value 0 after + 128). */
void image4_rows(void* arg, int64_t begin, int64_t end) {
    const image_args* a = static_cast<const image_args*>(arg);
    const conv_fast* f = a->f;
    const conv_geom& g = f->g;
    const size_t row_bytes = static_cast<size_t>(f->wq) * 4;
    int64_t grp = begin / g.h, h = begin % g.h;  // stepped, as in image_rows
    for (int64_t item = begin; item < end; ++item, ++h) {
        if (h == g.h) {
            h = 0;
            ++grp;
        }
        uint8_t* plane =
            reinterpret_cast<uint8_t*>(a->img) + static_cast<size_t>(grp * f->hq) * row_bytes;
        if (h == 0) memset(plane, 0x80, row_bytes * static_cast<size_t>(g.ph));
        if (h == g.h - 1)
            memset(plane + static_cast<size_t>(g.ph + g.h) * row_bytes, 0x80,
                   row_bytes * static_cast<size_t>(f->hq - g.ph - g.h));
        uint8_t* row = plane + static_cast<size_t>(g.ph + h) * row_bytes;
        if (a->x->storage == STORAGE_INT8) {
            const int8_t* rows[4];
            for (int64_t i = 0; i < 4; ++i) {
                const int64_t c = grp * 4 + i;
                rows[i] =
                    c < g.c ? static_cast<const int8_t*>(a->x->data) + a->base + (c * g.h + h) * g.w
                            : nullptr;
            }
            gemm_interleave4(f->level, rows, g.pw, g.w, f->wq, row);
            continue;
        }
        // An int32 or int16 input, value by value (upstream casts each to int8).
        for (int64_t j = 0; j < f->wq; ++j)
            for (int64_t i = 0; i < 4; ++i) {
                const int64_t c = grp * 4 + i, x = j - g.pw;
                const int32_t v = c < g.c && x >= 0 && x < g.w
                                      ? cpu_load(a->x, a->base + (c * g.h + h) * g.w + x)
                                      : 0;
                row[4 * j + i] = static_cast<uint8_t>(static_cast<uint8_t>(v) ^ 0x80u);
            }
    }
}

int conv_gemm_run(cpu_node_ctx* ctx, const conv_fast* f, const epilogue* ep, const int32_t* bias) {
    const conv_geom& g = f->g;
    uint8_t* scratch = static_cast<uint8_t*>(ctx->scratch);
    int8_t* own =
        reinterpret_cast<int8_t*>(scratch + f->strip_bytes * static_cast<size_t>(f->threads));
    const ir_tensor* xt = ctx->inputs[0];
    const ir_tensor* yt = ctx->outputs[0];
    const int64_t chw = g.c * g.h * g.w;
    for (int64_t n = 0; n < g.n; ++n) {
        const int8_t* img = own;
        bool padded = true;
        if (f->direct && xt->storage == STORAGE_INT8) {
            img = static_cast<const int8_t*>(xt->data) + n * chw;
            padded = false;
        } else if (f->direct) {
            // Upstream's groups == 1 path casts every input value to int8.
            cast8_args c = {f->level, xt, n * chw, own};
            cpu_parallel_for(ctx, chw, cast8_range, &c);
        } else if (f->taps4) {
            image_args ia = {f, xt, n * chw, own};
            cpu_parallel_for(ctx, f->groups4 * g.h, image4_rows, &ia);
        } else {
            image_args ia = {f, xt, n * chw, own};
            cpu_parallel_for(ctx, g.c * g.h, image_rows, &ia);
        }
        strip_args sa = {f, img, padded, ep, bias, yt->data, yt->storage, n * g.o * f->N, scratch};
        cpu_for_each_slot(ctx, strip_slot, &sa);
    }
    return CVML_OK;
}

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

void depthwise_image(const conv_fast* f, const int8_t* x, int8_t* img) {
    const conv_geom& g = f->g;
    const int64_t plane = f->hq * f->wq;
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

void conv_fast_free(conv_fast* f) {
    if (!f) return;
    gemm_weights_free(&f->w);
    free(f->wg);
    free(f->taps);
    free(f->row_at);
    free(f->row_read);
    free(f->keeps);
    free(f->dstrips);
    free(f->w4);
    free(f->boff);
    free(f->dw_taps);
    free(f->dw_w4);
    free(f->dw_row_of);
    free(f->dw_corr);
    free(f);
}

/* row_at[r]: where padded row r starts in a channel's phase image (hq x wq planes). */
int phase_row_table(conv_fast* f) {
    const conv_geom& g = f->g;
    const int64_t rows = f->hq * g.sh, plane = f->hq * f->wq;
    f->row_at = static_cast<int64_t*>(malloc(sizeof(int64_t) * static_cast<size_t>(rows)));
    if (!f->row_at) return cvml_fail(CVML_ERR_RUNTIME, "out of memory");
    for (int64_t r = 0; r < rows; ++r)
        f->row_at[r] = (r % g.sh) * g.sw * plane + (r / g.sh) * f->wq;
    return CVML_OK;
}

/* row_read[r]: some tap reads padded row r (its row phase r % sh is some tap's). */
int rows_read_table(conv_fast* f) {
    const conv_geom& g = f->g;
    const int64_t rows = f->hq * g.sh;
    f->row_read = static_cast<bool*>(calloc(static_cast<size_t>(rows), sizeof(bool)));
    if (!f->row_read) return cvml_fail(CVML_ERR_RUNTIME, "out of memory");
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t kr = 0; kr < g.kh && !f->row_read[r]; ++kr)
            f->row_read[r] = (kr * g.dh) % g.sh == r % g.sh;
    return CVML_OK;
}

int64_t dense_preruns = 0;   /* atomic */
int64_t narrow_preruns = 0;  /* atomic */
int64_t taps4_preruns = 0;   /* atomic */
int64_t dw_vnni_preruns = 0; /* atomic */

/* Taps mode needs the avx512 kernels with whole row blocks, stride 1 and a kernel
 * larger than 1x1 (a 1x1 conv packs each image byte once anyway), and a weight copy of
 * at most 256 KiB (the small-M layers, where packing is shared by fewest rows). */
bool taps4_fits(const conv_fast* f) {
    const conv_geom& g = f->g;
    if (f->level != CPU_SIMD_AVX512 || !gemm_narrow_ok(&f->w) || f->direct) return false;
    if (g.sh != 1 || g.sw != 1 || g.kh * g.kw == 1) return false;
    const int64_t kc = (g.c + 3) / 4 * 4 * g.kh * g.kw;
    return kc <= INT32_MAX / 2 && g.o * kc <= 256 * 1024;
}

/* Taps mode's weight copy and step offsets. */
int taps4_prerun(const int8_t* w, conv_fast* f) {
    const conv_geom& g = f->g;
    f->groups4 = (g.c + 3) / 4;
    const int64_t taps = g.kh * g.kw, kc = f->groups4 * 4 * taps;
    f->w4 = static_cast<int8_t*>(calloc(static_cast<size_t>(g.o * kc + 4), 1));
    f->boff = static_cast<int64_t*>(malloc(sizeof(int64_t) * static_cast<size_t>(kc / 4)));
    if (!f->w4 || !f->boff) return cvml_fail(CVML_ERR_RUNTIME, "out of memory");
    for (int64_t o = 0; o < g.o; ++o)
        for (int64_t c = 0; c < g.c; ++c)
            for (int64_t t = 0; t < taps; ++t)
                f->w4[o * kc + ((c / 4) * taps + t) * 4 + c % 4] = w[(o * g.c + c) * taps + t];
    for (int64_t grp = 0; grp < f->groups4; ++grp)
        for (int64_t r = 0; r < g.kh; ++r)
            for (int64_t sk = 0; sk < g.kw; ++sk)
                f->boff[(grp * g.kh + r) * g.kw + sk] =
                    ((grp * f->hq + r * g.dh) * f->wq + sk * g.dw) * 4;
    gemm_weights_free(&f->w);
    return gemm_weights_plain(f->level, f->w4, static_cast<int32_t>(g.o), static_cast<int32_t>(kc),
                              &f->w);
}

/* The strips: dense when that pays and every strip's columns can be selected, else
 * flat (in taps mode when that fits); and each strip's stored columns. */
int choose_strips(conv_fast* f) {
    f->dense = dense_pays(f);
    if (f->dense) {
        f->strips = (f->N + GEMM_NT - 1) / GEMM_NT;
        f->dstrips =
            static_cast<dense_strip*>(malloc(sizeof(dense_strip) * static_cast<size_t>(f->strips)));
        if (!f->dstrips) return cvml_fail(CVML_ERR_RUNTIME, "out of memory");
        for (int64_t st = 0; st < f->strips && f->dense; ++st)
            if (!strip_is_narrow(f, st)) f->dense = dense_strip_of(f, st, &f->dstrips[st]);
        if (!f->dense) {
            free(f->dstrips);
            f->dstrips = nullptr;
        }
    }
    if (!f->dense) f->strips = (f->nf + GEMM_NT - 1) / GEMM_NT;
    f->taps4 = !f->dense && taps4_fits(f);
    if (f->dense) __atomic_fetch_add(&dense_preruns, 1, __ATOMIC_RELAXED);
    if (f->strips > 0 && strip_is_narrow(f, f->strips - 1)) {
        __atomic_fetch_add(&narrow_preruns, 1, __ATOMIC_RELAXED);
        f->tail_merged = f->strips > 1;
    }
    f->keeps =
        static_cast<strip_keep*>(malloc(sizeof(strip_keep) * static_cast<size_t>(f->strips)));
    if (!f->keeps) return cvml_fail(CVML_ERR_RUNTIME, "out of memory");
    for (int64_t st = 0; st < f->strips; ++st)
        strip_keep_of(f, st * GEMM_NT, strip_cols(f, st), &f->keeps[st]);
    return CVML_OK;
}

/* groups == 1: packed (or in-place) weights, the image geometry and the tap table. */
int gemm_prerun(cpu_node_ctx* ctx, conv_fast* f, size_t* scratch_bytes) {
    const conv_geom& g = f->g;
    if (f->K > INT32_MAX / 2 || f->N > INT32_MAX / 2 || g.o > INT32_MAX / 2)
        return cvml_fail(CVML_ERR_RUNTIME, "conv2d: sizes too large");
    // The device hands this kernel its weights as stored: int8 (precision <= 8, so
    // upstream's int8 cast changes nothing) is used in place at the avx512 level.
    const ir_tensor* wt = ctx->inputs[1];
    int rc = wt->storage == STORAGE_INT8
                 ? gemm_weights_plain(f->level, static_cast<const int8_t*>(wt->data),
                                      static_cast<int32_t>(g.o), static_cast<int32_t>(f->K), &f->w)
                 : gemm_weights_pack(f->level, cpu_in(ctx, 1), static_cast<int32_t>(g.o),
                                     static_cast<int32_t>(f->K), &f->w);
    if (rc) return rc;
    f->direct = g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0 &&
                g.oh == g.h && g.ow == g.w;
    f->hq = (g.h + 2 * g.ph + g.sh - 1) / g.sh;
    f->wq = (g.w + 2 * g.pw + g.sw - 1) / g.sw;
    f->nf = g.oh * f->wq;
    if (f->nf > INT32_MAX / 2) return cvml_fail(CVML_ERR_RUNTIME, "conv2d: sizes too large");
    f->taps = static_cast<int64_t*>(malloc(sizeof(int64_t) * static_cast<size_t>(f->K + 1)));
    if (!f->taps) return cvml_fail(CVML_ERR_RUNTIME, "out of memory");
    memset(f->pad_row, 0x80, sizeof f->pad_row);
    const int64_t plane = f->hq * f->wq;
    f->channel_stride = g.sh * g.sw * plane;
    rc = phase_row_table(f);
    if (rc) return rc;
    for (int64_t k = 0; k < f->K; ++k) {
        const int64_t ic = k / (g.kh * g.kw), r = (k / g.kw) % g.kh, sk = k % g.kw;
        const int64_t row = r * g.dh, col = sk * g.dw;
        f->taps[k] = ((ic * g.sh + row % g.sh) * g.sw + col % g.sw) * plane + (row / g.sh) * f->wq +
                     col / g.sw;
    }
    rc = rows_read_table(f);
    if (rc) return rc;
    rc = choose_strips(f);
    if (rc) return rc;
    if (f->taps4) {
        rc = taps4_prerun(static_cast<const int8_t*>(wt->data), f);
        if (rc) return rc;
        // The image is c4; a strip reads up to 48 columns and a tap's columns past the
        // last row of the last group.
        f->strip_bytes = 64;  // nothing is packed
        f->image_bytes = align64(static_cast<size_t>(f->groups4 * plane * 4 + (f->wq + 64) * 4));
        *scratch_bytes = f->strip_bytes * static_cast<size_t>(f->threads) + f->image_bytes;
        __atomic_fetch_add(&taps4_preruns, 1, __ATOMIC_RELAXED);
        return CVML_OK;
    }
    f->packed_bytes = align64(gemm_b_bytes(f->level, static_cast<int32_t>(f->K), GEMM_NT));
    const size_t narrow =
        gemm_narrow_ok(&f->w) ? gemm_narrow_stride(static_cast<int32_t>(f->K)) * GEMM_NARROW : 0;
    f->strip_bytes = f->packed_bytes > narrow ? f->packed_bytes : align64(narrow);
    if (f->tail_merged) f->strip_bytes = f->packed_bytes + align64(narrow);
    // A flat strip reads at most a row and a 16-column group past the last phase plane,
    // a dense one 64 columns from its first pixel's.
    f->image_bytes = align64(static_cast<size_t>(g.c * g.sh * g.sw * plane + f->wq + 64));
    *scratch_bytes = f->strip_bytes * static_cast<size_t>(f->threads) + f->image_bytes;
    return CVML_OK;
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

int conv_fast_prerun(cpu_node_ctx* ctx, const conv_geom& g, size_t* scratch_bytes) {
    conv_fast* f = static_cast<conv_fast*>(calloc(1, sizeof(conv_fast)));
    if (!f) return cvml_fail(CVML_ERR_RUNTIME, "out of memory");
    const conv2d_param* p = static_cast<const conv2d_param*>(ctx->param);
    f->level = cpu_level(ctx);
    f->threads = cpu_threads(ctx);
    f->g = g;
    f->N = g.oh * g.ow;
    f->K = g.ic * g.kh * g.kw;
    int rc =
        p->groups == 1 ? gemm_prerun(ctx, f, scratch_bytes) : grouped_prerun(ctx, f, scratch_bytes);
    if (rc) {
        conv_fast_free(f);
        return rc;
    }
    ctx->state = f;
    ctx->caps = CPU_CAP_TAIL | CPU_CAP_NARROW_OUT | CPU_CAP_INT16 | CPU_CAP_NARROW_IN(0);
    return CVML_OK;
}

int conv_fast_run(cpu_node_ctx* ctx, const conv_fast* f) {
    const conv2d_param* p = static_cast<const conv2d_param*>(ctx->param);
    const int32_t* bias = p->use_bias ? cpu_in(ctx, 2) : nullptr;
    epilogue ep;
    cpu_tail_epilogue(ctx, &ep);
    if (p->groups == 1) return conv_gemm_run(ctx, f, &ep, bias);
    grouped_args a = {ctx, f, &ep, bias};
    if (f->dw_taps && ctx->inputs[0]->storage == STORAGE_INT8)
        cpu_for_each_slot(ctx, depthwise_slot, &a);
    else
        cpu_for_each_slot(ctx, grouped_slot, &a);
    return CVML_OK;
}

void conv2d_postrun(cpu_node_ctx* ctx) {
    conv_fast_free(static_cast<conv_fast*>(ctx->state));
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
    // The fast paths pack constant weights here; a weight that is a graph input or an
    // operator output has no values yet, so it takes the loops that read it per run.
    if (cpu_level(ctx) != CPU_SIMD_SCALAR && ctx->inputs[1]->kind == TENSOR_CONST)
        return conv_fast_prerun(ctx, g, scratch_bytes);
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

void cpu_conv2d_path_counts(int64_t* dense, int64_t* narrow, int64_t* taps4, int64_t* dw_vnni) {
    *dense = __atomic_load_n(&dense_preruns, __ATOMIC_RELAXED);
    *narrow = __atomic_load_n(&narrow_preruns, __ATOMIC_RELAXED);
    *taps4 = __atomic_load_n(&taps4_preruns, __ATOMIC_RELAXED);
    *dw_vnni = __atomic_load_n(&dw_vnni_preruns, __ATOMIC_RELAXED);
}

int register_cpu_op_conv2d(void) {
    return cpu_kernel_registry_add(&conv2d_kernel);
}
int unregister_cpu_op_conv2d(void) {
    return cpu_kernel_registry_remove(&conv2d_kernel);
}
