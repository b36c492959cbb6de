/* The fusion walk, shared by every device (the CPU directly, plugins through
 * cvml_host_api::plan_fusion): which element-wise nodes a subgraph's kernels absorb as
 * the tails of the nodes before them. The rule is the core's, written once; what a
 * device can fuse (which heads take a tail, how long) is its cvml_fusion_rules. */
#pragma once

#include <stdint.h>

#include "cvml_plugin.h"
#include "graph/graph.h"

/* The longest tail the walk builds, whatever a device's rules say. */
#define FUSION_MAX_TAIL 16

/* One node taken into a head's tail. */
typedef struct fusion_link {
    int32_t step;    /* the node's step in the subgraph */
    int32_t operand; /* CVML_STEP_ADD: the graph index of the tensor added, else -1 */
    cvml_step op;    /* what the head applies for it */
} fusion_link;

/* Called once per head that took a tail, in step order: its links in chain order (the
 * last one's output is what the head now writes). Returns CVML_OK or an error, which
 * ends the walk. */
typedef int (*fusion_sink)(void* user, int32_t head, const fusion_link* links, int32_t count);

/* Walks the subgraph's steps in order; each head (rules->tail_capacity > 0, one output,
 * not itself fused) absorbs the chain of nodes that read its output and nothing else
 * does: the intermediate tensor is read once, by a later step here, and is not a graph
 * output; the reader has one output, as many elements, and is one element-wise step of
 * it (op_node_step); an ADD's other operand has as many elements and is written before
 * the head runs (by an earlier step here, or before the subgraph: a constant, an input,
 * another subgraph's output). So the fused node computes exactly what the chain did.
 * Fused nodes get fused_into (their head's node); the subgraph's other nodes
 * IR_RUNS_ITSELF. `step_of_node` (graph node -> step here, -1 elsewhere) may be null:
 * the walk then makes its own. */
int fusion_walk(ir_graph* g, const ir_subgraph* sg, const int32_t* step_of_node,
                const cvml_fusion_rules* rules, fusion_sink sink, void* user);

/* cvml_host_api::plan_fusion: the walk, its answer as one cvml_fused_step per step. */
int fusion_plan(ir_graph* g, const ir_subgraph* sg, const cvml_fusion_rules* rules,
                cvml_fused_step* fused);
