/* The fusion walk, shared by every device (the CPU directly, plugins through
 * cvml_host_api::plan_fusion): which element-wise nodes a subgraph's kernels absorb as
 * the tails of the nodes before them. The rule is the core's, written once; what a
 * device can fuse (which heads take a tail, how long) is its cvml_fusion_rules. The rule
 * is inline so that a device calling it once (the CPU, in a microcontroller's image)
 * pays no call for it. */
#pragma once

#include <stdint.h>

#include "cvml_plugin.h"
#include "graph/graph.h"
#include "operator/op_def.h"

/* The longest tail any device takes (the CPU's scalar level: CPU_TAIL_MAX). */
#define FUSION_MAX_TAIL 12

/* One node taken into a head's tail. */
typedef struct fusion_link {
    cvml_step op;             /* what the head applies for it */
    const ir_tensor* operand; /* CVML_STEP_ADD: the tensor added, else null */
    int32_t step;             /* the node's step in the subgraph */
} fusion_link;

/* Whether `tensor` is one of the graph's outputs. */
bool plan_is_graph_output(const ir_graph* g, int32_t tensor);

/* The rule's parts (fusion_tail below). */

inline int32_t fusion_cost_of(const cvml_fusion_rules* rules, const cvml_step& s) {
    return s.kind == CVML_STEP_RIGHT_SHIFT ? rules->shift_cost : 1;
}

/* Whether an ADD's other operand is written before step `head` runs: by an earlier step
 * here, or before the subgraph runs (not produced here). */
inline bool fusion_ready_before(const int32_t* step_of_node, const ir_tensor* x, int32_t head) {
    return x->producer < 0 || step_of_node[x->producer] < head;
}

/* The fusion rule, for head step `h` (one output, not itself fused): it absorbs the chain
 * of nodes that read its output and nothing else does: the intermediate tensor is read
 * once, by a later step here, and is not a graph output; the reader has one output and
 * is one element-wise step of it (op_node_step: as many elements); an ADD's other
 * operand (of the same shape) is written before the head runs (by an earlier step
 * here, or before the subgraph: a constant, an input, another subgraph's output). So the
 * fused node computes exactly what the chain did. At most `capacity` links (at most
 * FUSION_MAX_TAIL: `links` holds that many) within rules->max_cost (here a bound, never
 * 0); each fused node gets fused_into
 * (the head's node). `step_of_node`: graph node -> step here, -1 elsewhere. Returns the links'
 * count. The walk: every step in order, each with the capacity its kernel has, after
 * setting the subgraph's nodes to IR_RUNS_ITSELF (fusion_plan; the CPU's fuse_tails). */
inline int32_t fusion_tail(ir_graph* g, const ir_subgraph* sg, const int32_t* step_of_node,
                           const cvml_fusion_rules* rules, int32_t h, int32_t capacity,
                           fusion_link* links) {
    ir_node* head = g->nodes[sg->nodes[h]];
    if (head->fused_into >= 0 || head->output_count != 1) return 0;
    int32_t count = 0, cost = 0;
    for (const ir_tensor* t = g->tensors[head->outputs[0]]; count < capacity;) {
        // t's only reader, later here, reading it once, one element-wise step of it.
        if (plan_is_graph_output(g, t->index) || t->consumer_count != 1) break;
        ir_node* c = g->nodes[t->consumers[0]];
        const int32_t cs = step_of_node[c->index];
        if (cs <= h || c->output_count != 1) break;
        // One consumer is one input slot (ir_graph_link): c reads t there and only there.
        int32_t input = 0;
        while (c->inputs[input] != t->index) ++input;
        // A step maps each value on its own (op_def.step, on a verified graph): its output
        // has as many elements, and an ADD's operand is another input of the same shape.
        fusion_link* link = &links[count];
        if (!op_node_step(g, c, input, &link->op)) break;
        link->step = cs;
        link->operand = nullptr;
        if (link->op.kind == CVML_STEP_ADD) {
            const ir_tensor* other = g->tensors[c->inputs[link->op.operand]];
            if (!fusion_ready_before(step_of_node, other, h)) break;
            link->operand = other;
        }
        const int32_t more = fusion_cost_of(rules, link->op);
        if (cost + more > rules->max_cost) break;
        cost += more;
        ++count;
        c->fused_into = head->index;
        t = g->tensors[c->outputs[0]];
    }
    return count;
}

/* cvml_host_api::plan_fusion: the walk with the device's rules, its answer as one
 * cvml_fused_step per step. */
int fusion_plan(ir_graph* g, const ir_subgraph* sg, const cvml_fusion_rules* rules,
                cvml_fused_step* fused);
