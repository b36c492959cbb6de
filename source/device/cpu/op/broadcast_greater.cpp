/* broadcast_greater on the CPU: 1 where a > b, else 0, NumPy broadcasting (broadcast_kernel.h). */
#include "device/cpu/op/broadcast_kernel.h"

namespace {

struct broadcast_greater_fn {
    static int32_t apply(int32_t a, int32_t b) { return a > b ? 1 : 0; }
};

const cpu_kernel broadcast_greater_kernel = {"broadcast_greater", cpu_broadcast::prerun,
                                             cpu_broadcast::run<broadcast_greater_fn>,
                                             cpu_broadcast::postrun};

}  // namespace

int register_cpu_op_broadcast_greater(void) {
    return cpu_kernel_registry_add(&broadcast_greater_kernel);
}
int unregister_cpu_op_broadcast_greater(void) {
    return cpu_kernel_registry_remove(&broadcast_greater_kernel);
}
