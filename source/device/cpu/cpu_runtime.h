/* What the CPU device shares with its kernels at run time. */
#pragma once

#include <stddef.h>
#include <stdint.h>

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

/* The Cortex-M kernels a plan is made for (simd/arm/cortexm/), which decide conv2d's
 * scratch and in-place forms: those of the build on a Cortex-M, or a compiled plan's
 * target on a host that prepares one. The values are the plan format's levels. */
enum cpu_cortexm_kernels { CPU_CM_NONE = 0, CPU_CM_DSP = 16, CPU_CM_MVE = 17 };

/* The Cortex-M kernels this build has (CPU_CM_NONE off a Cortex-M). */
int cpu_build_cortexm(void);

typedef struct cpu_runtime {
    thread_pool* pool;
    int simd_level; /* enum cpu_simd_level */
    /* The level's record (simd/simd_config.h), chosen with the level; NULL in builds
     * without vector levels (CVML_CPU_FAST_PATHS), whose kernels never consult it. */
    const struct cpu_simd_config* simd;
    /* Fusion, views and narrow storage (off with CVML_NO_FUSION=1; a bare-metal image
     * has no environment, and is always on). Off at the scalar level, kernels take
     * their plain reference loops, which tests compare against. Bytes, not ints: a
     * microcontroller keeps one runtime per subgraph. */
    uint8_t fusion;
    uint8_t cortexm; /* enum cpu_cortexm_kernels */
    /* Preparing a portable plan (the `scalar` target), which every build without
     * Cortex-M kernels runs: kernels declare only what all such builds' kernels do. */
    uint8_t portable;
} cpu_runtime;

struct ir_subgraph;
/* Arena bytes of a subgraph the CPU device prepared (0 when not prepared). */
size_t cpu_subgraph_arena_bytes(const struct ir_subgraph* sg);
/* Bytes of a caller's arena that subgraph's plan takes (its plan, slack, alignment). */
size_t cpu_subgraph_arena_need(const struct ir_subgraph* sg);
