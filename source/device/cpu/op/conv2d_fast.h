/* conv2d on the CPU: what the operator's file (conv2d.cpp: the reference loops, the
 * choice of path, prerun and run) shares with its fast paths at the SIMD levels,
 * conv2d_gemm.cpp (groups == 1) and conv2d_grouped.cpp (groups > 1, depthwise). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "device/cpu/cpu_kernel.h"
#include "device/cpu/cpu_paths.h"
#include "device/cpu/simd/epilogue.h"
#include "device/cpu/simd/gemm_s8.h"
#include "device/cpu/simd/simd.h"

namespace cpu_conv2d {

struct conv_geom {
    int64_t n, c, h, w;    /* input */
    int64_t o, ic, kh, kw; /* weight (o, ic = c / groups, kh, kw) */
    int64_t oh, ow;        /* output spatial */
    int64_t sh, sw, ph, pw, dh, dw;
    int64_t opg; /* output channels per group */
};

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

struct conv_fast {
    int level;
    int threads;
    conv_geom g;
    int64_t N, K;
    gemm_weights w;
    bool bias_folded;  /* the constant bias is in the GEMM's sums (gemm_weights_fold_bias) */
    bool round_folded; /* so is the tail's rounding addend (epilogue_fold_round) */
    /* groups == 1 */
    bool direct;    /* 1x1, stride 1, no padding: the input itself is the image */
    int64_t hq, wq; /* rows and columns of one phase plane */
    int64_t nf;     /* GEMM columns: oh rows of wq (the wq - ow last ones dropped) */
    size_t strip_bytes, image_bytes;
    int64_t* taps;          /* where im2col row k starts in the image */
    int64_t* row_at;        /* padded row r: its start in a channel's image (phase 0) */
    bool* row_read;         /* padded row r is read by a tap (a 1x1 stride-2 conv reads
                               every other row): the others are not built */
    int64_t channel_stride; /* sh * sw phase planes */
    int64_t strips;         /* GEMM_NT-column strips of the GEMM columns */
    bool tail_merged;       /* a narrow last strip is run with the one before it */
    size_t packed_bytes;    /* a packed strip; then, when tail_merged, the tail's columns */
    strip_keep* keeps;      /* per strip: its stored columns */
    /* Dense mode (avx512, when it saves work): the GEMM columns are the N output pixels,
     * not nf flat columns, so no column is computed to be dropped; each strip is packed
     * from the flat columns it spans (dense_strip), and a last strip of at most
     * GEMM_NARROW columns is done by dot products (gemm_run_narrow). */
    bool dense;
    dense_strip* dstrips;
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
    size_t dw_image_bytes; /* the phase image */
    /* Depthwise with vpdpbusd straight from the input (avx512, column stride <= 2, int8
     * weights; conv2d_grouped.cpp): per channel and kernel row, its taps in groups of 4
     * as dwords (zeros past kw), and 128 * (the sum of the weights of rows < r). */
    int32_t* dw_w4;
    int32_t* dw_corr;   /* (kh + 1) per channel */
    int32_t dw_half;    /* the tail's rounding addend when folded (round_folded), else 0 */
    int64_t dw_groups;  /* ceil(kw / 4) */
    int64_t dw_chunks;  /* 16-pixel chunks of an output row */
    uint64_t* dw_masks; /* per (chunk, group): the input bytes its 64-byte load may read */
    int32_t* wg;        /* the weights as int32 */
};

inline size_t align64(size_t v) {
    return (v + 63) & ~static_cast<size_t>(63);
}

/* row_at: where each padded row starts in a channel's phase image (conv2d.cpp). */
int phase_row_table(conv_fast* f);

/* groups == 1 (conv2d_gemm.cpp): weights, image geometry and strips at prerun. */
int gemm_prerun(cpu_node_ctx* ctx, conv_fast* f, size_t* scratch_bytes);
int conv_gemm_run(cpu_node_ctx* ctx, const conv_fast* f, const epilogue* ep, const int32_t* bias);
/* groups > 1 (conv2d_grouped.cpp). */
int grouped_prerun(cpu_node_ctx* ctx, conv_fast* f, size_t* scratch_bytes);
void conv_grouped_run(cpu_node_ctx* ctx, const conv_fast* f, const epilogue* ep,
                      const int32_t* bias);

/* acc[i] += w * src[i], wrapping; one copy per instruction set so each vectorizes. */
inline void acc_row_body(uint32_t* acc, const int32_t* src, uint32_t w, int64_t n) {
    for (int64_t i = 0; i < n; ++i) acc[i] += w * static_cast<uint32_t>(src[i]);
}

#if CVML_SIMD_X86
/* groups > 1 per instruction set: simd/x86/avx512/conv2d_grouped.cpp ... */
void acc_row_avx512(uint32_t* acc, const int32_t* src, uint32_t w, int64_t n);
/* The depthwise phase image of one int8 input plane, column stride 1 or 2. */
void depthwise_image_avx512(const conv_fast* f, const int8_t* x, int8_t* img);
/* One plane's sums from its phase image, tap by tap (vpmulld). */
void depthwise_plane_avx512(const conv_fast* f, const int8_t* img, const int64_t* taps,
                            const int32_t* w, int32_t* acc);
/* Thread slot `slot`'s output planes by the direct vpdpbusd kernel (f->dw_w4 is set),
 * through the tail `ep` into y. */
void depthwise_direct_avx512(const conv_fast* f, const ir_tensor* x, const ir_tensor* y,
                             const epilogue* ep, const int32_t* bias, int64_t slot);
/* ... and simd/x86/avx2/conv2d_grouped.cpp. */
void acc_row_avx2(uint32_t* acc, const int32_t* src, uint32_t w, int64_t n);
void depthwise_plane_avx2(const conv_fast* f, const int8_t* img, const int64_t* taps,
                          const int32_t* w, int32_t* acc);
#endif

}  // namespace cpu_conv2d
