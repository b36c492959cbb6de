/* abs on the CPU: |x|, INT32_MIN wrapping to itself. Element i reads only
 * element i of its inputs, so the output may share an input's storage. */
#include "device/cpu/cpu_kernel.h"
#include "operator/scalar.h"

namespace {

struct abs_args {
    const int32_t* x;
    const int32_t* z;
    int32_t* y;
    int32_t lo;
    int32_t hi;
};

void abs_range(void* arg, int64_t begin, int64_t end) {
    const abs_args* a = static_cast<const abs_args*>(arg);
    const int32_t* x = a->x;
    int32_t* y = a->y;
    for (int64_t i = begin; i < end; ++i) y[i] = cvm_abs_value(x[i]);
}

int abs_run(cpu_node_ctx* ctx) {
    abs_args a = {cpu_in(ctx, 0), nullptr, cpu_out(ctx, 0), 0, 0};
    cpu_parallel_for(ctx, ir_tensor_element_count(ctx->outputs[0]), abs_range, &a);
    return CVML_OK;
}

}  // namespace

extern const cpu_kernel cpu_kernel_abs = {
    .op = "abs",
    .run = abs_run,
};
