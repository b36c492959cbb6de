/* Tails and views: the element-wise chains the CPU's kernels absorb (the core's fusion
 * walk, module/plan/fusion.h, with the CPU's rules), and copies that share their input's
 * buffer. */
#include <string.h>

#include "cvml.h"
#include "device/cpu/cpu_state.h"
#include "device/cpu/simd/epilogue.h"
#include "module/plan/fusion.h"
#include "operator/op_def.h"
#include "utility/error.h"
#include "utility/memory.h"

namespace cpu_dev {
namespace {

/* Upstream's non_max_suppression writes into its input; a tensor it reads must own
 * its buffer. */
bool consumed_in_place(const ir_graph* g, const ir_tensor* t) {
    for (int32_t c = 0; c < t->consumer_count; ++c) {
        const ir_node* n = g->nodes[t->consumers[c]];
        if (n->op && n->op->writes_input) return true;
    }
    return false;
}

/* The longest tail fused at the vector levels, in chain slots and steps: their tile
 * and row code is tuned for chains this long. The scalar level takes all the chain
 * has room for, so that MRT's requantize-add-requantize runs reach an int8 tensor
 * instead of leaving an int32 one between (a quarter of the arena at that level). */
constexpr int32_t kVectorTailSlots = 6;
constexpr int32_t kVectorTailSteps = 6;

/* What a step's kernel can absorb: a tail when it applies one (CPU_CAP_TAIL), of at
 * most `max_steps` steps. */
struct tail_rules {
    cpu_subgraph_state* st;
    int32_t max_steps;
};

int32_t tail_capacity(void* user, int32_t step) {
    const tail_rules* r = static_cast<const tail_rules*>(user);
    return (r->st->nodes[step].ctx.caps & CPU_CAP_TAIL) ? r->max_steps : 0;
}

/* The walk's links become the head's tail; the chain's nodes no longer run, and the head
 * writes the chain's last output. */
int take_tail(void* user, int32_t h, const fusion_link* links, int32_t count) {
    cpu_subgraph_state* st = static_cast<tail_rules*>(user)->st;
    const ir_graph* g = st->nodes[h].ctx.graph;
    cpu_node_exec* head = &st->nodes[h];
    head->tail.steps = static_cast<cpu_tail_step*>(
        cvml_scratch_alloc(sizeof(cpu_tail_step) * static_cast<size_t>(count)));
    if (!head->tail.steps) return cvml_fail_out_of_memory();
    for (int32_t k = 0; k < count; ++k) {
        head->tail.steps[k].step = links[k].op;
        head->tail.steps[k].operand =
            links[k].operand >= 0 ? g->tensors[links[k].operand] : nullptr;
        st->nodes[links[k].step].skip = 1;
    }
    const ir_node* last = st->nodes[links[count - 1].step].ctx.node;
    head->tensors[head->ctx.input_count] = g->tensors[last->outputs[0]];
    head->tail.count = count;
    head->ctx.tail = &head->tail;
    return CVML_OK;
}

}  // namespace

bool is_graph_output(const ir_graph* g, int32_t tensor) {
    for (int32_t i = 0; i < g->output_count; ++i)
        if (g->outputs[i] == tensor) return true;
    return false;
}

bool is_view_node(const ir_node* n) {
    return n->op && n->op->is_view;
}

int32_t alias_root(const cpu_subgraph_state* st, int32_t t) {
    while (st->alias[t] >= 0) t = st->alias[t];
    return t;
}

/* The chains of element-wise operators that follow a node whose kernel applies tails.
 * A right shift takes two of the epilogue's chain slots once lowered
 * (epilogue_add_step: a round and a clip). */
int fuse_tails(ir_graph* g, ir_subgraph* sg, cpu_subgraph_state* st) {
    const bool scalar = st->rt.simd_level == CPU_SIMD_SCALAR;
    tail_rules rules = {st, scalar ? CPU_TAIL_MAX : kVectorTailSteps};
    const cvml_fusion_rules device = {sizeof(cvml_fusion_rules),
                                      CVML_PLUGIN_ABI_VERSION,
                                      tail_capacity,
                                      &rules,
                                      scalar ? EP_MAX_STEPS - 2 : kVectorTailSlots,
                                      2};
    return fusion_walk(g, sg, st->step_of_node, &device, take_tail, &rules);
}

/* flatten/reshape/squeeze/expand_dims copy their input unchanged: the output can share
 * the input's buffer when both live in this arena and nothing writes either in place. */
void make_views(ir_graph* g, ir_subgraph* sg, cpu_subgraph_state* st) {
    for (int32_t i = 0; i < sg->node_count; ++i) {
        cpu_node_exec* ne = &st->nodes[i];
        const ir_node* n = ne->ctx.node;
        if (ne->skip || !is_view_node(n) || n->input_count != 1 || n->output_count != 1) continue;
        const ir_tensor* x = g->tensors[n->inputs[0]];
        const ir_tensor* y = g->tensors[n->outputs[0]];
        if (x->kind != TENSOR_VAR || x->producer < 0 || st->step_of_node[x->producer] < 0 ||
            st->nodes[st->step_of_node[x->producer]].skip)
            continue;
        if (is_graph_output(g, x->index) || is_graph_output(g, y->index)) continue;
        if (consumed_in_place(g, x) || consumed_in_place(g, y)) continue;
        if (ir_tensor_element_count(x) != ir_tensor_element_count(y)) continue;
        ne->skip = 1;
        g->nodes[n->index]->fused_into = IR_RUNS_AS_VIEW;
        st->alias[y->index] = x->index;
    }
}

}  // namespace cpu_dev
