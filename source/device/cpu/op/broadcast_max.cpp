/* broadcast_max on the CPU: max(a, b), NumPy broadcasting (broadcast_kernel.h). */
#include "device/cpu/op/broadcast_kernel.h"

namespace {

struct broadcast_max_fn {
    static int32_t apply(int32_t a, int32_t b) { return a > b ? a : b; }
};

}  // namespace

extern const cpu_kernel cpu_kernel_broadcast_max = {
    .op = "broadcast_max",
    .prerun = cpu_broadcast::prerun,
    .run = cpu_broadcast::run<broadcast_max_fn>,
    .postrun = cpu_broadcast::postrun,
    .plain_state_size = sizeof(cpu_broadcast::state),
    .state_matches = cpu_broadcast::state_matches,
};
