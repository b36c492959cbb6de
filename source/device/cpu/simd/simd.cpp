#include "device/cpu/simd/simd.h"

#include <stdlib.h>
#include <string.h>

int cpu_simd_detect(void) {
#if CVML_SIMD_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vnni"))
        return CPU_SIMD_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
        __builtin_cpu_supports("bmi2"))
        return CPU_SIMD_AVX2;
#endif
    return CPU_SIMD_SCALAR;
}

int cpu_simd_level(void) {
    int level = cpu_simd_detect();
    const char* env = getenv("CVML_SIMD");
    if (env && *env) {
        int want = level;
        if (strcmp(env, "scalar") == 0)
            want = CPU_SIMD_SCALAR;
        else if (strcmp(env, "avx2") == 0)
            want = CPU_SIMD_AVX2;
        else if (strcmp(env, "avx512") == 0)
            want = CPU_SIMD_AVX512;
        if (want < level) level = want;
    }
    return level;
}

const char* cpu_simd_name(int level) {
    switch (level) {
        case CPU_SIMD_AVX512:
            return "avx512";
        case CPU_SIMD_AVX2:
            return "avx2";
        default:
#if CVML_SIMD_CORTEXM_MVE
            return "mve";
#elif CVML_SIMD_CORTEXM_DSP
            return "dsp";
#else
            return "scalar";
#endif
    }
}
