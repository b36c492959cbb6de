/* conv2d at the SIMD levels, groups == 1: the implicit im2col GEMM (see the fast-path
 * notes in conv2d_fast.h and docs/cpu.md): strips (flat, dense, narrow tails), taps
 * mode, broadcast mode's items, and their prerun; the image they read is built in
 * conv2d_image.cpp. */
#include <stdlib.h>
#include <string.h>

#include "device/cpu/op/conv2d_fast.h"
#include "device/cpu/simd/kernel_util.h"
#include "device/cpu/simd/simd.h"
#include "utility/error.h"
#include "utility/memory.h"

namespace cpu_conv2d {
namespace {

/* A strip is GEMM_NT GEMM columns (one n-tile): each thread packs its own strips into a
 * small buffer that stays in cache while every output channel block is computed over
 * it, so a conv2d has one parallel region per image after the image copy. */
struct strip_args {
    const conv_gemm* f;
    const int8_t* img;
    bool padded; /* img has slack after it, so packing may read whole 16-column groups */
    const ep_tile_plan* plan;
    const int32_t* bias;
    void* out;
    int32_t out_storage;
    int64_t out_base;
    uint8_t* scratch; /* per thread: strip_bytes (held_strip) */
    gemm_tail tail;   /* the micro-kernel's fused tail (kind 0: none); per strip: strip_tail */
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
    epilogue_apply_tile_planned(a->plan, tile, GEMM_NT, rows, &k->tile,
                                a->bias ? a->bias + m0 : nullptr, a->out,
                                a->out_base + m0 * a->f->N + k->first, a->f->N);
}

/* Flat column of output pixel p (row p / ow, column p % ow). */
inline int64_t flat_of(const conv_gemm* f, int64_t p) {
    return p / f->g.ow * f->wq + p % f->g.ow;
}

int32_t strip_cols(const conv_gemm* f, int64_t st) {
    const int64_t n = f->dense.on ? f->N : f->nf, n0 = st * GEMM_NT;
    return static_cast<int32_t>(n - n0 < GEMM_NT ? n - n0 : GEMM_NT);
}

/* A last strip of a few columns (N % 48 <= gemm_narrow_cols, flat or dense) is done by
 * dot products along K rather than a tile of the level's panels. */
bool strip_is_narrow(const conv_gemm* f, int64_t st) {
    return !f->taps4.on && strip_cols(f, st) <= gemm_narrow_cols(&f->w);
}

/* Fills d for dense strip st; false when its columns do not fit the selection (more
 * than 64 flat columns, or a panel spread over more than two flat panels). */
bool dense_strip_of(const conv_gemm* f, int64_t st, dense_strip* d) {
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

/* The 8-column vectors computed for n GEMM columns: 48-column strips, the rest in the
 * level's panels, and (where the level has them) a narrow tail of dot products counted
 * as one. */
int64_t half_vectors(const conv_gemm* f, int64_t n) {
    const int64_t rest = n % GEMM_NT, panel = f->cfg->gemm_panel;
    if (rest == 0) return 6 * (n / GEMM_NT);
    if (rest <= gemm_narrow_cols(&f->w)) return 6 * (n / GEMM_NT) + 1;
    return 6 * (n / GEMM_NT) + (rest + panel - 1) / panel * panel / 8;
}

bool taps4_fits(const conv_gemm* f);

/* Dense mode pays when it saves the level's share of the vectors computed (its packing
 * does a little more work): 5% at avx512; at avx2, whose fused tail takes only tiles
 * that keep every column, whenever it computes no more, for dense strips save their
 * tile buffers too (56x56 3x3 convs, 3.9% saved, ran 8% faster; ResNet-18's stride-2
 * conv onto 7x7, 49 = 48 + a narrow column against flat 56, ran 0.79x). Where taps mode
 * could run instead, which packs nothing, packing has to cost less than the flat
 * columns' waste: packing a column costs about as much as 6.4 output channels of
 * multiply-adds over it, so dense needs M * (saved share) >= 6.4. Measured on 3x3
 * convs: 16 channels on 32x32 (6% saved) and 32 on 16x16 (11%) ran 15% and 10% faster
 * in taps mode; 128 on 28x28 (7.5%) and 64 on 8x8 (20%) 2.5% and 3% slower. */
bool dense_pays(const conv_gemm* f) {
    const int64_t min_saving = f->cfg->dense_strips_min_saving;
    if (!f->cfg->gemm_pack_select || f->direct || f->nf == f->N) return false;
    const int64_t dense = half_vectors(f, f->N), flat = half_vectors(f, f->nf);
    if (100 * (flat - dense) < min_saving * flat) return false;
    return !taps4_fits(f) || 10 * f->g.o * (flat - dense) >= 64 * flat;
}

/* Dense columns are all output pixels (n0 + c); a flat column y * wq + x is pixel
 * y * ow + x when x < ow, and dropped otherwise. */
void strip_keep_of(const conv_gemm* f, int64_t n0, int32_t cols, strip_keep* k) {
    uint16_t mask[GEMM_NT / 16] = {0, 0, 0};
    k->first = -1;
    for (int32_t c = 0; c < cols; ++c) {
        int64_t pixel = n0 + c;
        if (!f->dense.on) {
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
    const conv_gemm* f = a->f;
    // With slack after the image, whole 16-column groups are read (the extra columns
    // are dropped); the input tensor itself is read exactly.
    const int32_t width = a->padded ? (cols + 15) / 16 * 16 : cols;
    gemm_pack_b_rows(f->level, a->img + n0, f->taps, f->pad_row, width, static_cast<int32_t>(f->K),
                     packed);
}

/* A narrow strip's columns for gemm_run_narrow: each one's K image values as u8 x + 128,
 * zeros after them. */
void gather_narrow(const strip_args* a, int64_t p0, int32_t cols, uint8_t* dst) {
    const conv_gemm* f = a->f;
    const size_t stride = gemm_narrow_stride(static_cast<int32_t>(f->K));
    for (int32_t j = 0; j < cols; ++j) {
        const int8_t* src = a->img + (f->dense.on ? flat_of(f, p0 + j) : p0 + j);
        uint8_t* col = dst + stride * static_cast<size_t>(j);
        for (int64_t k = 0; k < f->K; ++k)
            col[k] = static_cast<uint8_t>(static_cast<uint8_t>(src[f->taps[k]]) ^ 0x80u);
        memset(col + f->K, 0, stride - static_cast<size_t>(f->K));
    }
}

/* The fused tail of a strip's whole tiles, in t (NULL where there is none, or where no
 * column of the strip is stored). */
const gemm_tail* strip_tail(const strip_args* a, const strip_keep* k, gemm_tail* t) {
    if (!a->tail.kind || k->tile.count == 0) return nullptr;
    *t = a->tail;
    t->keep = &k->tile;
    t->out_first = a->out_base + k->first;
    return t;
}

/* How many row blocks ahead a merged strip asks for the weights: 4 (32 KB of a 1024-deep
 * layer) took MobileNet-v1's 7x7 pointwise layers 0.299 -> 0.269 and 0.549 -> 0.509 ms at
 * avx2 on one thread (per-node minima, 4 interleaved rounds), 2-3% on two threads and at
 * avx512; 1 and 2 blocks ahead were about as good. */
constexpr int64_t kWeightsAhead = 4;

/* Fills a thread's panel with strip st's operands: its packed columns (or a narrow
 * strip's gathered ones) and, for the strip a narrow tail is merged into, the tail's
 * columns after them. Taps mode reads the image in place and fills nothing. */
void strip_prepare(const strip_args* a, int64_t st, void* packed) {
    const conv_gemm* f = a->f;
    const int64_t n0 = st * GEMM_NT;
    const int32_t cols = strip_cols(f, st);
    if (f->taps4.on) return;
    if (strip_is_narrow(f, st)) {
        gather_narrow(a, n0, cols, static_cast<uint8_t*>(packed));
        return;
    }
    if (f->dense.on) {
        const dense_strip& d = f->dense.strips[st];
        gemm_pack_b_select(f->level, a->img + d.flat0, f->taps, f->pad_row,
                           static_cast<int32_t>(f->K), &d.sel, packed);
    } else {
        pack_strip(a, n0, cols, packed);
    }
    if (f->tail_merged && st == f->strips - 2)
        gather_narrow(a, n0 + GEMM_NT, strip_cols(f, st + 1),
                      static_cast<uint8_t*>(packed) + f->packed_bytes);
}

/* Runs output channel blocks [mb0, mb1) over strip st's prepared panel. */
void strip_compute(const strip_args* a, int64_t st, int64_t mb0, int64_t mb1, const void* packed) {
    const conv_gemm* f = a->f;
    const int64_t n0 = st * GEMM_NT;
    const int32_t cols = strip_cols(f, st);
    strip_tile_args ta = {a, &f->keeps[st]};
    gemm_tail fused;
    const gemm_tail* fused_tail = strip_tail(a, &f->keeps[st], &fused);
    if (f->taps4.on) {
        gemm_run_tiles_taps_tail(&f->w, reinterpret_cast<const uint8_t*>(a->img) + n0 * 4,
                                 f->taps4.boff, cols, mb0, mb1, fused_tail, strip_tile, &ta);
        return;
    }
    if (strip_is_narrow(f, st)) {
        gemm_run_narrow(&f->w, static_cast<const uint8_t*>(packed), cols, static_cast<int32_t>(n0),
                        mb0, mb1, strip_tile, &ta);
        return;
    }
    if (!f->tail_merged || st != f->strips - 2) {
        gemm_run_tiles_tail(&f->w, packed, cols, mb0, mb1, fused_tail, strip_tile, &ta);
        return;
    }
    // The narrow tail goes block by block with the strip before it, so each block's
    // weights are read from memory once for both (deep layers: weights >> L2). Nothing
    // else reads them ahead (the tail's own fetches stream only over a run of blocks),
    // so the block kWeightsAhead on is asked for here.
    const uint8_t* tail = static_cast<const uint8_t*>(packed) + f->packed_bytes;
    const int32_t tail_cols = strip_cols(f, st + 1);
    strip_tile_args tail_ta = {a, &f->keeps[st + 1]};
    for (int64_t mb = mb0; mb < mb1; ++mb) {
        if (mb + kWeightsAhead < mb1) gemm_weights_prefetch(&f->w, mb + kWeightsAhead);
        gemm_run_tiles_tail(&f->w, packed, cols, mb, mb + 1, fused_tail, strip_tile, &ta);
        gemm_run_narrow(&f->w, tail, tail_cols, static_cast<int32_t>(n0 + GEMM_NT), mb, mb + 1,
                        strip_tile, &tail_ta);
    }
}

/* The strips a conv's region goes over (a narrow tail merged into the strip before it
 * is not one of its own). */
int64_t region_strips(const conv_gemm* f) {
    return f->strips - (f->tail_merged ? 1 : 0);
}

/* The blocks of GEMM_MR output channels the micro-kernel runs over. */
int64_t channel_blocks(const conv_gemm* f) {
    return (f->g.o + GEMM_MR - 1) / GEMM_MR;
}

/* Into how many parts the output channels are cut over the strips, so that the pool has
 * items to deal and balance (about THREAD_POOL_CHUNKS_PER_THREAD a thread where it can):
 * - none where the strips are that many already (large images);
 * - where there is one strip (7x7 images), as many parts as that;
 * - otherwise (14x14 images: 4 strips) one part a thread: items are dealt part-major, so a
 *   thread's own items are its part of every strip, each strip packed once (parts of the
 *   same strip on one thread would pack it again each time, and strips split between the
 *   threads had each read all the weights: 11% slower in calm minutes than this).
 * At most one part a channel block. */
int64_t strip_parts(const conv_gemm* f) {
    const int64_t strips = region_strips(f);
    const int64_t mblocks = channel_blocks(f);
    const int64_t want = static_cast<int64_t>(f->threads) * THREAD_POOL_CHUNKS_PER_THREAD;
    if (f->threads < 2 || strips >= want) return 1;
    const int64_t parts = strips == 1 ? want : f->threads;
    return parts < mblocks ? parts : mblocks;
}

/* The start of thread `thread`'s scratch: the strip its panel now holds (-1: none), then
 * the panel, kStripPanelAt bytes in. */
int64_t* held_strip(const strip_args* a, int thread) {
    return reinterpret_cast<int64_t*>(a->scratch + a->f->strip_bytes * static_cast<size_t>(thread));
}

/* Items [begin, end) of (part, strip), part-major, on thread `thread`; a thread prepares
 * a strip's panel only where its panel does not hold that strip already. With one strip
 * a run of parts is one pass over their channel blocks. */
void strip_items(void* arg, int64_t begin, int64_t end, int thread) {
    const strip_args* a = static_cast<const strip_args*>(arg);
    const conv_gemm* f = a->f;
    const int64_t strips = region_strips(f), parts = strip_parts(f);
    const int64_t mblocks = channel_blocks(f);
    int64_t* held = held_strip(a, thread);
    void* panel = reinterpret_cast<uint8_t*>(held) + kStripPanelAt;
    const auto run = [&](int64_t st, int64_t p0, int64_t p1) {
        if (*held != st) {
            strip_prepare(a, st, panel);
            *held = st;
        }
        strip_compute(a, st, mblocks * p0 / parts, mblocks * p1 / parts, panel);
    };
    if (strips == 1) {
        run(0, begin, end);
        return;
    }
    for (int64_t i = begin; i < end; ++i) run(i % strips, i / strips, i / strips + 1);
}

struct bcast_args {
    const conv_gemm* f;
    const uint8_t* img;
    bcast_out out;
};

/* Items are (block of output channels, output row), block-major, so a thread's items
 * share a block's weights (32 channels of a 512-channel 3x3 conv are 147 KB: they stay
 * in L2); or row-major (bcast_rows_first). */
void bcast_items(void* arg, int64_t begin, int64_t end) {
    const bcast_args* a = static_cast<const bcast_args*>(arg);
    a->f->cfg->bcast_items(a->f, a->img, &a->out, begin, end);
}

}  // namespace

int conv_gemm_run(cpu_node_ctx* ctx, const conv_gemm* f, const epilogue* ep, const int32_t* bias) {
    const conv_geom& g = f->g;
    uint8_t* scratch = static_cast<uint8_t*>(ctx->scratch);
    int8_t* own =
        reinterpret_cast<int8_t*>(scratch + f->strip_bytes * static_cast<size_t>(f->threads));
    const ir_tensor* xt = ctx->inputs[0];
    const ir_tensor* yt = ctx->outputs[0];
    const int64_t chw = g.c * g.h * g.w;
    ep_tile_plan plan;
    epilogue_plan_tile(f->level, ep, bias != nullptr, yt->storage, &plan);
    // Whole tiles go through the chain in the micro-kernel where the level can.
    gemm_tail tail;
    memset(&tail, 0, sizeof tail);
    if (gemm_tail_plan(&f->w, &plan, bias, &tail)) {
        tail.out = static_cast<int8_t*>(yt->data);
        tail.out_stride = f->N;
        tail.own_ahead = f->own_ahead;
        tail.out_size = g.n * g.o * f->N;
        cpu_path_taken(CPU_PATH_CONV_FUSED_TAIL);
    }
    for (int64_t n = 0; n < g.n; ++n) {
        const int8_t* img = own;
        bool padded = true;
        if (f->direct && xt->storage == STORAGE_INT8) {
            img = static_cast<const int8_t*>(xt->data) + n * chw;
            padded = false;
        } else {
            gemm_build_image(ctx, f, xt, n, own);
        }
        if (f->bcast.on) {
            bcast_args ba = {f,
                             reinterpret_cast<const uint8_t*>(img),
                             {&plan, bias, yt->data, n * g.o * f->N, tail.kind ? &tail : nullptr}};
            cpu_parallel_for(ctx, g.o / GEMM_BCAST_BLOCK * f->bcast.row_items, bcast_items, &ba);
            continue;
        }
        strip_args sa = {f,        img,         padded,         &plan,   bias,
                         yt->data, yt->storage, n * g.o * f->N, scratch, tail};
        for (int t = 0; t < f->threads; ++t) *held_strip(&sa, t) = -1;  // a new image
        cpu_parallel_for_at(ctx, region_strips(f) * strip_parts(f), strip_items, &sa);
    }
    return CVML_OK;
}

namespace {

/* row_read[r]: some tap reads padded row r (its row phase r % sh is some tap's). */
int rows_read_table(conv_gemm* f) {
    const conv_geom& g = f->g;
    const int64_t rows = f->hq * g.sh;
    f->row_read = static_cast<bool*>(cvml_mem_calloc(static_cast<size_t>(rows), sizeof(bool)));
    if (!f->row_read) return cvml_fail_out_of_memory();
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t kr = 0; kr < g.kh && !f->row_read[r]; ++kr)
            f->row_read[r] = (kr * g.dh) % g.sh == r % g.sh;
    return CVML_OK;
}

/* Whether the level has taps-mode kernels for these weights: some levels' (avx512) only
 * for weights read in place in whole row blocks. */
bool taps4_level(const conv_gemm* f) {
    if (!f->cfg->gemm_tile_taps) return false;
    return !f->cfg->taps_in_place || gemm_narrow_ok(&f->w) != 0;
}

/* Taps mode needs kernels for it (taps4_level), stride 1 and a kernel larger than 1x1 (a
 * 1x1 conv packs each image byte once anyway), and a weight copy of at most 256 KiB (the
 * small-M layers, where packing is shared by fewest rows). On aarch64 it saves packing
 * B, which cost about half as much as the multiply-adds on cifar_resnet20's layers. */
bool taps4_fits(const conv_gemm* f) {
    const conv_geom& g = f->g;
    if (!taps4_level(f) || f->direct) return false;
    if (g.sh != 1 || g.sw != 1 || g.kh * g.kw == 1) return false;
    const int64_t kc = (g.c + 3) / 4 * 4 * g.kh * g.kw;
    return kc <= INT32_MAX / 2 && g.o * kc <= 256 * 1024;
}

/* Weight i as upstream's groups == 1 path casts it: int8-stored weights as they are, int32
 * ones (a precision over 8, or a caller driving the kernel with int32 tensors) cast to
 * int8. */
inline int8_t weight_i8(const int8_t* w8, const int32_t* w32, int64_t i) {
    return w8 ? w8[i] : static_cast<int8_t>(w32[i]);
}

/* Taps mode's weight copy (from int8-stored weights w8, else int32 ones w32) and step
 * offsets. */
int taps4_prerun(const int8_t* w8, const int32_t* w32, conv_gemm* f) {
    const conv_geom& g = f->g;
    f->taps4.groups4 = (g.c + 3) / 4;
    const int64_t taps = g.kh * g.kw, kc = f->taps4.groups4 * 4 * taps;
    f->taps4.w4 = static_cast<int8_t*>(cvml_mem_calloc(static_cast<size_t>(g.o * kc + 4), 1));
    f->taps4.boff =
        static_cast<int64_t*>(cvml_mem_alloc(sizeof(int64_t) * static_cast<size_t>(kc / 4)));
    if (!f->taps4.w4 || !f->taps4.boff) return cvml_fail_out_of_memory();
    for (int64_t o = 0; o < g.o; ++o)
        for (int64_t c = 0; c < g.c; ++c)
            for (int64_t t = 0; t < taps; ++t)
                f->taps4.w4[o * kc + ((c / 4) * taps + t) * 4 + c % 4] =
                    weight_i8(w8, w32, (o * g.c + c) * taps + t);
    for (int64_t grp = 0; grp < f->taps4.groups4; ++grp)
        for (int64_t r = 0; r < g.kh; ++r)
            for (int64_t sk = 0; sk < g.kw; ++sk)
                f->taps4.boff[(grp * g.kh + r) * g.kw + sk] =
                    ((grp * f->hq + r * g.dh) * f->wq + sk * g.dw) * 4;
    gemm_weights_free(&f->w);
    return gemm_weights_plain(f->level, f->taps4.w4, static_cast<int32_t>(g.o),
                              static_cast<int32_t>(kc), &f->w);
}

/* Broadcast mode (gemm_bcast_mode): avx512 and avx2, a 3x3 kernel of stride 1 or 2 (the
 * same both ways), dilation 1 and padding 1, and an output of at least 2 x 2 whose width
 * is a multiple of 7 up to GEMM_BCAST_MAX_W; or (where the level's bcast_1x1 says so) a
 * 1x1 kernel of stride 1 without padding whose output width is 7 or 14
 * (GEMM_BCAST_1X1_MAX_W: on wider ones the GEMM runs whole vectors of pixels and reads
 * the input in place, where this builds an image); whole blocks of output channels, and a
 * weight copy of at most 4 MiB. Sets the segment shape and the taps where it fits. */
bool bcast_fits(conv_gemm* f) {
    const conv_geom& g = f->g;
    if (!f->cfg->bcast_items || !f->w.start) return false;
    // A kernel that negates weights for an image with negative values (avx2) takes
    // none of -128.
    if (f->cfg->gemm_notes_min && f->w.has_min) return false;
    const char* off = getenv("CVML_CONV_BCAST");  // "0": off, to compare with the GEMM
    if (off && strcmp(off, "0") == 0) return false;
    const bool k3 = g.kh == 3 && g.kw == 3 && g.sh == g.sw && g.sh <= 2 && g.dh == 1 && g.dw == 1 &&
                    g.ph == 1 && g.pw == 1 && g.oh >= 2 && g.ow >= 2 && g.ow <= GEMM_BCAST_MAX_W;
    const bool k1 = f->cfg->bcast_1x1 && f->direct && g.ow <= GEMM_BCAST_1X1_MAX_W;
    if (!k3 && !k1) return false;
    f->bcast.taps = k3 ? 9 : 1;
    const bool wide = f->cfg->bcast_max_pixels >= 14;
    f->bcast.pixels = wide && g.ow % 14 == 0 ? 14 : g.ow % 7 == 0 ? 7 : 0;
    const int64_t groups4 = (g.c + 3) / 4;
    return f->bcast.pixels != 0 && g.o % GEMM_BCAST_BLOCK == 0 &&
           g.o * groups4 * 4 * f->bcast.taps <= 4 * 1024 * 1024;
}

/* How threads split broadcast mode's work. Block-major (each thread its own output
 * channels, every row) reads each weight once; but the layer before wrote its output
 * split by pixels (the GEMM's strips, or this split), so each thread would read half
 * of the image from the other core's cache, and write output lines the next layer reads
 * on the other core. Rows first (each thread its own output rows, every channel) keeps
 * a thread's image rows and output rows on its own core, at the price of every thread
 * reading every weight: that pays while the copy fits in L2 beside the image. On
 * ResNet-18 at 2 threads rows first made the 56x56 convs and the 1x1 conv after them
 * faster; on the 14x14 ones (590 KB of weights) it gained nothing. Not for a 1x1 kernel:
 * block-major, a block's weights (16 KB for 512 input channels) stay in L1 for all its
 * rows, where rows first reads every block's from L2 for each row (MobileNet-v1's
 * 512-channel 14x14 layers at 2 threads are 7% faster block-major). */
constexpr int64_t kBcastRowsFirstMaxWeights = 256 * 1024;

bool bcast_rows_first(const conv_gemm* f, int64_t copy_bytes) {
    return f->threads > 1 && f->bcast.taps == 9 && copy_bytes <= kBcastRowsFirstMaxWeights;
}

/* The image's stride from one group's plane to the next (n bytes a plane): n where it is
 * 0 or 16 past a multiple of 64, else the next such. A step of the kernels reads one group
 * of every plane in turn; 7x7 planes back to back (196 bytes) made the avx2 loop over a
 * 512-channel image 10% slower on Zen 3 than planes 192 or 208 bytes apart, some lines
 * of the image and the weights evicting each other from L1 (a loop over 256 channels of
 * the same planes was not slower). 784-byte (14x14) and larger ResNet planes are already
 * such strides. Bytes between planes are never read. */
int64_t bcast_plane_stride(int64_t n) {
    if (n % 64 == 0 || n % 64 == 16) return n;
    return (n + 63) / 64 * 64 + 16;
}

/* The weight copy (from int8 weights, or int32 ones cast as upstream casts them), each
 * tap's weight sums, the starts, and the scratch (bcast_image_planes' image). */
int bcast_prerun(const cpu_node_ctx* ctx, conv_gemm* f, size_t* scratch_bytes) {
    const conv_geom& g = f->g;
    const ir_tensor* wt = ctx->inputs[1];
    const int8_t* w8 = wt->storage == STORAGE_INT8 ? static_cast<const int8_t*>(wt->data) : nullptr;
    const int32_t* w32 = w8 ? nullptr : cpu_in(ctx, 1);
    const int64_t groups4 = (g.c + 3) / 4, block = GEMM_BCAST_BLOCK, taps = f->bcast.taps;
    f->taps4.groups4 = groups4;
    // 64-byte aligned: a kernel's vector loads of a group's weights then split no line.
    const size_t copy_bytes = static_cast<size_t>(g.o * groups4 * 4 * taps);
    f->bcast.w = static_cast<int8_t*>(cvml_aligned_alloc(64, copy_bytes));
    if (f->bcast.w) memset(f->bcast.w, 0, copy_bytes);
    f->bcast.tap_sums =
        static_cast<int32_t*>(cvml_mem_calloc(static_cast<size_t>(g.o * taps), sizeof(int32_t)));
    f->bcast.starts =
        static_cast<int32_t*>(cvml_mem_alloc(sizeof(int32_t) * static_cast<size_t>(g.o * taps)));
    if (!f->bcast.w || !f->bcast.tap_sums || !f->bcast.starts) return cvml_fail_out_of_memory();
    for (int64_t o = 0; o < g.o; ++o) {
        int8_t* wb = f->bcast.w + (o / block) * taps * groups4 * 4 * block + (o % block) * 4;
        uint32_t* sums = reinterpret_cast<uint32_t*>(f->bcast.tap_sums + o * taps);
        for (int64_t c = 0; c < g.c; ++c)
            for (int64_t t = 0; t < taps; ++t) {
                const int64_t i = (o * g.c + c) * taps + t;
                const int8_t v = weight_i8(w8, w32, i);
                wb[(t * groups4 + c / 4) * 4 * block + c % 4] = v;
                sums[t] += static_cast<uint32_t>(static_cast<int32_t>(v));
            }
    }
    f->direct = false;  // a 1x1 conv reads the image too
    const uint16_t all[3] = {static_cast<uint16_t>((1u << f->bcast.pixels) - 1), 0, 0};
    epilogue_tile_keep(&f->bcast.keep, all, f->bcast.pixels);
    f->bcast.pairs = g.ow == 7 && f->cfg->bcast_max_pixels >= 14;
    f->bcast.row_items = f->bcast.pairs ? (g.oh + 1) / 2 : g.oh;
    const uint16_t pair[3] = {0x3FFF, 0, 0};
    epilogue_tile_keep(&f->bcast.keep_pair, pair, 14);
    f->bcast.on = true;
    f->bcast.rows_first = bcast_rows_first(f, g.o * groups4 * 4 * taps);
    gemm_bcast_starts(f);
    // The image (bcast_image_planes) starts 64 bytes into the scratch: a segment's
    // pointer to the input column left of the row may be formed (never read).
    f->strip_bytes = 64;
    f->bcast.plane4 = bcast_plane_stride(g.h * g.w * 4);
    f->image_bytes = align64(static_cast<size_t>(groups4 * f->bcast.plane4));
    *scratch_bytes = f->strip_bytes * static_cast<size_t>(f->threads) + f->image_bytes;
    cpu_path_taken(CPU_PATH_CONV_BCAST);
    if (f->bcast.rows_first) cpu_path_taken(CPU_PATH_CONV_BCAST_ROWS);
    if (f->bcast.pairs) cpu_path_taken(CPU_PATH_CONV_BCAST_PAIRS);
    return CVML_OK;
}

/* The strips: dense when that pays and every strip's columns can be selected, else
 * flat (in taps mode when that fits); and each strip's stored columns. */
int choose_strips(conv_gemm* f) {
    f->dense.on = dense_pays(f);
    if (f->dense.on) {
        f->strips = (f->N + GEMM_NT - 1) / GEMM_NT;
        f->dense.strips = static_cast<dense_strip*>(
            cvml_mem_alloc(sizeof(dense_strip) * static_cast<size_t>(f->strips)));
        if (!f->dense.strips) return cvml_fail_out_of_memory();
        for (int64_t st = 0; st < f->strips && f->dense.on; ++st)
            if (!strip_is_narrow(f, st)) f->dense.on = dense_strip_of(f, st, &f->dense.strips[st]);
        if (!f->dense.on) {
            cvml_mem_free(f->dense.strips);
            f->dense.strips = nullptr;
        }
    }
    if (!f->dense.on) f->strips = (f->nf + GEMM_NT - 1) / GEMM_NT;
    f->taps4.on = !f->dense.on && taps4_fits(f);
    if (f->dense.on) cpu_path_taken(CPU_PATH_CONV_DENSE);
    if (f->strips > 0 && strip_is_narrow(f, f->strips - 1)) {
        cpu_path_taken(CPU_PATH_CONV_NARROW);
        f->tail_merged = f->strips > 1;
    }
    f->keeps = static_cast<strip_keep*>(
        cvml_mem_alloc(sizeof(strip_keep) * static_cast<size_t>(f->strips)));
    if (!f->keeps) return cvml_fail_out_of_memory();
    for (int64_t st = 0; st < f->strips; ++st)
        strip_keep_of(f, st * GEMM_NT, strip_cols(f, st), &f->keeps[st]);
    return CVML_OK;
}

/* An output larger than L2 (the 7x7 stem's 784 KB) is written far from where it was
 * last cached, and the stores of a tile whose K is short (147) wait for their lines; on
 * one thread, fetching the next tile's lines for writing first made ResNet-18's stem 5%
 * faster. Not where a tile is shorter still (MobileNet-v1's pointwise
 * layers with K 32-128: the same or 1-2% slower, the fetches landing too late), nor on
 * two threads, where it slowed those layers by 3-16% (the fetches compete with the other
 * core's traffic). */
constexpr int64_t kOwnAheadMinOutput = 256 * 1024;
constexpr int64_t kOwnAheadMinK = 144;

}  // namespace

/* groups == 1: packed (or in-place) weights, the image geometry and the tap table. */
int gemm_prerun(cpu_node_ctx* ctx, conv_gemm* f, size_t* scratch_bytes) {
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
    f->own_ahead = f->threads == 1 && g.o * f->N >= kOwnAheadMinOutput && f->K >= kOwnAheadMinK;
    f->hq = (g.h + 2 * g.ph + g.sh - 1) / g.sh;
    f->wq = (g.w + 2 * g.pw + g.sw - 1) / g.sw;
    f->nf = g.oh * f->wq;
    if (f->nf > INT32_MAX / 2) return cvml_fail(CVML_ERR_RUNTIME, "conv2d: sizes too large");
    f->taps =
        static_cast<int64_t*>(cvml_mem_alloc(sizeof(int64_t) * static_cast<size_t>(f->K + 1)));
    if (!f->taps) return cvml_fail_out_of_memory();
    memset(f->pad_row, 0x80, sizeof f->pad_row);
    const int64_t plane = f->hq * f->wq;
    f->channel_stride = g.sh * g.sw * plane;
    f->row_at = phase_row_table(g, f->hq, f->wq);
    if (!f->row_at) return cvml_fail_out_of_memory();
    for (int64_t k = 0; k < f->K; ++k) {
        const int64_t ic = k / (g.kh * g.kw), r = (k / g.kw) % g.kh, sk = k % g.kw;
        const int64_t row = r * g.dh, col = sk * g.dw;
        f->taps[k] = ((ic * g.sh + row % g.sh) * g.sw + col % g.sw) * plane + (row / g.sh) * f->wq +
                     col / g.sw;
    }
    rc = rows_read_table(f);
    if (rc) return rc;
    if (bcast_fits(f)) return bcast_prerun(ctx, f, scratch_bytes);
    rc = choose_strips(f);
    if (rc) return rc;
    if (f->taps4.on) {
        const bool w8 = wt->storage == STORAGE_INT8;
        rc = taps4_prerun(w8 ? static_cast<const int8_t*>(wt->data) : nullptr,
                          w8 ? nullptr : cpu_in(ctx, 1), f);
        if (rc) return rc;
        // The image is c4; a strip reads up to 48 columns and a tap's columns past the
        // last row of the last group.
        f->strip_bytes = kStripPanelAt;  // nothing is packed: only which strip (held_strip)
        f->image_bytes =
            align64(static_cast<size_t>(f->taps4.groups4 * plane * 4 + (f->wq + 64) * 4));
        *scratch_bytes = f->strip_bytes * static_cast<size_t>(f->threads) + f->image_bytes;
        cpu_path_taken(CPU_PATH_CONV_TAPS4);
        return CVML_OK;
    }
    f->packed_bytes = align64(gemm_b_bytes(f->level, static_cast<int32_t>(f->K), GEMM_NT));
    const size_t narrow =
        gemm_narrow_ok(&f->w) ? gemm_narrow_stride(static_cast<int32_t>(f->K)) * GEMM_NARROW : 0;
    const size_t panel = f->tail_merged             ? f->packed_bytes + align64(narrow)
                         : f->packed_bytes > narrow ? f->packed_bytes
                                                    : align64(narrow);
    f->strip_bytes = kStripPanelAt + panel;
    // A flat strip reads at most a row and a 16-column group past the last phase plane,
    // a dense one 64 columns from its first pixel's.
    f->image_bytes = align64(static_cast<size_t>(g.c * g.sh * g.sw * plane + f->wq + 64));
    *scratch_bytes = f->strip_bytes * static_cast<size_t>(f->threads) + f->image_bytes;
    return CVML_OK;
}

void gemm_bcast_starts(conv_gemm* f) {
    if (!f->bcast.on) return;
    const int64_t o = f->g.o, taps = f->bcast.taps;
    const uint32_t zero = gemm_taps_zero(f->level);
    for (int64_t cls = 0; cls < taps; ++cls) {
        const int64_t rows = cls / 3, cols = cls % 3;
        for (int64_t m = 0; m < o; ++m) {
            uint32_t start = static_cast<uint32_t>(f->w.start[m]);
            for (int64_t t = 0; t < taps; ++t) {
                const int64_t r = t / 3, s = t % 3;
                const bool skipped = taps == 9 && ((rows == 0 && r == 0) || (rows == 2 && r == 2) ||
                                                   (cols == 0 && s == 0) || (cols == 2 && s == 2));
                // The GEMM's start takes back 128 * every weight (as if B were x + 128);
                // the image holds x + zero, and only the taps not skipped are multiplied.
                const uint32_t sum = static_cast<uint32_t>(f->bcast.tap_sums[m * taps + t]);
                start += 128u * sum - (skipped ? 0u : zero * sum);
            }
            f->bcast.starts[cls * o + m] = static_cast<int32_t>(start);
        }
    }
}

void conv_gemm_free(conv_gemm* f) {
    if (!f) return;
    gemm_weights_free(&f->w);
    cvml_mem_free(f->taps);
    cvml_mem_free(f->row_at);
    cvml_mem_free(f->row_read);
    cvml_mem_free(f->keeps);
    cvml_mem_free(f->dense.strips);
    cvml_mem_free(f->taps4.w4);
    cvml_mem_free(f->taps4.boff);
    cvml_aligned_free(f->bcast.w);
    cvml_mem_free(f->bcast.tap_sums);
    cvml_mem_free(f->bcast.starts);
    cvml_mem_free(f);
}

}  // namespace cpu_conv2d
