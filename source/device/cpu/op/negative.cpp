/* negative on the CPU: -x with wrap-around. Element i reads only
 * element i of its inputs, so the output may share an input's storage. */
#include "device/cpu/cpu_kernel.h"

namespace {

struct negative_args {
    const int32_t* x;
    const int32_t* z;
    int32_t* y;
    int32_t lo;
    int32_t hi;
};

void negative_range(void* arg, int64_t begin, int64_t end) {
    const negative_args* a = static_cast<const negative_args*>(arg);
    const int32_t* x = a->x;
    int32_t* y = a->y;
    for (int64_t i = begin; i < end; ++i) y[i] = cvml_wrap_neg(x[i]);
}

int negative_run(cpu_node_ctx* ctx) {
    negative_args a = {cpu_in(ctx, 0), nullptr, cpu_out(ctx, 0), 0, 0};
    cpu_parallel_for(ctx, ir_tensor_element_count(ctx->outputs[0]), negative_range, &a);
    return CVML_OK;
}

}  // namespace

extern const cpu_kernel cpu_kernel_negative = {
    .op = "negative",
    .run = negative_run,
};
