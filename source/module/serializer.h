/* A serializer turns bytes into a verified graph, and a graph back into bytes. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "graph/graph.h"

typedef struct cvml_serializer {
    const char* name;
    /* Reads and verifies a model. The buffers are only read during the call. */
    int (*load)(const void* graph_data, size_t graph_size, const void* params_data,
                size_t params_size, ir_graph* out);
    /* Writes a graph; *graph_out and *params_out are malloc'd, freed by the caller.
     * NULL when the serializer cannot write. */
    int (*save)(const ir_graph* g, char** graph_out, size_t* graph_size, uint8_t** params_out,
                size_t* params_size);
} cvml_serializer;

int serializer_registry_add(const cvml_serializer* s);
int serializer_registry_remove(const cvml_serializer* s);

/* A built-in serializer may also load with the params read from an open file of
 * params_size bytes as they are parsed, so a large blob is never held in memory whole
 * (same checks and errors as load). It is kept beside the serializer rather than in
 * cvml_serializer, whose layout plugins compiled against the plugin ABI rely on.
 * Without one, cvml_graph_load_file reads the file and calls load. */
typedef int (*cvml_params_file_loader)(const void* graph_data, size_t graph_size, FILE* params,
                                       size_t params_size, ir_graph* out);
int serializer_set_params_file_loader(const cvml_serializer* s, cvml_params_file_loader load);
cvml_params_file_loader serializer_params_file_loader(const cvml_serializer* s);
const cvml_serializer* serializer_registry_find(const char* name);
int32_t serializer_registry_count(void);
