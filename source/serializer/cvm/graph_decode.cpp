/* The graph JSON decoded in upstream's order: dmlc reads the members one after the
 * other, so the first bad member in document order decides the error (FORMAT.md §4.1).
 * Each piece (a node, a graph attribute) is parsed into a tree of its own, kept
 * compact in a file_graph (graph_file.h) and its tree freed. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operator/format_limits.h"
#include "serializer/cvm/cvm_format.h"
#include "serializer/cvm/graph_file.h"
#include "serializer/cvm/json.h"
#include "utility/error.h"
#include "utility/memory.h"
#include "utility/platform.h"

namespace cvm_graph_file {

namespace {

/* The raw members of one node, pointing into its piece's tree while it is decoded. */
struct node_members {
    const char* op;
    const char* name;
    const json_value* inputs; /* validated: arrays of 2 or 3 integers */
    const char* func_name;    /* NULL when the node has no attrs */
    bool has_op, has_name, has_inputs;
};

/* Grows an array to hold `need` elements of `size` bytes: exactly that many when
 * `exact`, else by doubling. */
int reserve(void** array, size_t* capacity, size_t need, size_t size, bool exact = false) {
    if (need <= *capacity) return CVML_OK;
    size_t grown = exact ? need : *capacity ? *capacity : 256;
    while (grown < need) grown *= 2;
    void* p = cvml_scratch_realloc(*array, grown * size);
    if (!p) return cvml_fail_out_of_memory();
    *array = p;
    *capacity = grown;
    return CVML_OK;
}

/* Copies a string into f->strings; its offset in *at. */
int keep_string(file_graph* f, const char* str, size_t* at) {
    size_t len = strlen(str) + 1;
    int rc = reserve(reinterpret_cast<void**>(&f->strings), &f->strings_capacity,
                     f->strings_used + len, 1);
    if (rc) return rc;
    memcpy(f->strings + f->strings_used, str, len);
    *at = f->strings_used;
    f->strings_used += len;
    return CVML_OK;
}

int type_error_at(size_t offset, int type, const char* what, const char* expected) {
    return cvml_fail(CVML_ERR_RUNTIME,
                     "graph JSON: %s at byte %" CVML_PRIuSIZE " is %s, expected %s", what, offset,
                     json_type_name(type), expected);
}

int type_error(const json_value* v, const char* what, const char* expected) {
    return type_error_at(json_offset(v), json_type(v), what, expected);
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

int decode_node_attrs(const json_value* v, node_members* n, int32_t index) {
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

int decode_node(const json_value* v, node_members* n, int32_t index) {
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
    return CVML_OK;
}

/* Node `index`, the element spanning [begin, end): decoded from a tree of its own and
 * kept in f->nodes[index]. */
int decode_node_piece(file_graph* f, size_t begin, size_t end, int32_t index) {
    json_doc doc;
    int rc = json_parse_range(f->text, begin, end, &doc);
    node_members m;
    memset(&m, 0, sizeof m);
    if (!rc) rc = decode_node(doc.root, &m, index);
    file_node* n = &f->nodes[index];
    n->func_name = SIZE_MAX;
    if (!rc) rc = keep_string(f, m.name, &n->name);
    if (!rc && m.func_name) rc = keep_string(f, m.func_name, &n->func_name);
    int32_t count = rc ? 0 : json_count(m.inputs);
    if (!rc)
        rc = reserve(reinterpret_cast<void**>(&f->inputs), &f->inputs_capacity,
                     f->inputs_used + static_cast<size_t>(count), sizeof(entry));
    if (!rc) {
        n->inputs = f->inputs_used;
        n->input_count = count;
        for (int32_t k = 0; k < count; ++k)
            f->inputs[f->inputs_used++] = {json_int(json_at(json_at(m.inputs, k), 0)),
                                           json_int(json_at(json_at(m.inputs, k), 1))};
        n->is_var = strcmp(m.op, "null") == 0;
    }
    json_free(&doc);
    return rc;
}

template <typename T>
int to_number_list(const json_value* v, number_list<T>* out) {
    cvml_scratch_free(out->values);
    out->count = json_count(v);
    out->present = true;
    out->values =
        static_cast<T*>(cvml_scratch_alloc(sizeof(T) * (static_cast<size_t>(out->count) + 1)));
    if (!out->values) return cvml_fail_out_of_memory();
    for (int32_t i = 0; i < out->count; ++i)
        out->values[i] = static_cast<T>(json_int(json_at(v, i)));
    return CVML_OK;
}

int to_entry_list(const json_value* v, entry_list* out) {
    cvml_scratch_free(out->values);
    out->count = json_count(v);
    out->present = true;
    out->values = static_cast<entry*>(
        cvml_scratch_alloc(sizeof(entry) * (static_cast<size_t>(out->count) + 1)));
    if (!out->values) return cvml_fail_out_of_memory();
    for (int32_t i = 0; i < out->count; ++i)
        out->values[i] = {json_int(json_at(json_at(v, i), 0)), json_int(json_at(json_at(v, i), 1))};
    return CVML_OK;
}

/* The list just made from a piece's tree goes down over the tree (given back below it):
 * otherwise each attribute's tree stays a hole in the scratch until the load ends, and
 * the largest piece (the shapes) no longer fits there on a microcontroller's arena. */
template <typename T>
void settle(number_list<T>* l) {
    l->values = static_cast<T*>(cvml_scratch_settle(l->values));
}

void settle_lists(file_graph* f) {
    settle(&f->arg_nodes);
    settle(&f->node_row_ptr);
    settle(&f->storage_id);
    settle(&f->device_index);
    settle(&f->precision);
    f->heads.values = static_cast<entry*>(cvml_scratch_settle(f->heads.values));
    if (f->shape.values) {
        const ptrdiff_t at = f->shape.offsets - static_cast<int32_t*>(f->shape.values);
        f->shape.values = cvml_scratch_settle(f->shape.values);
        f->shape.offsets = static_cast<int32_t*>(f->shape.values) + at;
    }
}

/* The decoded key of the member an iterator is at, in a piece of its own. */
int member_key(const json_iter* it, json_doc* doc, const char** key) {
    int rc = json_parse_range(it->text, it->key_begin, it->key_end, doc);
    *key = rc ? "" : json_str(doc->root);
    return rc;
}

/* A graph attribute's [tag, values] as byte ranges (no tree of it). */
struct attr_parts {
    int32_t count;
    size_t tag_begin, tag_end;
    size_t values, values_end; /* the values' range (count >= 2) */
};

/* The attribute at `begin` is an array [tag, values] whose tag is the string `tag` (any
 * string when NULL). The graph attributes are checked without a tree of the whole: it
 * would decode 12 KB of op_attrs strings only to drop them, and the shapes' tree (14 KB
 * for cifar_resnet20) did not fit a microcontroller's arena beside the node arrays. */
int split_attr(const file_graph* f, const char* key, const char* tag, size_t begin,
               attr_parts* parts) {
    int type = json_type_at(f->text, f->size, begin);
    if (type != JSON_ARRAY)
        return type_error_at(json_value_start(f->text, f->size, begin), type, "graph attribute",
                             "an array [type, values]");
    json_iter it;
    json_iter_start(&it, f->text, f->size, begin);
    for (parts->count = 0; json_iter_next(&it); ++parts->count) {
        if (parts->count == 0) parts->tag_begin = it.begin, parts->tag_end = it.end;
        if (parts->count == 1) parts->values = it.begin, parts->values_end = it.end;
    }
    if (parts->count < 1)
        return cvml_fail(CVML_ERR_LOGIC, "graph attribute %s: missing type tag", key);
    json_doc doc;
    int rc = json_parse_range(f->text, parts->tag_begin, parts->tag_end, &doc);
    if (rc) return rc;
    const json_value* t = doc.root;
    if (json_type(t) != JSON_STRING)
        rc = type_error(t, "graph attribute type", "a string");
    else if (tag && strcmp(json_str(t), tag) != 0)
        rc = cvml_fail(CVML_ERR_LOGIC, "graph attribute %s: type %s, expected %s", key, json_str(t),
                       tag);
    json_free(&doc);
    if (!rc && parts->count < 2)
        rc = cvml_fail(CVML_ERR_LOGIC, "graph attribute %s: missing values", key);
    return rc;
}

int more_than_two(const attr_parts& parts, const char* key) {
    return parts.count > 2
               ? cvml_fail(CVML_ERR_LOGIC, "graph attribute %s: more than [type, values]", key)
               : CVML_OK;
}

/* The values of an attribute are an array: its elements' count. */
int values_array(const file_graph* f, const char* what, size_t values, int32_t* count) {
    const int type = json_type_at(f->text, f->size, values);
    if (type != JSON_ARRAY)
        return type_error_at(json_value_start(f->text, f->size, values), type, what, "an array");
    json_iter it;
    json_iter_start(&it, f->text, f->size, values);
    for (*count = 0; json_iter_next(&it);) ++*count;
    return CVML_OK;
}

/* A list_str attribute (dltype, op_attrs): its strings stay in the document. */
int decode_list_str_attr(file_graph* f, const char* key, size_t begin, string_list* out) {
    attr_parts parts;
    int32_t count = 0;
    int rc = split_attr(f, key, "list_str", begin, &parts);
    if (!rc) rc = values_array(f, key, parts.values, &count);
    if (rc) return rc;
    json_iter it;
    json_iter_start(&it, f->text, f->size, parts.values);
    while (json_iter_next(&it)) {
        const int type = json_type_at(f->text, f->size, it.begin);
        if (type != JSON_STRING)
            return type_error_at(json_value_start(f->text, f->size, it.begin), type, key,
                                 "a string");
    }
    rc = more_than_two(parts, key);
    if (rc) return rc;
    out->begin = json_value_start(f->text, f->size, parts.values);
    out->count = count;
    out->present = true;
    return CVML_OK;
}

/* Each shape in a tree of its own, in two passes: checked and counted (out->values
 * null), then kept, as int32 unless a value does not fit one (the checks after name
 * such a value as written; shapes are 4 KB instead of 8 in a microcontroller's arena). */
int for_each_shape(const file_graph* f, size_t values, shape_list* out) {
    json_iter it;
    json_iter_start(&it, f->text, f->size, values);
    size_t total = 0;
    bool wide = false;
    for (int32_t i = 0; json_iter_next(&it); ++i) {
        json_doc doc;
        int rc = json_parse_range(f->text, it.begin, it.end, &doc);
        if (!rc && !out->values) rc = require_int_array(doc.root, "shape");
        for (int32_t d = 0; !rc && d < json_count(doc.root); ++d) {
            const int64_t v = json_int(json_at(doc.root, d));
            const size_t at = total + static_cast<size_t>(d);
            wide = wide || v < INT32_MIN || v > INT32_MAX;
            if (out->values && out->wide) static_cast<int64_t*>(out->values)[at] = v;
            if (out->values && !out->wide)
                static_cast<int32_t*>(out->values)[at] = static_cast<int32_t>(v);
        }
        if (!rc && out->values) out->offsets[i] = static_cast<int32_t>(total);
        if (!rc) total += static_cast<size_t>(json_count(doc.root));
        json_free(&doc);
        if (rc) return rc;
    }
    if (out->values) {
        out->offsets[out->count] = static_cast<int32_t>(total);
        return CVML_OK;
    }
    // One block: the values, then the offsets (settle_lists moves it whole).
    const size_t width = wide ? sizeof(int64_t) : sizeof(int32_t);
    out->values = cvml_scratch_alloc(width * (total + 1) +
                                     sizeof(int32_t) * (static_cast<size_t>(out->count) + 1));
    if (!out->values) return cvml_fail_out_of_memory();
    out->wide = wide;
    out->offsets =
        reinterpret_cast<int32_t*>(static_cast<uint8_t*>(out->values) + width * (total + 1));
    return for_each_shape(f, values, out);
}

int decode_shape_attr(file_graph* f, const char* key, size_t begin, shape_list* out) {
    attr_parts parts;
    int32_t count = 0;
    int rc = split_attr(f, key, "list_shape", begin, &parts);
    if (!rc) rc = values_array(f, "shape", parts.values, &count);
    if (rc) return rc;
    cvml_scratch_free(out->values);
    out->values = nullptr;
    out->offsets = nullptr;
    out->count = count;
    out->present = true;
    rc = for_each_shape(f, parts.values, out);
    if (!rc) rc = more_than_two(parts, key);
    return rc;
}

/* The values of an attribute split_attr took apart, in a tree of their own: integers
 * that fit int32, kept in `out` (NULL: checked only). */
int read_int_values(file_graph* f, const char* key, const attr_parts& parts, int32_list* out) {
    json_doc doc;
    int rc = json_parse_range(f->text, parts.values, parts.values_end, &doc);
    if (!rc) rc = require_int32_array(doc.root, key);
    if (!rc) rc = more_than_two(parts, key);
    if (!rc && out) rc = to_number_list(doc.root, out);
    json_free(&doc);
    settle_lists(f);
    return rc;
}

/* A list_int attribute (storage_id, device_index, precision). */
int decode_list_int_attr(file_graph* f, const char* key, size_t begin, int32_list* out) {
    attr_parts parts;
    const int rc = split_attr(f, key, "list_int", begin, &parts);
    return rc ? rc : read_int_values(f, key, parts, out);
}

/* Upstream skips dtype: list_int is read and dropped; list_str tries to read a number
 * (and fails on a list); anything else cannot be skipped. */
int decode_dtype_attr(file_graph* f, const char* key, size_t begin) {
    attr_parts parts;
    int rc = split_attr(f, key, nullptr, begin, &parts);
    if (rc) return rc;
    json_doc tag;
    rc = json_parse_range(f->text, parts.tag_begin, parts.tag_end, &tag);
    const char* type = rc ? "" : json_str(tag.root);
    if (!rc && strcmp(type, "list_int") == 0) {
        rc = read_int_values(f, key, parts, nullptr);
    } else if (!rc && strcmp(type, "list_str") == 0) {
        json_doc values;
        rc = json_parse_range(f->text, parts.values, parts.values_end, &values);
        if (!rc && (!json_is_int(values.root) || json_int(values.root) < 0))
            rc = type_error(values.root, "dtype (list_str)", "a number");
        json_free(&values);
        if (!rc) rc = more_than_two(parts, key);
    } else if (!rc) {
        rc = cvml_fail(CVML_ERR_RUNTIME, "cannot skip graph attr dtype of type %s", type);
    }
    json_free(&tag);
    return rc;
}

/* One graph attribute, the member `key` at `begin`. */
int decode_graph_attr_piece(file_graph* f, const char* key, size_t begin) {
    if (key_is(key, "dltype")) return decode_list_str_attr(f, key, begin, &f->dltype);
    if (key_is(key, "op_attrs")) return decode_list_str_attr(f, key, begin, &f->op_attrs);
    if (key_is(key, "shape")) return decode_shape_attr(f, key, begin, &f->shape);
    if (key_is(key, "storage_id")) return decode_list_int_attr(f, key, begin, &f->storage_id);
    if (key_is(key, "device_index")) return decode_list_int_attr(f, key, begin, &f->device_index);
    if (key_is(key, "precision")) return decode_list_int_attr(f, key, begin, &f->precision);
    if (key_is(key, "dtype")) return decode_dtype_attr(f, key, begin);
    return cvml_fail(CVML_ERR_RUNTIME, "graph attribute %s not supported", key);
}

int decode_graph_attrs(file_graph* f, size_t begin) {
    int type = json_type_at(f->text, f->size, begin);
    if (type != JSON_OBJECT)
        return type_error_at(json_value_start(f->text, f->size, begin), type, "attrs", "an object");
    json_iter it;
    json_iter_start(&it, f->text, f->size, begin);
    while (json_iter_next(&it)) {
        json_doc key_doc;
        const char* key = nullptr;
        int rc = member_key(&it, &key_doc, &key);
        if (!rc) rc = decode_graph_attr_piece(f, key, it.begin);
        json_free(&key_doc);
        if (rc) return rc;
    }
    if (!f->storage_id.present || !f->shape.present || !f->op_attrs.present)
        return cvml_fail(CVML_ERR_LOGIC, "graph attrs: missing %s",
                         !f->storage_id.present ? "storage_id"
                         : !f->shape.present    ? "shape"
                                                : "op_attrs");
    return CVML_OK;
}

/* The bytes of the node pieces' names and function names and their number of inputs,
 * so that the two arrays they go to are sized once: grown in turn, each would leave
 * its outgrown copies in the scratch stack below the other. A hint only: it stops at a
 * piece that does not decode, which the decoding pass then meets first. */
void measure_nodes(const file_graph* f, size_t begin, size_t* string_bytes, size_t* inputs) {
    json_iter it;
    json_iter_start(&it, f->text, f->size, begin);
    int rc = CVML_OK;
    for (int32_t k = 0; !rc && json_iter_next(&it); ++k) {
        json_doc doc;
        rc = json_parse_range(f->text, it.begin, it.end, &doc);
        node_members m;
        memset(&m, 0, sizeof m);
        if (!rc) rc = decode_node(doc.root, &m, k);
        if (!rc) {
            *string_bytes += strlen(m.name) + 1 + (m.func_name ? strlen(m.func_name) + 1 : 0);
            *inputs += static_cast<size_t>(json_count(m.inputs));
        }
        json_free(&doc);
    }
}

int decode_nodes(file_graph* f, size_t begin) {
    int type = json_type_at(f->text, f->size, begin);
    if (type != JSON_ARRAY)
        return type_error_at(json_value_start(f->text, f->size, begin), type, "nodes", "an array");
    json_iter it;
    json_iter_start(&it, f->text, f->size, begin);
    int32_t count = 0;
    while (json_iter_next(&it)) ++count;
    // A later "nodes" replaces an earlier one (upstream's reader).
    cvml_scratch_free(f->nodes);
    f->strings_used = f->inputs_used = 0;
    f->nodes = static_cast<file_node*>(
        cvml_scratch_calloc(static_cast<size_t>(count) + 1, sizeof(file_node)));
    if (!f->nodes) return cvml_fail_out_of_memory();
    f->node_count = count;
    size_t string_bytes = 0, inputs = 0;
    measure_nodes(f, begin, &string_bytes, &inputs);
    int rc =
        reserve(reinterpret_cast<void**>(&f->strings), &f->strings_capacity, string_bytes, 1, true);
    if (!rc)
        rc = reserve(reinterpret_cast<void**>(&f->inputs), &f->inputs_capacity, inputs,
                     sizeof(entry), true);
    json_iter_start(&it, f->text, f->size, begin);
    for (int32_t k = 0; !rc && json_iter_next(&it); ++k)
        rc = decode_node_piece(f, it.begin, it.end, k);
    return rc;
}

/* A member whose value is one piece: its tree, checked and kept compact. */
int decode_list_member(file_graph* f, const char* key, size_t begin, size_t end) {
    json_doc doc;
    int rc = json_parse_range(f->text, begin, end, &doc);
    if (rc) return rc;
    const json_value* m = doc.root;
    if (key_is(key, "arg_nodes")) {
        rc = require_int_array(m, "arg_nodes");
        if (!rc) rc = to_number_list(m, &f->arg_nodes);
    } else if (key_is(key, "node_row_ptr")) {
        rc = require_int_array(m, "node_row_ptr");
        if (!rc) rc = to_number_list(m, &f->node_row_ptr);
    } else if (key_is(key, "heads")) {
        rc = require_entries(m, "heads");
        if (!rc) rc = to_entry_list(m, &f->heads);
    } else {  // version, postprocess
        bool is_version = key_is(key, "version");
        char** out = is_version ? &f->version : &f->postprocess;
        if (json_type(m) != JSON_STRING) {
            rc = type_error(m, is_version ? "version" : "postprocess", "a string");
        } else {
            cvml_mem_free(*out);
            *out = ir_strdup(json_str(m));
            if (!*out) rc = cvml_fail_out_of_memory();
        }
    }
    json_free(&doc);
    settle_lists(f);
    return rc;
}

}  // namespace

int decode(file_graph* f) {
    int type = json_type_at(f->text, f->size, 0);
    if (type != JSON_OBJECT)
        return type_error_at(json_value_start(f->text, f->size, 0), type, "the graph", "an object");
    bool have_nodes = false, have_heads = false, have_attrs = false;
    json_iter it;
    json_iter_start(&it, f->text, f->size, 0);
    while (json_iter_next(&it)) {
        json_doc key_doc;
        const char* key = nullptr;
        int rc = member_key(&it, &key_doc, &key);
        if (rc) {
        } else if (key_is(key, "nodes")) {
            rc = decode_nodes(f, it.begin);
            have_nodes = true;
        } else if (key_is(key, "attrs")) {
            rc = decode_graph_attrs(f, it.begin);
            have_attrs = true;
        } else if (key_is(key, "arg_nodes") || key_is(key, "node_row_ptr") ||
                   key_is(key, "heads") || key_is(key, "version") || key_is(key, "postprocess")) {
            rc = decode_list_member(f, key, it.begin, it.end);
            have_heads = have_heads || key_is(key, "heads");
        } else {
            rc = cvml_fail(CVML_ERR_RUNTIME, "key '%s' in json is not supported", key);
        }
        json_free(&key_doc);
        if (rc) return rc;
    }
    if (!have_nodes || !have_heads || !have_attrs)
        return cvml_fail(CVML_ERR_LOGIC, "graph JSON: missing %s",
                         !have_nodes   ? "nodes"
                         : !have_heads ? "heads"
                                       : "attrs");
    return CVML_OK;
}

void free_file_graph(file_graph* f) {
    cvml_scratch_free(f->nodes);
    cvml_scratch_free(f->strings);
    cvml_scratch_free(f->inputs);
    cvml_scratch_free(f->arg_nodes.values);
    cvml_scratch_free(f->node_row_ptr.values);
    cvml_scratch_free(f->storage_id.values);
    cvml_scratch_free(f->precision.values);
    cvml_scratch_free(f->device_index.values);
    cvml_scratch_free(f->heads.values);
    cvml_scratch_free(f->shape.values);  // the offsets too
    cvml_mem_free(f->version);
    cvml_mem_free(f->postprocess);
}

void string_reader_start(string_reader* r, const file_graph* f, const string_list* list) {
    json_iter_start(&r->it, f->text, f->size, list->begin);
    memset(&r->doc, 0, sizeof r->doc);
}

/* The next string of the list (it has one: the list was counted); "" when out of memory,
 * with the error set and *rc non-zero. */
const char* string_reader_next(string_reader* r, int* rc) {
    json_free(&r->doc);
    json_iter_next(&r->it);
    *rc = json_parse_range(r->it.text, r->it.begin, r->it.end, &r->doc);
    return *rc ? "" : json_str(r->doc.root);
}

}  // namespace cvm_graph_file
