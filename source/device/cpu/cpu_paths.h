/* Which kernel paths have been prepared since the library was loaded: counters that
 * tests read to prove a fast path ran where it should. Nothing in a kernel depends on
 * them; they are bumped atomically at prerun. */
#pragma once

#include <stdint.h>

enum cpu_path {
    CPU_PATH_CONV_DENSE,      /* conv2d: dense strips (no dropped columns) */
    CPU_PATH_CONV_NARROW,     /* conv2d: a narrow last strip (dot products along K) */
    CPU_PATH_CONV_TAPS4,      /* conv2d: taps mode (a channel-interleaved image, nothing packed) */
    CPU_PATH_CONV_BCAST,      /* conv2d: broadcast mode (channels along vectors, padding skipped) */
    CPU_PATH_CONV_BCAST_ROWS, /* conv2d: broadcast mode split between threads by output rows */
    CPU_PATH_CONV_BCAST_PAIRS, /* conv2d: broadcast mode, two 7-wide output rows at once */
    CPU_PATH_DW_VNNI,          /* conv2d: the direct depthwise, straight from the input
                                  (vpdpbusd at avx512, vpmaddwd at avx2) */
    CPU_PATH_DW_PAIRS,        /* conv2d: that depthwise two small planes at once (bumped per run) */
    CPU_PATH_CONV_FUSED_TAIL, /* conv2d: the tail in the GEMM micro-kernel (bumped per run) */
    CPU_PATH_POOL_DIRECT,     /* max_pool2d: int8 planes pooled in place, separably (per run) */
    CPU_PATH_COUNT
};

void cpu_path_taken(enum cpu_path path);
int64_t cpu_path_count(enum cpu_path path);
