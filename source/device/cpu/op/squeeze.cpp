/* squeeze on the CPU: the values keep their row-major order, so it is a copy (nothing at
 * all when the output shares the input's slot). */
#include "device/cpu/cpu_kernel.h"
#include "device/cpu/op/shape_copy.h"

namespace {

int squeeze_run(cpu_node_ctx* ctx) {
    return shape_copy::copy_input0(ctx);
}

const cpu_kernel squeeze_kernel = {"squeeze", nullptr, squeeze_run, nullptr};

}  // namespace

int register_cpu_op_squeeze(void) {
    return cpu_kernel_registry_add(&squeeze_kernel);
}
int unregister_cpu_op_squeeze(void) {
    return cpu_kernel_registry_remove(&squeeze_kernel);
}
