/* The model accessors of the plugin ABI (cvml_ir_api in api/cvml_plugin.h): what a
 * plugin may read of graphs, nodes, tensors and subgraphs, over the IR's own structs,
 * which stay opaque to it. Every accessor tolerates an index out of range (NULL or 0),
 * never a NULL handle: the library only hands plugins valid ones. */
#include "module/plugin_ir.h"

#include <string.h>

#include "graph/graph.h"
#include "operator/op_def.h"

namespace {

bool in_range(int32_t index, int32_t count) {
    return index >= 0 && index < count;
}

int32_t graph_node_count(const ir_graph* g) {
    return g->node_count;
}
const ir_node* graph_node(const ir_graph* g, int32_t i) {
    return in_range(i, g->node_count) ? g->nodes[i] : nullptr;
}
int32_t graph_tensor_count(const ir_graph* g) {
    return g->tensor_count;
}
ir_tensor* graph_tensor(const ir_graph* g, int32_t i) {
    return in_range(i, g->tensor_count) ? g->tensors[i] : nullptr;
}

/* Tensor `index` of the graph, NULL when the index is not one of its tensors. */
ir_tensor* tensor_at(const ir_graph* g, int32_t index) {
    return graph_tensor(g, index);
}

int32_t subgraph_node_count(const ir_subgraph* sg) {
    return sg->node_count;
}
const ir_node* subgraph_node(const ir_graph* g, const ir_subgraph* sg, int32_t i) {
    return in_range(i, sg->node_count) ? graph_node(g, sg->nodes[i]) : nullptr;
}
int32_t subgraph_input_count(const ir_subgraph* sg) {
    return sg->input_count;
}
ir_tensor* subgraph_input(const ir_graph* g, const ir_subgraph* sg, int32_t i) {
    return in_range(i, sg->input_count) ? tensor_at(g, sg->inputs[i]) : nullptr;
}
int32_t subgraph_output_count(const ir_subgraph* sg) {
    return sg->output_count;
}
ir_tensor* subgraph_output(const ir_graph* g, const ir_subgraph* sg, int32_t i) {
    return in_range(i, sg->output_count) ? tensor_at(g, sg->outputs[i]) : nullptr;
}
void* subgraph_input_buffer(const ir_subgraph* sg, int32_t i) {
    return sg->input_buffers && in_range(i, sg->input_count) ? sg->input_buffers[i] : nullptr;
}
void* subgraph_output_buffer(const ir_subgraph* sg, int32_t i) {
    return sg->output_buffers && in_range(i, sg->output_count) ? sg->output_buffers[i] : nullptr;
}
void* subgraph_state(const ir_subgraph* sg) {
    return sg->device_state;
}
void subgraph_set_state(ir_subgraph* sg, void* state) {
    sg->device_state = state;
}

const char* node_name(const ir_node* node) {
    return node->name;
}
const char* node_op(const ir_node* node) {
    return node->op ? node->op->name : nullptr;
}
int32_t node_index(const ir_node* node) {
    return node->index;
}
int32_t node_input_count(const ir_node* node) {
    return node->input_count;
}
ir_tensor* node_input(const ir_graph* g, const ir_node* node, int32_t i) {
    return in_range(i, node->input_count) ? tensor_at(g, node->inputs[i]) : nullptr;
}
int32_t node_output_count(const ir_node* node) {
    return node->output_count;
}
ir_tensor* node_output(const ir_graph* g, const ir_node* node, int32_t i) {
    return in_range(i, node->output_count) ? tensor_at(g, node->outputs[i]) : nullptr;
}

/* The operator's attribute table entry `name`, NULL when it has none such (or the node
 * has no parsed parameters). */
const attr_spec* find_attr(const ir_node* node, const char* name) {
    if (!node->op || !node->param || !name) return nullptr;
    for (int32_t i = 0; i < node->op->attr_count; ++i)
        if (strcmp(node->op->attrs[i].name, name) == 0) return &node->op->attrs[i];
    return nullptr;
}

int32_t node_param_ints(const ir_node* node, const char* name, int64_t* values, int32_t capacity) {
    const attr_spec* spec = find_attr(node, name);
    if (!spec) return -1;
    const char* field = static_cast<const char*>(node->param) + spec->offset;
    int64_t one = 0;
    const int64_t* list = &one;
    int32_t count = 1;
    switch (spec->type) {
        case ATTR_INT:
            one = *reinterpret_cast<const int32_t*>(field);
            break;
        case ATTR_BOOL:
            one = *reinterpret_cast<const uint8_t*>(field);
            break;
        case ATTR_OPT_INT: {
            const attr_opt_int* v = reinterpret_cast<const attr_opt_int*>(field);
            count = v->present ? 1 : 0;
            one = v->value;
            break;
        }
        case ATTR_TUPLE: {
            if (node->op->pair_tuples) {
                // Only two values are kept; a graph with another count fails to load.
                const attr_pair* v = reinterpret_cast<const attr_pair*>(field);
                count = v->count;
                list = v->values;
                if (capacity > ATTR_PAIR_KEEP) capacity = ATTR_PAIR_KEEP;
                break;
            }
            const attr_tuple* v = reinterpret_cast<const attr_tuple*>(field);
            count = v->count;
            list = v->values;
            break;
        }
        default:
            return -1;
    }
    for (int32_t i = 0; values && i < count && i < capacity; ++i) values[i] = list[i];
    return count;
}

const char* node_param_string(const ir_node* node, const char* name) {
    const attr_spec* spec = find_attr(node, name);
    if (!spec || spec->type != ATTR_STRING) return nullptr;
    return reinterpret_cast<const attr_string*>(static_cast<const char*>(node->param) +
                                                spec->offset)
        ->value;
}

int node_step(const ir_graph* g, const ir_node* node, int32_t input, cvml_step* step) {
    return op_node_step(g, node, input, step);
}

const char* tensor_name(const ir_tensor* t) {
    return t->name;
}
int32_t tensor_index(const ir_tensor* t) {
    return t->index;
}
int32_t tensor_ndim(const ir_tensor* t) {
    return t->ndim;
}
int64_t tensor_dim(const ir_tensor* t, int32_t axis) {
    return in_range(axis, t->ndim) ? t->dims[axis] : 0;
}
int64_t tensor_element_count(const ir_tensor* t) {
    return ir_tensor_element_count(t);
}
int32_t tensor_precision(const ir_tensor* t) {
    return t->precision;
}
int tensor_is_const(const ir_tensor* t) {
    return t->kind == TENSOR_CONST;
}
void* tensor_data(const ir_tensor* t) {
    return t->data;
}
void tensor_set_data(ir_tensor* t, void* data) {
    t->data = data;
}
int32_t tensor_const_value(const ir_tensor* t, int64_t i) {
    return t->kind == TENSOR_CONST && i >= 0 && i < ir_tensor_element_count(t)
               ? ir_const_value(t, i)
               : 0;
}
int32_t tensor_storage(const ir_tensor* t) {
    return t->storage ? static_cast<int32_t>(t->storage) : static_cast<int32_t>(STORAGE_INT32);
}

int graph_profiling(const ir_graph* g) {
    return g->profiling && g->node_time_ns ? 1 : 0;
}
void node_set_time(const ir_graph* g, const ir_node* node, uint64_t nanoseconds) {
    if (g->profiling && g->node_time_ns && node->index >= 0 && node->index < g->node_count)
        g->node_time_ns[node->index] = nanoseconds;
}

const cvml_ir_api kIrApi = {
    sizeof(cvml_ir_api),
    CVML_PLUGIN_ABI_VERSION,
    graph_node_count,
    graph_node,
    graph_tensor_count,
    graph_tensor,
    subgraph_node_count,
    subgraph_node,
    subgraph_input_count,
    subgraph_input,
    subgraph_output_count,
    subgraph_output,
    subgraph_input_buffer,
    subgraph_output_buffer,
    subgraph_state,
    subgraph_set_state,
    node_name,
    node_op,
    node_index,
    node_input_count,
    node_input,
    node_output_count,
    node_output,
    node_param_ints,
    node_param_string,
    node_step,
    tensor_name,
    tensor_index,
    tensor_ndim,
    tensor_dim,
    tensor_element_count,
    tensor_precision,
    tensor_is_const,
    tensor_data,
    tensor_set_data,
    tensor_const_value,
    tensor_storage,
    graph_profiling,
    node_set_time,
};

}  // namespace

const cvml_ir_api* plugin_ir_api(void) {
    return &kIrApi;
}
