/* Element-wise integer steps applied to a row of values as it is written: the tail of
 * a fused conv2d/dense (bias, then the fused steps of cvml_ops.h) and the standalone
 * element-wise kernels. A chain is the fused steps lowered once (epilogue_add_step) to
 * the few operations the vector code dispatches on (ep_kind); the lowering keeps each
 * step's semantics (cvml_step_value) exactly, so fusing never changes a bit. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "cvml_ops.h"

enum ep_kind {
    EP_CLIP = 1,  /* max(min(x, hi), lo) */
    EP_ROUND = 2, /* cvm_right_shift's ((x >> (b-1)) + 1) >> 1, the +1 wrapping */
    EP_SRA31 = 3, /* cvm_right_shift with b >= 31: x >> 31, no rounding */
    EP_ADD = 4,   /* x + src[i], wrapping (elemwise_add) */
    EP_SRA = 5,   /* x >> shift: EP_ROUND whose + 2^(b-1) is already in x (see below) */
    EP_MUL = 6,   /* x * factor, wrapping (broadcast_mul by a one-element constant) */
};

/* Room for a node's own two steps and a fused tail of up to 16 slots: the scalar level
 * fuses chains that long (MRT's requantize-add-requantize runs between two int8
 * tensors: cifar_resnet20's longest is 15 slots, and cut short it leaves a 32 KB int32
 * tensor in the arena), the vector levels stop at 6 slots (cpu.cpp). */
#define EP_MAX_STEPS 18

typedef struct ep_step {
    int32_t kind;
    int32_t lo, hi;  /* EP_CLIP */
    int32_t shift;   /* EP_ROUND: b in 1..30 */
    int32_t factor;  /* EP_MUL */
    const void* src; /* EP_ADD: flat operand, indexed like the output */
    int32_t src_storage;
} ep_step;

typedef struct epilogue {
    int32_t step_count;
    ep_step steps[EP_MAX_STEPS];
} epilogue;

/* Appends cvm_right_shift(precision p, shift_bit b) with upstream's CPU quirks: p == 1
 * gives 0; b >= 31 gives x >> 31; p + b >= 32 rounds without clipping. Returns 0 when
 * the chain is full. */
int epilogue_add_rshift(epilogue* ep, int32_t p, int32_t b);
int epilogue_add_clip(epilogue* ep, int32_t lo, int32_t hi);
/* For a chain that starts with EP_ROUND (shift b) and values x for which x + 2^(b-1)
 * cannot overflow: ((x >> (b-1)) + 1) >> 1 == (x + 2^(b-1)) >> b, so a caller that
 * has added 2^(b-1) to every value (a GEMM's start) turns the step into EP_SRA.
 * Returns 0 (nothing changed) when the chain does not start with EP_ROUND. */
int epilogue_fold_round(epilogue* ep);
int epilogue_add_add(epilogue* ep, const void* src, int32_t src_storage);
int epilogue_add_mul(epilogue* ep, int32_t factor);
/* Appends a fused step (cvml_ops.h), lowered to the chain's own steps above; src and
 * src_storage are a CVML_STEP_ADD's operand. Returns 0 when the chain is full. */
int epilogue_add_step(epilogue* ep, const cvml_step* step, const void* src, int32_t src_storage);

/* out[out_index + i] = steps(in[in_index + i] + bias) for i in [0, n); in/out/src are
 * int8 or int32 storage (enum tensor_storage); bias is added with wrap-around. */
void epilogue_apply(int level, const epilogue* ep, const void* in, int32_t in_storage,
                    int64_t in_index, int32_t bias, void* out, int32_t out_storage,
                    int64_t out_index, int64_t n);
/* One value through the chain (scalar). */
int32_t epilogue_value(const epilogue* ep, int32_t v, int64_t index);

/* Whether a step reads an operand (EP_ADD), whose buffer the output may share
 * (CPU_CAP_TAIL_IN_PLACE): then nothing may be written ahead of the chain. */
static inline int epilogue_reads_operand(const epilogue* ep) {
    for (int32_t s = 0; s < ep->step_count; ++s)
        if (ep->steps[s].kind == EP_ADD) return 1;
    return 0;
}

/* The columns of a GEMM tile row (up to 48) that are stored, to consecutive outputs.
 * Built once per tile shape (epilogue_tile_keep), used by every tile of that shape. */
typedef struct ep_tile_keep {
    uint16_t mask[3];     /* bit c % 16 of mask[c / 16]: column c is kept */
    int32_t vectors;      /* 16-column vectors of the row (the last may be partial) */
    int32_t count;        /* kept columns */
    uint8_t lanes[3][16]; /* per vector, its kept lanes in order (vpermd indices) */
} ep_tile_keep;

/* Fills `k` for a row of `cols` columns (<= 48) whose kept ones are set in mask. */
void epilogue_tile_keep(ep_tile_keep* k, const uint16_t mask[3], int32_t cols);

/* A GEMM tile (rows of tile_stride int32, readable whole) through the chain: row r keeps
 * the columns of `keep`, in order, adds bias[r] (bias may be NULL), and writes them from
 * out_first + r * out_stride on. For one tile: a caller with many tiles plans once
 * (epilogue_plan_tile) and applies the plan to each. */
void epilogue_apply_tile(int level, const epilogue* ep, const int32_t* tile, int32_t tile_stride,
                         int32_t rows, const ep_tile_keep* keep, const int32_t* bias, void* out,
                         int32_t out_storage, int64_t out_first, int64_t out_stride);

/* epilogue_apply_tile with its decisions (level, storage, which chain) made once per
 * node run rather than per tile: a GEMM runs thousands of tiles, and for a small K
 * (1x1 convolutions on few channels) that dispatch cost as much as the tail itself. */
typedef struct ep_tile_plan {
    int level;
    const epilogue* ep;
    int32_t out_storage;
    /* The tile function: a matched chain's (its constants below) or the generic one. */
    void (*run)(const struct ep_tile_plan* plan, const int32_t* tile, int32_t tile_stride,
                int32_t rows, const ep_tile_keep* keep, const int32_t* bias, void* out,
                int64_t out_first, int64_t out_stride);
    /* The matched chain (epilogue_chain.h's rc_chain), copied in. */
    unsigned char chain[64];
} ep_tile_plan;

/* Plans `ep` for tiles written to out_storage, with a bias per row or none (has_bias). */
void epilogue_plan_tile(int level, const epilogue* ep, int has_bias, int32_t out_storage,
                        ep_tile_plan* plan);

/* epilogue_apply_tile with the plan's level, chain and storage; bias is NULL iff the plan
 * was made without one. */
static inline void epilogue_apply_tile_planned(const ep_tile_plan* plan, const int32_t* tile,
                                               int32_t tile_stride, int32_t rows,
                                               const ep_tile_keep* keep, const int32_t* bias,
                                               void* out, int64_t out_first, int64_t out_stride) {
    plan->run(plan, tile, tile_stride, rows, keep, bias, out, out_first, out_stride);
}

/* Copies the values of src[0 .. 16 * vectors) whose bit is set in keep[i / 16] (bit
 * i % 16) to dst, in order; returns how many. dst needs 16 values of slack. */
int64_t simd_compact_i32(int level, const int32_t* src, const uint16_t* keep, int32_t vectors,
                         int32_t* dst);

/* dst[i] = (int8_t)src[i] (the low byte, as a C cast), for n values. */
void simd_narrow_i32_i8(int level, const int32_t* src, int64_t n, int8_t* dst);

/* even[i] = src[2i], odd[i] = src[2i+1] for the n bytes of src (stride-2 column phases of
 * an int8 row for pooling and convolution). */
void simd_deinterleave2_i8(int level, const int8_t* src, int64_t n, int8_t* even, int8_t* odd);
