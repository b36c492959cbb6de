/* max on the CPU (the shared reduce algorithm, see reduce_kernel.h). */
#include "operator/max.h"

#include "device/cpu/op/reduce_kernel.h"

namespace {

int max_run(cpu_node_ctx* ctx) {
    return reduce_run(ctx, REDUCE_MAX);
}

const cpu_kernel max_kernel = {"max", reduce_prerun, max_run, nullptr};

}  // namespace

int register_cpu_op_max(void) {
    return cpu_kernel_registry_add(&max_kernel);
}
int unregister_cpu_op_max(void) {
    return cpu_kernel_registry_remove(&max_kernel);
}
