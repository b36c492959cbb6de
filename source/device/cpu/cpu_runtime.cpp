#include "device/cpu/cpu_runtime.h"

#include <string.h>

#include "device/cpu/cpu_kernel.h"
#include "device/cpu/simd/simd.h"
#include "utility/error.h"
#include "utility/sorted_table.h"

const cpu_kernel* cpu_kernel_find(const char* op) {
    return sorted_table_find(cvml_cpu_kernel_table, cvml_cpu_kernel_table_count, op,
                             [](const cpu_kernel* k) { return k->op; });
}

int32_t cpu_kernel_count(void) {
    return cvml_cpu_kernel_table_count;
}

void cpu_parallel_for(const cpu_node_ctx* ctx, int64_t n, cpu_range_fn fn, void* arg) {
    if (n <= 0) return;
    if (!ctx->rt || !ctx->rt->pool) {
        fn(arg, 0, n);
        return;
    }
    thread_pool_run(ctx->rt->pool, n, fn, arg);
}

void cpu_parallel_for_at(const cpu_node_ctx* ctx, int64_t n, cpu_range_at_fn fn, void* arg) {
    if (n <= 0) return;
    if (!ctx->rt || !ctx->rt->pool) {
        fn(arg, 0, n, 0);
        return;
    }
    thread_pool_run_at(ctx->rt->pool, n, fn, arg);
}

int cpu_build_cortexm(void) {
    return CVML_SIMD_CORTEXM_MVE ? CPU_CM_MVE : CVML_SIMD_CORTEXM_DSP ? CPU_CM_DSP : CPU_CM_NONE;
}
