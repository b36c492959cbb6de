/* cvm_clip on the CPU: clip to +-(2^(p-1)-1); is_sign is ignored as upstream ignores it. Element i
 * reads only element i of its inputs, so the output may share an input's storage. */
#include "device/cpu/simd/kernel_util.h"
#include "operator/cvm_clip.h"

namespace {

struct cvm_clip_args {
    const int32_t* x;
    const int32_t* z;
    int32_t* y;
    int32_t lo;
    int32_t hi;
};

void cvm_clip_range(void* arg, int64_t begin, int64_t end) {
    const cvm_clip_args* a = static_cast<const cvm_clip_args*>(arg);
    const int32_t* x = a->x;
    int32_t* y = a->y;
    for (int64_t i = begin; i < end; ++i) y[i] = cvml_clip(x[i], -a->hi, a->hi);
}

int cvm_clip_prerun(cpu_node_ctx* ctx, size_t* scratch_bytes) {
    *scratch_bytes = 0;
    return cpu_ew_prerun(ctx, 1);
}

int cvm_clip_run(cpu_node_ctx* ctx) {
    if (ctx->state) return cpu_ew_run_step(ctx);
    const cvm_clip_param* p = static_cast<const cvm_clip_param*>(ctx->param);
    int32_t lo = 0, hi = cvml_precision_bound(p->precision);
    cvm_clip_args a = {cpu_in(ctx, 0), nullptr, cpu_out(ctx, 0), lo, hi};
    cpu_parallel_for(ctx, ir_tensor_element_count(ctx->outputs[0]), cvm_clip_range, &a);
    return CVML_OK;
}

}  // namespace

extern const cpu_kernel cpu_kernel_cvm_clip = {
    .op = "cvm_clip",
    .prerun = cvm_clip_prerun,
    .run = cvm_clip_run,
    .writes_over_input = cpu_ew_writes_over_input,
};
