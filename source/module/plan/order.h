/* The order of a subgraph's steps, shared by every device (the CPU directly, plugins
 * through cvml_host_api::plan_order): of the nodes whose inputs are ready, the one that
 * adds the fewest elements to what is live runs first, so fewer activations are alive at
 * once. Any topological order computes the same bytes; the devices take the same one so
 * that the fusion walk, whose ADD operands must be written before their head runs, fuses
 * the same nodes on each. O((N + E) log N). */
#pragma once

#include <stdint.h>

#include "graph/graph.h"

/* Reorders sg->nodes, before a device prepares them, and updates `step_of_node` (graph
 * node -> step here, -1 elsewhere). Returns CVML_OK or an error (out of memory). */
int plan_order(ir_graph* g, ir_subgraph* sg, int32_t* step_of_node);

/* A new table of graph node -> step of sg (-1 elsewhere), from the load's scratch
 * (cvml_scratch_free), or null when out of memory: what the planners take, for a
 * plugin's calls. */
int32_t* plan_step_of_node(const ir_graph* g, const ir_subgraph* sg);
