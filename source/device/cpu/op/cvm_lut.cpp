/* cvm_lut on the CPU: y[i] = table_flat[clip(data[i], 0, size-1)], upstream's take
 * without an axis with the operands swapped. */
#include "device/cpu/cpu_kernel.h"
#include "operator/scalar.h"

namespace {

struct lut_args {
    const int32_t* data;
    const int32_t* table;
    int32_t* y;
    int64_t table_size;
};

void lut_range(void* arg, int64_t begin, int64_t end) {
    const lut_args* a = static_cast<const lut_args*>(arg);
    for (int64_t i = begin; i < end; ++i)
        a->y[i] = a->table[cvm_clip_index(a->data[i], a->table_size)];
}

int lut_run(cpu_node_ctx* ctx) {
    lut_args a = {cpu_in(ctx, 0), cpu_in(ctx, 1), cpu_out(ctx, 0),
                  ir_tensor_element_count(ctx->inputs[1])};
    cpu_parallel_for(ctx, ir_tensor_element_count(ctx->outputs[0]), lut_range, &a);
    return CVML_OK;
}

}  // namespace

extern const cpu_kernel cpu_kernel_cvm_lut = {
    .op = "cvm_lut",
    .run = lut_run,
};
