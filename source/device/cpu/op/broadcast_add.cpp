/* broadcast_add on the CPU: a + b with two's-complement wrap-around, NumPy broadcasting
 * (broadcast_kernel.h). */
#include "device/cpu/op/broadcast_kernel.h"

namespace {

struct broadcast_add_fn {
    static int32_t apply(int32_t a, int32_t b) { return cvml_wrap_add(a, b); }
};

const cpu_kernel broadcast_add_kernel = {"broadcast_add", cpu_broadcast::prerun,
                                         cpu_broadcast::run<broadcast_add_fn>,
                                         cpu_broadcast::postrun};

}  // namespace

int register_cpu_op_broadcast_add(void) {
    return cpu_kernel_registry_add(&broadcast_add_kernel);
}
int unregister_cpu_op_broadcast_add(void) {
    return cpu_kernel_registry_remove(&broadcast_add_kernel);
}
