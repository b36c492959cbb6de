/* broadcast_div on the CPU: a / b truncated toward zero, 0 where b == 0, NumPy broadcasting
 * (broadcast_kernel.h). */
#include "device/cpu/op/broadcast_kernel.h"
#include "operator/scalar.h"

namespace {

struct broadcast_div_fn {
    static int32_t apply(int32_t a, int32_t b) { return cvm_div_value(a, b); }
};

const cpu_kernel broadcast_div_kernel = {"broadcast_div", cpu_broadcast::prerun,
                                         cpu_broadcast::run<broadcast_div_fn>,
                                         cpu_broadcast::postrun};

}  // namespace

int register_cpu_op_broadcast_div(void) {
    return cpu_kernel_registry_add(&broadcast_div_kernel);
}
int unregister_cpu_op_broadcast_div(void) {
    return cpu_kernel_registry_remove(&broadcast_div_kernel);
}
