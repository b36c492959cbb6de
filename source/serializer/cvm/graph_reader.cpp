/* The graph JSON reader: decodes the document in upstream's order (dmlc reads the
 * members one after the other, so the first bad member in document order decides
 * the error), then runs PrepareGraphWithVersion's checks in its order, builds the IR
 * and verifies it (FORMAT.md §4.1, §5). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/verify.h"
#include "operator/format_limits.h"
#include "operator/op_def.h"
#include "serializer/cvm/cvm_format.h"
#include "serializer/cvm/json.h"
#include "serializer/cvm/name_index.h"
#include "utility/error.h"
#include "utility/platform.h"
#include "utility/memory.h"

namespace {

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

/* Value `at` of a shape list (shape i is values offsets[i] .. offsets[i + 1]). */
int64_t shape_dim(const shape_list& s, int32_t at) {
    return s.wide ? static_cast<const int64_t*>(s.values)[at]
                  : static_cast<const int32_t*>(s.values)[at];
}

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

/* The raw members of one node, pointing into its piece's tree while it is decoded. */
struct node_members {
    const char* op;
    const char* name;
    const json_value* inputs; /* validated: arrays of 2 or 3 integers */
    const char* func_name;    /* NULL when the node has no attrs */
    bool has_op, has_name, has_inputs;
};

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

const char* node_name(const file_graph* f, int32_t n) {
    return f->strings + f->nodes[n].name;
}

const char* node_func_name(const file_graph* f, int32_t n) {
    return f->nodes[n].func_name == SIZE_MAX ? nullptr : f->strings + f->nodes[n].func_name;
}

const entry* node_inputs(const file_graph* f, int32_t n) {
    return f->inputs + f->nodes[n].inputs;
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

/* Decodes the strings of a list one at a time: each is a piece of its own. */
struct string_reader {
    json_iter it;
    json_doc doc;
};

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

/* Entry id of [node, index] through the FILE's node_row_ptr, as upstream's storage
 * reuse check computes it before the version branch (D4: absent is refused). */
int file_eid(const file_graph* f, int64_t node, int64_t index, int64_t* eid) {
    const int_list* rp = &f->node_row_ptr;
    if (node < 0 || node >= rp->count || index < 0 || index > UINT32_MAX)
        return cvml_fail(CVML_ERR_LOGIC, "entry [%lld, %lld] is outside node_row_ptr",
                         static_cast<long long>(node), static_cast<long long>(index));
    *eid = rp->values[node] + index;
    if (*eid < 0 || *eid >= f->storage_id.count)
        return cvml_fail(CVML_ERR_LOGIC,
                         "entry [%lld, %lld] gives entry id %lld, outside 0..%" PRId32,
                         static_cast<long long>(node), static_cast<long long>(index),
                         static_cast<long long>(*eid), f->storage_id.count - 1);
    return CVML_OK;
}

int check_storage_reuse(const file_graph* f, ir_graph* g) {
    if (!f->node_row_ptr.present)
        // D4: upstream reads node_row_ptr here before any version logic and crashes.
        return cvml_fail(CVML_ERR_LOGIC, "graph JSON: node_row_ptr is required");
    for (int32_t n = 0; n < f->node_count; ++n) {
        const ir_node* node = g->nodes[n];
        if (!node->op || node->op->may_share_input_storage) continue;
        for (int32_t o = 0; o < node->op->num_outputs; ++o) {
            int64_t out_eid = 0;
            int rc = file_eid(f, n, o, &out_eid);
            if (rc) return graph_node_error(node, rc);
            int64_t out_sid = f->storage_id.values[out_eid];
            const entry* in = node_inputs(f, n);
            for (int32_t k = 0; k < f->nodes[n].input_count; ++k) {
                int64_t in_eid = 0;
                rc = file_eid(f, in[k].node, in[k].index, &in_eid);
                if (rc) return graph_node_error(node, rc);
                if (f->storage_id.values[in_eid] == out_sid)
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
    if (f->shape.count != entries)
        return cvml_fail(CVML_ERR_LOGIC,
                         "graph attribute shape size: %" PRId32 ", expected %" PRId32,
                         f->shape.count, entries);
    for (int32_t i = 0; i < entries; ++i) {
        const int32_t first = f->shape.offsets[i];
        int32_t ndim = f->shape.offsets[i + 1] - first;
        if (ndim < 1 || ndim > CVML_MAX_DIMS)
            return cvml_fail(CVML_ERR_LOGIC,
                             "shape of entry %" PRId32 ": ndim should be in (0, 6], but %" PRId32,
                             i, ndim);
        int64_t size = 1;
        for (int32_t d = 0; d < ndim; ++d) {
            int64_t x = shape_dim(f->shape, first + d);
            if (x < 1 || x > kFormatMaxDim)
                return cvml_fail(CVML_ERR_LOGIC,
                                 "shape of entry %" PRId32
                                 ": dimension should be in (0, 2^24], but %lld",
                                 i, static_cast<long long>(x));
            size *= x;
            if (size > kFormatMaxElements)
                return cvml_fail(CVML_ERR_LOGIC,
                                 "shape of entry %" PRId32
                                 ": size should not exceed 2^30, but %lld",
                                 i, static_cast<long long>(size));
        }
    }
    int32_t pcount = f->precision.present ? f->precision.count : 0;
    if (pcount != entries)
        return cvml_fail(CVML_ERR_LOGIC,
                         "graph attribute precision size: %" PRId32 ", expected %" PRId32, pcount,
                         entries);
    for (int32_t i = 0; i < entries; ++i) {
        int64_t p = f->precision.values[i];
        if (p != -1 && (p < 1 || p > 32))
            return cvml_fail(CVML_ERR_LOGIC,
                             "precision of entry %" PRId32 " should be -1 or in (0, 32], but %lld",
                             i, static_cast<long long>(p));
    }
    if (f->device_index.present && f->device_index.count != 0)
        return cvml_fail(CVML_ERR_LOGIC, "graph attribute device_index must be empty");
    return CVML_OK;
}

int check_version(const file_graph* f, const int32_t* row_ptr) {
    const char* version = f->version ? f->version : "cvm_1.0.0";
    if (strcmp(version, "cvm_1.1.0") == 0) return CVML_OK;
    if (strcmp(version, "cvm_1.0.0") != 0)
        return cvml_fail(CVML_ERR_RUNTIME, "graph version %s not supported", version);
    int32_t entries = row_ptr[f->node_count];
    int32_t dcount = f->dltype.present ? f->dltype.count : 0;
    if (dcount != entries)
        return cvml_fail(CVML_ERR_LOGIC,
                         "graph attribute dltype size: %" PRId32 ", expected %" PRId32, dcount,
                         entries);
    string_reader dltypes;
    string_reader_start(&dltypes, f, &f->dltype);
    int rc = CVML_OK;
    for (int32_t i = 0; i < entries && !rc; ++i) {
        const char* type = string_reader_next(&dltypes, &rc);
        if (!rc && strcmp(type, "int32") != 0)
            rc = cvml_fail(CVML_ERR_LOGIC, "dltype of entry %" PRId32 ": type %s is not supported",
                           i, type);
    }
    json_free(&dltypes.doc);
    if (rc) return rc;
    if (f->node_row_ptr.count != f->node_count + 1)
        return cvml_fail(CVML_ERR_LOGIC, "node_row_ptr's size: %" PRId32 ", expected %" PRId32,
                         f->node_row_ptr.count, f->node_count + 1);
    for (int32_t i = 0; i <= f->node_count; ++i)
        if (f->node_row_ptr.values[i] != row_ptr[i])
            return cvml_fail(CVML_ERR_LOGIC,
                             "node_row_ptr is invalid at index %" PRId32
                             " with value %lld, expected %" PRId32,
                             i, static_cast<long long>(f->node_row_ptr.values[i]), row_ptr[i]);
    int32_t vars = 0;
    for (int32_t i = 0; i < f->node_count; ++i) vars += f->nodes[i].is_var;
    int32_t acount = f->arg_nodes.present ? f->arg_nodes.count : 0;
    if (acount != vars)
        return cvml_fail(CVML_ERR_LOGIC, "arg_nodes' size: %" PRId32 ", expected %" PRId32, acount,
                         vars);
    for (int32_t i = 0, k = 0; i < f->node_count; ++i) {
        if (!f->nodes[i].is_var) continue;
        if (f->arg_nodes.values[k] != i)
            return cvml_fail(CVML_ERR_LOGIC,
                             "arg_nodes is invalid at index %" PRId32
                             " with value %lld, expected %" PRId32,
                             k, static_cast<long long>(f->arg_nodes.values[k]), i);
        ++k;
    }
    return CVML_OK;
}

/* Upstream compares every arg node's name with the earlier ones; the same first
 * failure (a node out of range, or a name seen before) is found here in O(n log n). */
int check_arg_names(const file_graph* f) {
    if (!f->arg_nodes.present) return CVML_OK;
    int32_t count = f->arg_nodes.count;
    int32_t valid = count;  // arg nodes before the first out-of-range one
    for (int32_t i = 0; i < count && valid == count; ++i) {
        int64_t a = f->arg_nodes.values[i];
        if (a < 0 || a >= f->node_count) valid = i;
    }
    name_entry* entries = static_cast<name_entry*>(
        cvml_scratch_alloc(sizeof(name_entry) * (static_cast<size_t>(valid) + 1)));
    if (!entries) return cvml_fail_out_of_memory();
    for (int32_t i = 0; i < valid; ++i) {
        const char* name = node_name(f, static_cast<int32_t>(f->arg_nodes.values[i]));
        entries[i] = {name, strlen(name), i};
    }
    name_index index;
    name_index_init(&index, entries, valid);
    int32_t first = 0, second = 0;
    int duplicate = name_index_first_duplicate(&index, &first, &second);
    name_index_free(&index);
    if (duplicate)
        return cvml_fail(CVML_ERR_RUNTIME, "node name %s duplicated in graph",
                         node_name(f, static_cast<int32_t>(f->arg_nodes.values[second])));
    if (valid < count)
        return cvml_fail(CVML_ERR_LOGIC, "arg_nodes[%" PRId32 "] = %lld is not a node", valid,
                         static_cast<long long>(f->arg_nodes.values[valid]));
    return CVML_OK;
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
