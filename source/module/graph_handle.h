/* What a cvml_graph handle holds: the IR and the context it was made with. */
#pragma once

#include "graph/graph.h"
#include "module/context.h"

struct cvml_graph {
    ir_graph* ir;
    cvml_context context; /* a copy: releasing the caller's context does not matter */
};

/* Reads a whole file into a malloc'd buffer. */
int graph_read_file(const char* path, uint8_t** data, size_t* size);
