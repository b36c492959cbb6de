/* The avx2 int8 multiply-accumulate step, in a fixed order: acc += the pair sums of u's
 * unsigned bytes times w's signed ones (vpmaddubsw), widened to int32 against ones
 * (vpmaddwd). Left to itself GCC computes every product of a step first and keeps the
 * accumulators in the stack (a store and a load on each one's chain every step); an asm
 * block per product keeps them in registers. Shared by the GEMM (gemm_s8.cpp) and
 * broadcast mode (conv2d_bcast.cpp). */
#pragma once

#include "device/cpu/simd/simd.h"

#if CVML_SIMD_X86
#include <immintrin.h>

namespace cpu_avx2 {

/* acc += vpmaddwd(vpmaddubsw(u, w), ones), t a scratch register; w may be in memory. */
CVML_TARGET_AVX2 inline __attribute__((always_inline)) void madd_acc(__m256i& acc, __m256i u,
                                                                     __m256i w, __m256i ones) {
    __m256i t;
    __asm__("vpmaddubsw %3, %2, %1\n\tvpmaddwd %4, %1, %1\n\tvpaddd %1, %0, %0"
            : "+x"(acc), "=&x"(t)
            : "x"(u), "xm"(w), "x"(ones));
}

/* The same with w's bits flipped where m's are set first (vpxor): with u = |x| and m
 * x's sign mask, a negative x's product is |x| * ~w = x * w + x, so the sums exceed x * w
 * by the sum of the negative x, which the caller takes back (gemm_s8.cpp). No weight
 * needs a sign change, so every int8 weight is exact: a pair sum lies within
 * [-2 * 128 * 128, 2 * 128 * 127]. vpxor runs on any vector pipe where vpsignb takes a
 * multiply pipe's slot (Zen 4), so this form reaches 1.3x the other's rate. */
CVML_TARGET_AVX2 inline __attribute__((always_inline)) void madd_acc_flipped(__m256i& acc,
                                                                             __m256i u, __m256i m,
                                                                             __m256i w,
                                                                             __m256i ones) {
    __m256i t;
    __asm__(
        "vpxor %3, %4, %1\n\tvpmaddubsw %1, %2, %1\n\tvpmaddwd %5, %1, %1\n\t"
        "vpaddd %1, %0, %0"
        : "+x"(acc), "=&x"(t)
        : "x"(u), "x"(m), "x"(w), "xm"(ones));
}

/* The same with w given s's signs first (vpsignb): u is |s|, so that a signed s is
 * exact for weights within +-127. */
CVML_TARGET_AVX2 inline __attribute__((always_inline)) void madd_acc_signed(__m256i& acc, __m256i u,
                                                                            __m256i s, __m256i w,
                                                                            __m256i ones) {
    __m256i t;
    __asm__(
        "vpsignb %3, %4, %1\n\tvpmaddubsw %1, %2, %1\n\tvpmaddwd %5, %1, %1\n\t"
        "vpaddd %1, %0, %0"
        : "+x"(acc), "=&x"(t)
        : "x"(u), "xm"(s), "x"(w), "xm"(ones));
}

}  // namespace cpu_avx2

#endif
