/* Exact int8 GEMM for conv2d (groups == 1, where upstream casts both operands to
 * int8) and dense (when its operands are proven to fit int8): C = A * B with A the
 * M x K weights, packed once at prerun, and B the K x N activations, packed per run.
 * Every level gives the same int32 bits (sums wrap modulo 2^32 like upstream's):
 *  - avx512: vpdpbusd multiplies unsigned by signed bytes, so B is stored as x + 128
 *    and each row's sums start from -128 * rowsum(A); vpdpbusd does not saturate.
 *  - avx2: vpmaddubsw on x where B has no negative value, else on |x| and w with its
 *    bits flipped where x is negative (the sums start from each column's sum of its
 *    negative values' magnitudes, taking back what the flip adds); no pair sum
 *    saturates. vpmaddwd against ones widens them to int32.
 *  - scalar: plain loops.
 * Tiles are GEMM_MR rows by up to GEMM_NT columns; tile t covers columns of n-tile
 * t / m_blocks and rows of m-block t % m_blocks, so a static split of tile indices
 * over threads reads each n-tile's packed B while it is warm. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define GEMM_MR 8
#define GEMM_NT 48 /* columns per tile; also the row stride of a tile buffer */
#define GEMM_KG 4  /* B is packed in groups of 4 rows */

typedef struct gemm_weights {
    int level;
    int32_t M, K;
    int32_t Mp, Kp;      /* padded to GEMM_MR and GEMM_KG (i8mm: 2 * GEMM_KG) */
    void* data;          /* level-specific layout */
    int32_t* start;      /* avx512: where each row's sums start, Mp entries: -128 * rowsum
                            (taking back B's +128), plus a bias (gemm_weights_fold_bias) */
    const int8_t* plain; /* avx512, avx2 (gemm_weights_plain): the caller's rows, not owned */
    int32_t lda;
    int32_t has_min; /* avx2: some weight is -128, which the narrow and broadcast kernels
                        cannot negate */
} gemm_weights;

/* Packs row-major weights (M x K int32 values, cast to int8 as upstream's conv2d
 * does). Returns CVML_OK or a runtime error (out of memory). */
int gemm_weights_pack(int level, const int32_t* w, int32_t M, int32_t K, gemm_weights* out);
/* Uses int8 weights in place (row-major M x K, readable 4 bytes past the end) at the
 * avx512 and avx2 levels, so the weights exist once in memory; other levels pack a copy. */
int gemm_weights_plain(int level, const int8_t* w, int32_t M, int32_t K, gemm_weights* out);
void gemm_weights_free(gemm_weights* w);
/* Adds bias[m] (M values) to every sum of row m, exactly as adding it to the result
 * (sums wrap mod 2^32), so a caller's tail need not. Returns 1 where the level starts
 * its sums from w->start (avx512), else 0 and nothing changes. */
int gemm_weights_fold_bias(gemm_weights* w, const int32_t* bias);
/* The same with one value v for every row. */
int gemm_weights_fold_add(gemm_weights* w, int32_t v);

/* Columns rounded up to the level's panel width. */
int32_t gemm_b_cols(int level, int32_t N);
/* Bytes of a packed B of K x N. */
size_t gemm_b_bytes(int level, int32_t K, int32_t N);
/* Packs rows k4*4 .. k4*4+3 of B, each given as N int8 values (rows[i] may be NULL
 * for a row past K: zeros). The groups are packed in order, k4 = 0, 1, ..: the last one
 * completes B (avx2 then sums its panels' negative values). */
void gemm_pack_b_group(int level, const int8_t* const rows[GEMM_KG], int32_t N, int32_t K,
                       int32_t k4, void* packed);

/* Packs all of B (K x N) whose row k is base + offsets[k] (N int8 values each). Rows
 * past K pack to zeros: avx512 reads them from `pad`, which must hold -128s (u8 0 after
 * the +128 offset). */
void gemm_pack_b_rows(int level, const int8_t* base, const int64_t* offsets, const int8_t* pad,
                      int32_t N, int32_t K, void* packed);

/* tile: GEMM_MR rows of GEMM_NT int32 (only `rows` x `cols` meaningful). */
typedef void (*gemm_tile_fn)(void* arg, int32_t m0, int32_t rows, int32_t n0, int32_t cols,
                             const int32_t* tile);
int64_t gemm_tile_count(int32_t M, int32_t N);
/* Computes tiles [t0, t1) of A * B and hands each to fn. */
void gemm_run_tiles(const gemm_weights* a, const void* packed_b, int32_t N, int64_t t0, int64_t t1,
                    gemm_tile_fn fn, void* arg);

/* A tail fused into the micro-kernel (avx512, avx2): a tile of GEMM_MR rows and more
 * than 32 columns (avx512) or whose every column is kept (avx2) is not written to a tile
 * buffer for fn but put through the epilogue's chain in registers and stored as int8,
 * which saves the buffer's stores and reloads and a call per tile. The chains:
 * cvm_right_shift and a clip, then optionally a residual add of an int8 operand and a
 * clip, saturating to int8, with no requantization prefix: what nearly every convolution
 * of a quantized network ends in. At avx512 the shift's rounding addend and the bias are
 * in the sums (a shift, no bias); avx2 adds the bias in the tail, with the addend in it
 * where no sum can overflow with both (then a shift; else the round as it is). The same
 * values as the plan's tile function. Every other tile still goes to fn. */
struct ep_tile_plan;
struct ep_tile_keep;
typedef struct gemm_tail {
    int32_t kind;                    /* 0: none; else how the chain runs (gemm_tail_plan) */
    unsigned char chain[64];         /* the matched chain (epilogue_chain.h's rc_chain) */
    int8_t* out;                     /* the output */
    int64_t out_first;               /* where row 0's first kept column goes */
    int64_t out_stride;              /* between output rows */
    const struct ep_tile_keep* keep; /* the tile columns kept */
    int32_t own_ahead;               /* fetch the next tile's output lines for writing */
    int64_t out_size;                /* the output's length, for those fetches */
    const int32_t* bias;             /* avx2: row m's bias is bias[m]; NULL: none */
    int32_t addend; /* avx2: added to every row's bias, the chain's round folded into it */
} gemm_tail;
/* Fills t (but for out, out_first, out_stride and keep) from a plan for the int8 output
 * of a GEMM with these weights and bias (NULL: none; avx512 takes none, its bias being
 * in the sums); returns 1 where the level fuses that chain, else 0 (t->kind is 0). */
int gemm_tail_plan(const gemm_weights* a, const struct ep_tile_plan* plan, const int32_t* bias,
                   gemm_tail* t);
/* gemm_run_tiles with a fused tail (or none: tail NULL or tail->kind 0), for at most
 * GEMM_NT columns (one tile's, as tail->keep describes them). */
void gemm_run_tiles_tail(const gemm_weights* a, const void* packed_b, int32_t N, int64_t t0,
                         int64_t t1, const gemm_tail* tail, gemm_tile_fn fn, void* arg);

/* Dense strips (conv2d without the columns it would drop): each output panel p takes
 * columns idx[p][0..15] (0..31) of the two 16-column groups from[p], from[p] + 1 of the 64
 * consecutive columns starting at base + offsets[k] (readable whole). from[0] must be 0,
 * from[1] 1 or 2, from[2] 2 (gemm_select_ok). */
typedef struct gemm_select {
    int32_t panels; /* 1..3 */
    int32_t from[3];
    uint8_t idx[3][16];
} gemm_select;
int gemm_select_ok(const gemm_select* sel);
/* Packs a strip of K rows, its columns chosen by sel (avx512, avx2). */
void gemm_pack_b_select(int level, const int8_t* base, const int64_t* offsets, const int8_t* pad,
                        int32_t K, const gemm_select* sel, void* packed);

/* Asks for row block mb's weights to be brought into L2 (a hint: prefetches, which never
 * fault), ahead of the tiles that read them; nothing for a block past the last. */
void gemm_weights_prefetch(const gemm_weights* a, int64_t mb);

/* Narrow tails: the last few (<= GEMM_NARROW) columns of a GEMM as dot products along K,
 * where a 16-column tile would compute mostly padding. Only for avx512 weights used in
 * place whose every row block is whole (gemm_narrow_ok). Column j is cols + j * stride
 * (stride = gemm_narrow_stride(K)), K values x + 128 as u8, then zeros. Tiles go to fn as
 * in gemm_run_tiles, for row blocks [mb0, mb1), as columns n0 .. n0 + c - 1. */
#define GEMM_NARROW 4
int gemm_narrow_ok(const gemm_weights* a);
/* The most columns a narrow tail of these weights takes at their level (the level's
 * record: 1..GEMM_NARROW), 0 where gemm_narrow_ok says no. */
int32_t gemm_narrow_cols(const gemm_weights* a);
size_t gemm_narrow_stride(int32_t K);
void gemm_run_narrow(const gemm_weights* a, const uint8_t* cols, int32_t c, int32_t n0, int64_t mb0,
                     int64_t mb1, gemm_tile_fn fn, void* arg);

/* Taps mode (conv2d on a channel-interleaved image): B is never packed. Step k4 of GEMM
 * column n is the 4 bytes at img + boff[k4] + 4 * n (u8, x + 128 at avx512; the signed
 * x itself at the aarch64 levels), so 16 (avx512) or 12 (aarch64) consecutive columns
 * are one load. Weights: at avx512 as for gemm_run_narrow (gemm_narrow_ok); at the
 * aarch64 levels any packed ones, a partial last row block included. Tiles [t0, t1) in
 * gemm_run_tiles' order, of N columns from img on; the image is read up to 15 columns
 * past the last. */
void gemm_run_tiles_taps(const gemm_weights* a, const uint8_t* img, const int64_t* boff, int32_t N,
                         int64_t t0, int64_t t1, gemm_tile_fn fn, void* arg);
/* The same with a fused tail (gemm_run_tiles_tail), for at most GEMM_NT columns. */
void gemm_run_tiles_taps_tail(const gemm_weights* a, const uint8_t* img, const int64_t* boff,
                              int32_t N, int64_t t0, int64_t t1, const gemm_tail* tail,
                              gemm_tile_fn fn, void* arg);
/* The byte a taps-mode or broadcast-mode image holds for x is x ^ gemm_taps_zero(level):
 * 0x80 at avx512 (x + 128 as u8), 0 at avx2 and the aarch64 levels (x as it is). */
uint8_t gemm_taps_zero(int level);
/* One row of such an image: pixel j (0 <= j < wq) holds rows[i][j - lo] ^ zero for i =
 * 0..3 where 0 <= j - lo < w, else zero (the value 0); a NULL row reads as zeros. */
void gemm_interleave4(int level, const int8_t* const rows[4], int64_t lo, int64_t w, int64_t wq,
                      uint8_t* dst);
