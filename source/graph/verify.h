/* Verification shared by every way a graph is made (serializer or builder): operator
 * resolution, attribute parsing, shape and precision inference, gas. */
#pragma once

#include "graph/graph.h"

/* Resolves node->op from node->op_name (upstream's suffix strip), parses its
 * attributes and checks the number of inputs. Unknown operator: runtime error. */
int graph_prepare_node(ir_graph* g, ir_node* node);

/* Infers the output shapes of every operator node in order. With `check_declared`,
 * the tensors' current shapes are what the file declared and must equal the inferred
 * ones (logic error otherwise); without it, inferred shapes are checked against the
 * format's limits (ndim 1..6, dims 1..2^24, size <= 2^30). */
int graph_infer_shapes(ir_graph* g, int check_declared);
/* Checks variable precisions (1..32) and infers operator output precisions (1..32). */
int graph_infer_precisions(ir_graph* g);
/* Runs every operator's verify_load rule (D5): part of loading and building, not of
 * gas from the graph JSON. */
int graph_verify_load_rules(ir_graph* g);
/* Upstream's gas (FORMAT.md §8) into g->gas, g->gas_ops, g->gas_mem. */
int graph_compute_gas(ir_graph* g);

/* All of the above for a built graph; sets g->verified. */
int graph_verify_built(ir_graph* g);

/* "node 3 'conv2d_0' (conv2d): " prefixed to the current error. */
int graph_node_error(const ir_node* node, int status);
