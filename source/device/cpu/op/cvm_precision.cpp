/* cvm_precision on the CPU: the bit length of |x|, 0 -> 1. Element i reads only
 * element i of its inputs, so the output may share an input's storage. */
#include "device/cpu/cpu_kernel.h"
#include "operator/scalar.h"

namespace {

struct cvm_precision_args {
    const int32_t* x;
    const int32_t* z;
    int32_t* y;
    int32_t lo;
    int32_t hi;
};

void cvm_precision_range(void* arg, int64_t begin, int64_t end) {
    const cvm_precision_args* a = static_cast<const cvm_precision_args*>(arg);
    const int32_t* x = a->x;
    int32_t* y = a->y;
    for (int64_t i = begin; i < end; ++i) y[i] = cvm_precision_value(x[i]);
}

int cvm_precision_run(cpu_node_ctx* ctx) {
    cvm_precision_args a = {cpu_in(ctx, 0), nullptr, cpu_out(ctx, 0), 0, 0};
    cpu_parallel_for(ctx, ir_tensor_element_count(ctx->outputs[0]), cvm_precision_range, &a);
    return CVML_OK;
}

}  // namespace

extern const cpu_kernel cpu_kernel_cvm_precision = {
    .op = "cvm_precision",
    .run = cvm_precision_run,
};
