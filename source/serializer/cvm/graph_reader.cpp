/* The graph JSON reader: decodes the document (graph_decode.cpp), runs
 * PrepareGraphWithVersion's checks in upstream's order (graph_checks.cpp), builds the
 * IR and verifies it (FORMAT.md §4.1, §5). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/verify.h"
#include "operator/op_def.h"
#include "serializer/cvm/cvm_format.h"
#include "serializer/cvm/graph_file.h"
#include "serializer/cvm/json.h"
#include "serializer/cvm/name_index.h"
#include "utility/error.h"
#include "utility/memory.h"
#include "utility/platform.h"

namespace {

using namespace cvm_graph_file;

/* last[i] = 1 where member i of the object is the last of its key. */
int mark_last_of_each_key(const json_value* o, uint8_t** last) {
    int32_t count = json_count(o);
    *last = static_cast<uint8_t*>(cvml_scratch_calloc(static_cast<size_t>(count) + 1, 1));
    name_entry* entries = static_cast<name_entry*>(
        cvml_scratch_alloc(sizeof(name_entry) * (static_cast<size_t>(count) + 1)));
    if (!*last || !entries) {
        cvml_scratch_free(entries);
        return cvml_fail_out_of_memory();
    }
    for (int32_t i = 0; i < count; ++i) {
        const char* key = json_key_at(o, i);
        entries[i] = {key, strlen(key), i};
    }
    name_index index;
    name_index_init(&index, entries, count);  // sorted by (key, member index)
    for (int32_t k = 0; k < count; ++k) {
        const name_entry& e = index.entries[k];
        const name_entry* next = k + 1 < count ? &index.entries[k + 1] : nullptr;
        if (!next || next->len != e.len || memcmp(next->name, e.name, e.len) != 0)
            (*last)[e.id] = 1;
    }
    name_index_free(&index);
    return CVML_OK;
}

#if CVML_BARE_METAL
/* A bare-metal library has no writer (cvm.cpp), the only reader of a node's attribute
 * strings once graph_prepare_node() has parsed them into its param: there they point
 * into the op_attrs tree while the node is prepared and are dropped after it. */
constexpr bool kKeepAttrStrings = false;
#else
constexpr bool kKeepAttrStrings = true;
#endif

/* Sets the node's attributes to the members of `o` flagged in `last`: copies among the
 * graph's strings, or (kKeepAttrStrings false) pointers into the tree. */
int set_attrs(const json_value* o, const uint8_t* last, ir_graph* g, ir_node* node) {
    int rc = CVML_OK;
    if (kKeepAttrStrings) {
        for (int32_t i = 0; !rc && i < json_count(o); ++i)
            if (last[i]) rc = ir_node_add_attr(g, node, json_key_at(o, i), json_str(json_at(o, i)));
        return rc;
    }
    node->attrs = static_cast<ir_attr*>(
        cvml_scratch_alloc(sizeof(ir_attr) * (static_cast<size_t>(json_count(o)) + 1)));
    if (!node->attrs) return cvml_fail_out_of_memory();
    for (int32_t i = 0; i < json_count(o); ++i)
        if (last[i])
            node->attrs[node->attr_count++] = {const_cast<char*>(json_key_at(o, i)),
                                               const_cast<char*>(json_str(json_at(o, i)))};
    return CVML_OK;
}

/* Drops attributes that point into a tree about to be freed. */
void drop_borrowed_attrs(ir_node* node) {
    if (kKeepAttrStrings) return;
    cvml_scratch_free(node->attrs);
    node->attrs = nullptr;
    node->attr_count = 0;
}

/* Parses an op_attrs string: a JSON object of string values (upstream reads it into
 * a map<string, string>, a later duplicate key replacing an earlier one). `doc` holds
 * its tree, to be freed by the caller once the node is prepared. */
int parse_op_attrs(const char* text, ir_graph* g, ir_node* node, json_doc* doc_out) {
    json_doc& doc = *doc_out;
    int rc = json_parse(text, strlen(text), &doc);
    if (rc) {
        cvml_fail_context(rc, "op_attrs of node %" PRId32 " '%s': ", node->index, node->name);
        return rc;
    }
    const json_value* o = doc.root;
    if (json_type(o) != JSON_OBJECT)
        rc = cvml_fail(CVML_ERR_RUNTIME,
                       "op_attrs of node %" PRId32 " '%s' is %s, expected an object", node->index,
                       node->name, json_type_name(json_type(o)));
    for (int32_t i = 0; !rc && i < json_count(o); ++i) {
        const json_value* m = json_at(o, i);
        const char* key = json_key_at(o, i);
        if (json_type(m) != JSON_STRING) {
            rc = cvml_fail(CVML_ERR_RUNTIME,
                           "op_attrs of node %" PRId32 " '%s': '%s' is not a string", node->index,
                           node->name, key);
            break;
        }
    }
    // A later duplicate wins; found by sorting the keys, so that an attribute string of
    // many repeated keys costs O(n log n), not a search per key.
    uint8_t* last = nullptr;
    if (!rc) rc = mark_last_of_each_key(o, &last);
    if (!rc) rc = set_attrs(o, last, g, node);
    cvml_scratch_free(last);
    return rc;
}

/* add_node's part for an operator node: its inputs, operator and attributes. */
int add_op_node(const file_graph* f, int32_t n, const char* op_attrs, ir_graph* g, ir_node* node) {
    // The input count is checked by graph_prepare_node; the tensors come later, into the
    // graph's block of every node's inputs (add_nodes), in file order.
    node->inputs = g->input_block + f->nodes[n].inputs;
    node->input_count = f->nodes[n].input_count;
    // Op::Get comes before the attribute string is read (an unknown operator with
    // broken attributes is "not registered").
    char stripped[128];
    op_strip_suffix(node->op_name, stripped, sizeof stripped);
    if (!op_registry_find(stripped)) return graph_node_error(node, op_registry_missing(stripped));
    json_doc attrs_doc;
    int rc = parse_op_attrs(op_attrs, g, node, &attrs_doc);
    if (!rc) rc = graph_prepare_node(g, node);
    drop_borrowed_attrs(node);
    json_free(&attrs_doc);
    return rc;
}

/* Node n of the file as an IR node with its operator and attributes (3.3); op_attrs
 * is its entry of the op_attrs list. */
int add_node(const file_graph* f, int32_t n, const char* op_attrs, ir_graph* g) {
    // CVML_LOAD_NO_NAMES: operator nodes (and their outputs) share one "" (variables
    // keep theirs: params and the input are bound by name).
    static char no_name[] = "";
    int32_t ni = g->no_names && !f->nodes[n].is_var ? ir_graph_add_node_sharing_name(g, no_name)
                                                    : ir_graph_add_node(g, node_name(f, n));
    if (ni < 0) return CVML_ERR_RUNTIME;
    ir_node* node = g->nodes[ni];
    if (f->nodes[n].is_var) return CVML_OK;
    const char* func_name = node_func_name(f, n);
    // Without attribute strings (bare metal) the node keeps no operator name as
    // written either: the reader's copy serves until the node has its operator, and
    // after that only the CVM writer (not built there) would read it.
    node->op_name = kKeepAttrStrings ? ir_graph_strdup(g, func_name ? func_name : "")
                                     : const_cast<char*>(func_name ? func_name : "");
    if (!node->op_name) return cvml_fail_out_of_memory();
    int rc = add_op_node(f, n, op_attrs, g, node);
    if (!kKeepAttrStrings) node->op_name = nullptr;
    return rc;
}

int add_nodes(const file_graph* f, ir_graph* g) {
    int rc = ir_graph_reserve(g, f->node_count, 0);
    // Every node's inputs in one block: a heap block per node costs a microcontroller
    // 8 bytes or more of its allocator's, and fragments its heap.
    g->input_block = static_cast<int32_t*>(cvml_mem_calloc(f->inputs_used + 1, sizeof(int32_t)));
    g->input_block_count = static_cast<int32_t>(f->inputs_used);
    if (!rc && !g->input_block) rc = cvml_fail_out_of_memory();
    string_reader op_attrs;
    string_reader_start(&op_attrs, f, &f->op_attrs);
    for (int32_t n = 0; n < f->node_count && !rc; ++n) {
        const char* text = string_reader_next(&op_attrs, &rc);
        if (!rc) rc = add_node(f, n, text, g);
    }
    json_free(&op_attrs.doc);
    return rc;
}

/* PrepareGraphWithVersion, then the IR. */
int build(file_graph* f, ir_graph* g) {
    int rc = check_arg_names(f);
    if (rc) return rc;
    if (f->op_attrs.count != f->node_count)
        return cvml_fail(CVML_ERR_LOGIC,
                         "graph attribute op_attrs size: %" PRId32 ", expected %" PRId32,
                         f->op_attrs.count, f->node_count);
    rc = add_nodes(f, g);
    if (rc) return rc;
    // The nodes have their names: the file's copies go before the tensors come (the
    // loader's peak is here).
    cvml_scratch_free(f->strings);
    f->strings = nullptr;
    f->strings_used = f->strings_capacity = 0;

    // Entries (3.4): row pointers recomputed from the registry's output counts.
    int32_t* row_ptr = static_cast<int32_t*>(
        cvml_scratch_alloc(sizeof(int32_t) * (static_cast<size_t>(f->node_count) + 1)));
    if (!row_ptr) return cvml_fail_out_of_memory();
    int64_t entries = 0;
    for (int32_t n = 0; n < f->node_count; ++n) {
        row_ptr[n] = static_cast<int32_t>(entries);
        entries += g->nodes[n]->op ? g->nodes[n]->op->num_outputs : 1;
    }
    row_ptr[f->node_count] = static_cast<int32_t>(entries);

    if (f->storage_id.count != entries)
        rc =
            cvml_fail(CVML_ERR_LOGIC, "graph attribute storage_id size: %" PRId32 ", expected %lld",
                      f->storage_id.count, static_cast<long long>(entries));
    for (int32_t i = 0; !rc && i < f->storage_id.count; ++i)
        if (f->storage_id.values[i] < 0)
            rc = cvml_fail(CVML_ERR_LOGIC,
                           "storage id of entry %" PRId32 " should not be less than 0, but %lld", i,
                           static_cast<long long>(f->storage_id.values[i]));
    if (!rc) rc = check_storage_reuse(f, g);
    if (!rc) rc = check_shapes_and_precisions(f, static_cast<int32_t>(entries));
    if (!rc) rc = check_version(f, row_ptr);

    // Topological order (3.8) with the recomputed row pointers.
    for (int32_t n = 0; !rc && n < f->node_count; ++n) {
        const entry* in = node_inputs(f, n);
        for (int32_t k = 0; !rc && k < f->nodes[n].input_count; ++k) {
            int64_t src = in[k].node, index = in[k].index;
            int64_t eid = src >= 0 && src < f->node_count && index >= 0 && index <= UINT32_MAX
                              ? row_ptr[src] + index
                              : INT64_MAX;
            if (eid >= row_ptr[n])
                rc = graph_node_error(
                    g->nodes[n],
                    cvml_fail(CVML_ERR_LOGIC,
                              "input %" PRId32 " [%lld, %lld]: the graph does not follow the "
                              "topological order",
                              k, static_cast<long long>(src), static_cast<long long>(index)));
        }
    }

    // Tensors, one per entry: tensor index == entry id.
    if (!rc) rc = ir_graph_reserve(g, 0, static_cast<int32_t>(entries));
    for (int32_t n = 0; !rc && n < f->node_count; ++n) {
        ir_node* node = g->nodes[n];
        int32_t outs = row_ptr[n + 1] - row_ptr[n];
        for (int32_t o = 0; !rc && o < outs; ++o) {
            // The first output is named as its node: the name is shared (a name of
            // 256 bytes or more is cut to 255, as the others are).
            char name[256];
            int32_t ti;
            if (o == 0 && strlen(node->name) < sizeof name) {
                ti = ir_graph_add_tensor_sharing_name(g, node->name);
            } else {
                if (o == 0)
                    cvml_strlcpy(name, node->name, sizeof name);
                else
                    snprintf(name, sizeof name, "%s:%" PRId32, node->name, o);
                ti = ir_graph_add_tensor(g, name);
            }
            if (ti < 0) {
                rc = CVML_ERR_RUNTIME;
                break;
            }
            ir_tensor* t = g->tensors[ti];
            const int32_t first = f->shape.offsets[ti];
            t->ndim = f->shape.offsets[ti + 1] - first;
            for (int32_t d = 0; d < t->ndim; ++d) t->dims[d] = shape_dim(f->shape, first + d);
            t->precision = static_cast<int32_t>(f->precision.values[ti]);
            t->storage_id = static_cast<int32_t>(f->storage_id.values[ti]);
            t->kind = !node->op ? (strcmp(node->name, "data") == 0 ? TENSOR_INPUT : TENSOR_CONST)
                                : TENSOR_VAR;
            if (t->kind == TENSOR_CONST) t->file_bits = 32;
            rc = ir_node_add_output(g, node, ti);
        }
        if (!rc && node->op) {
            const entry* in = node_inputs(f, n);
            for (int32_t k = 0; k < f->nodes[n].input_count; ++k)
                node->inputs[k] = row_ptr[in[k].node] + static_cast<int32_t>(in[k].index);
        }
    }

    // Heads: an out-of-range head is upstream UB; refuse it.
    if (!rc && f->heads.count > 0) {
        g->outputs = static_cast<int32_t*>(
            cvml_mem_alloc(sizeof(int32_t) * static_cast<size_t>(f->heads.count)));
        if (!g->outputs) rc = cvml_fail_out_of_memory();
        for (int32_t i = 0; !rc && i < f->heads.count; ++i) {
            int64_t src = f->heads.values[i].node, index = f->heads.values[i].index;
            int64_t eid = src >= 0 && src < f->node_count && index >= 0 && index <= UINT32_MAX
                              ? row_ptr[src] + index
                              : INT64_MAX;
            if (eid >= entries)
                rc = cvml_fail(CVML_ERR_LOGIC, "head %" PRId32 " [%lld, %lld] names no entry", i,
                               static_cast<long long>(src), static_cast<long long>(index));
            else
                g->outputs[g->output_count++] = static_cast<int32_t>(eid);
        }
    }
    cvml_scratch_free(row_ptr);
    return rc;
}

int set_model_facts(const file_graph* f, ir_graph* g) {
    if (f->version) {
        g->version = ir_strdup(f->version);
        if (!g->version) return cvml_fail_out_of_memory();
    }
    if (f->postprocess) {
        char* p = ir_strdup(f->postprocess);
        if (!p) return cvml_fail_out_of_memory();
        cvml_mem_free(g->postprocess);
        g->postprocess = p;
    }
    return CVML_OK;
}

/* Duplicate variable names pass upstream's arg_nodes check in cvm_1.1.0 (arg_nodes is
 * optional there); the second variable of a name would never receive its value
 * (params) or its input (data), so the model is refused. */
int check_variable_names(const ir_graph* g) {
    name_entry* entries = static_cast<name_entry*>(
        cvml_scratch_alloc(sizeof(name_entry) * (static_cast<size_t>(g->node_count) + 1)));
    if (!entries) return cvml_fail_out_of_memory();
    int32_t count = 0;
    for (int32_t i = 0; i < g->node_count; ++i)
        if (!g->nodes[i]->op) entries[count++] = {g->nodes[i]->name, strlen(g->nodes[i]->name), i};
    int32_t first = 0, second = 0;
    int duplicate = name_entries_first_duplicate(entries, count, &first, &second);
    if (duplicate)
        return cvml_fail(CVML_ERR_LOGIC,
                         "variable name %s is used by nodes %" PRId32 " and %" PRId32,
                         g->nodes[second]->name, first, second);
    return CVML_OK;
}

}  // namespace

int cvm_read_graph(const char* json, size_t size, ir_graph* g) {
    // The syntax of the whole first (its errors come before any other), then the
    // document piece by piece.
    int rc = json_check(json, size);
    file_graph f;
    memset(&f, 0, sizeof f);
    f.text = json;
    f.size = size;
    if (!rc) rc = decode(&f);
    if (!rc) rc = build(&f, g);
    if (!rc) rc = set_model_facts(&f, g);
    free_file_graph(&f);
    if (!rc) rc = check_variable_names(g);
    if (!rc) {
        for (int32_t i = 0; i < g->tensor_count && !rc; ++i) {
            if (g->tensors[i]->kind != TENSOR_INPUT) continue;
            int32_t* p = static_cast<int32_t*>(cvml_mem_alloc(sizeof(int32_t)));
            if (!p) return cvml_fail_out_of_memory();
            p[0] = i;
            cvml_mem_free(g->inputs);
            g->inputs = p;
            g->input_count = 1;
        }
    }
    // CheckAttr: shapes (each must equal the file's), precisions, then gas.
    if (!rc) rc = ir_graph_link(g);
    if (!rc) rc = graph_infer_shapes(g, 1);
    if (!rc) rc = graph_infer_precisions(g);
    if (!rc) rc = graph_compute_gas(g);
    if (!rc) g->verified = 1;
    return rc;
}
