/* Buffers shared by a step's output and a tensor it reads last (docs/memory.md). */
#include "cvml.h"
#include "device/cpu/cpu_state.h"
#include "operator/op_def.h"
#include "utility/error.h"
#include "utility/memory.h"

namespace cpu_dev {
namespace {

/* The step that computes node n here (the head it is fused into), -1 elsewhere. */
int32_t step_computing(const ir_graph* g, const cpu_subgraph_state* st, int32_t n) {
    const int32_t into = g->nodes[n]->fused_into;
    return st->step_of_node[into >= 0 ? into : n];
}

/* What share_buffers knows of each tensor, found once (O(tensors + edges)). */
enum : uint8_t {
    VIEWED = 1,  /* a view (make_views) shares its buffer */
    SHARING = 2, /* it took the buffer of a tensor read for the last time */
    PINNED = 4   /* a graph output, read in another subgraph or written in place */
};

struct share_state {
    uint8_t* marks;
    int32_t* last; /* the last step reading the tensor here, -1 for none */
};

/* Whether x is the sole holder of a buffer in this arena: the output of a step that runs
 * (a fused chain's last tensor), not a view nor a chain's intermediate, in a buffer of
 * its own or one it took over. */
bool holds_arena_buffer(const ir_graph* g, const cpu_subgraph_state* st, const ir_tensor* x,
                        const uint8_t* marks) {
    if (x->kind != TENSOR_VAR || x->producer < 0 || (marks[x->index] & (VIEWED | PINNED)) ||
        (st->alias[x->index] >= 0 && !(marks[x->index] & SHARING)))
        return false;
    const int32_t s = step_computing(g, st, x->producer);
    if (s < 0 || st->nodes[s].skip) return false;
    const cpu_node_exec* ne = &st->nodes[s];
    for (int32_t k = 0; k < ne->ctx.output_count; ++k)
        if (ne->ctx.outputs[k] == x) return true;
    return false;
}

/* Whether step i's output y can take x's buffer: step i is x's last reader (the step's
 * own node among them only when `by_node`), x is nothing else's (holds_arena_buffer),
 * and has y's storage and size, so that element k lies at the same bytes. */
bool can_take(const ir_graph* g, const cpu_subgraph_state* st, const share_state& sh, int32_t i,
              const ir_tensor* x, bool by_node) {
    const cpu_node_exec* ne = &st->nodes[i];
    const ir_tensor* y = ne->ctx.outputs[0];
    if (!x || x->storage != y->storage ||
        ir_tensor_element_count(x) != ir_tensor_element_count(y) || sh.last[x->index] != i ||
        !holds_arena_buffer(g, st, x, sh.marks))
        return false;
    for (int32_t k = 0; k < ne->ctx.node->input_count && !by_node; ++k)
        if (ne->ctx.node->inputs[k] == x->index) return false;
    return true;
}

/* The tensor whose buffer step i's output takes, or null: an input the kernel writes
 * over (cpu_kernel.writes_over_input), else a tail operand that the kernel reads element
 * by element before writing the same element (CPU_CAP_TAIL_IN_PLACE). */
const ir_tensor* buffer_to_take(const ir_graph* g, cpu_subgraph_state* st, const share_state& sh,
                                int32_t i, size_t* scratch) {
    cpu_node_exec* ne = &st->nodes[i];
    size_t more = scratch[i];
    const int32_t k =
        ne->kernel->writes_over_input ? ne->kernel->writes_over_input(&ne->ctx, &more) : -1;
    if (k >= 0 && k < ne->ctx.input_count && can_take(g, st, sh, i, ne->ctx.inputs[k], true)) {
        scratch[i] = more;
        return ne->ctx.inputs[k];
    }
    for (int32_t t = 0; t < ne->tail.count && (ne->ctx.caps & CPU_CAP_TAIL_IN_PLACE); ++t)
        if (can_take(g, st, sh, i, ne->tail.steps[t].operand, false))
            return ne->tail.steps[t].operand;
    return nullptr;
}

/* Each tensor's marks and last reading step. */
void find_last_readers(const ir_graph* g, const cpu_subgraph_state* st, share_state* sh) {
    for (int32_t i = 0; i < g->output_count; ++i) sh->marks[g->outputs[i]] |= PINNED;
    for (int32_t t = 0; t < g->tensor_count; ++t) {
        const ir_tensor* x = g->tensors[t];
        if (st->alias[t] >= 0) sh->marks[st->alias[t]] |= VIEWED;
        sh->last[t] = -1;
        for (int32_t c = 0; c < x->consumer_count; ++c) {
            const int32_t s = step_computing(g, st, x->consumers[c]);
            const ir_node* reader = g->nodes[x->consumers[c]];
            if (s < 0 || (reader->op && reader->op->writes_input)) sh->marks[t] |= PINNED;
            if (s > sh->last[t]) sh->last[t] = s;
        }
    }
}

}  // namespace

/* An output takes the buffer of a tensor its step reads for the last time, so that the
 * arena holds one activation fewer there: a residual block's last conv2d adds the
 * block's input and writes over it, an element-wise node writes over its input, a
 * same-size conv2d on Cortex-M over its image a few rows behind (docs/memory.md). */
int share_buffers(ir_graph* g, ir_subgraph* sg, cpu_subgraph_state* st, size_t* scratch) {
    const size_t n = static_cast<size_t>(g->tensor_count) + 1;
    share_state sh = {static_cast<uint8_t*>(cvml_scratch_calloc(n, 1)),
                      static_cast<int32_t*>(cvml_scratch_alloc(sizeof(int32_t) * n))};
    int rc = sh.marks && sh.last ? CVML_OK : cvml_fail_out_of_memory();
    if (!rc) find_last_readers(g, st, &sh);
    for (int32_t i = 0; i < sg->node_count && !rc; ++i) {
        cpu_node_exec* ne = &st->nodes[i];
        if (ne->skip || ne->ctx.output_count != 1) continue;
        const ir_tensor* y = ne->ctx.outputs[0];
        if (y->kind != TENSOR_VAR || st->alias[y->index] >= 0 || (sh.marks[y->index] & PINNED))
            continue;
        const ir_tensor* x = buffer_to_take(g, st, sh, i, scratch);
        if (!x) continue;
        st->alias[y->index] = x->index;
        sh.marks[y->index] |= SHARING;
    }
    cvml_scratch_free(sh.last);
    cvml_scratch_free(sh.marks);
    return rc;
}

}  // namespace cpu_dev
