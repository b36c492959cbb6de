/* sum on the CPU (the shared reduce algorithm, see reduce_kernel.h). */
#include "operator/sum.h"

#include "device/cpu/op/reduce_kernel.h"

namespace {

int sum_run(cpu_node_ctx* ctx) {
    return reduce_run(ctx, REDUCE_SUM);
}

const cpu_kernel sum_kernel = {"sum", reduce_prerun, sum_run, nullptr};

}  // namespace

int register_cpu_op_sum(void) {
    return cpu_kernel_registry_add(&sum_kernel);
}
int unregister_cpu_op_sum(void) {
    return cpu_kernel_registry_remove(&sum_kernel);
}
