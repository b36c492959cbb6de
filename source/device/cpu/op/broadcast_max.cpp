/* broadcast_max on the CPU: max(a, b), NumPy broadcasting (broadcast_kernel.h). */
#include "device/cpu/op/broadcast_kernel.h"

namespace {

struct broadcast_max_fn {
    static int32_t apply(int32_t a, int32_t b) { return a > b ? a : b; }
};

const cpu_kernel broadcast_max_kernel = {"broadcast_max", cpu_broadcast::prerun,
                                         cpu_broadcast::run<broadcast_max_fn>,
                                         cpu_broadcast::postrun};

}  // namespace

int register_cpu_op_broadcast_max(void) {
    return cpu_kernel_registry_add(&broadcast_max_kernel);
}
int unregister_cpu_op_broadcast_max(void) {
    return cpu_kernel_registry_remove(&broadcast_max_kernel);
}
