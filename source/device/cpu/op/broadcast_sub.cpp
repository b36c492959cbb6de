/* broadcast_sub on the CPU: a - b with two's-complement wrap-around, NumPy broadcasting
 * (broadcast_kernel.h). */
#include "device/cpu/op/broadcast_kernel.h"

namespace {

struct broadcast_sub_fn {
    static int32_t apply(int32_t a, int32_t b) { return cvml_wrap_sub(a, b); }
};

const cpu_kernel broadcast_sub_kernel = {"broadcast_sub", cpu_broadcast::prerun,
                                         cpu_broadcast::run<broadcast_sub_fn>,
                                         cpu_broadcast::postrun};

}  // namespace

int register_cpu_op_broadcast_sub(void) {
    return cpu_kernel_registry_add(&broadcast_sub_kernel);
}
int unregister_cpu_op_broadcast_sub(void) {
    return cpu_kernel_registry_remove(&broadcast_sub_kernel);
}
