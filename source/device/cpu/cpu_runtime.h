/* What the CPU device shares with its kernels at run time. */
#pragma once

#include "device/cpu/thread_pool.h"

enum cpu_simd_level { CPU_SIMD_SCALAR = 0, CPU_SIMD_AVX2 = 1, CPU_SIMD_AVX512 = 2 };

typedef struct cpu_runtime {
    thread_pool* pool;
    int simd_level; /* enum cpu_simd_level */
} cpu_runtime;
