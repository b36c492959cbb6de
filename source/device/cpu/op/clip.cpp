/* clip on the CPU: max(min(x, a_max), a_min). Element i reads only
 * element i of its inputs, so the output may share an input's storage. */
#include "device/cpu/simd/kernel_util.h"
#include "operator/clip.h"

namespace {

struct clip_args {
    const int32_t* x;
    const int32_t* z;
    int32_t* y;
    int32_t lo;
    int32_t hi;
};

void clip_range(void* arg, int64_t begin, int64_t end) {
    const clip_args* a = static_cast<const clip_args*>(arg);
    const int32_t* x = a->x;
    int32_t* y = a->y;
    for (int64_t i = begin; i < end; ++i)
        y[i] = x[i] > a->hi ? a->hi : (x[i] < a->lo ? a->lo : x[i]);
}

int clip_prerun(cpu_node_ctx* ctx, size_t* scratch_bytes) {
    *scratch_bytes = 0;
    return cpu_ew_prerun(ctx, 1);
}

int clip_run(cpu_node_ctx* ctx) {
    if (ctx->state) return cpu_ew_run_step(ctx);
    const clip_param* p = static_cast<const clip_param*>(ctx->param);
    int32_t lo = p->a_min, hi = p->a_max;
    clip_args a = {cpu_in(ctx, 0), nullptr, cpu_out(ctx, 0), lo, hi};
    cpu_parallel_for(ctx, ir_tensor_element_count(ctx->outputs[0]), clip_range, &a);
    return CVML_OK;
}

}  // namespace

extern const cpu_kernel cpu_kernel_clip = {
    .op = "clip",
    .prerun = clip_prerun,
    .run = clip_run,
    .writes_over_input = cpu_ew_writes_over_input,
};
