/* A loaded plan's run loop (compiled.h): before each step its tensors and context are
 * filled into the window from the records, so that RAM holds one step's structures,
 * not the graph's; the kernels' run functions then see what they see on the CVM path. */
#include <inttypes.h>
#include <string.h>

#include "device/cpu/compiled/plan_state.h"
#include "device/cpu/thread_pool.h"
#include "utility/error.h"

void plan_fill_tensor(const compiled_plan* p, uint32_t i, ir_tensor* t) {
    const uint8_t* r = plan_record(p, PLAN_TENS, PLAN_TENS_RECORD, i);
    memset(t, 0, sizeof *t);
    t->name = const_cast<char*>("");
    t->index = static_cast<int32_t>(i);
    t->kind = r[TENS_KIND];
    t->storage = r[TENS_STORAGE];
    t->ndim = r[TENS_NDIM];
    t->precision = static_cast<int32_t>(plan_get32(r + TENS_PRECISION));
    for (int32_t d = 0; d < t->ndim; ++d) t->dims[d] = plan_get32(r + TENS_DIMS + 4 * d);
    t->producer = -1;
    t->storage_id = -1;
    const uint32_t at = plan_get32(r + TENS_OFFSET);
    if (r[TENS_WHERE] == PLAN_IN_CNST) {
        t->data = const_cast<uint8_t*>(p->file.sections[PLAN_CNST].data + at);
        t->const_data = t->data;
        t->const_borrowed = 1;
        t->file_bits = static_cast<uint8_t>(8 * t->storage);
    } else {
        t->data = p->acts + at;
    }
}

const cpu_kernel* plan_bind_step(compiled_plan* p, uint32_t s, cpu_node_ctx* ctx) {
    const uint8_t* r = plan_record(p, PLAN_STEP, PLAN_STEP_RECORD, s);
    const uint32_t kernel = plan_get32(r + STEP_KERNEL);
    const uint32_t inputs = plan_get32(r + STEP_INPUTS), outputs = plan_get32(r + STEP_OUTPUTS);
    const uint32_t slot = plan_get32(r + STEP_SLOT);
    for (uint32_t k = 0; k < inputs + outputs; ++k) {
        plan_fill_tensor(p, plan_get32(plan_record(p, PLAN_SLOT, PLAN_SLOT_RECORD, slot + k)),
                         &p->win[k]);
        p->win_ptrs[k] = &p->win[k];
    }
    const uint32_t tail = plan_get32(r + STEP_TAIL), tail_count = plan_get32(r + STEP_TAIL_COUNT);
    uint32_t used = inputs + outputs;
    for (uint32_t k = 0; k < tail_count; ++k) {
        const uint8_t* t = plan_record(p, PLAN_TAIL, PLAN_TAIL_RECORD, tail + k);
        p->tail_steps[k].step = plan_get_step(t + TAIL_STEP);
        p->tail_steps[k].operand = nullptr;
        const uint32_t operand = plan_get32(t + TAIL_OPERAND);
        if (operand == PLAN_NONE) continue;
        plan_fill_tensor(p, operand, &p->win[used]);
        p->tail_steps[k].operand = &p->win[used++];
    }
    p->tail.count = static_cast<int32_t>(tail_count);
    const op_def* op = p->op_of[kernel];
    p->node.index = static_cast<int32_t>(plan_get32(r + STEP_NODE));
    p->node.op = op;
    p->node.op_name = const_cast<char*>(op->name);
    // The node reads its tensors by index in a graph of the window's, which is how an
    // operator's step (op_def.step) finds its constant operand at run time.
    p->node.inputs = p->ids;
    p->node.input_count = static_cast<int32_t>(inputs);
    p->node.outputs = p->ids + inputs;
    p->node.output_count = static_cast<int32_t>(outputs);
    p->view.tensors = p->win_ptrs;
    p->view.tensor_count = static_cast<int32_t>(inputs + outputs);
    memset(ctx, 0, sizeof *ctx);
    ctx->graph = &p->view;
    ctx->node = &p->node;
    const uint32_t param = plan_get32(r + STEP_PARAM);
    ctx->param = param == PLAN_NONE ? nullptr : p->file.sections[PLAN_PARM].data + param;
    p->node.param = const_cast<void*>(ctx->param);
    ctx->input_count = static_cast<int32_t>(inputs);
    ctx->inputs = p->win_ptrs;
    ctx->output_count = static_cast<int32_t>(outputs);
    ctx->outputs = p->win_ptrs + inputs;
    const uint32_t kind = plan_get32(r + STEP_STATE_KIND);
    // Kernels only read their state; ctx->state is not const for the CVM path's prerun.
    if (kind == PLAN_STATE_MARKER)
        ctx->state = const_cast<int*>(&cpu_fast_marker);
    else if (kind == PLAN_STATE_PLAIN)
        ctx->state =
            const_cast<uint8_t*>(p->file.sections[PLAN_STAT].data + plan_get32(r + STEP_STATE));
    const uint32_t scratch = plan_get32(r + STEP_SCRATCH);
    ctx->scratch = scratch == PLAN_NONE ? nullptr : p->acts + scratch;
    ctx->scratch_size = scratch == PLAN_NONE ? 0 : plan_get32(r + STEP_SCRATCH_SIZE);
    ctx->rt = &p->rt;
    ctx->caps = plan_get32(r + STEP_CAPS);
    ctx->tail = tail_count ? &p->tail : nullptr;
    return p->kernel_of[kernel];
}

int plan_run(compiled_plan* p) {
    if (p->rt.pool) thread_pool_begin(p->rt.pool);
    int rc = CVML_OK;
    for (uint32_t s = 0; s < p->steps && !rc; ++s) {
        cpu_node_ctx ctx;
        rc = plan_bind_step(p, s, &ctx)->run(&ctx);
        if (rc)
            rc = cvml_fail_context(rc, "step %" PRIu32 " (node %" PRId32 ", %s): ", s,
                                   p->node.index, p->node.op_name);
    }
    if (p->rt.pool) thread_pool_end(p->rt.pool);
    return rc;
}

void plan_release(compiled_plan* p) {
    if (p && p->rt.pool) thread_pool_release(p->rt.pool);
    if (p) p->rt.pool = nullptr;
}
