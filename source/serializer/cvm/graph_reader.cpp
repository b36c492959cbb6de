/* The graph JSON reader: decodes the document in upstream's order (dmlc reads the
 * members one after the other, so the first bad member in document order decides
 * the error), then runs PrepareGraphWithVersion's checks in its order, builds the IR
 * and verifies it (FORMAT.md §4.1, §5). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/verify.h"
#include "module/registry.h"
#include "operator/op_def.h"
#include "serializer/cvm/cvm_format.h"
#include "serializer/cvm/json.h"
#include "serializer/cvm/name_index.h"
#include "utility/error.h"
#include "utility/platform.h"
#include "utility/memory.h"

namespace {

constexpr int64_t kMaxDim = int64_t{1} << 24;
constexpr int64_t kMaxSize = int64_t{1} << 30;

struct file_node {
    const char* op;
    const char* name;
    const json_value* inputs; /* validated: arrays of 2 or 3 integers */
    const char* func_name;    /* NULL when the node has no attrs */
    bool has_op, has_name, has_inputs;
    bool is_var;
};

struct file_graph {
    file_node* nodes;
    int32_t node_count;
    const json_value* arg_nodes;    /* integers */
    const json_value* node_row_ptr; /* integers */
    const json_value* heads;        /* entries */
    const json_value* storage_id;   /* integers */
    const json_value* shape;        /* arrays of integers */
    const json_value* precision;    /* integers */
    const json_value* op_attrs;     /* strings */
    const json_value* dltype;       /* strings */
    const json_value* device_index; /* integers */
    const char* version;
    const char* postprocess;
};

int type_error(const json_value* v, const char* what, const char* expected) {
    return cvml_fail(CVML_ERR_RUNTIME,
                     "graph JSON: %s at byte %" CVML_PRIuSIZE " is %s, expected %s", what,
                     json_offset(v), json_type_name(json_type(v)), expected);
}

/* dmlc reads ints with a stream: anything but an integer is a LOG(FATAL). */
int require_int_array(const json_value* v, const char* what) {
    if (json_type(v) != JSON_ARRAY) return type_error(v, what, "an array");
    for (int32_t i = 0; i < json_count(v); ++i)
        if (!json_is_int(json_at(v, i))) return type_error(json_at(v, i), what, "an integer");
    return CVML_OK;
}

int require_int32_array(const json_value* v, const char* what) {
    int rc = require_int_array(v, what);
    for (int32_t i = 0; !rc && i < json_count(v); ++i)
        if (json_int(json_at(v, i)) < INT32_MIN || json_int(json_at(v, i)) > INT32_MAX)
            rc = cvml_fail(CVML_ERR_RUNTIME,
                           "graph JSON: %s[%" PRId32 "] = %lld does not fit an int", what, i,
                           static_cast<long long>(json_int(json_at(v, i))));
    return rc;
}

int require_string_array(const json_value* v, const char* what) {
    if (json_type(v) != JSON_ARRAY) return type_error(v, what, "an array");
    for (int32_t i = 0; i < json_count(v); ++i)
        if (json_type(json_at(v, i)) != JSON_STRING)
            return type_error(json_at(v, i), what, "a string");
    return CVML_OK;
}

/* NodeEntry::Load: [node_id, index(, version)], fewer or more items are VERIFY
 * failures (logic), non-integers are stream failures (runtime). */
int require_entries(const json_value* v, const char* what) {
    if (json_type(v) != JSON_ARRAY) return type_error(v, what, "an array");
    for (int32_t i = 0; i < json_count(v); ++i) {
        const json_value* e = json_at(v, i);
        if (json_type(e) != JSON_ARRAY) return type_error(e, what, "an array [node, index]");
        for (int32_t k = 0; k < json_count(e) && k < 3; ++k)
            if (!json_is_int(json_at(e, k))) return type_error(json_at(e, k), what, "an integer");
        if (json_count(e) < 2 || json_count(e) > 3)
            return cvml_fail(CVML_ERR_LOGIC,
                             "graph JSON: %s entry %" PRId32 " has %" PRId32
                             " items, expected 2 or 3",
                             what, i, json_count(e));
    }
    return CVML_OK;
}

bool key_is(const char* member_key, const char* key) {
    return strcmp(member_key, key) == 0;
}

int decode_node_attrs(const json_value* v, file_node* n, int32_t index) {
    if (json_type(v) != JSON_OBJECT) return type_error(v, "node attrs", "an object");
    bool have_func = false;
    for (int32_t i = 0; i < json_count(v); ++i) {
        const json_value* m = json_at(v, i);
        const char* key = json_key_at(v, i);
        if (json_type(m) != JSON_STRING) return type_error(m, "node attribute value", "a string");
        if (key_is(key, "func_name")) {
            n->func_name = json_str(m);
            have_func = true;
        } else if (!key_is(key, "num_inputs") && !key_is(key, "num_outputs") &&
                   !key_is(key, "op_attrs") && !key_is(key, "flatten_data")) {
            return cvml_fail(CVML_ERR_RUNTIME,
                             "node %" PRId32 ": node attributes do not support key '%s'", index,
                             key);
        }
    }
    if (!have_func)
        return cvml_fail(CVML_ERR_LOGIC, "node %" PRId32 ": attrs without func_name", index);
    return CVML_OK;
}

int decode_node(const json_value* v, file_node* n, int32_t index) {
    if (json_type(v) != JSON_OBJECT) return type_error(v, "node", "an object");
    for (int32_t i = 0; i < json_count(v); ++i) {
        const json_value* m = json_at(v, i);
        const char* key = json_key_at(v, i);
        int rc = CVML_OK;
        if (key_is(key, "op")) {
            if (json_type(m) != JSON_STRING) return type_error(m, "node op", "a string");
            n->op = json_str(m);
            n->has_op = true;
            if (strcmp(n->op, "cvm_op") != 0 && strcmp(n->op, "null") != 0)
                return cvml_fail(CVML_ERR_LOGIC,
                                 "node %" PRId32
                                 ": CVM executor only supported cvm_op or parameter vs. %s",
                                 index, n->op);
        } else if (key_is(key, "name")) {
            if (json_type(m) != JSON_STRING) return type_error(m, "node name", "a string");
            n->name = json_str(m);
            n->has_name = true;
        } else if (key_is(key, "inputs")) {
            rc = require_entries(m, "node inputs");
            n->inputs = m;
            n->has_inputs = true;
        } else if (key_is(key, "attrs")) {
            rc = decode_node_attrs(m, n, index);
        } else if (key_is(key, "precision")) {
            if (!json_is_int(m)) return type_error(m, "node precision", "an integer");
        } else {
            return cvml_fail(CVML_ERR_RUNTIME, "node %" PRId32 ": node do not support key '%s'",
                             index, key);
        }
        if (rc) return rc;
    }
    if (!n->has_op || !n->has_name || !n->has_inputs)
        return cvml_fail(CVML_ERR_LOGIC, "node %" PRId32 ": missing %s", index,
                         !n->has_op     ? "op"
                         : !n->has_name ? "name"
                                        : "inputs");
    n->is_var = strcmp(n->op, "null") == 0;
    return CVML_OK;
}

/* One graph attribute: ["tag", values]. */
int decode_graph_attr(const json_value* m, const char* key, const char* tag,
                      const json_value** out) {
    if (json_type(m) != JSON_ARRAY)
        return type_error(m, "graph attribute", "an array [type, values]");
    if (json_count(m) < 1)
        return cvml_fail(CVML_ERR_LOGIC, "graph attribute %s: missing type tag", key);
    const json_value* t = json_at(m, 0);
    if (json_type(t) != JSON_STRING) return type_error(t, "graph attribute type", "a string");
    bool is_dtype = key_is(key, "dtype");
    if (!is_dtype && strcmp(json_str(t), tag) != 0)
        return cvml_fail(CVML_ERR_LOGIC, "graph attribute %s: type %s, expected %s", key,
                         json_str(t), tag);
    if (json_count(m) < 2)
        return cvml_fail(CVML_ERR_LOGIC, "graph attribute %s: missing values", key);
    const json_value* v = json_at(m, 1);
    int rc = CVML_OK;
    if (is_dtype) {
        // Upstream skips dtype: list_int is read and dropped; list_str tries to read a
        // number (and fails on a list); anything else cannot be skipped.
        if (strcmp(json_str(t), "list_int") == 0)
            rc = require_int32_array(v, "dtype");
        else if (strcmp(json_str(t), "list_str") == 0)
            rc = json_is_int(v) && json_int(v) >= 0 ? CVML_OK
                                                    : type_error(v, "dtype (list_str)", "a number");
        else
            rc =
                cvml_fail(CVML_ERR_RUNTIME, "cannot skip graph attr dtype of type %s", json_str(t));
    } else if (strcmp(tag, "list_int") == 0) {
        rc = require_int32_array(v, key);
    } else if (strcmp(tag, "list_str") == 0) {
        rc = require_string_array(v, key);
    } else {  // list_shape
        if (json_type(v) != JSON_ARRAY) return type_error(v, "shape", "an array");
        for (int32_t i = 0; i < json_count(v) && !rc; ++i)
            rc = require_int_array(json_at(v, i), "shape");
    }
    if (rc) return rc;
    if (json_count(m) > 2)
        return cvml_fail(CVML_ERR_LOGIC, "graph attribute %s: more than [type, values]", key);
    *out = v;
    return CVML_OK;
}

int decode_graph_attrs(const json_value* v, file_graph* f) {
    if (json_type(v) != JSON_OBJECT) return type_error(v, "attrs", "an object");
    const json_value* skipped = nullptr;
    for (int32_t i = 0; i < json_count(v); ++i) {
        const json_value* m = json_at(v, i);
        const char* key = json_key_at(v, i);
        int rc;
        if (key_is(key, "dltype"))
            rc = decode_graph_attr(m, key, "list_str", &f->dltype);
        else if (key_is(key, "storage_id"))
            rc = decode_graph_attr(m, key, "list_int", &f->storage_id);
        else if (key_is(key, "shape"))
            rc = decode_graph_attr(m, key, "list_shape", &f->shape);
        else if (key_is(key, "device_index"))
            rc = decode_graph_attr(m, key, "list_int", &f->device_index);
        else if (key_is(key, "precision"))
            rc = decode_graph_attr(m, key, "list_int", &f->precision);
        else if (key_is(key, "op_attrs"))
            rc = decode_graph_attr(m, key, "list_str", &f->op_attrs);
        else if (key_is(key, "dtype"))
            rc = decode_graph_attr(m, key, "", &skipped);
        else
            rc = cvml_fail(CVML_ERR_RUNTIME, "graph attribute %s not supported", key);
        if (rc) return rc;
    }
    if (!f->storage_id || !f->shape || !f->op_attrs)
        return cvml_fail(CVML_ERR_LOGIC, "graph attrs: missing %s",
                         !f->storage_id ? "storage_id"
                         : !f->shape    ? "shape"
                                        : "op_attrs");
    return CVML_OK;
}

int decode(const json_value* root, file_graph* f) {
    if (json_type(root) != JSON_OBJECT) return type_error(root, "the graph", "an object");
    bool have_nodes = false, have_heads = false, have_attrs = false;
    for (int32_t i = 0; i < json_count(root); ++i) {
        const json_value* m = json_at(root, i);
        const char* key = json_key_at(root, i);
        int rc = CVML_OK;
        if (key_is(key, "nodes")) {
            if (json_type(m) != JSON_ARRAY) return type_error(m, "nodes", "an array");
            cvml_mem_free(f->nodes);
            f->nodes = static_cast<file_node*>(
                cvml_mem_calloc(static_cast<size_t>(json_count(m)) + 1, sizeof(file_node)));
            if (!f->nodes) return cvml_fail(CVML_ERR_RUNTIME, "out of memory");
            f->node_count = json_count(m);
            for (int32_t k = 0; k < json_count(m) && !rc; ++k)
                rc = decode_node(json_at(m, k), &f->nodes[k], k);
            have_nodes = true;
        } else if (key_is(key, "arg_nodes")) {
            rc = require_int_array(m, "arg_nodes");
            f->arg_nodes = m;
        } else if (key_is(key, "node_row_ptr")) {
            rc = require_int_array(m, "node_row_ptr");
            f->node_row_ptr = m;
        } else if (key_is(key, "heads")) {
            rc = require_entries(m, "heads");
            f->heads = m;
            have_heads = true;
        } else if (key_is(key, "attrs")) {
            rc = decode_graph_attrs(m, f);
            have_attrs = true;
        } else if (key_is(key, "version")) {
            if (json_type(m) != JSON_STRING) return type_error(m, "version", "a string");
            f->version = json_str(m);
        } else if (key_is(key, "postprocess")) {
            if (json_type(m) != JSON_STRING) return type_error(m, "postprocess", "a string");
            f->postprocess = json_str(m);
        } else {
            return cvml_fail(CVML_ERR_RUNTIME, "key '%s' in json is not supported", key);
        }
        if (rc) return rc;
    }
    if (!have_nodes || !have_heads || !have_attrs)
        return cvml_fail(CVML_ERR_LOGIC, "graph JSON: missing %s",
                         !have_nodes   ? "nodes"
                         : !have_heads ? "heads"
                                       : "attrs");
    return CVML_OK;
}

int64_t item(const json_value* list, int32_t i) {
    return json_int(json_at(list, i));
}

/* last[i] = 1 where member i of the object is the last of its key. */
int mark_last_of_each_key(const json_value* o, uint8_t** last) {
    int32_t count = json_count(o);
    *last = static_cast<uint8_t*>(cvml_mem_calloc(static_cast<size_t>(count) + 1, 1));
    name_entry* entries = static_cast<name_entry*>(
        cvml_mem_alloc(sizeof(name_entry) * (static_cast<size_t>(count) + 1)));
    if (!*last || !entries) {
        cvml_mem_free(entries);
        return cvml_fail(CVML_ERR_RUNTIME, "out of memory");
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

/* Parses an op_attrs string: a JSON object of string values (upstream reads it into
 * a map<string, string>, a later duplicate key replacing an earlier one). */
int parse_op_attrs(const char* text, ir_node* node) {
    json_doc doc;
    int rc = json_parse(text, strlen(text), &doc);
    if (rc) {
        cvml_fail_context(rc, "op_attrs of node %" PRId32 " '%s': ", node->index, node->name);
        json_free(&doc);
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
    for (int32_t i = 0; !rc && i < json_count(o); ++i)
        if (last[i]) rc = ir_node_add_attr(node, json_key_at(o, i), json_str(json_at(o, i)));
    cvml_mem_free(last);
    json_free(&doc);
    return rc;
}

/* Entry id of [node, index] through the FILE's node_row_ptr, as upstream's storage
 * reuse check computes it before the version branch (D4: absent is refused). */
int file_eid(const file_graph* f, int64_t node, int64_t index, int64_t* eid) {
    const json_value* rp = f->node_row_ptr;
    if (node < 0 || node >= json_count(rp) || index < 0 || index > UINT32_MAX)
        return cvml_fail(CVML_ERR_LOGIC, "entry [%lld, %lld] is outside node_row_ptr",
                         static_cast<long long>(node), static_cast<long long>(index));
    *eid = item(rp, static_cast<int32_t>(node)) + index;
    if (*eid < 0 || *eid >= json_count(f->storage_id))
        return cvml_fail(CVML_ERR_LOGIC,
                         "entry [%lld, %lld] gives entry id %lld, outside 0..%" PRId32,
                         static_cast<long long>(node), static_cast<long long>(index),
                         static_cast<long long>(*eid), json_count(f->storage_id) - 1);
    return CVML_OK;
}

int check_storage_reuse(const file_graph* f, ir_graph* g) {
    if (!f->node_row_ptr)
        // D4: upstream reads node_row_ptr here before any version logic and crashes.
        return cvml_fail(CVML_ERR_LOGIC, "graph JSON: node_row_ptr is required");
    for (int32_t n = 0; n < f->node_count; ++n) {
        const ir_node* node = g->nodes[n];
        if (!node->op || node->op->may_share_input_storage) continue;
        for (int32_t o = 0; o < node->op->num_outputs; ++o) {
            int64_t out_eid = 0;
            int rc = file_eid(f, n, o, &out_eid);
            if (rc) return graph_node_error(node, rc);
            int64_t out_sid = item(f->storage_id, static_cast<int32_t>(out_eid));
            const json_value* in = f->nodes[n].inputs;
            for (int32_t k = 0; k < json_count(in); ++k) {
                int64_t in_eid = 0;
                rc = file_eid(f, item(json_at(in, k), 0), item(json_at(in, k), 1), &in_eid);
                if (rc) return graph_node_error(node, rc);
                if (item(f->storage_id, static_cast<int32_t>(in_eid)) == out_sid)
                    return graph_node_error(node, cvml_fail(CVML_ERR_LOGIC,
                                                            "input %" PRId32 " and output %" PRId32
                                                            " use the same storage_id %lld",
                                                            k, o, static_cast<long long>(out_sid)));
            }
        }
    }
    return CVML_OK;
}

int check_shapes_and_precisions(const file_graph* f, int32_t entries) {
    if (json_count(f->shape) != entries)
        return cvml_fail(CVML_ERR_LOGIC,
                         "graph attribute shape size: %" PRId32 ", expected %" PRId32,
                         json_count(f->shape), entries);
    for (int32_t i = 0; i < entries; ++i) {
        const json_value* s = json_at(f->shape, i);
        if (json_count(s) < 1 || json_count(s) > CVML_MAX_DIMS)
            return cvml_fail(CVML_ERR_LOGIC,
                             "shape of entry %" PRId32 ": ndim should be in (0, 6], but %" PRId32,
                             i, json_count(s));
        int64_t size = 1;
        for (int32_t d = 0; d < json_count(s); ++d) {
            int64_t x = item(s, d);
            if (x < 1 || x > kMaxDim)
                return cvml_fail(CVML_ERR_LOGIC,
                                 "shape of entry %" PRId32
                                 ": dimension should be in (0, 2^24], but %lld",
                                 i, static_cast<long long>(x));
            size *= x;
            if (size > kMaxSize)
                return cvml_fail(CVML_ERR_LOGIC,
                                 "shape of entry %" PRId32
                                 ": size should not exceed 2^30, but %lld",
                                 i, static_cast<long long>(size));
        }
    }
    int32_t pcount = f->precision ? json_count(f->precision) : 0;
    if (pcount != entries)
        return cvml_fail(CVML_ERR_LOGIC,
                         "graph attribute precision size: %" PRId32 ", expected %" PRId32, pcount,
                         entries);
    for (int32_t i = 0; i < entries; ++i) {
        int64_t p = item(f->precision, i);
        if (p != -1 && (p < 1 || p > 32))
            return cvml_fail(CVML_ERR_LOGIC,
                             "precision of entry %" PRId32 " should be -1 or in (0, 32], but %lld",
                             i, static_cast<long long>(p));
    }
    if (f->device_index && json_count(f->device_index) != 0)
        return cvml_fail(CVML_ERR_LOGIC, "graph attribute device_index must be empty");
    return CVML_OK;
}

int check_version(const file_graph* f, const int32_t* row_ptr) {
    const char* version = f->version ? f->version : "cvm_1.0.0";
    if (strcmp(version, "cvm_1.1.0") == 0) return CVML_OK;
    if (strcmp(version, "cvm_1.0.0") != 0)
        return cvml_fail(CVML_ERR_RUNTIME, "graph version %s not supported", version);
    int32_t entries = row_ptr[f->node_count];
    int32_t dcount = f->dltype ? json_count(f->dltype) : 0;
    if (dcount != entries)
        return cvml_fail(CVML_ERR_LOGIC,
                         "graph attribute dltype size: %" PRId32 ", expected %" PRId32, dcount,
                         entries);
    for (int32_t i = 0; i < entries; ++i)
        if (strcmp(json_str(json_at(f->dltype, i)), "int32") != 0)
            return cvml_fail(CVML_ERR_LOGIC,
                             "dltype of entry %" PRId32 ": type %s is not supported", i,
                             json_str(json_at(f->dltype, i)));
    if (json_count(f->node_row_ptr) != f->node_count + 1)
        return cvml_fail(CVML_ERR_LOGIC, "node_row_ptr's size: %" PRId32 ", expected %" PRId32,
                         json_count(f->node_row_ptr), f->node_count + 1);
    for (int32_t i = 0; i <= f->node_count; ++i)
        if (item(f->node_row_ptr, i) != row_ptr[i])
            return cvml_fail(CVML_ERR_LOGIC,
                             "node_row_ptr is invalid at index %" PRId32
                             " with value %lld, expected %" PRId32,
                             i, static_cast<long long>(item(f->node_row_ptr, i)), row_ptr[i]);
    int32_t vars = 0;
    for (int32_t i = 0; i < f->node_count; ++i) vars += f->nodes[i].is_var;
    int32_t acount = f->arg_nodes ? json_count(f->arg_nodes) : 0;
    if (acount != vars)
        return cvml_fail(CVML_ERR_LOGIC, "arg_nodes' size: %" PRId32 ", expected %" PRId32, acount,
                         vars);
    for (int32_t i = 0, k = 0; i < f->node_count; ++i) {
        if (!f->nodes[i].is_var) continue;
        if (item(f->arg_nodes, k) != i)
            return cvml_fail(CVML_ERR_LOGIC,
                             "arg_nodes is invalid at index %" PRId32
                             " with value %lld, expected %" PRId32,
                             k, static_cast<long long>(item(f->arg_nodes, k)), i);
        ++k;
    }
    return CVML_OK;
}

/* Upstream compares every arg node's name with the earlier ones; the same first
 * failure (a node out of range, or a name seen before) is found here in O(n log n). */
int check_arg_names(const file_graph* f) {
    if (!f->arg_nodes) return CVML_OK;
    int32_t count = json_count(f->arg_nodes);
    int32_t valid = count;  // arg nodes before the first out-of-range one
    for (int32_t i = 0; i < count && valid == count; ++i) {
        int64_t a = item(f->arg_nodes, i);
        if (a < 0 || a >= f->node_count) valid = i;
    }
    name_entry* entries = static_cast<name_entry*>(
        cvml_mem_alloc(sizeof(name_entry) * (static_cast<size_t>(valid) + 1)));
    if (!entries) return cvml_fail(CVML_ERR_RUNTIME, "out of memory");
    for (int32_t i = 0; i < valid; ++i) {
        const char* name = f->nodes[item(f->arg_nodes, i)].name;
        entries[i] = {name, strlen(name), i};
    }
    name_index index;
    name_index_init(&index, entries, valid);
    int32_t first = 0, second = 0;
    int duplicate = name_index_first_duplicate(&index, &first, &second);
    name_index_free(&index);
    if (duplicate)
        return cvml_fail(CVML_ERR_RUNTIME, "node name %s duplicated in graph",
                         f->nodes[item(f->arg_nodes, second)].name);
    if (valid < count)
        return cvml_fail(CVML_ERR_LOGIC, "arg_nodes[%" PRId32 "] = %lld is not a node", valid,
                         static_cast<long long>(item(f->arg_nodes, valid)));
    return CVML_OK;
}

/* PrepareGraphWithVersion, then the IR. */
int build(const file_graph* f, ir_graph* g) {
    int rc = check_arg_names(f);
    if (rc) return rc;
    if (json_count(f->op_attrs) != f->node_count)
        return cvml_fail(CVML_ERR_LOGIC,
                         "graph attribute op_attrs size: %" PRId32 ", expected %" PRId32,
                         json_count(f->op_attrs), f->node_count);

    // Nodes with their operators and attributes (3.3).
    int32_t zeros[4] = {0, 0, 0, 0};
    for (int32_t n = 0; n < f->node_count; ++n) {
        const file_node* fn = &f->nodes[n];
        int32_t ni = ir_graph_add_node(g, fn->name);
        if (ni < 0) return CVML_ERR_RUNTIME;
        ir_node* node = g->nodes[ni];
        if (fn->is_var) continue;
        node->op_name = ir_strdup(fn->func_name ? fn->func_name : "");
        if (!node->op_name) return cvml_fail(CVML_ERR_RUNTIME, "out of memory");
        // The input count is checked by graph_prepare_node; the tensors come later.
        int32_t count = json_count(fn->inputs);
        int32_t* tmp = count <= 4
                           ? zeros
                           : static_cast<int32_t*>(cvml_mem_calloc(static_cast<size_t>(count), 4));
        if (!tmp) return cvml_fail(CVML_ERR_RUNTIME, "out of memory");
        rc = ir_node_set_inputs(node, tmp, count);
        if (tmp != zeros) cvml_mem_free(tmp);
        if (rc) return rc;
        // Op::Get comes before the attribute string is read (an unknown operator with
        // broken attributes is "not registered").
        char stripped[128];
        op_strip_suffix(node->op_name, stripped, sizeof stripped);
        if (!op_registry_find(stripped))
            return graph_node_error(node, registry_operator_missing(stripped));
        rc = parse_op_attrs(json_str(json_at(f->op_attrs, n)), node);
        if (!rc) rc = graph_prepare_node(g, node);
        if (rc) return rc;
    }

    // Entries (3.4): row pointers recomputed from the registry's output counts.
    int32_t* row_ptr = static_cast<int32_t*>(
        cvml_mem_alloc(sizeof(int32_t) * (static_cast<size_t>(f->node_count) + 1)));
    if (!row_ptr) return cvml_fail(CVML_ERR_RUNTIME, "out of memory");
    int64_t entries = 0;
    for (int32_t n = 0; n < f->node_count; ++n) {
        row_ptr[n] = static_cast<int32_t>(entries);
        entries += g->nodes[n]->op ? g->nodes[n]->op->num_outputs : 1;
    }
    row_ptr[f->node_count] = static_cast<int32_t>(entries);

    if (json_count(f->storage_id) != entries)
        rc =
            cvml_fail(CVML_ERR_LOGIC, "graph attribute storage_id size: %" PRId32 ", expected %lld",
                      json_count(f->storage_id), static_cast<long long>(entries));
    for (int32_t i = 0; !rc && i < json_count(f->storage_id); ++i)
        if (item(f->storage_id, i) < 0)
            rc = cvml_fail(CVML_ERR_LOGIC,
                           "storage id of entry %" PRId32 " should not be less than 0, but %lld", i,
                           static_cast<long long>(item(f->storage_id, i)));
    if (!rc) rc = check_storage_reuse(f, g);
    if (!rc) rc = check_shapes_and_precisions(f, static_cast<int32_t>(entries));
    if (!rc) rc = check_version(f, row_ptr);

    // Topological order (3.8) with the recomputed row pointers.
    for (int32_t n = 0; !rc && n < f->node_count; ++n) {
        const json_value* in = f->nodes[n].inputs;
        for (int32_t k = 0; !rc && k < json_count(in); ++k) {
            int64_t src = item(json_at(in, k), 0), index = item(json_at(in, k), 1);
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
    for (int32_t n = 0; !rc && n < f->node_count; ++n) {
        ir_node* node = g->nodes[n];
        int32_t outs = row_ptr[n + 1] - row_ptr[n];
        for (int32_t o = 0; !rc && o < outs; ++o) {
            char name[256];
            if (o == 0)
                snprintf(name, sizeof name, "%s", node->name);
            else
                snprintf(name, sizeof name, "%s:%" PRId32, node->name, o);
            int32_t ti = ir_graph_add_tensor(g, name);
            if (ti < 0) {
                rc = CVML_ERR_RUNTIME;
                break;
            }
            ir_tensor* t = g->tensors[ti];
            const json_value* s = json_at(f->shape, ti);
            t->ndim = json_count(s);
            for (int32_t d = 0; d < json_count(s); ++d) t->dims[d] = item(s, d);
            t->precision = static_cast<int32_t>(item(f->precision, ti));
            t->storage_id = static_cast<int32_t>(item(f->storage_id, ti));
            t->kind = !node->op ? (strcmp(node->name, "data") == 0 ? TENSOR_INPUT : TENSOR_CONST)
                                : TENSOR_VAR;
            if (t->kind == TENSOR_CONST) t->file_bits = 32;
            rc = ir_node_add_output(g, node, ti);
        }
        if (!rc && node->op) {
            const json_value* in = f->nodes[n].inputs;
            for (int32_t k = 0; k < json_count(in); ++k)
                node->inputs[k] = row_ptr[item(json_at(in, k), 0)] +
                                  static_cast<int32_t>(item(json_at(in, k), 1));
        }
    }

    // Heads: an out-of-range head is upstream UB; refuse it.
    if (!rc && json_count(f->heads) > 0) {
        g->outputs = static_cast<int32_t*>(
            cvml_mem_alloc(sizeof(int32_t) * static_cast<size_t>(json_count(f->heads))));
        if (!g->outputs) rc = cvml_fail(CVML_ERR_RUNTIME, "out of memory");
        for (int32_t i = 0; !rc && i < json_count(f->heads); ++i) {
            int64_t src = item(json_at(f->heads, i), 0), index = item(json_at(f->heads, i), 1);
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
    cvml_mem_free(row_ptr);
    return rc;
}

int set_model_facts(const file_graph* f, ir_graph* g) {
    if (f->version) {
        g->version = ir_strdup(f->version);
        if (!g->version) return cvml_fail(CVML_ERR_RUNTIME, "out of memory");
    }
    if (f->postprocess) {
        char* p = ir_strdup(f->postprocess);
        if (!p) return cvml_fail(CVML_ERR_RUNTIME, "out of memory");
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
        cvml_mem_alloc(sizeof(name_entry) * (static_cast<size_t>(g->node_count) + 1)));
    if (!entries) return cvml_fail(CVML_ERR_RUNTIME, "out of memory");
    int32_t count = 0;
    for (int32_t i = 0; i < g->node_count; ++i)
        if (!g->nodes[i]->op) entries[count++] = {g->nodes[i]->name, strlen(g->nodes[i]->name), i};
    name_index index;
    name_index_init(&index, entries, count);
    int32_t first = 0, second = 0;
    int duplicate = name_index_first_duplicate(&index, &first, &second);
    name_index_free(&index);
    if (duplicate)
        return cvml_fail(CVML_ERR_LOGIC,
                         "variable name %s is used by nodes %" PRId32 " and %" PRId32,
                         g->nodes[second]->name, first, second);
    return CVML_OK;
}

}  // namespace

int cvm_read_graph(const char* json, size_t size, ir_graph* g) {
    json_doc doc;
    int rc = json_parse(json, size, &doc);
    file_graph f;
    memset(&f, 0, sizeof f);
    if (!rc) rc = decode(doc.root, &f);
    if (!rc) rc = build(&f, g);
    if (!rc) rc = set_model_facts(&f, g);
    cvml_mem_free(f.nodes);
    json_free(&doc);
    if (!rc) rc = check_variable_names(g);
    if (!rc) {
        for (int32_t i = 0; i < g->tensor_count && !rc; ++i) {
            if (g->tensors[i]->kind != TENSOR_INPUT) continue;
            int32_t* p = static_cast<int32_t*>(cvml_mem_alloc(sizeof(int32_t)));
            if (!p) return cvml_fail(CVML_ERR_RUNTIME, "out of memory");
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
