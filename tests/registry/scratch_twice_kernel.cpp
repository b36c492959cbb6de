/* scratch_twice on the CPU (see scratch_twice_op.cpp). */
#include "device/cpu/cpu_kernel.h"

namespace {

int twice_run(cpu_node_ctx* ctx) {
    const int32_t* x = static_cast<const int32_t*>(ctx->inputs[0]->data);
    int32_t* y = static_cast<int32_t*>(ctx->outputs[0]->data);
    const int64_t n = ir_tensor_element_count(ctx->outputs[0]);
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<int32_t>(static_cast<uint32_t>(x[i]) * 2u);
    return CVML_OK;
}

}  // namespace

extern const cpu_kernel cpu_kernel_scratch_twice = {
    .op = "scratch_twice",
    .run = twice_run,
};
