/* The intermediate representation: graph, node, tensor and subgraph as plain C-layout
 * structs over index arrays. Nodes and tensors are allocated one by one so that
 * handles given to callers stay valid while the graph grows. Counts are int32: a
 * model never comes near 2^31 nodes, and nothing here limits it to 2^16. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "cvml.h"

struct op_def;

enum tensor_kind {
    TENSOR_VAR = 0,   /* an operator output */
    TENSOR_INPUT = 1, /* the graph input ("data") */
    TENSOR_CONST = 2, /* a parameter */
};

/* Bytes per element of a tensor's host storage, chosen from its value bound. */
enum tensor_storage { STORAGE_INT8 = 1, STORAGE_INT16 = 2, STORAGE_INT32 = 4 };

/* Element i of an array held in `storage` (enum tensor_storage), as int32. */
static inline int32_t ir_storage_load(const void* p, int storage, int64_t i) {
    if (storage == STORAGE_INT8) return static_cast<const int8_t*>(p)[i];
    if (storage == STORAGE_INT16) return static_cast<const int16_t*>(p)[i];
    return static_cast<const int32_t*>(p)[i];
}

/* Stores v as element i; narrow storage keeps the low bits (a narrow array only ever
 * holds values proven to fit it). */
static inline void ir_storage_store(void* p, int storage, int64_t i, int32_t v) {
    if (storage == STORAGE_INT8)
        static_cast<int8_t*>(p)[i] = static_cast<int8_t>(v);
    else if (storage == STORAGE_INT16)
        static_cast<int16_t*>(p)[i] = static_cast<int16_t>(v);
    else
        static_cast<int32_t*>(p)[i] = v;
}

typedef struct ir_tensor {
    /* Fields in an order with no padding on 32-bit targets (96 bytes a tensor). */
    char* name; /* a string of the graph (ir_graph_strdup) */
    int32_t index;
    int32_t ndim;
    int32_t precision; /* bits, 1..32 once verified; -1 unknown */
    int64_t dims[CVML_MAX_DIMS];
    int32_t producer; /* node index */
    int32_t producer_output;
    int32_t* consumers; /* node indices, in node order (in graph->consumer_block) */
    int32_t consumer_count;
    int32_t storage_id; /* the file's storage plan slot, -1 when none */
    /* TENSOR_CONST: prod(dims) values, `storage` wide: int8 when the precision is at
     * most 8 (load checks values against it, so it is a proven bound), else int32;
     * int8 arrays carry 64 readable bytes past the end. Owned by the graph, unless
     * const_borrowed: then they lie in the caller's params buffer (loaded in place, in
     * the blob's width, which may be int32 for a precision of at most 8). Read them
     * with ir_const_value(). */
    void* const_data;
    void* data;        /* host buffer while a graph runs (arena, const or input) */
    uint8_t storage;   /* enum tensor_storage */
    uint8_t kind;      /* enum tensor_kind */
    uint8_t file_bits; /* TENSOR_CONST: element width in the params blob (8 or 32) */
    uint8_t const_borrowed;
} ir_tensor;

typedef struct ir_attr {
    char* key; /* strings of the graph (ir_graph_strdup) */
    char* value;
} ir_attr;

typedef struct ir_node {
    char* name; /* a string of the graph (ir_graph_strdup), as are op_name and attrs */
    int32_t index;
    const struct op_def* op; /* NULL for a variable node */
    char* op_name;           /* the operator name as written in the file (func_name) */
    ir_attr* attrs;          /* attributes as given, in file order */
    int32_t attr_count;
    void* param;     /* attributes parsed by op->parse, owned by the node */
    int32_t* inputs; /* tensor indices */
    int32_t input_count;
    int32_t* outputs; /* tensor indices: &first_output while there is one */
    int32_t output_count;
    int32_t first_output;
    int32_t subgraph; /* index into graph->subgraphs after partitioning, else -1 */
    /* Set by its device at prerun (cvml_graph_node_fused_into): IR_RUNS_ITSELF, the
     * index of the node whose kernel computes this one, or IR_RUNS_AS_VIEW. */
    int32_t fused_into;
} ir_node;

#define IR_RUNS_ITSELF (-1)
#define IR_RUNS_AS_VIEW (-2)

typedef struct ir_subgraph {
    int32_t index;
    int32_t device; /* index into the device registry */
    int32_t* nodes; /* node indices, topological */
    int32_t node_count;
    int32_t* inputs; /* tensors read here but produced elsewhere (or constants) */
    int32_t input_count;
    int32_t* outputs; /* tensors produced here and read elsewhere or graph outputs */
    int32_t output_count;
    void* device_state; /* owned by the device between prerun and postrun */
    /* For a device with memory ops (cvml_plugin.h), set by the scheduler: the device
     * buffer of each input and output, in the order of inputs/outputs, and the host
     * buffers it allocated for the outputs (the host side of the boundary). */
    void** input_buffers;
    void** output_buffers;
    void** output_host;
} ir_subgraph;

struct ir_string_chunk;

typedef struct ir_graph {
    /* The names of nodes and tensors, operator names and attributes: bump-allocated in
     * chunks freed with the graph (ir_graph_strdup), so that a name costs its bytes and
     * not a heap block each (8 to 16 bytes of a microcontroller's allocator). */
    struct ir_string_chunk* strings;
    /* Nodes and tensors made in one block each where their number was known first
     * (ir_graph_reserve); the others are heap blocks of their own. */
    ir_node* node_slab;
    int32_t node_slab_used, node_slab_count;
    ir_tensor* tensor_slab;
    int32_t tensor_slab_used, tensor_slab_count;
    int32_t* consumer_block; /* every tensor's consumers (ir_graph_link) */
    /* Every node's inputs where a reader made them all at once (ir_node.inputs points
     * into it; ir_node_set_inputs is then not called on those nodes). */
    int32_t* input_block;
    int32_t input_block_count;
    ir_node** nodes;
    int32_t node_count;
    int32_t node_capacity;
    ir_tensor** tensors;
    int32_t tensor_count;
    int32_t tensor_capacity;
    int32_t* inputs; /* tensor indices */
    int32_t input_count;
    int32_t* outputs; /* tensor indices, in order (CVM "heads") */
    int32_t output_count;
    ir_subgraph** subgraphs;
    int32_t subgraph_count;

    /* Model-level facts the CVM serializer reads and writes. */
    char* version;        /* "cvm_1.0.0", "cvm_1.1.0", or NULL for the 2019 layout */
    char* postprocess;    /* "", "argmax", "detection" or another string */
    int32_t* param_order; /* const tensor indices in params-blob order */
    int32_t param_order_count;
    /* Set before a load from memory: the params buffer outlives the graph, so the
     * serializer may leave constants in it (ir_tensor.const_borrowed). */
    uint8_t params_in_place;
    /* Set before a load (CVML_LOAD_NO_NAMES): nodes and tensors get "" for a name, but
     * the input "data"; such a graph cannot be saved. */
    uint8_t no_names;
    /* The caller's arena (cvml_load_options), NULL when devices allocate their own: the
     * CPU device places its subgraphs' plans one after the other from arena_used on. */
    uint8_t* arena;
    size_t arena_size;
    size_t arena_used;

    /* 0: the CPU device prepares for this machine's SIMD level (cpu_simd_level()) and
     * this build's Cortex-M kernels; else 1 + the level it prepares for instead, with
     * the Cortex-M kernels of cpu_target_cortexm (a compiled plan's target). */
    uint8_t cpu_target_level;
    uint8_t cpu_target_cortexm; /* enum cpu_cortexm_kernels */

    uint8_t verified;
    uint8_t ran;  /* outputs hold the result of a run */
    uint64_t gas; /* valid once verified */
    uint64_t gas_ops;
    uint64_t gas_mem;
    uint8_t profiling;      /* devices time each node into node_time_ns */
    uint64_t* node_time_ns; /* node_count entries while profiling is on */
} ir_graph;

ir_graph* ir_graph_create(void);
void ir_graph_release(ir_graph* g);

/* Room for `nodes` more nodes and `tensors` more tensors, made in one block each (a
 * reader that knows the counts: a heap block per node costs a microcontroller 8 bytes
 * or more, and fragments its heap). Returns CVML_OK or a runtime error. */
int ir_graph_reserve(ir_graph* g, int32_t nodes, int32_t tensors);
/* Frees the last node or tensor made (a builder undoing a refused node). */
void ir_graph_free_node_struct(ir_graph* g, ir_node* n);
void ir_graph_free_tensor_struct(ir_graph* g, ir_tensor* t);
void ir_node_free_outputs(ir_node* n);

/* Adds a tensor / node; returns its index or -1 with the error set (out of memory). */
int32_t ir_graph_add_tensor(ir_graph* g, const char* name);
/* The same, named by a string of the graph (a node's name), shared and not copied. */
int32_t ir_graph_add_tensor_sharing_name(ir_graph* g, char* graph_string);
int32_t ir_graph_add_node(ir_graph* g, const char* name);
/* The same, named by a string of the graph, shared and not copied. */
int32_t ir_graph_add_node_sharing_name(ir_graph* g, char* graph_string);

/* A copy of s among the graph's strings (freed with it); NULL when out of memory. */
char* ir_graph_strdup(ir_graph* g, const char* s);
/* Gives back s when it is the latest of the graph's strings (a builder undoing a node
 * pops its strings newest first); any other string stays until the graph goes. */
void ir_graph_unstrdup(ir_graph* g, char* s);

int ir_node_set_inputs(ir_node* n, const int32_t* tensors, int32_t count);
int ir_node_add_output(ir_graph* g, ir_node* n, int32_t tensor);
int ir_node_add_attr(ir_graph* g, ir_node* n, const char* key, const char* value);
const char* ir_node_attr(const ir_node* n, const char* key);

/* Fills producer/consumer links from the nodes' inputs and outputs. */
int ir_graph_link(ir_graph* g);
/* Every input of a node is produced by an earlier node: logic error otherwise. */
int ir_graph_check_topological(const ir_graph* g);

ir_tensor* ir_graph_find_tensor(const ir_graph* g, const char* name);
ir_node* ir_graph_find_node(const ir_graph* g, const char* name);

int64_t ir_tensor_element_count(const ir_tensor* t);
/* Element i of a constant's values, whatever their storage. */
int32_t ir_const_value(const ir_tensor* t, int64_t i);
/* Allocates a constant's value array for `precision` (int8 up to 8 bits, else int32),
 * sets t->storage, and fills it from `values` (NULL: leaves it zeroed). Frees any
 * previous array. Returns CVML_OK or a runtime error. */
int ir_const_store(ir_tensor* t, const int32_t* values);
/* Points the constant at `count` values of width `storage` in a buffer the caller keeps
 * alive longer than the graph (int8 needs 64 readable bytes past the end). */
void ir_const_borrow(ir_tensor* t, const void* data, uint8_t storage);
/* Gives the constant zeroed storage chosen by its precision (int8 for <= 8 bits, else
 * int32; 64 bytes of slack) to be filled in place, replacing any earlier values.
 * Returns CVML_OK or a runtime error (out of memory). */
int ir_const_alloc(ir_tensor* t);
/* Largest magnitude a value of `precision` bits may have: 2^(p-1)-1. */
int32_t ir_precision_bound(int32_t precision);

char* ir_strdup(const char* s);
