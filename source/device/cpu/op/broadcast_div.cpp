/* broadcast_div on the CPU: a / b truncated toward zero, 0 where b == 0, NumPy broadcasting
 * (broadcast_kernel.h). */
#include "device/cpu/op/broadcast_kernel.h"
#include "operator/scalar.h"

namespace {

struct broadcast_div_fn {
    static int32_t apply(int32_t a, int32_t b) { return cvm_div_value(a, b); }
};

}  // namespace

extern const cpu_kernel cpu_kernel_broadcast_div = {
    .op = "broadcast_div",
    .prerun = cpu_broadcast::prerun,
    .run = cpu_broadcast::run<broadcast_div_fn>,
    .postrun = cpu_broadcast::postrun,
    .plain_state_size = sizeof(cpu_broadcast::state),
    .state_matches = cpu_broadcast::state_matches,
};
