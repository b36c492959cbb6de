/* broadcast_sub on the CPU: a - b with two's-complement wrap-around, NumPy broadcasting
 * (broadcast_kernel.h). */
#include "device/cpu/op/broadcast_kernel.h"

namespace {

struct broadcast_sub_fn {
    static int32_t apply(int32_t a, int32_t b) { return cvml_wrap_sub(a, b); }
};

}  // namespace

extern const cpu_kernel cpu_kernel_broadcast_sub = {
    .op = "broadcast_sub",
    .prerun = cpu_broadcast::prerun,
    .run = cpu_broadcast::run<broadcast_sub_fn>,
    .postrun = cpu_broadcast::postrun,
    .plain_state_size = sizeof(cpu_broadcast::state),
    .state_matches = cpu_broadcast::state_matches,
};
