#include "serializer/cvm/json.h"

#include <stdlib.h>
#include <string.h>

#include "utility/error.h"
#include "utility/platform.h"
#include "utility/memory.h"

namespace {

/* meta: bits 0-2 the type, bit 3 the flag (true / an integer), bit 4 the integer lives
 * out of line, bits 5-31 the byte offset (JSON_MAX_DOCUMENT < 2^27). */
constexpr uint32_t kTypeMask = 7;
constexpr uint32_t kFlag = 8;
constexpr uint32_t kWide = 16;
constexpr int kOffsetShift = 5;
static_assert(JSON_MAX_DOCUMENT <= (1u << (32 - kOffsetShift)), "offsets must fit the meta word");

/* What the first pass learns: the shape of the tree the second pass writes. */
struct tree_size {
    uint32_t* counts; /* per container, in document order: its elements or members */
    size_t containers;
    size_t counts_capacity;
    size_t slots;        /* value slots, count slots included */
    size_t wide;         /* integers that need 64 bits */
    size_t string_bytes; /* decoded, terminators included */
};

/* Where the second pass writes. */
struct tree_out {
    json_value* slots;
    size_t next_slot;
    int64_t* wide;
    size_t next_wide;
    char* strings;
    size_t next_string;
    size_t next_container;
};

struct parser {
    const char* s;
    size_t n;
    size_t pos;
    int standard;
    tree_size* size; /* first pass */
    tree_out* out;   /* second pass */
};

/* The standard escapes serve documents that are not graphs (the tests' metadata); a
 * bare-metal image reads graphs only, and leaves their code out. */
constexpr bool kStandardEscapes = !CVML_BARE_METAL;

bool standard_escapes(const parser* p) {
    return kStandardEscapes && p->standard;
}

int fail_at(const parser* p, const char* what) {
    return cvml_fail(CVML_ERR_RUNTIME, "graph JSON: %s at byte %" CVML_PRIuSIZE, what, p->pos);
}

void skip_ws(parser* p) {
    while (p->pos < p->n) {
        char c = p->s[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        ++p->pos;
    }
}

/* Distance from a slot to what it points at, always forward in the one block. */
uint32_t link(const json_value* from, const void* to) {
    return static_cast<uint32_t>(static_cast<const char*>(to) -
                                 reinterpret_cast<const char*>(from));
}

const void* follow(const json_value* v) {
    return reinterpret_cast<const char*>(v) + v->data;
}

void set_meta(json_value* v, int type, size_t offset) {
    v->meta = static_cast<uint32_t>(type) | static_cast<uint32_t>(offset << kOffsetShift);
    v->data = 0;
}

bool is_hex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

unsigned hex_value(char c) {
    return c <= '9' ? static_cast<unsigned>(c - '0') : static_cast<unsigned>((c | 0x20) - 'a' + 10);
}

/* Upstream's dmlc reader knows exactly five escapes (\r \n \\ \t \"); anything else,
 * \u and \/ included, is its "unknown string escape" LOG(FATAL). A raw line break
 * ends the string with an error there too; we refuse every control character.
 * Returns the decoded length bound (\u counts 3 bytes) and leaves pos after the
 * closing quote. */
int scan_string(parser* p, size_t* len_out) {
    ++p->pos;  // opening quote
    size_t len = 0;
    for (;;) {
        if (p->pos >= p->n) return fail_at(p, "unterminated string");
        unsigned char c = static_cast<unsigned char>(p->s[p->pos]);
        if (c == '"') break;
        if (c < 0x20) return fail_at(p, "control character in string");
        if (c == '\\') {
            if (p->pos + 1 >= p->n) return fail_at(p, "unterminated string escape");
            char e = p->s[p->pos + 1];
            bool known = e == 'r' || e == 'n' || e == '\\' || e == 't' || e == '"';
            if (!known && standard_escapes(p) && (e == '/' || e == 'b' || e == 'f')) known = true;
            if (!known && standard_escapes(p) && e == 'u') {
                if (p->n - p->pos < 6) return fail_at(p, "unterminated \\u escape");
                for (int k = 2; k < 6; ++k)
                    if (!is_hex(p->s[p->pos + k])) return fail_at(p, "bad \\u escape");
                p->pos += 6;
                len += 3;  // at most 3 UTF-8 bytes for one escape
                if (len > JSON_MAX_STRING) return fail_at(p, "string too long");
                continue;
            }
            if (!known) return fail_at(p, "unknown string escape");
            p->pos += 2;
        } else {
            ++p->pos;
        }
        if (++len > JSON_MAX_STRING) return fail_at(p, "string too long");
    }
    ++p->pos;  // closing quote
    *len_out = len;
    return CVML_OK;
}

/* Writes the decoded string whose quoted text spans [start, end) (already checked). */
size_t decode_string(const char* s, size_t start, size_t end, char* dst) {
    size_t k = 0;
    for (size_t i = start; i < end; ++i) {
        char c = s[i];
        if (c == '\\') {
            char e = s[++i];
            if (kStandardEscapes && e == 'u') {
                unsigned cp = 0;
                for (int h = 1; h <= 4; ++h) cp = cp * 16 + hex_value(s[i + h]);
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
    dst[k] = '\0';
    return k;
}

/* A string value or key; on the second pass into `slot`. */
int parse_string(parser* p, json_value* slot) {
    size_t start = p->pos + 1;
    size_t len = 0;
    int rc = scan_string(p, &len);
    if (rc) return rc;
    if (!p->out) {
        p->size->string_bytes += len + 1;
        return CVML_OK;
    }
    tree_out* o = p->out;
    char* dst = o->strings + o->next_string;
    size_t written = decode_string(p->s, start, p->pos - 1, dst);
    o->next_string += written + 1;
    slot->data = link(slot, dst);
    return CVML_OK;
}

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

int parse_number(parser* p, json_value* slot) {
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
    p->pos = i;
    uint64_t limit = neg ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
    if (overflow || mag > limit) is_int = false;
    if (!is_int) return CVML_OK;
    int64_t value = neg ? static_cast<int64_t>(0 - mag) : static_cast<int64_t>(mag);
    bool wide = value < INT32_MIN || value > INT32_MAX;
    if (!p->out) {
        p->size->wide += wide;
        return CVML_OK;
    }
    slot->meta |= kFlag;
    if (!wide) {
        slot->data = static_cast<uint32_t>(static_cast<int32_t>(value));
        return CVML_OK;
    }
    tree_out* o = p->out;
    int64_t* dst = o->wide + o->next_wide++;
    *dst = value;
    slot->meta |= kWide;
    slot->data = link(slot, dst);
    return CVML_OK;
}

bool literal(parser* p, const char* word) {
    size_t len = strlen(word);
    if (p->n - p->pos < len || memcmp(p->s + p->pos, word, len) != 0) return false;
    p->pos += len;
    return true;
}

int parse_value(parser* p, int depth, json_value* slot);

/* First pass: a container's elements are counted into a new entry of `counts`. */
int note_container(parser* p, size_t* index) {
    tree_size* t = p->size;
    if (t->containers == t->counts_capacity) {
        size_t capacity = t->counts_capacity ? 2 * t->counts_capacity : 64;
        uint32_t* grown =
            static_cast<uint32_t*>(cvml_scratch_realloc(t->counts, capacity * sizeof(uint32_t)));
        if (!grown) return cvml_fail(CVML_ERR_RUNTIME, "graph JSON: out of memory");
        t->counts = grown;
        t->counts_capacity = capacity;
    }
    *index = t->containers++;
    t->counts[*index] = 0;
    return CVML_OK;
}

/* Second pass: the container's elements go to a block of slots reserved now, after a
 * count slot, so they sit side by side whatever they contain. */
json_value* reserve_block(parser* p, json_value* slot, bool object) {
    tree_out* o = p->out;
    uint32_t count = p->size->counts[o->next_container++];
    if (count == 0) return nullptr;
    json_value* header = o->slots + o->next_slot;
    header->meta = 0;
    header->data = count;
    o->next_slot += 1 + static_cast<size_t>(count) * (object ? 2 : 1);
    slot->data = link(slot, header);
    return header + 1;
}

int parse_container(parser* p, int depth, json_value* slot, bool object) {
    const char close = object ? '}' : ']';
    size_t index = 0;
    json_value* elements = nullptr;
    if (!p->out) {
        int rc = note_container(p, &index);
        if (rc) return rc;
    } else {
        elements = reserve_block(p, slot, object);
    }
    ++p->pos;
    skip_ws(p);
    if (p->pos < p->n && p->s[p->pos] == close) {
        ++p->pos;
        return CVML_OK;
    }
    uint32_t count = 0;
    for (;;) {
        skip_ws(p);
        json_value* key = elements ? elements + 2 * static_cast<size_t>(count) : nullptr;
        json_value* value = !elements ? nullptr : object ? key + 1 : elements + count;
        if (object) {
            if (p->pos >= p->n || p->s[p->pos] != '"') return fail_at(p, "expected a key string");
            if (key) set_meta(key, JSON_STRING, p->pos);
            int rc = parse_string(p, key);
            if (rc) return rc;
            skip_ws(p);
            if (p->pos >= p->n || p->s[p->pos] != ':') return fail_at(p, "expected ':'");
            ++p->pos;
        }
        int rc = parse_value(p, depth + 1, value);
        if (rc) return rc;
        ++count;
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
    if (!p->out) {
        p->size->counts[index] = count;
        p->size->slots += 1 + static_cast<size_t>(count) * (object ? 2 : 1);
    }
    return CVML_OK;
}

int parse_value(parser* p, int depth, json_value* slot) {
    if (depth > JSON_MAX_DEPTH) return fail_at(p, "nesting too deep");
    skip_ws(p);
    if (p->pos >= p->n) return fail_at(p, "unexpected end of input");
    char c = p->s[p->pos];
    int type = c == '{'               ? JSON_OBJECT
               : c == '['             ? JSON_ARRAY
               : c == '"'             ? JSON_STRING
               : c == 't' || c == 'f' ? JSON_BOOL
               : c == 'n'             ? JSON_NULL
                                      : JSON_NUMBER;
    if (slot) set_meta(slot, type, p->pos);
    switch (type) {
        case JSON_OBJECT:
        case JSON_ARRAY:
            return parse_container(p, depth, slot, type == JSON_OBJECT);
        case JSON_STRING:
            return parse_string(p, slot);
        case JSON_BOOL:
            if (slot && c == 't') slot->meta |= kFlag;
            return literal(p, c == 't' ? "true" : "false") ? CVML_OK
                                                           : fail_at(p, "invalid literal");
        case JSON_NULL:
            return literal(p, "null") ? CVML_OK : fail_at(p, "invalid literal");
        default:
            return parse_number(p, slot);
    }
}

int parse_document(parser* p, json_value* root) {
    int rc = parse_value(p, 0, root);
    if (rc) return rc;
    skip_ws(p);
    return p->pos == p->n ? CVML_OK : fail_at(p, "unexpected data after the document");
}

/* The tree's bytes: slots, then wide integers (8-aligned after 8-byte slots), then
 * strings; NULL-free arithmetic bounded by the document cap. */
size_t tree_bytes(const tree_size* t) {
    return (t->slots + 1) * sizeof(json_value) + t->wide * sizeof(int64_t) + t->string_bytes;
}

/* Characters a checked scalar (number or literal) ends at. */
bool ends_scalar(char c) {
    return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

size_t skip_ws_from(const char* s, size_t n, size_t pos) {
    while (pos < n && (s[pos] == ' ' || s[pos] == '\t' || s[pos] == '\n' || s[pos] == '\r')) ++pos;
    return pos;
}

/* The end of the value starting at `pos` of a document whose syntax was checked: the
 * brackets balance and every string is closed, so counting them is enough. */
size_t skip_checked_value(const char* s, size_t n, size_t pos) {
    int64_t depth = 0;
    do {
        char c = s[pos];
        if (c == '"') {
            for (++pos; s[pos] != '"'; pos += s[pos] == '\\' ? 2 : 1) {
            }
            ++pos;
        } else if (c == '{' || c == '[') {
            ++depth;
            ++pos;
        } else if (c == '}' || c == ']') {
            --depth;
            ++pos;
        } else if (depth == 0) {
            while (pos < n && !ends_scalar(s[pos])) ++pos;
        } else {
            ++pos;
        }
    } while (depth > 0 && pos < n);
    return pos;
}

/* The syntax pass over [begin, end) of text: counts the tree, or fails as json_parse. */
int count_tree(const char* text, size_t begin, size_t end, int standard, tree_size* counted) {
    memset(counted, 0, sizeof *counted);
    if (!text) return cvml_fail(CVML_ERR_RUNTIME, "graph JSON: no input");
    if (end > JSON_MAX_DOCUMENT)
        return cvml_fail(CVML_ERR_RUNTIME,
                         "graph JSON: %" CVML_PRIuSIZE
                         " bytes, more than the %u a document may have (D7)",
                         end, JSON_MAX_DOCUMENT);
    parser p = {text, end, begin, standard, counted, nullptr};
    int rc = parse_document(&p, nullptr);
    size_t bytes = tree_bytes(counted);
    if (!rc && bytes > JSON_MAX_TREE)
        rc = cvml_fail(CVML_ERR_RUNTIME,
                       "graph JSON: its tree needs %" CVML_PRIuSIZE
                       " bytes, more than the %u allowed (D7)",
                       bytes, JSON_MAX_TREE);
    return rc;
}

int parse_range(const char* text, size_t begin, size_t end, int standard, json_doc* doc) {
    memset(doc, 0, sizeof *doc);
    tree_size counted;
    int rc = count_tree(text, begin, end, standard, &counted);
    size_t bytes = tree_bytes(&counted);
    char* block = nullptr;
    if (!rc) {
        block = static_cast<char*>(cvml_scratch_alloc(bytes));
        if (!block)
            rc = cvml_fail(CVML_ERR_RUNTIME, "graph JSON: out of memory (%" CVML_PRIuSIZE " bytes)",
                           bytes);
    }
    if (!rc) {
        tree_out out;
        memset(&out, 0, sizeof out);
        out.slots = reinterpret_cast<json_value*>(block);
        out.next_slot = 1;  // the root
        out.wide = reinterpret_cast<int64_t*>(block + (counted.slots + 1) * sizeof(json_value));
        out.strings = reinterpret_cast<char*>(out.wide + counted.wide);
        parser second = {text, end, begin, standard, &counted, &out};
        rc = parse_document(&second, out.slots);
    }
    cvml_scratch_free(counted.counts);
    if (rc) {
        cvml_scratch_free(block);
        return rc;
    }
    doc->block = block;
    doc->root = reinterpret_cast<json_value*>(block);
    doc->tree_bytes = bytes;
    return CVML_OK;
}

}  // namespace

int json_parse(const char* text, size_t size, json_doc* doc) {
    return parse_range(text, 0, size, 0, doc);
}

int json_parse_ex(const char* text, size_t size, int standard, json_doc* doc) {
    return parse_range(text, 0, size, standard, doc);
}

int json_check(const char* text, size_t size) {
    tree_size counted;
    int rc = count_tree(text, 0, size, 0, &counted);
    cvml_scratch_free(counted.counts);
    return rc;
}

int json_parse_range(const char* text, size_t begin, size_t end, json_doc* doc) {
    return parse_range(text, begin, end, 0, doc);
}

size_t json_value_start(const char* text, size_t size, size_t pos) {
    return skip_ws_from(text, size, pos);
}

int json_type_at(const char* text, size_t size, size_t pos) {
    pos = skip_ws_from(text, size, pos);
    char c = pos < size ? text[pos] : '\0';
    return c == '{'               ? JSON_OBJECT
           : c == '['             ? JSON_ARRAY
           : c == '"'             ? JSON_STRING
           : c == 't' || c == 'f' ? JSON_BOOL
           : c == 'n'             ? JSON_NULL
                                  : JSON_NUMBER;
}

void json_iter_start(json_iter* it, const char* text, size_t size, size_t pos) {
    memset(it, 0, sizeof *it);
    it->text = text;
    it->size = size;
    pos = skip_ws_from(text, size, pos);
    it->close = pos < size && text[pos] == '{' ? '}' : ']';
    it->pos = pos + 1;
}

int json_iter_next(json_iter* it) {
    const char* s = it->text;
    size_t n = it->size;
    size_t p = skip_ws_from(s, n, it->pos);
    if (p < n && s[p] == ',') p = skip_ws_from(s, n, p + 1);
    if (p >= n || s[p] == it->close) {
        it->pos = p;
        return 0;
    }
    if (it->close == '}') {
        it->key_begin = p;
        it->key_end = p = skip_checked_value(s, n, p);
        p = skip_ws_from(s, n, p) + 1;  // the ':'
        p = skip_ws_from(s, n, p);
    }
    it->begin = p;
    it->end = it->pos = skip_checked_value(s, n, p);
    return 1;
}

void json_free(json_doc* doc) {
    cvml_scratch_free(doc->block);
    doc->block = nullptr;
    doc->root = nullptr;
    doc->tree_bytes = 0;
}

int json_type(const json_value* v) {
    return static_cast<int>(v->meta & kTypeMask);
}

size_t json_offset(const json_value* v) {
    return v->meta >> kOffsetShift;
}

int json_is_int(const json_value* v) {
    return json_type(v) == JSON_NUMBER && (v->meta & kFlag) != 0;
}

int64_t json_int(const json_value* v) {
    if (!json_is_int(v)) return 0;
    if (v->meta & kWide) return *static_cast<const int64_t*>(follow(v));
    return static_cast<int32_t>(v->data);
}

int json_bool(const json_value* v) {
    return json_type(v) == JSON_BOOL && (v->meta & kFlag) != 0;
}

const char* json_str(const json_value* v) {
    return json_type(v) == JSON_STRING ? static_cast<const char*>(follow(v)) : "";
}

int32_t json_count(const json_value* v) {
    int type = json_type(v);
    if ((type != JSON_ARRAY && type != JSON_OBJECT) || v->data == 0) return 0;
    return static_cast<int32_t>(static_cast<const json_value*>(follow(v))->data);
}

const json_value* json_at(const json_value* v, int32_t i) {
    const json_value* elements = static_cast<const json_value*>(follow(v)) + 1;
    return json_type(v) == JSON_OBJECT ? elements + 2 * static_cast<size_t>(i) + 1 : elements + i;
}

const char* json_key_at(const json_value* object, int32_t i) {
    const json_value* elements = static_cast<const json_value*>(follow(object)) + 1;
    return json_str(elements + 2 * static_cast<size_t>(i));
}

const json_value* json_get(const json_value* object, const char* key) {
    if (json_type(object) != JSON_OBJECT) return nullptr;
    for (int32_t i = json_count(object) - 1; i >= 0; --i)
        if (strcmp(json_key_at(object, i), key) == 0) return json_at(object, i);
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
