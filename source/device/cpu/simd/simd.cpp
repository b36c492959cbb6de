#include "device/cpu/simd/simd.h"

#include <stdlib.h>
#include <string.h>

#if CVML_SIMD_AARCH64
#include <sys/auxv.h>
/* Linux's aarch64 hardware-capability bits (asm/hwcap.h), for older C libraries. */
#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD (1UL << 1)
#endif
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1UL << 20)
#endif
#ifndef HWCAP2_I8MM
#define HWCAP2_I8MM (1UL << 13)
#endif
#endif

namespace {

/* Every level's name, whatever the architecture. A Cortex-M build's only level is its
 * core's, fixed at compile time: its kernels (simd/arm/cortexm/) replace the scalar
 * loops, so the scalar level carries its name. */
#if CVML_SIMD_CORTEXM_MVE
#define SCALAR_NAME "mve"
#elif CVML_SIMD_CORTEXM_DSP
#define SCALAR_NAME "dsp"
#else
#define SCALAR_NAME "scalar"
#endif
struct level_name {
    int level;
    const char* name;
};
const level_name kNames[] = {
    {CPU_SIMD_SCALAR, SCALAR_NAME}, {CPU_SIMD_AVX2, "avx2"},       {CPU_SIMD_AVX512, "avx512"},
    {CPU_SIMD_NEON, "neon"},        {CPU_SIMD_DOTPROD, "dotprod"}, {CPU_SIMD_I8MM, "i8mm"},
};

/* This build's ladder: its architecture's levels, lowest first, each one implying the
 * ones below it. CVML_SIMD may only step down it. */
const int kLadder[] = {
    CPU_SIMD_SCALAR,
#if CVML_SIMD_X86
    CPU_SIMD_AVX2,   CPU_SIMD_AVX512,
#endif
#if CVML_SIMD_AARCH64
    CPU_SIMD_NEON,   CPU_SIMD_DOTPROD, CPU_SIMD_I8MM,
#endif
};
const int kRungs = static_cast<int>(sizeof(kLadder) / sizeof(kLadder[0]));

int rung_of(int level) {
    for (int i = 0; i < kRungs; ++i)
        if (kLadder[i] == level) return i;
    return -1;
}

/* Whether the CPU has the instructions of `level` (and so of every level below it). */
bool cpu_has(int level) {
    switch (level) {
#if CVML_SIMD_X86
        case CPU_SIMD_AVX512:
            __builtin_cpu_init();
            return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                   __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
                   __builtin_cpu_supports("avx512vnni") && cpu_has(CPU_SIMD_AVX2);
        case CPU_SIMD_AVX2:
            __builtin_cpu_init();
            return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                   __builtin_cpu_supports("bmi2");
#endif
#if CVML_SIMD_AARCH64
        case CPU_SIMD_I8MM:
            return (getauxval(AT_HWCAP2) & HWCAP2_I8MM) && cpu_has(CPU_SIMD_DOTPROD);
        case CPU_SIMD_DOTPROD:
            return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) && cpu_has(CPU_SIMD_NEON);
        case CPU_SIMD_NEON:
            return getauxval(AT_HWCAP) & HWCAP_ASIMD;
#endif
        case CPU_SIMD_SCALAR:
            return true;
        default:
            return false;
    }
}

}  // namespace

int cpu_simd_detect(void) {
    int best = CPU_SIMD_SCALAR;
    for (int i = 1; i < kRungs && cpu_has(kLadder[i]); ++i) best = kLadder[i];
    return best;
}

int cpu_simd_level(void) {
    int level = cpu_simd_detect();
    const char* env = getenv("CVML_SIMD");
    if (!env || !*env) return level;
    // A name of another architecture, or none at all, changes nothing.
    for (const level_name& n : kNames) {
        if (strcmp(env, n.name) != 0) continue;
        const int want = rung_of(n.level);
        if (want >= 0 && want < rung_of(level)) level = n.level;
    }
    return level;
}

const char* cpu_simd_name(int level) {
    for (const level_name& n : kNames)
        if (n.level == level) return n.name;
    return SCALAR_NAME;
}

int cpu_simd_levels(int* out, int cap) {
    const int best = rung_of(cpu_simd_detect());
    int count = 0;
    for (int i = 0; i <= best && count < cap; ++i) out[count++] = kLadder[i];
    return count;
}
