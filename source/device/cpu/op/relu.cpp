/* relu on the CPU. */
#include "device/cpu/cpu_kernel.h"
#include "device/cpu/simd/kernel_util.h"

namespace {

struct relu_args {
    const int32_t* x;
    int32_t* y;
};

void relu_range(void* arg, int64_t begin, int64_t end) {
    const relu_args* a = static_cast<const relu_args*>(arg);
    for (int64_t i = begin; i < end; ++i) a->y[i] = a->x[i] > 0 ? a->x[i] : 0;
}

int relu_prerun(cpu_node_ctx* ctx, size_t* scratch_bytes) {
    *scratch_bytes = 0;
    return cpu_ew_prerun(ctx, 1);
}

int relu_run(cpu_node_ctx* ctx) {
    if (ctx->state) return cpu_ew_run_step(ctx);
    relu_args a = {cpu_in(ctx, 0), cpu_out(ctx, 0)};
    cpu_parallel_for(ctx, ir_tensor_element_count(ctx->outputs[0]), relu_range, &a);
    return CVML_OK;
}

}  // namespace

extern const cpu_kernel cpu_kernel_relu = {
    .op = "relu",
    .prerun = relu_prerun,
    .run = relu_run,
    .writes_over_input = cpu_ew_writes_over_input,
};
