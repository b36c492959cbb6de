/* The records inside a compiled plan's sections (docs/compiled-plan.md, "The file"):
 * the byte offset of every field, and little-endian access to them. The writer
 * (device/cpu/compiled/plan_write.cpp) and the loader (plan_load.cpp) both lay records
 * out through these names, so the format is written down once. */
#pragma once

#include <stdint.h>
#include <string.h>

#include "serializer/plan/plan_file.h"

/* An offset or index field with nothing to point at. */
#define PLAN_NONE 0xffffffffu

/* GRPH: the graph (one record). */
enum plan_grph_field {
    GRPH_TENSORS = 0,      /* u32: TENS records */
    GRPH_STEPS = 4,        /* u32: STEP records */
    GRPH_SLOTS = 8,        /* u32: SLOT records */
    GRPH_TAILS = 12,       /* u32: TAIL records */
    GRPH_KERNELS = 16,     /* u32: KERN records */
    GRPH_WINDOW = 20,      /* u32: the most tensors one step touches (slots + tail operands) */
    GRPH_GAS = 24,         /* u64 */
    GRPH_GAS_OPS = 32,     /* u64 */
    GRPH_GAS_MEM = 40,     /* u64 */
    GRPH_ARENA = 48,       /* u32: bytes of activations, scratch and inputs */
    GRPH_LIVE_PAIR = 52,   /* u32: the largest input + output bytes of one step (a bound) */
    GRPH_INPUTS = 56,      /* u32: the first IOTB records */
    GRPH_OUTPUTS = 60,     /* u32: the IOTB records after them */
    GRPH_VERSION = 64,     /* u32: NAME offset of the CVM version, PLAN_NONE for the 2019 one */
    GRPH_POSTPROCESS = 68, /* u32: NAME offset of the postprocess string */
    GRPH_USED = 72         /* the rest is zero */
};

/* KERN: a kernel the steps use. */
enum plan_kern_field {
    KERN_NAME = 0,         /* 32 bytes: the operator's name, NUL-padded */
    KERN_PARAM_SIZE = 32,  /* u32: op_def.param_size */
    KERN_PARAM_PRINT = 36, /* u32: the parameter struct's layout fingerprint */
    KERN_STATE_SIZE = 40,  /* u32: cpu_kernel.plain_state_size */
    KERN_USED = 44
};
#define PLAN_KERNEL_NAME_BYTES 32

/* STEP: one kernel run, in run order. */
enum plan_step_field {
    STEP_KERNEL = 0,        /* u32: KERN index */
    STEP_NODE = 4,          /* u32: the graph node's index, for messages */
    STEP_INPUTS = 8,        /* u32 */
    STEP_OUTPUTS = 12,      /* u32 */
    STEP_SLOT = 16,         /* u32: first SLOT record (inputs, then outputs) */
    STEP_TAIL = 20,         /* u32: first TAIL record */
    STEP_TAIL_COUNT = 24,   /* u32 */
    STEP_PARAM = 28,        /* u32: PARM offset, PLAN_NONE when the operator has none */
    STEP_STATE_KIND = 32,   /* u32: enum plan_state_kind */
    STEP_STATE = 36,        /* u32: STAT offset of a PLAN_STATE_PLAIN state */
    STEP_SCRATCH = 40,      /* u32: arena offset, PLAN_NONE for none */
    STEP_SCRATCH_SIZE = 44, /* u32 */
    STEP_CAPS = 48,         /* u32: CPU_CAP_* */
    STEP_USED = 52
};

enum plan_state_kind {
    PLAN_STATE_NONE = 0,   /* ctx->state == NULL */
    PLAN_STATE_MARKER = 1, /* ctx->state == &cpu_fast_marker */
    PLAN_STATE_PLAIN = 2,  /* cpu_kernel.plain_state_size bytes in STAT, read in place */
};

/* TENS: a tensor a step, a tail or the graph's inputs and outputs touch. */
enum plan_tens_field {
    TENS_KIND = 0,      /* u8: enum tensor_kind */
    TENS_STORAGE = 1,   /* u8: enum tensor_storage */
    TENS_NDIM = 2,      /* u8: 0..6 */
    TENS_WHERE = 3,     /* u8: enum plan_where */
    TENS_PRECISION = 4, /* i32 */
    TENS_OFFSET = 8,    /* u32: in the arena or CNST */
    TENS_BYTES = 12,    /* u32: elements x storage */
    TENS_DIMS = 16      /* 6 x i32 */
};

enum plan_where {
    PLAN_IN_ARENA = 0, /* activations and graph inputs */
    PLAN_IN_CNST = 1,  /* constants, in flash */
};

/* TAIL: one fused step. */
enum plan_tail_field {
    TAIL_STEP = 0,    /* 16 bytes: cvml_step (kind, a, b, operand) */
    TAIL_OPERAND = 16 /* u32: TENS index of a CVML_STEP_ADD operand, PLAN_NONE otherwise */
};

/* IOTB: the graph's inputs, then its outputs. */
enum plan_iotb_field {
    IOTB_TENSOR = 0, /* u32: TENS index */
    IOTB_NAME = 4    /* u32: NAME offset of its name */
};

/* Where every buffer of the arena, every scratch and every constant starts: a multiple
 * of this from its base (the CPU planner's kArenaAlign; the loader places the arena and
 * checks CNST on such a boundary). */
#define PLAN_ALIGN 64u

/* Slack after every constant array in CNST, as ir_tensor's int8 constants carry. */
#define PLAN_CONST_SLACK 64u

static inline uint32_t plan_get32(const uint8_t* p) {
    return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
           (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}
static inline uint64_t plan_get64(const uint8_t* p) {
    return plan_get32(p) | (static_cast<uint64_t>(plan_get32(p + 4)) << 32);
}
static inline void plan_put32(uint8_t* p, uint32_t v) {
    p[0] = static_cast<uint8_t>(v);
    p[1] = static_cast<uint8_t>(v >> 8);
    p[2] = static_cast<uint8_t>(v >> 16);
    p[3] = static_cast<uint8_t>(v >> 24);
}
static inline void plan_put64(uint8_t* p, uint64_t v) {
    plan_put32(p, static_cast<uint32_t>(v));
    plan_put32(p + 4, static_cast<uint32_t>(v >> 32));
}
