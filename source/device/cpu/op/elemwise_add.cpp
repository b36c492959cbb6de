/* elemwise_add on the CPU: a + b with wrap-around. Element i reads only
 * element i of its inputs, so the output may share an input's storage. */
#include "device/cpu/simd/kernel_util.h"

namespace {

struct elemwise_add_args {
    const int32_t* x;
    const int32_t* z;
    int32_t* y;
    int32_t lo;
    int32_t hi;
};

void elemwise_add_range(void* arg, int64_t begin, int64_t end) {
    const elemwise_add_args* a = static_cast<const elemwise_add_args*>(arg);
    const int32_t* x = a->x;
    const int32_t* z = a->z;
    int32_t* y = a->y;
    for (int64_t i = begin; i < end; ++i) y[i] = cvml_wrap_add(x[i], z[i]);
}

int elemwise_add_prerun(cpu_node_ctx* ctx, size_t* scratch_bytes) {
    *scratch_bytes = 0;
    return cpu_ew_prerun(ctx, 2);
}

int elemwise_add_run(cpu_node_ctx* ctx) {
    if (ctx->state) return cpu_ew_run_step(ctx);
    elemwise_add_args a = {cpu_in(ctx, 0), cpu_in(ctx, 1), cpu_out(ctx, 0), 0, 0};
    cpu_parallel_for(ctx, ir_tensor_element_count(ctx->outputs[0]), elemwise_add_range, &a);
    return CVML_OK;
}

}  // namespace

extern const cpu_kernel cpu_kernel_elemwise_add = {
    .op = "elemwise_add",
    .prerun = elemwise_add_prerun,
    .run = elemwise_add_run,
    .writes_over_input = cpu_ew_writes_over_input,
};
