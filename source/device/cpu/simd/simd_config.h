/* One record per SIMD level: the kernels a level runs and the facts that decide its
 * paths, so kernel code asks the record (`cfg->max_row8`, `cfg->taps_kernel`) instead
 * of comparing levels. The records are defined once, in simd_config.cpp, for the
 * levels this build compiles (x86: scalar, avx2, avx512; aarch64 Linux: scalar, neon,
 * dotprod, i8mm; elsewhere the scalar level alone), and the device picks its level's
 * record once, where it resolves the level (cpu.cpp: cpu_runtime.simd). A NULL kernel
 * means the level has no such path; the scalar level's entries are the scalar code. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "device/cpu/simd/epilogue.h"
#include "device/cpu/simd/gemm_s8.h"

struct ir_tensor;
namespace cpu_conv2d {
struct conv_gemm;
struct conv_grouped;
struct bcast_out;
}  // namespace cpu_conv2d
namespace cpu_max_pool2d {
struct pool_fast;
}

/* How the GEMM's weights (A) are laid out in blocks of GEMM_MR rows. */
enum cpu_gemm_a_layout {
    GEMM_A_ROWS = 0, /* zero-padded int8 rows (scalar, avx2) */
    GEMM_A_K4 = 1,   /* interleaved by 4 values of K (avx512, neon, dotprod) */
    GEMM_A_K8 = 2,   /* 8-value steps of K by row pairs (i8mm) */
};

struct cpu_simd_config {
    int level; /* enum cpu_simd_level */

    /* ---- the int8 GEMM (gemm_s8.cpp) */
    int32_t gemm_panel;        /* B's columns are packed in multiples of this */
    int32_t gemm_k_pad;        /* A's rows are zero-padded to a multiple of this */
    int32_t gemm_a_layout;     /* cpu_gemm_a_layout */
    bool gemm_a_in_place;      /* int8 weights are read where they are (gemm_weights_plain),
                                  only a last partial row block packed */
    bool gemm_notes_min;       /* a kernel negates weights: -128 is noted (has_min) */
    bool gemm_folds_start;     /* a bias or an added constant may fold into the sums' start */
    uint8_t gemm_taps_zero;    /* the byte of the value 0 in a taps or broadcast image */
    uint8_t gemm_b_head;       /* bytes before packed B's panels (avx2: its sign summary) */
    uint8_t gemm_b_panel_tail; /* bytes after each panel's K steps (avx2: its columns' sums) */
    uint8_t gemm_b_copies;     /* room for the panels this many times (avx2: 2, the signed
                                  form's sign masks after them) */
    /* One tile (rows m0.., columns n0..) of A times packed B. */
    void (*gemm_tile)(const gemm_weights* a, const void* b, int32_t N, int32_t m0, int32_t rows,
                      int32_t n0, int32_t cols, int32_t* tile);
    /* Row group k4 of B (rows NULL past K) into the packed panels. */
    void (*gemm_pack_group)(const int8_t* const rows[GEMM_KG], int32_t N, int32_t K, int32_t k4,
                            void* packed);
    /* All of B's rows at base + offsets[k]; NULL: group by group (gemm_pack_group). */
    void (*gemm_pack_rows)(const int8_t* base, const int64_t* offsets, const int8_t* pad, int32_t N,
                           int32_t K, void* packed);
    /* Taps mode's channel-interleaved image rows (gemm_interleave4). */
    void (*gemm_interleave4)(const int8_t* const rows[4], int64_t lo, int64_t w, int64_t wq,
                             uint8_t* dst);
    /* Narrow tails: selected columns packed (gemm_pack_b_select) and multiplied by whole
     * row blocks of weights read in place (gemm_run_narrow); NULL without them. */
    void (*gemm_pack_select)(const int8_t* base, const int64_t* offsets, const int8_t* pad,
                             int32_t K, const gemm_select* sel, uint8_t* packed);
    void (*gemm_narrow_block)(const gemm_weights* a, const uint8_t* b, size_t stride, int32_t c,
                              int32_t m0, int32_t* tile, bool stream);
    /* The widest narrow tail that pays (<= GEMM_NARROW): a tail's columns cost more each
     * than a panel's (a product per column, their sums reduced, the tile's tail applied
     * apart), so avx2, whose panels are 8 columns, takes them up to 2 columns (a 4-column
     * tail of MobileNet-v1's 14x14 layers was 5-10% slower than the panel), avx512 (16)
     * up to 4. */
    int32_t gemm_narrow_max_cols;
    /* Tiles [t0, t1) with the micro-kernel's fused tail (packed B, or taps mode's image
     * with boff); NULL where tails are applied tile by tile. */
    void (*gemm_tiles_tail)(const gemm_weights* a, const uint8_t* b, const int64_t* boff, int32_t N,
                            int64_t t0, int64_t t1, const gemm_tail* tail, gemm_tile_fn fn,
                            void* arg);
    /* The fused tail adds the bias and the rounding itself (avx2), rather than finding
     * both in the sums (avx512: gemm_weights_fold_bias, epilogue_fold_round). */
    bool gemm_tail_adds_bias;
    /* Taps mode: one tile with B read from the image at img + boff[k4]; NULL without
     * taps mode. taps_in_place: only for weights read in place in whole row blocks. */
    void (*gemm_tile_taps)(const gemm_weights* a, const uint8_t* img, const int64_t* boff,
                           int32_t m0, int32_t n0, int32_t cols, int32_t* tile);
    bool taps_in_place;

    /* ---- conv2d, groups == 1 (op/conv2d_gemm.cpp) */
    /* The image's rows from an int8 input of column stride <= image_rows_max_sw. */
    void (*image_rows_i8)(const cpu_conv2d::conv_gemm* f, const int8_t* x, int8_t* img,
                          int64_t begin, int64_t end);
    int64_t image_rows_max_sw;
    /* Where the level packs dense strips (gemm_pack_select), they are taken when they
     * save at least this percentage of the 8-column vectors (conv2d_gemm.cpp's
     * dense_pays); 0: whenever they compute no more than flat strips. */
    uint8_t dense_strips_min_saving;
    /* Broadcast mode's items; NULL without it. */
    void (*bcast_items)(const cpu_conv2d::conv_gemm* f, const uint8_t* img,
                        const cpu_conv2d::bcast_out* o, int64_t begin, int64_t end);
    /* The widest segment its kernel takes: 14 (segments of 14 or 7 pixels, and two 7-wide
     * rows as one) or 7 (7 pixels of one row). */
    int32_t bcast_max_pixels;
    /* Whether 1x1 kernels (outputs 7 or 14 wide) take it too: avx512 and avx2. The GEMM
     * runs those widths' last columns in a half-empty tile; at avx2 its 4 x 16 kernel takes
     * 4.1 instructions a product where broadcast mode's passes take 3.4 (MobileNet-v1's 7x7
     * and 14x14 pointwise layers 0.81-0.92x the GEMM's time, per-node minima). */
    bool bcast_1x1;

    /* ---- conv2d, groups > 1 (op/conv2d_grouped.cpp) */
    void (*acc_row)(uint32_t* acc, const int32_t* src, uint32_t w, int64_t n);
    /* The depthwise phase image of column stride <= dw_image_max_sw; NULL: plain rows. */
    void (*dw_image)(const cpu_conv2d::conv_grouped* f, const int8_t* x, int8_t* img);
    int64_t dw_image_max_sw;
    void (*dw_plane)(const cpu_conv2d::conv_grouped* f, const int8_t* img, const int64_t* taps,
                     const int32_t* w, int32_t* acc);
    /* A 1x1 stride-1 unpadded depthwise plane read in place; NULL without it. */
    void (*dw_1x1)(const int8_t* x, int32_t w, int64_t n, int32_t* acc);
    /* The direct depthwise, where column stride <= dw_direct_max_sw, the taps of a lane
     * fit its window (3 * sw + 3 * dw <= dw_direct_window), kw <= dw_direct_max_kw and
     * the kernel spans at most dw_direct_max_rows input rows ((kh - 1) * dh + 1). */
    void (*dw_direct)(const cpu_conv2d::conv_grouped* f, const ir_tensor* x, const ir_tensor* y,
                      const epilogue* ep, const int32_t* bias, int64_t p0, int64_t p1);
    int64_t dw_direct_max_sw, dw_direct_window, dw_direct_max_kw, dw_direct_max_rows;

    /* ---- max_pool2d (op/max_pool2d.cpp) */
    void (*max_row)(int32_t* acc, const int32_t* src, int64_t n);
    void (*max_row8)(int8_t* acc, const int8_t* src, int64_t n);
    /* int8 output rows with every window offset folded in a register; NULL: max_row8. */
    void (*pool_rows8)(const cpu_max_pool2d::pool_fast* f, const int8_t* ph, int8_t* y, int64_t i0,
                       int64_t i1);
    /* Column stride 2's phase planes by bands of output rows; NULL: by whole planes. */
    void (*pool_phase8_s2)(const cpu_max_pool2d::pool_fast* f, const int8_t* x, int8_t* ph,
                           int64_t i0, int64_t i1);
    /* int8 output rows [i0, i1) of one plane straight from its input, separably, where
     * pool_direct8_fits (max_pool2d_fast.h); NULL: the padded image's kernels above. */
    void (*pool_direct8)(const cpu_max_pool2d::pool_fast* f, const int8_t* x, int8_t* y, int64_t i0,
                         int64_t i1);

    /* ---- fused tails (epilogue.cpp) */
    bool vector_tails; /* the vector levels' fusion rules (cpu.cpp's fuse_tails) */
    /* A chain over n values of the storages the vector paths take (int8, int16, int32). */
    void (*ep_apply)(const epilogue* ep, const void* in, int32_t in_storage, int64_t in_index,
                     int32_t bias, void* out, int32_t out_storage, int64_t out_index, int64_t n);
    /* Any chain over a tile's rows at once; NULL: row by row through ep_apply. */
    void (*ep_apply_tile)(const epilogue* ep, const int32_t* tile, int32_t tile_stride,
                          int32_t rows, const ep_tile_keep* k, const int32_t* bias, void* out,
                          int32_t out_storage, int64_t out_first, int64_t out_stride);
    /* Picks the level's tile function for a chain (plan->run, plan->chain); NULL: the
     * generic one. */
    void (*ep_plan_tile)(const epilogue* ep, bool has_bias, int32_t out_storage,
                         ep_tile_plan* plan);
    void (*narrow_i32_i8)(const int32_t* src, int64_t n, int8_t* dst);
    /* Compacts up to compact_max_vectors groups of 16 (more: the scalar code). */
    int64_t (*compact_i32)(const int32_t* src, const uint16_t* keep, int32_t vectors, int32_t* dst);
    int32_t compact_max_vectors;
    void (*deinterleave2_i8)(const int8_t* src, int64_t n, int8_t* even, int8_t* odd);
};

/* The record of `level`; a level this build does not compile gets the scalar one. */
const cpu_simd_config* cpu_simd_config_of(int level);
