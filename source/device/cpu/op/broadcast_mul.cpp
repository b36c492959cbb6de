/* broadcast_mul on the CPU: a * b with two's-complement wrap-around, NumPy broadcasting
 * (broadcast_kernel.h). At the SIMD levels a product by a one-element constant that
 * keeps the other operand's shape (MRT's requantization scales) is an element-wise
 * epilogue chain instead: any storage in and out, and a fused tail of its own. */
#include "device/cpu/op/broadcast_kernel.h"
#include "device/cpu/simd/kernel_util.h"
#include "utility/memory.h"

namespace {

struct broadcast_mul_fn {
    static int32_t apply(int32_t a, int32_t b) { return cvml_wrap_mul(a, b); }
};

/* Which input is scaled by a one-element constant with the output's shape (the
 * operator's step, op_def.step), or -1; *factor is the constant. */
int scaled_input(const cpu_node_ctx* ctx, int32_t* factor) {
    for (int i = 0; i < 2; ++i) {
        cvml_step s;
        if (op_node_step(ctx->graph, ctx->node, i, &s) && s.kind == CVML_STEP_MUL) {
            *factor = s.a;
            return i;
        }
    }
    return -1;
}

int broadcast_mul_prerun(cpu_node_ctx* ctx, size_t* scratch_bytes) {
    int32_t factor = 0;
    const int var = cpu_reference(ctx) ? -1 : scaled_input(ctx, &factor);
    if (var < 0) return cpu_broadcast::prerun(ctx, scratch_bytes);
    *scratch_bytes = 0;
    // Nothing to allocate (the run finds the factor again), so that the 54 of
    // cifar_resnet20, most fused away, leave no holes in a microcontroller's heap.
    ctx->state = const_cast<int*>(&cpu_fast_marker);
    // epilogue_apply goes forward a chunk at a time, each chunk read whole before stored.
    ctx->caps = CPU_CAP_TAIL | CPU_CAP_NARROW_OUT | CPU_CAP_INT16 | CPU_CAP_NARROW_IN(var) |
                CPU_CAP_TAIL_IN_PLACE;
    return CVML_OK;
}

int broadcast_mul_run(cpu_node_ctx* ctx) {
    if (ctx->state != &cpu_fast_marker) return cpu_broadcast::run<broadcast_mul_fn>(ctx);
    int32_t factor = 0;
    const int var = scaled_input(ctx, &factor);
    epilogue ep = {};
    epilogue_add_mul(&ep, factor);
    return cpu_ew_run(ctx, &ep, var);
}

/* The scaling form writes over its scaled input (epilogue_apply, chunk by chunk). */
int32_t broadcast_mul_writes_over_input(const cpu_node_ctx* ctx, size_t*) {
    int32_t factor = 0;
    return ctx->state == &cpu_fast_marker ? scaled_input(ctx, &factor) : -1;
}

void broadcast_mul_postrun(cpu_node_ctx* ctx) {
    if (ctx->state != &cpu_fast_marker) cpu_broadcast::postrun(ctx);
    ctx->state = nullptr;
}

}  // namespace

extern const cpu_kernel cpu_kernel_broadcast_mul = {
    .op = "broadcast_mul",
    .prerun = broadcast_mul_prerun,
    .run = broadcast_mul_run,
    .postrun = broadcast_mul_postrun,
    .writes_over_input = broadcast_mul_writes_over_input,
    .plain_state_size = sizeof(cpu_broadcast::state),
    .state_matches = cpu_broadcast::state_matches,
};
