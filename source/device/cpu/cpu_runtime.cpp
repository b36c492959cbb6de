#include "device/cpu/cpu_runtime.h"

#include <string.h>

#include "device/cpu/cpu_kernel.h"
#include "utility/error.h"

namespace {
constexpr int32_t kMaxKernels = 256;
const cpu_kernel* g_kernels[kMaxKernels];
int32_t g_kernel_count;
}  // namespace

int cpu_kernel_registry_add(const cpu_kernel* k) {
    if (!k || !k->op || !k->run) return cvml_fail(CVML_ERR_RUNTIME, "incomplete CPU kernel");
    if (cpu_kernel_find(k->op))
        return cvml_fail(CVML_ERR_RUNTIME, "CPU kernel '%s' registered twice", k->op);
    if (g_kernel_count == kMaxKernels)
        return cvml_fail(CVML_ERR_RUNTIME, "CPU kernel table full registering '%s'", k->op);
    g_kernels[g_kernel_count++] = k;
    return CVML_OK;
}

int cpu_kernel_registry_remove(const cpu_kernel* k) {
    for (int32_t i = 0; i < g_kernel_count; ++i) {
        if (g_kernels[i] != k) continue;
        for (int32_t j = i + 1; j < g_kernel_count; ++j) g_kernels[j - 1] = g_kernels[j];
        --g_kernel_count;
        return CVML_OK;
    }
    return cvml_fail(CVML_ERR_RUNTIME, "CPU kernel '%s' is not registered", k ? k->op : "?");
}

const cpu_kernel* cpu_kernel_find(const char* op) {
    for (int32_t i = 0; i < g_kernel_count; ++i)
        if (strcmp(g_kernels[i]->op, op) == 0) return g_kernels[i];
    return nullptr;
}

int32_t cpu_kernel_count(void) {
    return g_kernel_count;
}

void cpu_parallel_for(const cpu_node_ctx* ctx, int64_t n, cpu_range_fn fn, void* arg) {
    if (n <= 0) return;
    if (!ctx->rt || !ctx->rt->pool) {
        fn(arg, 0, n);
        return;
    }
    thread_pool_run(ctx->rt->pool, n, fn, arg);
}
