/* The CVM model format (FORMAT.md §4): graph JSON reader, params reader, writer and
 * the load-time checks, shared by the "cvm" serializer and the upstream API. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "graph/graph.h"

/* Reads graph JSON into an empty graph and verifies it as upstream's
 * PrepareGraphWithVersion + CheckAttr do (FORMAT.md §5 steps 2-4), then computes the
 * gas. No params are involved and nothing is allocated for running. */
int cvm_read_graph(const char* json, size_t size, ir_graph* g);

/* The load-only refusals after cvm_read_graph (§5 step 5, divergences D2): storage
 * plan liveness, operators without a kernel (aliases), storage size, heads, the
 * `data` input. */
int cvm_check_loadable(ir_graph* g);

/* The caps of docs/reliability.md (D8-D10): heads, input and output lengths, the
 * work of operators whose gas under-charges them. Part of cvm_check_loadable. */
int cvm_check_resource_caps(const ir_graph* g);

/* Reads the params blob (§4.2) into the graph's constant tensors. */
int cvm_read_params(const uint8_t* data, size_t size, ir_graph* g);
/* The same from the `size` bytes of an open file, read as they are parsed (so a large
 * blob is never in memory whole); the same checks and errors. */
int cvm_read_params_file(FILE* f, size_t size, ir_graph* g);

/* Upstream's CVMAPIGetStorageSize figure (§8, last paragraph). */
int cvm_storage_size(const ir_graph* g, uint64_t* size);

/* Writes a verified graph: graph JSON in the compiler layout and the params blob.
 * Both buffers are malloc'd. */
int cvm_write_graph(const ir_graph* g, char** out, size_t* size);
int cvm_write_params(const ir_graph* g, uint8_t** out, size_t* size);
