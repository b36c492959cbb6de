#include "operator/op_def.h"

#include <inttypes.h>
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utility/error.h"
#include "utility/memory.h"
#include "utility/sorted_table.h"

/* ---- the operator table ----------------------------------------------------------- */

const op_def* op_registry_find(const char* name) {
    return sorted_table_find(cvml_operator_table, cvml_operator_table_count, name,
                             [](const op_def* op) { return op->name; });
}

int32_t op_registry_count(void) {
    return cvml_operator_table_count;
}

const op_def* op_registry_at(int32_t index) {
    return index >= 0 && index < cvml_operator_table_count ? cvml_operator_table[index] : nullptr;
}

int op_registry_missing(const char* name) {
    for (int32_t i = 0; i < cvml_left_out_operator_count; ++i)
        if (strcmp(cvml_left_out_operators[i], name) == 0)
            return cvml_fail(CVML_ERR_RUNTIME,
                             "Operator %s is not registered: this build left it out "
                             "(CVML_OPERATORS); rebuild with it in the list",
                             name);
    return cvml_fail(CVML_ERR_RUNTIME, "Operator %s is not registered", name);
}

void op_strip_suffix(const char* func_name, char* out, size_t cap) {
    cvml_strlcpy(out, func_name, cap);
    size_t n = strlen(out);
    size_t i = n;
    while (i > 0 && isdigit(static_cast<unsigned char>(out[i - 1]))) --i;
    if (i > 0 && out[i - 1] == '_') out[i - 1] = '\0';
}

/* ---- attribute encodings ----------------------------------------------------------- */

static const char* skip_space(const char* p) {
    while (*p && isspace(static_cast<unsigned char>(*p))) ++p;
    return p;
}

/* Reads an int64 like `istream >> long`: optional sign, digits, no overflow. */
static bool read_int64(const char** pp, int64_t* out) {
    const char* p = skip_space(*pp);
    bool neg = false;
    if (*p == '+' || *p == '-') neg = *p++ == '-';
    if (!isdigit(static_cast<unsigned char>(*p))) return false;
    uint64_t v = 0;
    const uint64_t limit = neg ? (uint64_t{1} << 63) : (uint64_t{1} << 63) - 1;
    while (isdigit(static_cast<unsigned char>(*p))) {
        v = v * 10 + static_cast<uint64_t>(*p++ - '0');
        if (v > limit) return false;
    }
    *out = neg ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
    *pp = p;
    return true;
}

int attr_parse_int(const char* text, const char* what, int32_t* out) {
    const char* p = text;
    int64_t v;
    if (!read_int64(&p, &v) || v < INT32_MIN || v > INT32_MAX || *skip_space(p) != '\0')
        return cvml_fail(CVML_ERR_RUNTIME,
                         "Invalid Parameter format for %s expect int but value='%s'", what, text);
    *out = static_cast<int32_t>(v);
    return CVML_OK;
}

int attr_parse_bool(const char* text, const char* what, uint8_t* out) {
    const char* p = skip_space(text);
    char word[8];
    size_t n = 0;
    while (p[n] && !isspace(static_cast<unsigned char>(p[n])) && n + 1 < sizeof word) {
        word[n] = static_cast<char>(tolower(static_cast<unsigned char>(p[n])));
        ++n;
    }
    word[n] = '\0';
    if (*skip_space(p + n) == '\0') {
        if (strcmp(word, "true") == 0 || strcmp(word, "1") == 0) {
            *out = 1;
            return CVML_OK;
        }
        if (strcmp(word, "false") == 0 || strcmp(word, "0") == 0) {
            *out = 0;
            return CVML_OK;
        }
    }
    return cvml_fail(CVML_ERR_RUNTIME, "Invalid Parameter format for %s expect bool but value='%s'",
                     what, text);
}

/* TShape syntax as dmlc's Tuple reader accepts it: a bare integer, or a list in ( ) or
 * [ ] with comma separators, an optional trailing comma and an optional 'L' suffix. At
 * most ATTR_TUPLE_MAX values; the first `keep` of them go to values[], all are counted. */
static int parse_tuple(const char* text, const char* what, int32_t* count, int64_t* values,
                       int32_t keep) {
    *count = 0;
    const char* p = skip_space(text);
    int64_t v;
    if (isdigit(static_cast<unsigned char>(*p)) || *p == '-') {
        if (!read_int64(&p, &v) || *skip_space(p) != '\0') goto bad;
        values[(*count)++] = v;
        return CVML_OK;
    }
    if (*p != '(' && *p != '[') goto bad;
    ++p;
    p = skip_space(p);
    if (*p == ')' || *p == ']') {
        ++p;
        if (*skip_space(p) != '\0') goto bad;
        return CVML_OK;
    }
    for (;;) {
        if (!read_int64(&p, &v)) goto bad;
        if (*count == ATTR_TUPLE_MAX)
            return cvml_fail(CVML_ERR_RUNTIME, "Invalid Parameter %s: more than %d values in '%s'",
                             what, ATTR_TUPLE_MAX, text);
        if (*count < keep) values[*count] = v;
        ++*count;
        p = skip_space(p);
        if (*p == 'L') p = skip_space(p + 1);
        if (*p == ',') {
            p = skip_space(p + 1);
            if (*p == ')' || *p == ']') {
                ++p;
                break;
            }
            continue;
        }
        if (*p == ')' || *p == ']') {
            ++p;
            break;
        }
        goto bad;
    }
    if (*skip_space(p) != '\0') goto bad;
    return CVML_OK;
bad:
    return cvml_fail(CVML_ERR_RUNTIME,
                     "Invalid Parameter format for %s expect tuple but value='%s'", what, text);
}

int attr_parse_tuple(const char* text, const char* what, attr_tuple* out) {
    return parse_tuple(text, what, &out->count, out->values, ATTR_TUPLE_MAX);
}

static int parse_one(const op_def* op, const attr_spec* spec, const char* text, void* param) {
    char* field = static_cast<char*>(param) + spec->offset;
    int64_t lower_check = 0;
    switch (spec->type) {
        case ATTR_INT: {
            int32_t v = 0;
            int rc = attr_parse_int(text, spec->name, &v);
            if (rc) return rc;
            memcpy(field, &v, sizeof v);
            lower_check = v;
            break;
        }
        case ATTR_BOOL: {
            uint8_t v;
            int rc = attr_parse_bool(text, spec->name, &v);
            if (rc) return rc;
            memcpy(field, &v, sizeof v);
            return CVML_OK;
        }
        case ATTR_TUPLE: {
            // attr_pair and attr_tuple share their layout up to the values they keep.
            static_assert(offsetof(attr_pair, count) == offsetof(attr_tuple, count) &&
                              offsetof(attr_pair, values) == offsetof(attr_tuple, values),
                          "attr_pair is a prefix of attr_tuple");
            attr_tuple* t = reinterpret_cast<attr_tuple*>(field);
            return parse_tuple(text, spec->name, &t->count, t->values,
                               op->pair_tuples ? ATTR_PAIR_KEEP : ATTR_TUPLE_MAX);
        }
        case ATTR_OPT_INT: {
            // Every byte set, padding too: a parsed struct is copied whole (compiled plans).
            attr_opt_int v;
            memset(&v, 0, sizeof v);
            const char* p = skip_space(text);
            if (strncmp(p, "None", 4) != 0 || *skip_space(p + 4) != '\0') {
                int rc = attr_parse_int(text, spec->name, &v.value);
                if (rc) return rc;
                v.present = 1;
                lower_check = v.value;
            }
            memcpy(field, &v, sizeof v);
            if (!v.present) return CVML_OK;
            break;
        }
        case ATTR_STRING: {
            attr_string* s = reinterpret_cast<attr_string*>(field);
            if (strlen(text) >= sizeof s->value)
                return cvml_fail(CVML_ERR_RUNTIME, "Invalid Parameter %s: value '%.40s' too long",
                                 spec->name, text);
            if (spec->choices) {
                bool ok = false;
                for (const char* const* c = spec->choices; *c; ++c)
                    ok = ok || strcmp(*c, text) == 0;
                if (!ok)
                    return cvml_fail(CVML_ERR_RUNTIME,
                                     "Invalid Input: '%s', valid values are of %s", text,
                                     spec->name);
            }
            cvml_strlcpy(s->value, text, sizeof s->value);
            return CVML_OK;
        }
    }
    if (spec->has_lower_bound && lower_check < spec->lower_bound)
        return cvml_fail(CVML_ERR_RUNTIME,
                         "value %lld for Parameter %s should be greater equal to %lld",
                         static_cast<long long>(lower_check), spec->name,
                         static_cast<long long>(spec->lower_bound));
    return CVML_OK;
}

int op_parse_attrs(const op_def* op, ir_node* node) {
    if (op->attr_count == 0) {
        if (node->attr_count != 0)
            return cvml_fail(CVML_ERR_LOGIC,
                             "operator %s takes no attributes but %" PRId32 " given ('%s')",
                             op->name, node->attr_count, node->attrs[0].key);
        return CVML_OK;
    }
    void* param = cvml_mem_calloc(1, op->param_size);
    if (!param) return cvml_fail_out_of_memory();
    cvml_mem_free(node->param);
    node->param = param;
    for (int32_t k = 0; k < node->attr_count; ++k) {
        bool known = false;
        for (int32_t i = 0; i < op->attr_count; ++i)
            known = known || strcmp(op->attrs[i].name, node->attrs[k].key) == 0;
        if (!known)
            return cvml_fail(CVML_ERR_RUNTIME, "Cannot find argument '%s' in operator %s",
                             node->attrs[k].key, op->name);
    }
    for (int32_t i = 0; i < op->attr_count; ++i) {
        const attr_spec* spec = &op->attrs[i];
        const char* given = ir_node_attr(node, spec->name);
        const char* text = given ? given : spec->default_value;
        if (!text)
            return cvml_fail(CVML_ERR_RUNTIME,
                             "Required parameter %s of operator %s is not presented", spec->name,
                             op->name);
        int rc = parse_one(op, spec, text, param);
        if (rc) return rc;
    }
    return op->parse_extra ? op->parse_extra(param) : CVML_OK;
}

/* What op_parse_attrs guarantees of one parsed field. */
static bool field_ok(const op_def* op, const attr_spec* spec, const char* field) {
    int64_t lower_check = 0;
    switch (spec->type) {
        case ATTR_INT: {
            int32_t v;
            memcpy(&v, field, sizeof v);
            lower_check = v;
            break;
        }
        case ATTR_BOOL:
            return static_cast<uint8_t>(*field) <= 1;
        case ATTR_TUPLE: {
            int32_t count;
            memcpy(&count, field + offsetof(attr_tuple, count), sizeof count);
            (void)op;
            return count >= 0 && count <= ATTR_TUPLE_MAX;
        }
        case ATTR_OPT_INT: {
            attr_opt_int v;
            memcpy(&v, field, sizeof v);
            if (v.present > 1) return false;
            if (!v.present) return true;
            lower_check = v.value;
            break;
        }
        case ATTR_STRING: {
            const attr_string* s = reinterpret_cast<const attr_string*>(field);
            if (!memchr(s->value, 0, sizeof s->value)) return false;
            bool ok = !spec->choices;
            for (const char* const* c = spec->choices; c && *c; ++c)
                ok = ok || strcmp(*c, s->value) == 0;
            return ok;
        }
    }
    return !spec->has_lower_bound || lower_check >= spec->lower_bound;
}

int op_check_params(const op_def* op, const void* param) {
    if (op->param_size == 0) return CVML_OK;
    if (!param) return cvml_fail(CVML_ERR_LOGIC, "operator %s: no parameters", op->name);
    for (int32_t i = 0; i < op->attr_count; ++i)
        if (!field_ok(op, &op->attrs[i], static_cast<const char*>(param) + op->attrs[i].offset))
            return cvml_fail(CVML_ERR_LOGIC, "operator %s: parameter %s holds no parsed value",
                             op->name, op->attrs[i].name);
    if (!op->parse_extra) return CVML_OK;
    // parse_extra may normalise what it checks: it runs on a copy.
    alignas(8) uint8_t copy[1024];
    if (op->param_size > sizeof copy)
        return cvml_fail(CVML_ERR_LOGIC, "operator %s: parameters too large to check", op->name);
    memcpy(copy, param, op->param_size);
    const int rc = op->parse_extra(copy);
    if (op->release_param) op->release_param(copy);
    return rc ? cvml_fail_context(CVML_ERR_LOGIC, "operator %s: ", op->name) : CVML_OK;
}

/* ---- inference helpers ------------------------------------------------------------- */

int32_t op_bits(int64_t n) {
    int32_t b = 0;
    while (n > 0) {
        ++b;
        n >>= 1;
    }
    return b;
}

int32_t op_number_precision(int64_t n) {
    return op_bits(n + 1) + 1;
}

void op_copy_shape(ir_tensor* dst, const ir_tensor* src) {
    dst->ndim = src->ndim;
    for (int32_t i = 0; i < src->ndim; ++i) dst->dims[i] = src->dims[i];
}

int op_same_shape(const ir_tensor* a, const ir_tensor* b) {
    if (a->ndim != b->ndim) return 0;
    for (int32_t i = 0; i < a->ndim; ++i)
        if (a->dims[i] != b->dims[i]) return 0;
    return 1;
}

const char* op_dims_text(const int64_t* dims, int32_t ndim, const char* open, const char* sep,
                         const char* close, char* buf, size_t cap) {
    if (cap == 0) return buf;
    size_t used = static_cast<size_t>(snprintf(buf, cap, "%s", open));
    for (int32_t i = 0; i < ndim && used < cap; ++i)
        used += static_cast<size_t>(snprintf(buf + used, cap - used, "%s%lld", i ? sep : "",
                                             static_cast<long long>(dims[i])));
    if (used < cap) snprintf(buf + used, cap - used, "%s", close);
    return buf;
}

const char* op_shape_str(const ir_tensor* t, char* buf, size_t cap) {
    return op_dims_text(t->dims, t->ndim, "(", ", ", ")", buf, cap);
}

int op_node_step(const ir_graph* g, const ir_node* node, int32_t input, cvml_step* step) {
    if (!node->op || !node->op->step || input < 0 || input >= node->input_count) return 0;
    return node->op->step(g, node, input, step);
}

int64_t op_node_bound(const ir_graph* g, const ir_node* node, const int64_t* input_bounds) {
    if (!node->op || node->output_count < 1) return -1;
    if (node->op->bound) return node->op->bound(g, node, input_bounds);
    // A step's bound; a product by a constant may scale either input (the first that
    // is a step with a known bound counts).
    for (int32_t k = 0; k < node->input_count; ++k) {
        cvml_step s;
        if (!op_node_step(g, node, k, &s)) continue;
        const int64_t y = s.kind == CVML_STEP_ADD ? input_bounds[s.operand] : -1;
        const int64_t b = cvml_step_bound(&s, input_bounds[k], y);
        if (b >= 0) return b;
    }
    return -1;
}

int64_t op_bound_of_input0(const ir_graph*, const ir_node* node, const int64_t* input_bounds) {
    return node->input_count >= 1 ? input_bounds[0] : -1;
}
