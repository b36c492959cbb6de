/* The scheduler: assigns nodes to devices, cuts the graph into subgraphs, prepares
 * them on their devices and runs them in order. */
#pragma once

#include "graph/graph.h"

struct cvml_context;

int scheduler_prerun(ir_graph* g, const struct cvml_context* ctx);
int scheduler_run(ir_graph* g);
/* Releases the devices' state and the subgraphs; the graph can be prerun again. */
void scheduler_postrun(ir_graph* g);
