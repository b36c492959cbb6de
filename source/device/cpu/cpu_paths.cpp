#include "device/cpu/cpu_paths.h"

#include "utility/platform.h"

namespace {
int64_t g_paths[CPU_PATH_COUNT];
}  // namespace

void cpu_path_taken(enum cpu_path path) {
    cvml_counter_bump(&g_paths[path]);
}

int64_t cpu_path_count(enum cpu_path path) {
    return cvml_counter_read(&g_paths[path]);
}
