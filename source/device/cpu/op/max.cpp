/* max on the CPU (the shared reduce algorithm, see reduce_kernel.h). */
#include "operator/max.h"

#include "device/cpu/op/reduce_kernel.h"

namespace {

int max_run(cpu_node_ctx* ctx) {
    return reduce_run(ctx, REDUCE_MAX);
}

}  // namespace

extern const cpu_kernel cpu_kernel_max = {
    .op = "max",
    .prerun = reduce_prerun,
    .run = max_run,
};
