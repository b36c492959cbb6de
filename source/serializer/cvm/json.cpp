#include "serializer/cvm/json.h"

#include <stdlib.h>
#include <string.h>

#include "utility/error.h"
#include "utility/platform.h"
#include "utility/memory.h"

struct json_chunk {
    json_chunk* next;
    size_t size;
    size_t used;
    /* data follows */
};

namespace {

constexpr size_t kChunk = 64 * 1024;
constexpr size_t kAlign = 16;

void* arena_alloc(json_doc* doc, size_t n) {
    n = (n + kAlign - 1) & ~(kAlign - 1);
    if (n > doc->budget - doc->used || doc->used > doc->budget) return nullptr;
    json_chunk* c = doc->chunks;
    if (!c || c->size - c->used < n) {
        size_t want = n > kChunk ? n : kChunk;
        c = static_cast<json_chunk*>(cvml_mem_alloc(sizeof(json_chunk) + kAlign + want));
        if (!c) return nullptr;
        c->next = doc->chunks;
        c->size = want;
        c->used = 0;
        doc->chunks = c;
    }
    uintptr_t base = reinterpret_cast<uintptr_t>(c + 1);
    base = (base + kAlign - 1) & ~static_cast<uintptr_t>(kAlign - 1);
    void* p = reinterpret_cast<void*>(base + c->used);
    c->used += n;
    doc->used += n;
    return p;
}

struct parser {
    const char* s;
    size_t n;
    size_t pos;
    json_doc* doc;
    int standard;
};

int fail_at(const parser* p, const char* what) {
    return cvml_fail(CVML_ERR_RUNTIME, "graph JSON: %s at byte %" CVML_PRIuSIZE, what, p->pos);
}

int out_of_budget(const parser* p) {
    return cvml_fail(CVML_ERR_RUNTIME,
                     "graph JSON: more memory needed than allowed for a %" CVML_PRIuSIZE
                     "-byte document "
                     "(byte %" CVML_PRIuSIZE ")",
                     p->n, p->pos);
}

void skip_ws(parser* p) {
    while (p->pos < p->n) {
        char c = p->s[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        ++p->pos;
    }
}

json_value* new_value(parser* p, uint8_t type) {
    json_value* v = static_cast<json_value*>(arena_alloc(p->doc, sizeof(json_value)));
    if (!v) return nullptr;
    memset(v, 0, sizeof *v);
    v->type = type;
    v->offset = p->pos;
    return v;
}

/* Upstream's dmlc reader knows exactly five escapes (\r \n \\ \t \"); anything else,
 * \u and \/ included, is its "unknown string escape" LOG(FATAL). A raw line break
 * ends the string with an error there too; we refuse every control character. */
bool is_hex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

unsigned hex_value(char c) {
    return c <= '9' ? static_cast<unsigned>(c - '0') : static_cast<unsigned>((c | 0x20) - 'a' + 10);
}

int parse_string(parser* p, const char** out, size_t* out_len) {
    ++p->pos;  // opening quote
    size_t start = p->pos;
    size_t len = 0;
    bool escaped = false;
    for (;;) {
        if (p->pos >= p->n) return fail_at(p, "unterminated string");
        unsigned char c = static_cast<unsigned char>(p->s[p->pos]);
        if (c == '"') break;
        if (c < 0x20) return fail_at(p, "control character in string");
        if (c == '\\') {
            escaped = true;
            if (p->pos + 1 >= p->n) return fail_at(p, "unterminated string escape");
            char e = p->s[p->pos + 1];
            bool known = e == 'r' || e == 'n' || e == '\\' || e == 't' || e == '"';
            if (!known && p->standard && (e == '/' || e == 'b' || e == 'f')) known = true;
            if (!known && p->standard && e == 'u') {
                if (p->n - p->pos < 6) return fail_at(p, "unterminated \\u escape");
                for (int k = 2; k < 6; ++k)
                    if (!is_hex(p->s[p->pos + k])) return fail_at(p, "bad \\u escape");
                p->pos += 6;
                len += 3;  // at most 3 UTF-8 bytes for one escape
                continue;
            }
            if (!known) return fail_at(p, "unknown string escape");
            p->pos += 2;
        } else {
            ++p->pos;
        }
        if (++len > JSON_MAX_STRING) return fail_at(p, "string too long");
    }
    size_t end = p->pos;
    ++p->pos;  // closing quote
    char* dst = static_cast<char*>(arena_alloc(p->doc, len + 1));
    if (!dst) return out_of_budget(p);
    if (!escaped) {
        memcpy(dst, p->s + start, len);
    } else {
        size_t k = 0;
        for (size_t i = start; i < end; ++i) {
            char c = p->s[i];
            if (c == '\\') {
                char e = p->s[++i];
                if (e == 'u') {
                    unsigned cp = 0;
                    for (int h = 1; h <= 4; ++h) cp = cp * 16 + hex_value(p->s[i + h]);
                    i += 4;
                    if (cp == 0) cp = '?';  // no embedded NUL
                    if (cp < 0x80) {
                        dst[k++] = static_cast<char>(cp);
                    } else if (cp < 0x800) {
                        dst[k++] = static_cast<char>(0xC0 | (cp >> 6));
                        dst[k++] = static_cast<char>(0x80 | (cp & 0x3F));
                    } else {
                        dst[k++] = static_cast<char>(0xE0 | (cp >> 12));
                        dst[k++] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
                        dst[k++] = static_cast<char>(0x80 | (cp & 0x3F));
                    }
                    continue;
                }
                c = e == 'r'   ? '\r'
                    : e == 'n' ? '\n'
                    : e == 't' ? '\t'
                    : e == 'b' ? '\b'
                    : e == 'f' ? '\f'
                               : e;
            }
            dst[k++] = c;
        }
        len = k;
    }
    dst[len] = '\0';
    *out = dst;
    *out_len = len;
    return CVML_OK;
}

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

int parse_number(parser* p, json_value* v) {
    size_t i = p->pos;
    bool neg = false;
    if (i < p->n && p->s[i] == '-') {
        neg = true;
        ++i;
    }
    if (i >= p->n || !is_digit(p->s[i])) return fail_at(p, "invalid number");
    bool is_int = true;
    bool overflow = false;
    uint64_t mag = 0;
    if (p->s[i] == '0') {
        ++i;
    } else {
        while (i < p->n && is_digit(p->s[i])) {
            uint64_t d = static_cast<uint64_t>(p->s[i] - '0');
            if (mag > (UINT64_MAX - d) / 10) overflow = true;
            mag = overflow ? mag : mag * 10 + d;
            ++i;
        }
    }
    if (i < p->n && p->s[i] == '.') {
        is_int = false;
        ++i;
        if (i >= p->n || !is_digit(p->s[i])) return fail_at(p, "invalid number");
        while (i < p->n && is_digit(p->s[i])) ++i;
    }
    if (i < p->n && (p->s[i] == 'e' || p->s[i] == 'E')) {
        is_int = false;
        ++i;
        if (i < p->n && (p->s[i] == '+' || p->s[i] == '-')) ++i;
        if (i >= p->n || !is_digit(p->s[i])) return fail_at(p, "invalid number");
        while (i < p->n && is_digit(p->s[i])) ++i;
    }
    uint64_t limit = neg ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
    if (overflow || mag > limit) is_int = false;
    if (is_int) {
        v->is_int = 1;
        v->integer = neg ? static_cast<int64_t>(0 - mag) : static_cast<int64_t>(mag);
    }
    p->pos = i;
    return CVML_OK;
}

bool literal(parser* p, const char* word) {
    size_t len = strlen(word);
    if (p->n - p->pos < len || memcmp(p->s + p->pos, word, len) != 0) return false;
    p->pos += len;
    return true;
}

int parse_value(parser* p, int depth, json_value** out);

/* Collects a container's elements as a linked list, then into an array. */
int finish_container(parser* p, json_value* v, json_value* head) {
    if (v->count == 0) return CVML_OK;
    v->items = static_cast<json_value**>(
        arena_alloc(p->doc, sizeof(json_value*) * static_cast<size_t>(v->count)));
    if (!v->items) return out_of_budget(p);
    int32_t i = 0;
    for (json_value* e = head; e; e = e->next) v->items[i++] = e;
    return CVML_OK;
}

int parse_container(parser* p, int depth, json_value* v, bool object) {
    const char close = object ? '}' : ']';
    ++p->pos;
    json_value* head = nullptr;
    json_value* tail = nullptr;
    skip_ws(p);
    if (p->pos < p->n && p->s[p->pos] == close) {
        ++p->pos;
        return CVML_OK;
    }
    for (;;) {
        skip_ws(p);
        const char* key = nullptr;
        size_t key_len = 0;
        if (object) {
            if (p->pos >= p->n || p->s[p->pos] != '"') return fail_at(p, "expected a key string");
            int rc = parse_string(p, &key, &key_len);
            if (rc) return rc;
            skip_ws(p);
            if (p->pos >= p->n || p->s[p->pos] != ':') return fail_at(p, "expected ':'");
            ++p->pos;
        }
        json_value* e = nullptr;
        int rc = parse_value(p, depth + 1, &e);
        if (rc) return rc;
        e->key = key;
        e->key_len = key_len;
        if (tail)
            tail->next = e;
        else
            head = e;
        tail = e;
        if (++v->count > JSON_MAX_ELEMENTS) return fail_at(p, "too many elements");
        skip_ws(p);
        if (p->pos >= p->n)
            return fail_at(p, object ? "unterminated object" : "unterminated array");
        char c = p->s[p->pos++];
        if (c == close) break;
        if (c != ',') {
            --p->pos;
            return fail_at(p, "expected ',' or a closing bracket");
        }
    }
    return finish_container(p, v, head);
}

int parse_value(parser* p, int depth, json_value** out) {
    if (depth > JSON_MAX_DEPTH) return fail_at(p, "nesting too deep");
    skip_ws(p);
    if (p->pos >= p->n) return fail_at(p, "unexpected end of input");
    char c = p->s[p->pos];
    json_value* v = nullptr;
    int rc = CVML_OK;
    switch (c) {
        case '{':
        case '[':
            v = new_value(p, c == '{' ? JSON_OBJECT : JSON_ARRAY);
            if (!v) return out_of_budget(p);
            rc = parse_container(p, depth, v, c == '{');
            break;
        case '"':
            v = new_value(p, JSON_STRING);
            if (!v) return out_of_budget(p);
            rc = parse_string(p, &v->str, &v->len);
            break;
        case 't':
        case 'f':
            v = new_value(p, JSON_BOOL);
            if (!v) return out_of_budget(p);
            v->boolean = c == 't';
            if (!literal(p, c == 't' ? "true" : "false")) rc = fail_at(p, "invalid literal");
            break;
        case 'n':
            v = new_value(p, JSON_NULL);
            if (!v) return out_of_budget(p);
            if (!literal(p, "null")) rc = fail_at(p, "invalid literal");
            break;
        default:
            v = new_value(p, JSON_NUMBER);
            if (!v) return out_of_budget(p);
            rc = parse_number(p, v);
            break;
    }
    if (rc) return rc;
    *out = v;
    return CVML_OK;
}

}  // namespace

int json_parse(const char* text, size_t size, json_doc* doc) {
    return json_parse_ex(text, size, 0, doc);
}

int json_parse_ex(const char* text, size_t size, int standard, json_doc* doc) {
    memset(doc, 0, sizeof *doc);
    // Every value costs at most one json_value plus one item pointer and takes at
    // least one input byte; strings copy at most their own bytes. 64x the input plus
    // a fixed floor covers any valid document and bounds hostile ones.
    if (size > (SIZE_MAX - 65536) / 64)
        return cvml_fail(CVML_ERR_RUNTIME, "graph JSON: %" CVML_PRIuSIZE " bytes is too large",
                         size);
    doc->budget = size * 64 + 65536;
    parser p = {text, size, 0, doc, standard};
    json_value* root = nullptr;
    int rc = text ? parse_value(&p, 0, &root) : fail_at(&p, "no input");
    if (!rc) {
        skip_ws(&p);
        if (p.pos != p.n) rc = fail_at(&p, "unexpected data after the document");
    }
    if (rc) {
        json_free(doc);
        return rc;
    }
    doc->root = root;
    return CVML_OK;
}

void json_free(json_doc* doc) {
    json_chunk* c = doc->chunks;
    while (c) {
        json_chunk* next = c->next;
        cvml_mem_free(c);
        c = next;
    }
    doc->chunks = nullptr;
    doc->root = nullptr;
    doc->used = 0;
}

const json_value* json_get(const json_value* object, const char* key) {
    if (!object || object->type != JSON_OBJECT) return nullptr;
    size_t len = strlen(key);
    for (int32_t i = object->count - 1; i >= 0; --i) {
        const json_value* m = object->items[i];
        if (m->key_len == len && memcmp(m->key, key, len) == 0) return m;
    }
    return nullptr;
}

const char* json_type_name(int type) {
    switch (type) {
        case JSON_NULL:
            return "null";
        case JSON_BOOL:
            return "a boolean";
        case JSON_NUMBER:
            return "a number";
        case JSON_STRING:
            return "a string";
        case JSON_ARRAY:
            return "an array";
        case JSON_OBJECT:
            return "an object";
        default:
            return "?";
    }
}
