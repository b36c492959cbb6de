#include "module/plan/fusion.h"

#include "operator/op_def.h"
#include "utility/error.h"
#include "utility/memory.h"

namespace {

bool is_graph_output(const ir_graph* g, int32_t tensor) {
    for (int32_t i = 0; i < g->output_count; ++i)
        if (g->outputs[i] == tensor) return true;
    return false;
}

int32_t count_in(const ir_node* n, int32_t tensor) {
    int32_t k = 0;
    for (int32_t i = 0; i < n->input_count; ++i) k += n->inputs[i] == tensor;
    return k;
}

int32_t cost_of(const cvml_fusion_rules* rules, const cvml_step& s) {
    return s.kind == CVML_STEP_RIGHT_SHIFT && rules->shift_cost > 0 ? rules->shift_cost : 1;
}

/* Whether an ADD's other operand is written before step `head` runs: by an earlier step
 * here, or before the subgraph runs (not produced here). */
bool ready_before(const int32_t* step_of_node, const ir_tensor* x, int32_t head) {
    return x->producer < 0 || step_of_node[x->producer] < head;
}

/* The link the node reading t (its only reader) would be, false when it cannot be one. */
bool next_link(const ir_graph* g, const int32_t* step_of_node, int32_t head, const ir_tensor* t,
               fusion_link* out) {
    if (is_graph_output(g, t->index) || t->consumer_count != 1) return false;
    const ir_node* c = g->nodes[t->consumers[0]];
    const int32_t cs = step_of_node[c->index];
    if (cs <= head || c->fused_into >= 0 || c->output_count != 1 || count_in(c, t->index) != 1)
        return false;
    int32_t input = 0;
    while (input < c->input_count && c->inputs[input] != t->index) ++input;
    if (!op_node_step(g, c, input, &out->op)) return false;
    const int64_t n = ir_tensor_element_count(t);
    if (ir_tensor_element_count(g->tensors[c->outputs[0]]) != n) return false;
    out->step = cs;
    out->operand = -1;
    if (out->op.kind != CVML_STEP_ADD) return true;
    if (out->op.operand < 0 || out->op.operand >= c->input_count) return false;
    const ir_tensor* other = g->tensors[c->inputs[out->op.operand]];
    if (ir_tensor_element_count(other) != n || !ready_before(step_of_node, other, head))
        return false;
    out->operand = other->index;
    return true;
}

/* Head step h's tail: the longest chain the rules allow. */
int32_t extend(ir_graph* g, const ir_subgraph* sg, const int32_t* step_of_node,
               const cvml_fusion_rules* rules, int32_t h, fusion_link* links) {
    ir_node* head = g->nodes[sg->nodes[h]];
    if (head->fused_into >= 0 || head->output_count != 1) return 0;
    int32_t capacity = rules->tail_capacity(rules->user, h);
    if (capacity > FUSION_MAX_TAIL) capacity = FUSION_MAX_TAIL;
    int32_t count = 0, cost = 0;
    const ir_tensor* t = g->tensors[head->outputs[0]];
    while (count < capacity) {
        fusion_link link;
        if (!next_link(g, step_of_node, h, t, &link)) break;
        const int32_t more = cost_of(rules, link.op);
        if (rules->max_cost > 0 && cost + more > rules->max_cost) break;
        cost += more;
        links[count++] = link;
        ir_node* c = g->nodes[sg->nodes[link.step]];
        c->fused_into = head->index;
        t = g->tensors[c->outputs[0]];
    }
    return count;
}

struct plan_answer {
    cvml_fused_step* fused;
};

int record(void* user, int32_t head, const fusion_link* links, int32_t count) {
    cvml_fused_step* fused = static_cast<plan_answer*>(user)->fused;
    for (int32_t k = 0; k < count; ++k)
        fused[links[k].step] = {head, links[k].operand, links[k].op};
    return CVML_OK;
}

}  // namespace

int fusion_walk(ir_graph* g, const ir_subgraph* sg, const int32_t* step_of_node,
                const cvml_fusion_rules* rules, fusion_sink sink, void* user) {
    int32_t* own = nullptr;
    if (!step_of_node) {
        own = static_cast<int32_t*>(
            cvml_scratch_alloc(sizeof(int32_t) * (static_cast<size_t>(g->node_count) + 1)));
        if (!own) return cvml_fail_out_of_memory();
        for (int32_t n = 0; n < g->node_count; ++n) own[n] = -1;
        for (int32_t i = 0; i < sg->node_count; ++i) own[sg->nodes[i]] = i;
        step_of_node = own;
    }
    for (int32_t i = 0; i < sg->node_count; ++i)
        g->nodes[sg->nodes[i]]->fused_into = IR_RUNS_ITSELF;
    int rc = CVML_OK;
    fusion_link links[FUSION_MAX_TAIL];
    for (int32_t h = 0; h < sg->node_count && !rc; ++h) {
        const int32_t count = extend(g, sg, step_of_node, rules, h, links);
        if (count) rc = sink(user, h, links, count);
    }
    cvml_scratch_free(own);
    return rc;
}

int fusion_plan(ir_graph* g, const ir_subgraph* sg, const cvml_fusion_rules* rules,
                cvml_fused_step* fused) {
    if (!g || !sg || !rules || !rules->tail_capacity || !fused)
        return cvml_fail(CVML_ERR_LOGIC, "plan_fusion: NULL argument");
    if (rules->struct_size < sizeof(cvml_fusion_rules))
        return cvml_fail(CVML_ERR_LOGIC, "plan_fusion: rules of %u bytes (want %u)",
                         static_cast<unsigned>(rules->struct_size),
                         static_cast<unsigned>(sizeof(cvml_fusion_rules)));
    for (int32_t i = 0; i < sg->node_count; ++i) fused[i] = {-1, -1, {0, 0, 0, 0}};
    plan_answer answer = {fused};
    return fusion_walk(g, sg, nullptr, rules, record, &answer);
}
