/* Run-time choice of the CPU kernels' instruction set. The library is built without
 * -march flags; the SIMD variants carry function-level target attributes and are
 * only called when the CPU says the instructions exist (CPUID on x86, the hardware
 * capabilities getauxval reports on aarch64 Linux). CVML_SIMD=scalar|avx2|avx512 on
 * x86, scalar|neon|dotprod|i8mm on aarch64, lowers the level (tests run every level on
 * one machine); a level the CPU lacks is never used, whatever the variable says. */
#pragma once

#include <stdint.h>

#include "device/cpu/cpu_runtime.h"

#if CVML_WITH_SIMD && (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define CVML_SIMD_X86 1
#define CVML_TARGET_AVX2 __attribute__((target("avx2,fma,bmi2")))
#define CVML_TARGET_AVX512 \
    __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma,bmi2")))
#else
#define CVML_SIMD_X86 0
#endif

/* aarch64 Linux: NEON is part of the base architecture; the dot-product and int8
 * matrix-multiply kernels carry these target attributes. */
#if CVML_WITH_SIMD && defined(__aarch64__) && defined(__linux__) && defined(__GNUC__)
#define CVML_SIMD_AARCH64 1
#define CVML_TARGET_DOTPROD __attribute__((target("arch=armv8.2-a+dotprod")))
#define CVML_TARGET_I8MM __attribute__((target("arch=armv8.6-a+i8mm")))
#else
#define CVML_SIMD_AARCH64 0
#endif

/* Cortex-M: the level is the core's, fixed at compile time (-mcpu): Helium/MVE
 * (Cortex-M55) or else the DSP extension (Cortex-M4/M7). Kernels with such code
 * (simd/arm/cortexm/) take it in place of their scalar loops; everything else runs
 * the scalar level. cvml_cpu_simd_level() names it "mve" or "dsp". */
#if CVML_WITH_SIMD && defined(__arm__) && defined(__ARM_ARCH_PROFILE) && \
    __ARM_ARCH_PROFILE == 'M' && defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#define CVML_SIMD_CORTEXM_MVE 1
#define CVML_SIMD_CORTEXM_DSP 0
#elif CVML_WITH_SIMD && defined(__arm__) && defined(__ARM_ARCH_PROFILE) && \
    __ARM_ARCH_PROFILE == 'M' && defined(__ARM_FEATURE_DSP)
#define CVML_SIMD_CORTEXM_MVE 0
#define CVML_SIMD_CORTEXM_DSP 1
#else
#define CVML_SIMD_CORTEXM_MVE 0
#define CVML_SIMD_CORTEXM_DSP 0
#endif
#define CVML_SIMD_CORTEXM (CVML_SIMD_CORTEXM_MVE || CVML_SIMD_CORTEXM_DSP)

/* Whether this build has vector levels for the fast paths to run at (x86-64, aarch64
 * Linux). Without them (a microcontroller, CVML_WITH_SIMD=OFF) every kernel runs its
 * scalar loops, cpu_level() is a constant, and a kernel tests this before its fast-path
 * state so that the fast paths' code is not linked at all (docs/embedded.md: 14 KB on a
 * Cortex-M); the level records (simd_config.h) are not consulted there either. */
#define CVML_CPU_FAST_PATHS (CVML_SIMD_X86 || CVML_SIMD_AARCH64)

/* Bits [lo, hi) of a 64-bit mask (an AVX-512 byte mask), clamped to [0, 64). */
static inline uint64_t simd_bits64(int64_t lo, int64_t hi) {
    lo = lo < 0 ? 0 : lo;
    hi = hi > 64 ? 64 : hi;
    if (lo >= hi) return 0;
    const uint64_t upto = hi >= 64 ? ~uint64_t{0} : (uint64_t{1} << hi) - 1;
    return upto & ~((uint64_t{1} << lo) - 1);
}

#if CVML_SIMD_X86
/* Asks for the cache line holding p in the exclusive state (`prefetchw`), ahead of the
 * stores that will write it: a hint, which never faults. Where the line sits in another
 * core's cache, the store would otherwise wait for that core to give it up. */
static inline void simd_prefetch_for_write(const void* p) {
    __asm__ volatile("prefetchw %0" ::"m"(*static_cast<const char*>(p)));
}

/* Every cache line of [p, p + bytes) asked for in the exclusive state. */
static inline void simd_prefetch_lines_for_write(const void* p, int64_t bytes) {
    const uintptr_t end = reinterpret_cast<uintptr_t>(p) + static_cast<uintptr_t>(bytes);
    for (uintptr_t a = reinterpret_cast<uintptr_t>(p) & ~uintptr_t{63}; a < end; a += 64)
        simd_prefetch_for_write(reinterpret_cast<const void*>(a));
}

/* Zeros [p, p + bytes) with `rep stosb`. Its whole-line writes take each line in the
 * exclusive state without reading it first, so lines another core last held change hands
 * without their data crossing over: for a kernel about to overwrite every byte of the
 * range with partial stores, each of which would wait for its line. */
static inline void simd_claim_lines(void* p, size_t bytes) {
    __asm__ volatile("rep stosb" : "+D"(p), "+c"(bytes) : "a"(0) : "memory");
}
#endif

/* The best level this CPU (and this build) supports. */
int cpu_simd_detect(void);
/* The level to use: the detected one, lowered by CVML_SIMD when set (read at each
 * call, so a test may change it between preruns). */
int cpu_simd_level(void);
/* "scalar", "avx2", "avx512", "neon" or "dotprod"; on Cortex-M the scalar level is
 * "mve" or "dsp" where the build has that code (CVML_SIMD_CORTEXM). */
const char* cpu_simd_name(int level);
/* The levels this CPU (and this build) has, lowest first, into out[0 .. cap); returns
 * their count. */
int cpu_simd_levels(int* out, int cap);
