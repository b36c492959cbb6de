/* What the int8 GEMM (gemm_s8.cpp, the scalar kernels and the dispatch) shares with its
 * kernels per instruction set (x86/avx512/gemm_s8.cpp, x86/avx2/gemm_s8.cpp,
 * arm/aarch64/neon/gemm_s8.cpp, arm/aarch64/dotprod/gemm_s8.cpp), whose entry points
 * are declared here. */
#pragma once

#include <stdint.h>

#include "device/cpu/simd/gemm_s8.h"
#include "device/cpu/simd/simd.h"

namespace gemm_impl {

inline int32_t round_up(int32_t v, int32_t m) {
    return (v + m - 1) / m * m;
}

/* The 4 rows of B's row group k4 whose row k is base + offsets[k]; rows past K are
 * past_k (a row of -128s for the avx512 packers, which turn it into u8 0; NULL, read as
 * zeros, elsewhere). */
inline void group_rows(const int8_t* base, const int64_t* offsets, const int8_t* past_k, int32_t K,
                       int32_t k4, const int8_t* rows[GEMM_KG]) {
    for (int32_t i = 0; i < GEMM_KG; ++i) {
        const int32_t k = k4 * GEMM_KG + i;
        rows[i] = k < K ? base + offsets[k] : past_k;
    }
}

/* Tiles from t0 on in gemm_run_tiles' order: tile t is row block t % mblocks of column
 * tile t / mblocks, stepped rather than divided. m0, n0, rows, cols: the current one's. */
struct tile_walk {
    int32_t M, N;
    int64_t mblocks, mb, nb;
    int32_t m0, n0, rows, cols;
    tile_walk(int32_t M_, int32_t N_, int64_t t0)
        : M(M_), N(N_), mblocks((M_ + GEMM_MR - 1) / GEMM_MR), mb(t0 % mblocks), nb(t0 / mblocks) {
        settle();
    }
    void next() {
        if (++mb == mblocks) {
            mb = 0;
            ++nb;
        }
        settle();
    }

  private:
    void settle() {
        m0 = static_cast<int32_t>(mb) * GEMM_MR;
        n0 = static_cast<int32_t>(nb) * GEMM_NT;
        rows = M - m0 < GEMM_MR ? M - m0 : GEMM_MR;
        cols = N - n0 < GEMM_NT ? N - n0 : GEMM_NT;
    }
};

/* The 4 weight rows from `row` on that a narrow block (gemm_run_narrow) fetches two
 * blocks ahead while it multiplies these, when streaming (a run of blocks); else NULL.
 * The one-column run of a dense layer reads each weight once, from memory: the
 * prefetcher alone left 512 KB of weights at 10 GB/s. */
inline const int8_t* narrow_rows_ahead(const gemm_weights* a, int32_t row, bool stream) {
    const int32_t ahead_row = row + 2 * GEMM_MR;
    if (!stream || ahead_row + 4 > a->M) return nullptr;
    return a->plain + static_cast<size_t>(ahead_row) * static_cast<size_t>(a->lda);
}

/* gemm_tail::kind: a fused tail, with a residual add or not. */
enum gemm_tail_kind { GEMM_TAIL_ON = 1, GEMM_TAIL_ADD = 2 };

/* ---- scalar (gemm_s8.cpp): the scalar level's entries in its record (simd_config.h) */
/* One tile of A (M x Kp int8 rows) times B (Kp x N int8 rows). */
void tile_scalar(const gemm_weights* a, const void* b, int32_t N, int32_t m0, int32_t rows,
                 int32_t n0, int32_t cols, int32_t* tile);
/* B's row group k4 as plain int8 rows. */
void pack_group_scalar(const int8_t* const rows[GEMM_KG], int32_t N, int32_t K, int32_t k4,
                       void* packed);
/* A channel-interleaved image's rows, unsigned (x ^ 0x80). */
void interleave4_scalar(const int8_t* const rows[4], int64_t lo, int64_t w, int64_t wq,
                        uint8_t* dst);

#if CVML_SIMD_X86
/* ---- avx512 (x86/avx512/gemm_s8.cpp) */
/* Tiles [t0, t1) with a fused tail (gemm_tail, kind != 0): on packed B (boff NULL) or
 * in taps mode (B the image, boff its step offsets). */
void run_tiles_tail_avx512(const gemm_weights* a, const uint8_t* b, const int64_t* boff, int32_t N,
                           int64_t t0, int64_t t1, const gemm_tail* tail, gemm_tile_fn fn,
                           void* arg);
void tile_avx512(const gemm_weights* a, const uint8_t* b, int32_t m0, int32_t n0, int32_t cols,
                 int32_t* tile);
void tile_taps_avx512(const gemm_weights* a, const uint8_t* img, const int64_t* boff, int32_t m0,
                      int32_t n0, int32_t cols, int32_t* tile);
void interleave4_avx512(const int8_t* const rows[4], int64_t lo, int64_t w, int64_t wq,
                        uint8_t* dst);
/* B's row group k4 in 16-column panels, unsigned (gemm_s8.cpp, over pack64_avx512). */
void pack_group_avx512(const int8_t* const rows[GEMM_KG], int32_t N, int32_t K, int32_t k4,
                       void* packed);
void pack64_avx512(const int8_t* const rows[4], int32_t n, int32_t avail, int32_t panels,
                   uint8_t* dst, size_t panel_bytes);
void pack_rows_avx512(const int8_t* base, const int64_t* offsets, const int8_t* pad, int32_t N,
                      int32_t K, uint8_t* packed);
void pack_select_avx512(const int8_t* base, const int64_t* offsets, const int8_t* pad, int32_t K,
                        const gemm_select* sel, uint8_t* packed);
/* stream: part of a run of blocks (fetch the rows two blocks on), not one block after
 * its tile (whose rows that tile has just read). */
void narrow_block_avx512(const gemm_weights* a, const uint8_t* b, size_t stride, int32_t c,
                         int32_t m0, int32_t* tile, bool stream);
/* ---- avx2 (x86/avx2/gemm_s8.cpp) */
void tile_avx2(const gemm_weights* a, const int8_t* b, int32_t m0, int32_t n0, int32_t cols,
               int32_t* tile);
/* Tiles [t0, t1) with a fused tail (gemm_tail, kind != 0) on packed B. */
void run_tiles_tail_avx2(const gemm_weights* a, const int8_t* b, int32_t N, int64_t t0, int64_t t1,
                         const gemm_tail* tail, gemm_tile_fn fn, void* arg);
/* B in panels of 8 columns (gemm_pack_b_group, gemm_pack_b_rows at avx2). */
void pack_group_avx2(const int8_t* const rows[GEMM_KG], int32_t N, int32_t Kp, int32_t k4,
                     int8_t* packed);
void pack_rows_avx2(const int8_t* base, const int64_t* offsets, int32_t N, int32_t K,
                    int8_t* packed);
/* Broadcast mode's image rows at avx2 (gemm_interleave4): the bytes are x (zero 0). */
void interleave4_avx2(const int8_t* const rows[4], int64_t lo, int64_t w, int64_t wq, uint8_t* dst);
/* gemm_pack_b_select at avx2 (dense strips). */
void pack_select_avx2(const int8_t* base, const int64_t* offsets, int32_t K, const gemm_select* sel,
                      int8_t* packed);
/* gemm_run_narrow's block at avx2 (stream: as at avx512). */
void narrow_block_avx2(const gemm_weights* a, const uint8_t* b, size_t stride, int32_t c,
                       int32_t m0, int32_t* tile, bool stream);
#endif

/* avx2's B (x86/avx2/): int8 panels of AVX2_PANEL columns after a head of AVX2_B_HEAD
 * bytes whose first is 1 where no packed value is negative (the kernel then multiplies x
 * itself as vpmaddubsw's unsigned operand) and 0 otherwise. A panel is its Kp / 4 steps,
 * one ymm each, then AVX2_PANEL_SUMS bytes. Where B has a negative value (the signed
 * form, gemm_s8.cpp) the steps hold |x|, the sums are each column's sum of the
 * magnitudes of its negative values (int32, wrapping), where the form's sums start, and
 * x's sign masks follow the panels in the same layout, AVX2_B_MASKS_AT's int64 in the
 * head bytes on (gemm_b_copies: B's room is twice its panels'). */
#define AVX2_PANEL 8
#define AVX2_B_HEAD 64
#define AVX2_PANEL_SUMS 32
#define AVX2_B_MASKS_AT 8 /* where in the head: the masks' distance from the panels' */
inline size_t avx2_panel_bytes(int32_t Kp) {
    return static_cast<size_t>(Kp / 4) * 32 + AVX2_PANEL_SUMS;
}

/* aarch64's levels (neon, dotprod, i8mm) share B's layout, signed in panels of 12
 * columns; the weights are signed, in blocks of GEMM_MR rows interleaved by 4 as at
 * avx512 (neon, dotprod) or in 8-value steps of K by row pairs (i8mm). */
#define ARM_PANEL 12
#define ARM_PANEL_BYTES (ARM_PANEL * GEMM_KG) /* one k4 step of a panel */

/* Where the micro-kernels read step k4 of a 12-column panel of B: packed panels (48
 * bytes a step), or taps mode's channel-interleaved image (gemm_run_tiles_taps: the
 * panel's first column plus the step's offset). */
struct arm_packed_b {
    const int8_t* b;
    const int8_t* at(int32_t k4) const { return b + static_cast<size_t>(k4) * ARM_PANEL_BYTES; }
};
struct arm_taps_b {
    const int8_t* img;
    const int64_t* boff;
    const int8_t* at(int32_t k4) const { return img + boff[k4]; }
};

#if CVML_SIMD_AARCH64
/* ---- aarch64 neon (arm/aarch64/neon/gemm_s8.cpp), B's packer for both levels */
void pack_group_arm(const int8_t* const rows[GEMM_KG], int32_t N, int32_t Kp, int32_t k4,
                    int8_t* packed);
void tile_neon(const gemm_weights* a, const int8_t* b, int32_t m0, int32_t n0, int32_t cols,
               int32_t* tile);
/* Taps mode: B read from the image (arm_taps_b); and the image's rows (gemm_interleave4
 * with signed values: the value 0 is the byte 0). */
void tile_taps_neon(const gemm_weights* a, const int8_t* img, const int64_t* boff, int32_t m0,
                    int32_t n0, int32_t cols, int32_t* tile);
void interleave4_arm(const int8_t* const rows[4], int64_t lo, int64_t w, int64_t wq, int8_t* dst);
/* ---- aarch64 dotprod (arm/aarch64/dotprod/gemm_s8.cpp) */
void tile_dotprod(const gemm_weights* a, const int8_t* b, int32_t m0, int32_t n0, int32_t cols,
                  int32_t* tile);
void tile_taps_dotprod(const gemm_weights* a, const int8_t* img, const int64_t* boff, int32_t m0,
                       int32_t n0, int32_t cols, int32_t* tile);
/* ---- aarch64 i8mm (arm/aarch64/i8mm/gemm_s8.cpp): its weights in 8-value steps of K */
void tile_i8mm(const gemm_weights* a, const int8_t* b, int32_t m0, int32_t n0, int32_t cols,
               int32_t* tile);
void tile_taps_i8mm(const gemm_weights* a, const int8_t* img, const int64_t* boff, int32_t m0,
                    int32_t n0, int32_t cols, int32_t* tile);
#endif

}  // namespace gemm_impl
