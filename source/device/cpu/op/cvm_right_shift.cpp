/* cvm_right_shift on the CPU: upstream's CPU rounding shift with its quirks (cvml_ops.h).
 * Element i reads only element i of its inputs, so the output may share an input's storage. */
#include "device/cpu/simd/kernel_util.h"
#include "operator/cvm_right_shift.h"

namespace {

struct cvm_right_shift_args {
    const int32_t* x;
    const int32_t* z;
    int32_t* y;
    int32_t precision;
    int32_t shift_bit;
};

void cvm_right_shift_range(void* arg, int64_t begin, int64_t end) {
    const cvm_right_shift_args* a = static_cast<const cvm_right_shift_args*>(arg);
    const int32_t* x = a->x;
    int32_t* y = a->y;
    for (int64_t i = begin; i < end; ++i) y[i] = cvml_right_shift(x[i], a->precision, a->shift_bit);
}

int cvm_right_shift_prerun(cpu_node_ctx* ctx, size_t* scratch_bytes) {
    *scratch_bytes = 0;
    return cpu_ew_prerun(ctx, 1);
}

int cvm_right_shift_run(cpu_node_ctx* ctx) {
    if (ctx->state) return cpu_ew_run_step(ctx);
    const cvm_right_shift_param* p = static_cast<const cvm_right_shift_param*>(ctx->param);

    cvm_right_shift_args a = {cpu_in(ctx, 0), nullptr, cpu_out(ctx, 0), p->precision, p->shift_bit};
    cpu_parallel_for(ctx, ir_tensor_element_count(ctx->outputs[0]), cvm_right_shift_range, &a);
    return CVML_OK;
}

}  // namespace

extern const cpu_kernel cpu_kernel_cvm_right_shift = {
    .op = "cvm_right_shift",
    .prerun = cvm_right_shift_prerun,
    .run = cvm_right_shift_run,
    .writes_over_input = cpu_ew_writes_over_input,
};
