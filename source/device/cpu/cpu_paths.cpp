#include "device/cpu/cpu_paths.h"

namespace {
int64_t g_paths[CPU_PATH_COUNT];
}  // namespace

void cpu_path_taken(enum cpu_path path) {
    __atomic_fetch_add(&g_paths[path], 1, __ATOMIC_RELAXED);
}

int64_t cpu_path_count(enum cpu_path path) {
    return __atomic_load_n(&g_paths[path], __ATOMIC_RELAXED);
}
