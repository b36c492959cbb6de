/* cvm_left_shift on the CPU: clip(x << b) as upstream's formal device (divergence D1: upstream's
 * CPU kernel always fails). Element i reads only element i of its inputs, so the output may share
 * an input's storage. */
#include "device/cpu/cpu_kernel.h"
#include "operator/scalar.h"
#include "operator/cvm_left_shift.h"

namespace {

struct cvm_left_shift_args {
    const int32_t* x;
    const int32_t* z;
    int32_t* y;
    int32_t precision;
    int32_t shift_bit;
};

void cvm_left_shift_range(void* arg, int64_t begin, int64_t end) {
    const cvm_left_shift_args* a = static_cast<const cvm_left_shift_args*>(arg);
    const int32_t* x = a->x;
    int32_t* y = a->y;
    for (int64_t i = begin; i < end; ++i)
        y[i] = cvm_left_shift_value(x[i], a->precision, a->shift_bit);
}

int cvm_left_shift_run(cpu_node_ctx* ctx) {
    const cvm_left_shift_param* p = static_cast<const cvm_left_shift_param*>(ctx->param);

    cvm_left_shift_args a = {cpu_in(ctx, 0), nullptr, cpu_out(ctx, 0), p->precision, p->shift_bit};
    cpu_parallel_for(ctx, ir_tensor_element_count(ctx->outputs[0]), cvm_left_shift_range, &a);
    return CVML_OK;
}

}  // namespace

extern const cpu_kernel cpu_kernel_cvm_left_shift = {
    .op = "cvm_left_shift",
    .run = cvm_left_shift_run,
};
