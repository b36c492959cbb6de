/* The element-wise kernels' shared epilogue form (kernel_util.h). */
#include "device/cpu/simd/kernel_util.h"

namespace {

struct ew_args {
    int level;
    const epilogue* ep;
    const ir_tensor* x;
    const ir_tensor* y;
};

void ew_range(void* arg, int64_t begin, int64_t end) {
    const ew_args* a = static_cast<const ew_args*>(arg);
    epilogue_apply(a->level, a->ep, a->x->data, a->x->storage, begin, 0, a->y->data, a->y->storage,
                   begin, end - begin);
}

}  // namespace

int cpu_ew_prerun(cpu_node_ctx* ctx, int inputs) {
    cvml_step step;
    if (cpu_reference(ctx) || !op_node_step(ctx->graph, ctx->node, 0, &step)) return CVML_OK;
    ctx->state = const_cast<int*>(&cpu_fast_marker);  // no postrun: nothing is owned
    // epilogue_apply goes forward a chunk at a time, each chunk read whole before stored.
    ctx->caps = CPU_CAP_TAIL | CPU_CAP_NARROW_OUT | CPU_CAP_INT16 | CPU_CAP_NARROW_IN(0) |
                (inputs > 1 ? CPU_CAP_NARROW_IN(1) : 0u) | CPU_CAP_TAIL_IN_PLACE;
    return CVML_OK;
}

int cpu_ew_run(cpu_node_ctx* ctx, epilogue* ep, int32_t input) {
    cpu_tail_append(ctx, ep);
    ew_args a = {cpu_level(ctx), ep, ctx->inputs[input], ctx->outputs[0]};
    cpu_parallel_for(ctx, ir_tensor_element_count(ctx->outputs[0]), ew_range, &a);
    return CVML_OK;
}

int32_t cpu_ew_writes_over_input(const cpu_node_ctx* ctx, size_t*) {
    return ctx->state ? 0 : -1;
}

int cpu_ew_run_step(cpu_node_ctx* ctx) {
    cvml_step step = {};
    op_node_step(ctx->graph, ctx->node, 0, &step);
    const ir_tensor* y = step.kind == CVML_STEP_ADD ? ctx->inputs[step.operand] : nullptr;
    epilogue ep = {};
    epilogue_add_step(&ep, &step, y ? y->data : nullptr, y ? y->storage : 0);
    return cpu_ew_run(ctx, &ep, 0);
}
