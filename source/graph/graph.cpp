#include "graph/graph.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "operator/op_def.h"
#include "utility/error.h"
#include "utility/memory.h"

char* ir_strdup(const char* s) {
    size_t n = strlen(s) + 1;
    char* p = static_cast<char*>(cvml_mem_alloc(n));
    if (p) memcpy(p, s, n);
    return p;
}

/* A chunk of the graph's strings; its bytes follow the header. */
struct ir_string_chunk {
    ir_string_chunk* prev;
    size_t used;
    size_t capacity;
};

namespace {

constexpr size_t kStringChunkBytes = 1000;

char* chunk_data(ir_string_chunk* c) {
    return reinterpret_cast<char*>(c + 1);
}

}  // namespace

char* ir_graph_strdup(ir_graph* g, const char* s) {
    size_t len = strlen(s) + 1;
    ir_string_chunk* c = g->strings;
    if (!c || c->capacity - c->used < len) {
        // A new chunk; the rest of the old one stays unused (less than the string).
        size_t capacity = len > kStringChunkBytes ? len : kStringChunkBytes;
        if (capacity > SIZE_MAX - sizeof(ir_string_chunk)) return nullptr;
        c = static_cast<ir_string_chunk*>(cvml_mem_alloc(sizeof(ir_string_chunk) + capacity));
        if (!c) return nullptr;
        c->prev = g->strings;
        c->used = 0;
        c->capacity = capacity;
        g->strings = c;
    }
    char* copy = chunk_data(c) + c->used;
    memcpy(copy, s, len);
    c->used += len;
    return copy;
}

void ir_graph_unstrdup(ir_graph* g, char* s) {
    ir_string_chunk* c = g->strings;
    if (!c || !s) return;
    uintptr_t top = reinterpret_cast<uintptr_t>(chunk_data(c) + c->used);
    uintptr_t at = reinterpret_cast<uintptr_t>(s);
    size_t len = strlen(s) + 1;
    if (at < reinterpret_cast<uintptr_t>(chunk_data(c)) || at + len != top) return;
    c->used -= len;
    if (c->used == 0) {
        g->strings = c->prev;
        cvml_mem_free(c);
    }
}

ir_graph* ir_graph_create(void) {
    ir_graph* g = static_cast<ir_graph*>(cvml_mem_calloc(1, sizeof(ir_graph)));
    if (!g) return nullptr;
    g->postprocess = ir_strdup("");
    if (!g->postprocess) {
        cvml_mem_free(g);
        return nullptr;
    }
    return g;
}

/* Whether p lies in the block of `count` items of `size` bytes at `slab`. */
static bool in_slab(const void* p, const void* slab, int32_t count, size_t size) {
    uintptr_t at = reinterpret_cast<uintptr_t>(p), begin = reinterpret_cast<uintptr_t>(slab);
    return slab && at >= begin && at < begin + static_cast<size_t>(count) * size;
}

void ir_graph_free_node_struct(ir_graph* g, ir_node* n) {
    if (!in_slab(n, g->node_slab, g->node_slab_count, sizeof(ir_node))) {
        cvml_mem_free(n);
    } else if (n == g->node_slab + g->node_slab_used - 1) {
        --g->node_slab_used;
    }
}

void ir_graph_free_tensor_struct(ir_graph* g, ir_tensor* t) {
    if (!in_slab(t, g->tensor_slab, g->tensor_slab_count, sizeof(ir_tensor))) {
        cvml_mem_free(t);
    } else if (t == g->tensor_slab + g->tensor_slab_used - 1) {
        --g->tensor_slab_used;
    }
}

void ir_node_free_outputs(ir_node* n) {
    if (n->outputs != &n->first_output) cvml_mem_free(n->outputs);
    n->outputs = nullptr;
}

static void release_node(ir_graph* g, ir_node* n) {
    if (n->op && n->op->release_param && n->param) n->op->release_param(n->param);
    cvml_mem_free(n->param);
    cvml_mem_free(n->attrs);
    const bool in_block =
        n->inputs >= g->input_block && n->inputs < g->input_block + g->input_block_count;
    if (!in_block) cvml_mem_free(n->inputs);
    ir_node_free_outputs(n);
    ir_graph_free_node_struct(g, n);
}

static void release_tensor(ir_graph* g, ir_tensor* t) {
    if (t->kind == TENSOR_INPUT) cvml_mem_free(t->data);
    if (!t->const_borrowed) cvml_mem_free(t->const_data);
    ir_graph_free_tensor_struct(g, t);
}

static void release_subgraph(ir_subgraph* s) {
    cvml_mem_free(s->nodes);
    cvml_mem_free(s->inputs);
    cvml_mem_free(s->outputs);
    cvml_mem_free(s->input_buffers);
    cvml_mem_free(s->output_buffers);
    cvml_mem_free(s->output_host);
    cvml_mem_free(s);
}

void ir_graph_release(ir_graph* g) {
    if (!g) return;
    for (int32_t i = 0; i < g->node_count; ++i) release_node(g, g->nodes[i]);
    for (int32_t i = 0; i < g->tensor_count; ++i) release_tensor(g, g->tensors[i]);
    cvml_mem_free(g->node_slab);
    cvml_mem_free(g->tensor_slab);
    cvml_mem_free(g->consumer_block);
    cvml_mem_free(g->input_block);
    for (int32_t i = 0; i < g->subgraph_count; ++i) release_subgraph(g->subgraphs[i]);
    cvml_mem_free(g->nodes);
    cvml_mem_free(g->tensors);
    cvml_mem_free(g->subgraphs);
    cvml_mem_free(g->inputs);
    cvml_mem_free(g->outputs);
    cvml_mem_free(g->version);
    cvml_mem_free(g->postprocess);
    cvml_mem_free(g->param_order);
    cvml_mem_free(g->node_time_ns);
    while (g->strings) {
        ir_string_chunk* prev = g->strings->prev;
        cvml_mem_free(g->strings);
        g->strings = prev;
    }
    cvml_mem_free(g);
}

/* Grows an array of pointers geometrically; false when out of memory or past 2^30. */
static bool grow(void*** items, int32_t* capacity, int32_t needed, bool exact = false) {
    if (needed <= *capacity) return true;
    if (needed > (1 << 30)) return false;
    int32_t cap = *capacity ? *capacity : 16;
    while (cap < needed) cap *= 2;
    if (exact) cap = needed;
    void** p =
        static_cast<void**>(cvml_mem_realloc(*items, sizeof(void*) * static_cast<size_t>(cap)));
    if (!p) return false;
    *items = p;
    *capacity = cap;
    return true;
}

int ir_graph_reserve(ir_graph* g, int32_t nodes, int32_t tensors) {
    if (nodes < 0 || tensors < 0 || nodes > (1 << 30) - g->node_count ||
        tensors > (1 << 30) - g->tensor_count)
        return cvml_fail(CVML_ERR_RUNTIME, "graph: %" PRId32 " nodes and %" PRId32 " tensors",
                         nodes, tensors);
    // Each slab is made once; later nodes and tensors are blocks of their own.
    if (nodes > 0 && !g->node_slab) {
        if (!grow(reinterpret_cast<void***>(&g->nodes), &g->node_capacity, g->node_count + nodes,
                  true))
            return cvml_fail_out_of_memory();
        g->node_slab =
            static_cast<ir_node*>(cvml_mem_alloc(sizeof(ir_node) * static_cast<size_t>(nodes)));
        if (!g->node_slab) return cvml_fail_out_of_memory();
        g->node_slab_count = nodes;
    }
    if (tensors > 0 && !g->tensor_slab) {
        if (!grow(reinterpret_cast<void***>(&g->tensors), &g->tensor_capacity,
                  g->tensor_count + tensors, true))
            return cvml_fail_out_of_memory();
        g->tensor_slab = static_cast<ir_tensor*>(
            cvml_mem_alloc(sizeof(ir_tensor) * static_cast<size_t>(tensors)));
        if (!g->tensor_slab) return cvml_fail_out_of_memory();
        g->tensor_slab_count = tensors;
    }
    return CVML_OK;
}

/* A zeroed node or tensor: from its slab while there is room, else a block of its own. */
static ir_node* new_node_struct(ir_graph* g) {
    if (g->node_slab_used == g->node_slab_count)
        return static_cast<ir_node*>(cvml_mem_calloc(1, sizeof(ir_node)));
    ir_node* n = g->node_slab + g->node_slab_used++;
    memset(n, 0, sizeof *n);
    return n;
}

static ir_tensor* new_tensor_struct(ir_graph* g) {
    if (g->tensor_slab_used == g->tensor_slab_count)
        return static_cast<ir_tensor*>(cvml_mem_calloc(1, sizeof(ir_tensor)));
    ir_tensor* t = g->tensor_slab + g->tensor_slab_used++;
    memset(t, 0, sizeof *t);
    return t;
}

int32_t ir_graph_add_tensor(ir_graph* g, const char* name) {
    char* copy = ir_graph_strdup(g, name);
    if (!copy) {
        cvml_fail(CVML_ERR_RUNTIME, "out of memory adding tensor '%s'", name);
        return -1;
    }
    int32_t index = ir_graph_add_tensor_sharing_name(g, copy);
    if (index < 0) ir_graph_unstrdup(g, copy);
    return index;
}

int32_t ir_graph_add_tensor_sharing_name(ir_graph* g, char* name) {
    ir_tensor* t = nullptr;
    if (!grow(reinterpret_cast<void***>(&g->tensors), &g->tensor_capacity, g->tensor_count + 1) ||
        !(t = new_tensor_struct(g))) {
        cvml_fail(CVML_ERR_RUNTIME, "out of memory adding tensor '%s'", name);
        return -1;
    }
    t->name = name;
    t->index = g->tensor_count;
    t->precision = -1;
    t->storage = STORAGE_INT32;
    t->producer = -1;
    t->storage_id = -1;
    g->tensors[g->tensor_count] = t;
    return g->tensor_count++;
}

int32_t ir_graph_add_node(ir_graph* g, const char* name) {
    char* copy = ir_graph_strdup(g, name);
    if (!copy) {
        cvml_fail(CVML_ERR_RUNTIME, "out of memory adding node '%s'", name);
        return -1;
    }
    int32_t index = ir_graph_add_node_sharing_name(g, copy);
    if (index < 0) ir_graph_unstrdup(g, copy);
    return index;
}

int32_t ir_graph_add_node_sharing_name(ir_graph* g, char* name) {
    ir_node* n = nullptr;
    if (!grow(reinterpret_cast<void***>(&g->nodes), &g->node_capacity, g->node_count + 1) ||
        !(n = new_node_struct(g))) {
        cvml_fail(CVML_ERR_RUNTIME, "out of memory adding node '%s'", name);
        return -1;
    }
    n->name = name;
    n->index = g->node_count;
    n->subgraph = -1;
    n->fused_into = IR_RUNS_ITSELF;
    g->nodes[g->node_count] = n;
    return g->node_count++;
}

int ir_node_set_inputs(ir_node* n, const int32_t* tensors, int32_t count) {
    int32_t* p = nullptr;
    if (count > 0) {
        p = static_cast<int32_t*>(cvml_mem_alloc(sizeof(int32_t) * static_cast<size_t>(count)));
        if (!p) return cvml_fail_out_of_memory();
        memcpy(p, tensors, sizeof(int32_t) * static_cast<size_t>(count));
    }
    cvml_mem_free(n->inputs);
    n->inputs = p;
    n->input_count = count;
    return CVML_OK;
}

int ir_node_add_output(ir_graph* g, ir_node* n, int32_t tensor) {
    // Nearly every node has one output: it is held in the node.
    if (n->output_count == 0) {
        ir_node_free_outputs(n);
        n->outputs = &n->first_output;
    } else {
        size_t bytes = sizeof(int32_t) * static_cast<size_t>(n->output_count + 1);
        int32_t* p = static_cast<int32_t*>(n->outputs == &n->first_output
                                               ? cvml_mem_alloc(bytes)
                                               : cvml_mem_realloc(n->outputs, bytes));
        if (!p) return cvml_fail_out_of_memory();
        if (n->outputs == &n->first_output) p[0] = n->first_output;
        n->outputs = p;
    }
    n->outputs[n->output_count] = tensor;
    g->tensors[tensor]->producer = n->index;
    g->tensors[tensor]->producer_output = n->output_count;
    n->output_count++;
    return CVML_OK;
}

int ir_node_add_attr(ir_graph* g, ir_node* n, const char* key, const char* value) {
    ir_attr* p = static_cast<ir_attr*>(
        cvml_mem_realloc(n->attrs, sizeof(ir_attr) * static_cast<size_t>(n->attr_count + 1)));
    if (!p) return cvml_fail_out_of_memory();
    n->attrs = p;
    char* k = ir_graph_strdup(g, key);
    char* v = k ? ir_graph_strdup(g, value) : nullptr;
    if (!k || !v) {
        ir_graph_unstrdup(g, k);
        return cvml_fail_out_of_memory();
    }
    n->attrs[n->attr_count].key = k;
    n->attrs[n->attr_count].value = v;
    n->attr_count++;
    return CVML_OK;
}

const char* ir_node_attr(const ir_node* n, const char* key) {
    for (int32_t i = 0; i < n->attr_count; ++i)
        if (strcmp(n->attrs[i].key, key) == 0) return n->attrs[i].value;
    return nullptr;
}

/* Every tensor's consumers go to one block: counted first, then placed. */
int ir_graph_link(ir_graph* g) {
    for (int32_t i = 0; i < g->tensor_count; ++i) {
        g->tensors[i]->consumers = nullptr;
        g->tensors[i]->consumer_count = 0;
    }
    cvml_mem_free(g->consumer_block);
    g->consumer_block = nullptr;
    size_t total = 0;
    for (int32_t n = 0; n < g->node_count; ++n) {
        const ir_node* node = g->nodes[n];
        for (int32_t k = 0; k < node->input_count; ++k) {
            int32_t ti = node->inputs[k];
            if (ti < 0 || ti >= g->tensor_count)
                return cvml_fail(CVML_ERR_LOGIC,
                                 "node %" PRId32 " '%s': input %" PRId32 " names no tensor", n,
                                 node->name, k);
            ++g->tensors[ti]->consumer_count;
            ++total;
        }
    }
    g->consumer_block = static_cast<int32_t*>(cvml_mem_alloc(sizeof(int32_t) * (total + 1)));
    if (!g->consumer_block) return cvml_fail_out_of_memory();
    int32_t* next = g->consumer_block;
    for (int32_t i = 0; i < g->tensor_count; ++i) {
        ir_tensor* t = g->tensors[i];
        t->consumers = t->consumer_count ? next : nullptr;
        next += t->consumer_count;
        t->consumer_count = 0;
    }
    for (int32_t n = 0; n < g->node_count; ++n) {
        const ir_node* node = g->nodes[n];
        for (int32_t k = 0; k < node->input_count; ++k) {
            ir_tensor* t = g->tensors[node->inputs[k]];
            t->consumers[t->consumer_count++] = n;
        }
    }
    return CVML_OK;
}

int ir_graph_check_topological(const ir_graph* g) {
    for (int32_t n = 0; n < g->node_count; ++n) {
        const ir_node* node = g->nodes[n];
        for (int32_t k = 0; k < node->input_count; ++k) {
            const ir_tensor* t = g->tensors[node->inputs[k]];
            if (t->producer < 0 || t->producer >= n)
                return cvml_fail(CVML_ERR_LOGIC,
                                 "node %" PRId32 " '%s': input %" PRId32
                                 " ('%s') is not produced by an earlier node",
                                 n, node->name, k, t->name);
        }
    }
    return CVML_OK;
}

ir_tensor* ir_graph_find_tensor(const ir_graph* g, const char* name) {
    for (int32_t i = 0; i < g->tensor_count; ++i)
        if (strcmp(g->tensors[i]->name, name) == 0) return g->tensors[i];
    return nullptr;
}

ir_node* ir_graph_find_node(const ir_graph* g, const char* name) {
    for (int32_t i = 0; i < g->node_count; ++i)
        if (strcmp(g->nodes[i]->name, name) == 0) return g->nodes[i];
    return nullptr;
}

int64_t ir_tensor_element_count(const ir_tensor* t) {
    int64_t n = 1;
    for (int32_t i = 0; i < t->ndim; ++i) n *= t->dims[i];
    return n;
}

int32_t ir_const_value(const ir_tensor* t, int64_t i) {
    return ir_storage_load(t->const_data, t->storage, i);
}

int ir_const_alloc(ir_tensor* t) {
    size_t n = static_cast<size_t>(ir_tensor_element_count(t));
    uint8_t storage = t->precision >= 1 && t->precision <= 8 ? STORAGE_INT8 : STORAGE_INT32;
    void* p = cvml_mem_calloc(n * storage + 64, 1);
    if (!p) return cvml_fail(CVML_ERR_RUNTIME, "out of memory for parameter '%s'", t->name);
    if (!t->const_borrowed) cvml_mem_free(t->const_data);
    t->const_data = p;
    t->const_borrowed = 0;
    t->storage = storage;
    return CVML_OK;
}

void ir_const_borrow(ir_tensor* t, const void* data, uint8_t storage) {
    if (!t->const_borrowed) cvml_mem_free(t->const_data);
    t->const_data = const_cast<void*>(data);
    t->const_borrowed = 1;
    t->storage = storage;
}

int ir_const_store(ir_tensor* t, const int32_t* values) {
    int rc = ir_const_alloc(t);
    if (rc || !values) return rc;
    const int64_t n = ir_tensor_element_count(t);
    for (int64_t i = 0; i < n; ++i) ir_storage_store(t->const_data, t->storage, i, values[i]);
    return CVML_OK;
}

int32_t ir_precision_bound(int32_t precision) {
    if (precision <= 1) return 0;
    if (precision >= 32) return INT32_MAX;
    return static_cast<int32_t>((1u << (precision - 1)) - 1u);
}
