/* What the CPU device shares with its kernels at run time. */
#pragma once

#include <stddef.h>

#include "device/cpu/thread_pool.h"

/* Each architecture's levels are ordered by its ladder in simd/simd.cpp, not by value. */
enum cpu_simd_level {
    CPU_SIMD_SCALAR = 0,
    CPU_SIMD_AVX2 = 1,
    CPU_SIMD_AVX512 = 2,
    /* aarch64 (simd/arm/aarch64/), chosen at run time from the hardware capabilities */
    CPU_SIMD_NEON = 3,
    CPU_SIMD_DOTPROD = 4,
    CPU_SIMD_I8MM = 5,
};

typedef struct cpu_runtime {
    thread_pool* pool;
    int simd_level; /* enum cpu_simd_level */
    /* The level's record (simd/simd_config.h), chosen with the level; NULL in builds
     * without vector levels (CVML_CPU_FAST_PATHS), whose kernels never consult it. */
    const struct cpu_simd_config* simd;
    /* Fusion, views and narrow storage (off with CVML_NO_FUSION=1; a bare-metal image
     * has no environment, and is always on). Off at the scalar level, kernels take
     * their plain reference loops, which tests compare against. */
    int fusion;
} cpu_runtime;

struct ir_subgraph;
/* Arena bytes of a subgraph the CPU device prepared (0 when not prepared). */
size_t cpu_subgraph_arena_bytes(const struct ir_subgraph* sg);
/* Bytes of a caller's arena that subgraph's plan takes (its plan, slack, alignment). */
size_t cpu_subgraph_arena_need(const struct ir_subgraph* sg);
