/* broadcast_greater on the CPU: 1 where a > b, else 0, NumPy broadcasting (broadcast_kernel.h). */
#include "device/cpu/op/broadcast_kernel.h"

namespace {

struct broadcast_greater_fn {
    static int32_t apply(int32_t a, int32_t b) { return a > b ? 1 : 0; }
};

}  // namespace

extern const cpu_kernel cpu_kernel_broadcast_greater = {
    .op = "broadcast_greater",
    .prerun = cpu_broadcast::prerun,
    .run = cpu_broadcast::run<broadcast_greater_fn>,
    .postrun = cpu_broadcast::postrun,
    .plain_state_size = sizeof(cpu_broadcast::state),
    .state_matches = cpu_broadcast::state_matches,
};
