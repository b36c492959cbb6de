/* The graph JSON as the CVM reader keeps it between decoding and building the IR:
 * compact lists of what the checks and the IR need, the document itself kept for the
 * string lists that are decoded again one at a time (graph_decode.cpp decodes it,
 * graph_checks.cpp holds PrepareGraphWithVersion's checks, graph_reader.cpp builds the
 * IR). */
#ifndef CVML_SERIALIZER_CVM_GRAPH_FILE_H
#define CVML_SERIALIZER_CVM_GRAPH_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "graph/graph.h"
#include "serializer/cvm/json.h"

namespace cvm_graph_file {

/* What the checks and the IR need of the document, kept compact: the document is
 * read one piece at a time (a node, a graph attribute), each piece's tree freed once
 * decoded, so the loader never holds the tree of the whole (json.h). Lists of strings
 * stay in the document as a byte range and are decoded again one by one when used. */
struct entry {
    int64_t node, index;
};

struct file_node {
    size_t name;      /* offset in file_graph::strings */
    size_t func_name; /* offset in file_graph::strings; SIZE_MAX when no attrs */
    size_t inputs;    /* first of this node's entries in file_graph::inputs */
    /* One word for both (16 bytes a node on 32-bit targets, where these arrays share a
     * microcontroller's arena): a 32 MB document holds far fewer than 2^30 inputs. */
    int32_t input_count : 31;
    uint32_t is_var : 1;
};

/* A list of integers: int64 as in the file (arg_nodes, node_row_ptr: checks print them
 * as written), or int32 for the list_int graph attributes, checked to fit one. */
template <typename T>
struct number_list {
    T* values;
    int32_t count;
    bool present;
};
using int_list = number_list<int64_t>;
using int32_list = number_list<int32_t>;

struct entry_list {
    entry* values;
    int32_t count;
    bool present;
};

/* list_shape: shape i is values[offsets[i] .. offsets[i + 1]). */
struct shape_list {
    void* values;     /* int32, or int64 when a value does not fit one (shape_dim) */
    int32_t* offsets; /* in the same block, after the values */
    int32_t count;
    bool present;
    bool wide;
};

/* A checked array of strings, left in the document. */
struct string_list {
    size_t begin; /* the array's first byte */
    int32_t count;
    bool present;
};

struct file_graph {
    const char* text; /* the document */
    size_t size;
    file_node* nodes;
    int32_t node_count;
    char* strings; /* node names and func_names */
    size_t strings_used, strings_capacity;
    entry* inputs; /* every node's inputs, node after node */
    size_t inputs_used, inputs_capacity;
    int_list arg_nodes, node_row_ptr;
    int32_list storage_id, precision, device_index;
    entry_list heads;
    shape_list shape;
    string_list op_attrs, dltype;
    char* version;
    char* postprocess;
};
/* Value `at` of a shape list (shape i is values offsets[i] .. offsets[i + 1]). */
inline int64_t shape_dim(const shape_list& s, int32_t at) {
    return s.wide ? static_cast<const int64_t*>(s.values)[at]
                  : static_cast<const int32_t*>(s.values)[at];
}

inline const char* node_name(const file_graph* f, int32_t n) {
    return f->strings + f->nodes[n].name;
}

inline const char* node_func_name(const file_graph* f, int32_t n) {
    return f->nodes[n].func_name == SIZE_MAX ? nullptr : f->strings + f->nodes[n].func_name;
}

inline const entry* node_inputs(const file_graph* f, int32_t n) {
    return f->inputs + f->nodes[n].inputs;
}

/* Decodes f->text (f->size bytes, its syntax already checked) in upstream's order. */
int decode(file_graph* f);
void free_file_graph(file_graph* f);

/* Decodes the strings of a list one at a time: each is a piece of its own. */
struct string_reader {
    json_iter it;
    json_doc doc;
};
void string_reader_start(string_reader* r, const file_graph* f, const string_list* list);
/* The next string of the list (it has one: the list was counted); "" when out of memory,
 * with the error set and *rc non-zero. */
const char* string_reader_next(string_reader* r, int* rc);

/* PrepareGraphWithVersion's checks, each in upstream's order (graph_checks.cpp). */
int check_arg_names(const file_graph* f);
int check_storage_reuse(const file_graph* f, ir_graph* g);
int check_shapes_and_precisions(const file_graph* f, int32_t entries);
int check_version(const file_graph* f, const int32_t* row_ptr);

}  // namespace cvm_graph_file

#endif
