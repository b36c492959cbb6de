/* conv2d on the CPU: what the operator's file (conv2d.cpp: the reference loops, the
 * choice of path, prerun and run) shares with its fast paths at the SIMD levels,
 * conv2d_gemm.cpp (groups == 1) and conv2d_grouped.cpp (groups > 1, depthwise). */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "device/cpu/cpu_kernel.h"
#include "device/cpu/cpu_paths.h"
#include "device/cpu/simd/epilogue.h"
#include "device/cpu/simd/gemm_s8.h"
#include "device/cpu/simd/simd.h"
#include "device/cpu/simd/simd_config.h"
#include "operator/conv2d_geom.h"

namespace cpu_conv2d {

using conv_geom = conv2d_geom;

/* The GEMM columns of a strip that are stored (x < ow): they are consecutive output
 * pixels from `first` on, so a tile row is compacted and written as one run. Built at
 * prerun, one per strip. */
struct strip_keep {
    int64_t first;
    ep_tile_keep tile;
};

/* Dense mode: where strip st starts among the flat columns, and how its columns are
 * picked from the 64 flat ones from there (unused by a narrow strip). */
struct dense_strip {
    int64_t flat0;
    gemm_select sel;
};

/* ---- fast paths (SIMD levels) ---------------------------------------------------------
 * groups == 1 (conv2d_gemm.cpp): an implicit im2col. The int8-cast input is copied once
 * per image into a zero-padded image split into stride phases, in which every im2col
 * row is a contiguous run; strips of GEMM_NT columns are packed from it straight into
 * the GEMM's B layout and multiplied with the weights, packed once at prerun (or used in
 * place). groups > 1 (conv2d_grouped.cpp; no cast: upstream's grouped path multiplies
 * int32 values): depthwise on an int8-stored input folds each output row tap by tap in
 * vector registers; otherwise, per output plane, int32 multiply-adds over a zero-padded copy of the
 * input plane split by column phase so every row read is contiguous. All write through the fused
 * tail (kernel_util.h), in the output's storage. */

/* What every fast path of a conv2d node holds; conv2d.cpp fills it at prerun. The
 * node's state (ctx->state) is the mode's struct built on it: a conv_gemm when groups
 * == 1, else a conv_grouped; each mode's own fields live only in its struct. */
struct conv_base {
    int level;
    const cpu_simd_config* cfg; /* the level's kernels and limits (simd_config.h) */
    int threads;
    conv_geom g;
    int64_t N, K;      /* GEMM columns (output pixels) and depth (ic * kh * kw) */
    bool round_folded; /* the tail's rounding addend is in the sums (epilogue_fold_round) */
};

/* ---- groups == 1 (conv2d_gemm.cpp) --------------------------------------------------- */

/* Dense mode (avx512, when it saves work): the GEMM columns are the N output pixels,
 * not nf flat columns, so no column is computed to be dropped; each strip is packed
 * from the flat columns it spans (dense_strip), and a last strip of at most
 * gemm_narrow_cols columns is done by dot products (gemm_run_narrow). */
struct gemm_dense_mode {
    bool on;
    dense_strip* strips; /* per strip */
};

/* Taps mode (avx512, stride 1, small weights, not dense): the image is channel-
 * interleaved by 4 ([C/4][hq][wq][4], u8 x + 128), so every k4 step of B is a 64-byte
 * load from it at boff[k4] and nothing is packed (packing wrote 9 bytes per image
 * byte of a 3x3 conv); the weights are a copy whose K runs (group of 4 channels, r, s,
 * channel in the group). Only where the copy is small: it doubles those weights. */
struct gemm_taps_mode {
    bool on;
    int8_t* w4;
    int64_t* boff;
    int64_t groups4; /* ceil(C / 4) */
};

/* Broadcast mode (avx512 and avx2; 3x3 convs of stride 1 or 2 and padding 1 with outputs
 * at most GEMM_BCAST_MAX_W wide: ResNet's; and at avx512 1x1 stride-1 convs with outputs
 * at most GEMM_BCAST_1X1_MAX_W wide: MobileNet's deep pointwise layers). The output
 * channels run along the vectors (blocks of GEMM_BCAST_BLOCK: two avx512 vectors, four
 * avx2 ones) and each output pixel's 4
 * input bytes of a channel group are broadcast, a segment of `pixels` pixels of one output
 * row at a time, so a pixel multiplies only the taps that read the input: the implicit
 * GEMM multiplies the padding too (18% of a 7x7 plane's multiply-adds, 9% of a 14x14
 * one's), and on small 1x1 outputs its vectors of 16 pixels leave a narrow last strip (49
 * = 3 x 16 + 1). The image is channel-interleaved by 4 as taps mode's (x ^ the level's
 * gemm_taps_zero: x + 128 at avx512, x at avx2), without padding (no tap that reads it is
 * multiplied) or stride phases; the weights a copy ordered [block][tap][group of 4
 * channels][32 channels][4]. Each sum starts from the GEMM's start (-128 * rowsum + bias
 * + rounding addend) plus 128 * every weight less the zero byte times the weights of the
 * taps its pixel multiplies: at avx512 that is 128 * the weights of the taps its pixel's
 * border class skips (a class per (top, middle, bottom) x (left, middle, right); a 1x1
 * kernel skips nothing and has one class). */
#define GEMM_BCAST_MAX_W 56
#define GEMM_BCAST_1X1_MAX_W 14
#define GEMM_BCAST_BLOCK 32
struct gemm_bcast_mode {
    bool on;
    int32_t taps;      /* 9 (3x3) or 1 (1x1) */
    int32_t pixels;    /* per segment: 7 or 14, dividing the output width */
    int8_t* w;         /* the weight copy */
    int32_t* tap_sums; /* [o][taps]: each output channel's weights of one tap, summed */
    int32_t* starts;   /* [taps classes][o] (gemm_bcast_starts) */
    ep_tile_keep keep; /* a segment's columns, all kept */
    /* Items (output row, block) row-major instead of block-major, and the image built by
     * rows: with several threads and a weight copy small enough for every thread's L2
     * (bcast_rows_first). */
    bool rows_first;
    /* Outputs 7 wide: a segment is two output rows (14 pixels, one run of the plane), so a
     * block's weights are read once per two rows and 28 sums are in flight, not 14. */
    bool pairs;
    int64_t row_items;      /* items per block: oh, or ceil(oh / 2) in pairs */
    int64_t plane4;         /* bytes from one group's plane to the next's in the image */
    ep_tile_keep keep_pair; /* a pair's 14 columns, all kept */
};

/* The implicit im2col GEMM. Flat mode (the default): GEMM column y * wq + x of the
 * stride-phase image, the columns x >= ow computed and dropped; dense and taps modes
 * change how strips are formed (above); direct: a 1x1 stride-1 unpadded conv reads the
 * input itself as the image. */
struct conv_gemm : conv_base {
    gemm_weights w;
    bool bias_folded; /* the constant bias is in the GEMM's sums (gemm_weights_fold_bias) */
    bool own_ahead;   /* the fused tail fetches its next tiles' output lines (gemm_tail) */
    /* the image */
    bool direct;            /* 1x1, stride 1, no padding: the input itself is the image */
    int64_t hq, wq;         /* rows and columns of one phase plane */
    int64_t* row_at;        /* padded row r: its start in a channel's image (phase 0) */
    bool* row_read;         /* padded row r is read by a tap (a 1x1 stride-2 conv reads
                               every other row): the others are not built */
    int64_t channel_stride; /* sh * sw phase planes */
    size_t image_bytes;
    /* the strips */
    int64_t nf;                   /* GEMM columns: oh rows of wq (the wq - ow last ones dropped) */
    int64_t* taps;                /* where im2col row k starts in the image */
    int64_t strips;               /* GEMM_NT-column strips of the GEMM columns */
    bool tail_merged;             /* a narrow last strip is run with the one before it */
    size_t strip_bytes;           /* per-thread scratch: kStripPanelAt, then the panel */
    size_t packed_bytes;          /* a packed strip; then, when tail_merged, the tail's columns */
    strip_keep* keeps;            /* per strip: its stored columns */
    int8_t pad_row[GEMM_NT + 64]; /* im2col rows past K: -128, which packs to u8 0 */
    gemm_dense_mode dense;
    gemm_taps_mode taps4;
    gemm_bcast_mode bcast;
};

/* ---- groups > 1 (conv2d_grouped.cpp) ------------------------------------------------- */

/* The direct depthwise, straight from the input (the level's dw_direct within its
 * record's domain, int8 weights): per channel and kernel row, its taps in groups of 4
 * as dwords (zeros past kw), and 128 * (the sum of the weights of rows < r), which
 * avx512's vpdpbusd kernel reads (avx2's makes its int16 weight pairs from wg). w4 is
 * null when the direct kernel does not apply. */
struct depthwise_direct_mode {
    int32_t* w4;
    int32_t* corr;   /* (kh + 1) per channel */
    int32_t half;    /* the tail's rounding addend when folded (round_folded), else 0 */
    int64_t groups;  /* ceil(kw / 4) */
    int64_t chunks;  /* 16-pixel chunks of an output row */
    uint64_t* masks; /* per (chunk, group): the input bytes its 64-byte load may read */
};

/* Depthwise (one input channel per group) on an int8-stored input: the input plane as
 * a stride-phase image (hq rows of the grouped path's wq), folded tap by tap; or the
 * direct kernel. taps is null when the conv is not depthwise. */
struct depthwise_mode {
    int64_t hq;
    int64_t* row_at; /* padded row r: its start in the phase image */
    int64_t* taps;   /* tap offsets in the phase image */
    size_t acc_bytes;
    size_t image_bytes;
    depthwise_direct_mode direct;
};

/* Per output plane, int32 multiply-adds over a zero-padded copy of the input plane
 * split by column phase (hp rows of wq, one column of slack), so that every row read
 * is contiguous. */
struct conv_grouped : conv_base {
    int32_t* wg; /* the weights as int32 */
    int64_t hp, wq;
    size_t plane_bytes; /* per-thread scratch */
    depthwise_mode dw;
};

/* A thread's strip scratch starts with the strip its panel holds (conv2d_gemm.cpp,
 * held_strip); the panel starts this many bytes in, on a line of its own. */
constexpr size_t kStripPanelAt = 64;

inline size_t align64(size_t v) {
    return (v + 63) & ~static_cast<size_t>(63);
}

/* Where each padded row starts in a channel's phase image of hq x wq planes (sh * hq
 * rows); null when out of memory (conv2d.cpp). */
int64_t* phase_row_table(const conv_geom& g, int64_t hq, int64_t wq);

/* groups == 1 (conv2d_gemm.cpp): weights, image geometry and strips at prerun. */
int gemm_prerun(cpu_node_ctx* ctx, conv_gemm* f, size_t* scratch_bytes);
int conv_gemm_run(cpu_node_ctx* ctx, const conv_gemm* f, const epilogue* ep, const int32_t* bias);
void conv_gemm_free(conv_gemm* f);
/* Image n of the input x as the GEMM reads it, into img (conv2d_image.cpp): the phase
 * image, taps mode's or broadcast mode's channel-interleaved one, or a direct 1x1 conv's
 * input cast to int8 (an int8 input is read in place instead), built by ctx's threads. */
void gemm_build_image(cpu_node_ctx* ctx, const conv_gemm* f, const ir_tensor* x, int64_t n,
                      int8_t* img);
/* Broadcast mode's per-class starts from the GEMM's (f->w.start), after a bias or a
 * rounding addend is folded into those. Nothing where the mode is off. */
void gemm_bcast_starts(conv_gemm* f);
/* groups > 1 (conv2d_grouped.cpp). */
int grouped_prerun(cpu_node_ctx* ctx, conv_grouped* f, size_t* scratch_bytes);
void conv_grouped_run(cpu_node_ctx* ctx, const conv_grouped* f, const epilogue* ep,
                      const int32_t* bias);
void conv_grouped_free(conv_grouped* f);

/* ---- the groups == 1 image, shared by conv2d_gemm.cpp and its avx512 rows ---------- */

/* Zeros padded row r of a channel's image (its segment in every column phase). */
inline void image_zero_row(const conv_gemm* f, int8_t* channel, int64_t r) {
    const int64_t plane = f->hq * f->wq;
    for (int64_t pc = 0; pc < f->g.sw; ++pc)
        memset(channel + f->row_at[r] + pc * plane, 0, static_cast<size_t>(f->wq));
}

/* The same for a row of a column-stride-2 image that an input row is then written to
 * (cpu_phase_row2_i8): only its columns the input does not cover, none where it covers
 * them all (a 1x1 stride-2 conv's even rows: the zeros were a third of its image's time). */
inline void image_zero_row2_around(const conv_gemm* f, int8_t* channel, int64_t r) {
    const int64_t plane = f->hq * f->wq, pw = f->g.pw, w = f->g.w;
    for (int64_t pc = 0; pc < 2; ++pc) {
        // Phase pc holds padded columns 2 j + pc; the input covers [pw, pw + w).
        int64_t lo = (pw - pc + 1) / 2, hi = (pw + w - pc + 1) / 2;
        lo = lo < f->wq ? lo : f->wq;
        hi = hi < f->wq ? hi : f->wq;
        int8_t* row = channel + f->row_at[r] + pc * plane;
        if (lo > 0) memset(row, 0, static_cast<size_t>(lo));
        if (hi < f->wq) memset(row + hi, 0, static_cast<size_t>(f->wq - hi));
    }
}

/* Padded row `row` of a column-stride-1 image from input row `in`: pw zeros, the row's w
 * values, zeros to wq. */
inline void image_copy_row(const conv_gemm* f, const int8_t* in, int8_t* row) {
    const conv_geom& g = f->g;
    memset(row, 0, static_cast<size_t>(g.pw));
    memcpy(row + g.pw, in, static_cast<size_t>(g.w));
    memset(row + g.pw + g.w, 0, static_cast<size_t>(f->wq - g.pw - g.w));
}

/* Image rows are built item by item, an item being input row h of channel ic, stepped
 * by the caller (++h) without dividing. Returns the item's channel image in img, after
 * moving to the next channel past its last row and zeroing the padding rows above and
 * below the channel at its first and last row. */
inline int8_t* image_item(const conv_gemm* f, int8_t* img, int64_t* ic, int64_t* h) {
    const conv_geom& g = f->g;
    if (*h == g.h) {
        *h = 0;
        ++*ic;
    }
    int8_t* channel = img + *ic * f->channel_stride;
    if (*h == 0)
        for (int64_t r = 0; r < g.ph; ++r) image_zero_row(f, channel, r);
    if (*h == g.h - 1)
        for (int64_t r = g.ph + g.h; r < f->hq * g.sh; ++r) image_zero_row(f, channel, r);
    return channel;
}

/* acc[i] += w * src[i], wrapping; one copy per instruction set so each vectorizes. */
inline void acc_row_body(uint32_t* acc, const int32_t* src, uint32_t w, int64_t n) {
    for (int64_t i = 0; i < n; ++i) acc[i] += w * static_cast<uint32_t>(src[i]);
}

/* Where broadcast mode writes an image's sums (bcast_items_avx512). */
struct bcast_out {
    const ep_tile_plan* plan;
    const int32_t* bias; /* NULL when folded or absent */
    void* out;
    int64_t out_base;      /* the image's first output element */
    const gemm_tail* tail; /* the fused tail (gemm_tail_plan) or NULL: the plan's tiles */
};

/* The scalar level's grouped kernels (simd/simd_config.cpp), in its record. */
void acc_row_plain(uint32_t* acc, const int32_t* src, uint32_t w, int64_t n);
void depthwise_plane_plain(const conv_grouped* f, const int8_t* img, const int64_t* taps,
                           const int32_t* w, int32_t* acc);

#if CVML_SIMD_X86
/* groups == 1 at avx512 (simd/x86/avx512/conv2d_gemm.cpp): image items [begin, end) of
 * an int8 input x (the image's first element) with column stride 1 or 2. */
void image_rows_i8_avx512(const conv_gemm* f, const int8_t* x, int8_t* img, int64_t begin,
                          int64_t end);
/* ... and at avx2 (simd/x86/avx2/conv2d_gemm.cpp), column stride 1. */
void image_rows_i8_avx2(const conv_gemm* f, const int8_t* x, int8_t* img, int64_t begin,
                        int64_t end);
/* Broadcast mode (simd/x86/avx512/conv2d_bcast.cpp): items [begin, end) of (channel
 * block, output row), block-major, from its image through the tail. */
void bcast_items_avx512(const conv_gemm* f, const uint8_t* img, const bcast_out* o, int64_t begin,
                        int64_t end);
/* ... and at avx2 (simd/x86/avx2/conv2d_bcast.cpp), 7-pixel segments. */
void bcast_items_avx2(const conv_gemm* f, const uint8_t* img, const bcast_out* o, int64_t begin,
                      int64_t end);
/* groups > 1 per instruction set: simd/x86/avx512/conv2d_grouped.cpp ... */
void acc_row_avx512(uint32_t* acc, const int32_t* src, uint32_t w, int64_t n);
/* The depthwise phase image of one int8 input plane, column stride 1 or 2. */
void depthwise_image_avx512(const conv_grouped* f, const int8_t* x, int8_t* img);
/* One plane's sums from its phase image, tap by tap (vpmulld). */
void depthwise_plane_avx512(const conv_grouped* f, const int8_t* img, const int64_t* taps,
                            const int32_t* w, int32_t* acc);
/* The direct depthwise kernels (avx512, avx2) fetch the output lines of the planes they
 * compute next for writing (simd_prefetch_lines_for_write) where a plane is at most this
 * many bytes: with two threads the arena hands a layer lines the other core last held,
 * and each store would wait for them. */
constexpr int64_t kDwOwnAheadBytes = 4096;
/* The avx2 direct kernel, and the avx512 one where it computes planes in pairs, claim the
 * output lines of the planes of a chunk before they compute them (simd_claim_lines) where
 * a thread's share of the layer's output is at most this many bytes: their stores (a
 * row's few bytes at a time) waited for lines the other core held even with the lines
 * asked for a plane ahead, and claims slowed the 28x28 and larger layers (whose shares
 * are larger), also chunk by chunk (the 112x112 layer 7-14% slower). */
constexpr int64_t kDwClaimMaxBytes = 64 * 1024;
/* Claims the whole lines of output planes [p0, p1) (only lines no other chunk writes a
 * byte of), with more than one thread, where a thread's share of the output is at most
 * kDwClaimMaxBytes and the chain reads no operand. The fast paths do not declare
 * CPU_CAP_TAIL_IN_PLACE (conv2d.cpp), so their output never shares an operand's buffer
 * today; the operand check keeps the claim from zeroing one should they ever do. */
inline void dw_claim_output(const conv_grouped* f, const ir_tensor* yt, const epilogue* ep,
                            int64_t p0, int64_t p1) {
    if (f->threads < 2 || epilogue_reads_operand(ep)) return;
    const int64_t plane_bytes = f->g.oh * f->g.ow * yt->storage;  // storage: element size
    if (f->g.n * f->g.o * plane_bytes / f->threads > kDwClaimMaxBytes) return;
    const uintptr_t at = reinterpret_cast<uintptr_t>(yt->data);
    const uintptr_t first = (at + static_cast<uintptr_t>(p0 * plane_bytes) + 63) & ~uintptr_t{63};
    const uintptr_t end = (at + static_cast<uintptr_t>(p1 * plane_bytes)) & ~uintptr_t{63};
    if (end <= first) return;
    simd_claim_lines(reinterpret_cast<void*>(first), end - first);
}
/* Output planes [p0, p1) by the direct vpdpbusd kernel (f->dw_w4 is set), through the
 * tail `ep` into y. */
void depthwise_direct_avx512(const conv_grouped* f, const ir_tensor* x, const ir_tensor* y,
                             const epilogue* ep, const int32_t* bias, int64_t p0, int64_t p1);
/* ... and simd/x86/avx2/conv2d_grouped.cpp. */
void acc_row_avx2(uint32_t* acc, const int32_t* src, uint32_t w, int64_t n);
void depthwise_plane_avx2(const conv_grouped* f, const int8_t* img, const int64_t* taps,
                          const int32_t* w, int32_t* acc);
/* Output planes [p0, p1) by the direct vpmaddwd kernel, through the tail `ep` into y;
 * kernels spanning at most kDwDirectAvx2MaxRows input rows (its stack ring). */
constexpr int64_t kDwDirectAvx2MaxRows = 32;
void depthwise_direct_avx2(const conv_grouped* f, const ir_tensor* x, const ir_tensor* y,
                           const epilogue* ep, const int32_t* bias, int64_t p0, int64_t p1);
#endif

#if CVML_SIMD_AARCH64
/* groups > 1 on aarch64, the neon, dotprod and i8mm levels
 * (simd/arm/aarch64/neon/conv2d_grouped.cpp): a depthwise plane from its phase image,
 * 16 outputs at a time, tap by tap (SMLAL by element). */
void depthwise_plane_neon(const conv_grouped* f, const int8_t* img, const int64_t* taps,
                          const int32_t* w, int32_t* acc);
/* A 1x1 depthwise plane (stride 1, no padding) straight from the input: acc[i] = w *
 * x[i], for n values (acc has 16 values of slack; x is read to a multiple of 16 only
 * where it has them: the last few are read one by one). */
void depthwise_1x1_neon(const int8_t* x, int32_t w, int64_t n, int32_t* acc);
#endif

}  // namespace cpu_conv2d
