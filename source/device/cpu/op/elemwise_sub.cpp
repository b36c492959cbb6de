/* elemwise_sub on the CPU: a - b with wrap-around. Element i reads only
 * element i of its inputs, so the output may share an input's storage. */
#include "device/cpu/cpu_kernel.h"

namespace {

struct elemwise_sub_args {
    const int32_t* x;
    const int32_t* z;
    int32_t* y;
    int32_t lo;
    int32_t hi;
};

void elemwise_sub_range(void* arg, int64_t begin, int64_t end) {
    const elemwise_sub_args* a = static_cast<const elemwise_sub_args*>(arg);
    const int32_t* x = a->x;
    const int32_t* z = a->z;
    int32_t* y = a->y;
    for (int64_t i = begin; i < end; ++i) y[i] = cvml_wrap_sub(x[i], z[i]);
}

int elemwise_sub_run(cpu_node_ctx* ctx) {
    elemwise_sub_args a = {cpu_in(ctx, 0), cpu_in(ctx, 1), cpu_out(ctx, 0), 0, 0};
    cpu_parallel_for(ctx, ir_tensor_element_count(ctx->outputs[0]), elemwise_sub_range, &a);
    return CVML_OK;
}

}  // namespace

extern const cpu_kernel cpu_kernel_elemwise_sub = {
    .op = "elemwise_sub",
    .run = elemwise_sub_run,
};
