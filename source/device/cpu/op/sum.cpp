/* sum on the CPU (the shared reduce algorithm, see reduce_kernel.h). */
#include "operator/sum.h"

#include "device/cpu/op/reduce_kernel.h"

namespace {

int sum_run(cpu_node_ctx* ctx) {
    return reduce_run(ctx, REDUCE_SUM);
}

}  // namespace

extern const cpu_kernel cpu_kernel_sum = {
    .op = "sum",
    .prerun = reduce_prerun,
    .run = sum_run,
};
