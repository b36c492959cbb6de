/* A small strict JSON reader for the CVM graph format.
 *
 * Why our own: the static library must link with only -lm -lpthread -ldl for C users
 * and microcontrollers, so no JSON library (Debian's or any other) can be a link
 * dependency, and the core may not use the C++ runtime. Writing it ourselves also
 * gives exact control over what upstream's dmlc reader accepts (its five string
 * escapes, duplicate keys) and over resources.
 *
 * The tree is compact and its size is known before it is built: a first pass checks
 * the syntax and counts values, containers and string bytes; the second writes every
 * value as one 8-byte slot into one allocation, the elements of a container side by
 * side (so element i is found in O(1)), strings and integers wider than 32 bits after
 * the slots. A value costs at most 16 bytes of tree (its slot and, for a non-empty
 * container, a count slot) plus its decoded string bytes, so the tree is at most a
 * few times the document; documents are capped at JSON_MAX_DOCUMENT bytes and trees
 * at JSON_MAX_TREE (divergence D7 in ../shared/spec/FORMAT.md's list, see
 * docs/reliability.md), which bounds a hostile graph's parse memory whatever its
 * shape. Nesting depth is capped too.
 *
 * Errors are upstream's parse errors: CVML_ERR_RUNTIME (dmlc LOG(FATAL)), with the
 * byte offset in the message. */
#pragma once

#include <stddef.h>
#include <stdint.h>

enum json_type {
    JSON_NULL = 0,
    JSON_BOOL = 1,
    JSON_NUMBER = 2,
    JSON_STRING = 3,
    JSON_ARRAY = 4,
    JSON_OBJECT = 5,
};

/* One value: `meta` holds the type, two flags and the byte offset in the document;
 * `data` an integer that fits 32 bits, or the distance in bytes from this slot to
 * what the value points at (its elements, its string, its wide integer). Read it only
 * through the functions below. */
typedef struct json_value {
    uint32_t meta;
    uint32_t data;
} json_value;

/* Limits: nesting depth, document bytes, tree bytes, one string's length. */
#define JSON_MAX_DEPTH 64
#define JSON_MAX_DOCUMENT (32u << 20)
#define JSON_MAX_TREE (192u << 20)
#define JSON_MAX_STRING (16u << 20)

typedef struct json_doc {
    json_value* root;
    void* block;       /* the one allocation holding the tree */
    size_t tree_bytes; /* its size */
} json_doc;

/* Parses `size` bytes (no terminator needed). Trailing whitespace is allowed,
 * anything else after the value is an error. On failure the document is empty and
 * the error is set. json_free() must be called in both cases. */
int json_parse(const char* text, size_t size, json_doc* doc);
/* With `standard` set, the full JSON escape set (\/ \b \f \uXXXX, decoded to UTF-8)
 * is accepted as well: for documents that are not CVM graphs (test metadata). A
 * bare-metal build (CVML_BARE_METAL) reads graphs only and ignores `standard`. */
int json_parse_ex(const char* text, size_t size, int standard, json_doc* doc);
void json_free(json_doc* doc);

int json_type(const json_value* v);
/* Byte offset of the value in the document, for messages. */
size_t json_offset(const json_value* v);
/* A number written as an integer that fits int64. */
int json_is_int(const json_value* v);
int64_t json_int(const json_value* v);
int json_bool(const json_value* v);
/* A string's bytes, NUL-terminated (no embedded NUL: \u0000 reads as '?'). */
const char* json_str(const json_value* v);
/* Elements of an array or members of an object; 0 for anything else. */
int32_t json_count(const json_value* v);
/* Element i of an array, or the value of member i of an object (0 <= i < count). */
const json_value* json_at(const json_value* v, int32_t i);
/* The key of member i of an object. */
const char* json_key_at(const json_value* object, int32_t i);

/* The last member named `key` (upstream's readers let a later duplicate win), or
 * NULL. */
const json_value* json_get(const json_value* object, const char* key);
/* Type names for messages. */
const char* json_type_name(int type);

/* Reading a document in pieces, so that no tree of the whole is ever held: a graph's
 * reader keeps only what it needs of each piece, and a microcontroller's heap never
 * holds the tree of a 120 KB graph (docs/embedded.md).
 * - json_check() is json_parse()'s syntax pass alone: the same errors and limits (the
 *   whole tree's size included), nothing kept.
 * - json_parse_range() builds the tree of the one value spanning [begin, end) of a
 *   checked document; json_offset() and messages count from the document's start.
 * - A json_iter walks the members of an object or the elements of an array of a
 *   checked document as byte ranges, without a tree. */
int json_check(const char* text, size_t size);
int json_parse_range(const char* text, size_t begin, size_t end, json_doc* doc);
/* The type of the value whose first byte (whitespace skipped) is at `pos`. */
int json_type_at(const char* text, size_t size, size_t pos);
/* Where that first byte is. */
size_t json_value_start(const char* text, size_t size, size_t pos);

typedef struct json_iter {
    const char* text;
    size_t size;
    size_t pos;
    char close;                /* '}' or ']' */
    size_t key_begin, key_end; /* an object member's key, quotes included */
    size_t begin, end;         /* the member's value or the element */
} json_iter;

/* Starts at the object or array whose first byte (whitespace skipped) is at `pos`. */
void json_iter_start(json_iter* it, const char* text, size_t size, size_t pos);
/* 1 with the next member's or element's ranges set, 0 after the last. */
int json_iter_next(json_iter* it);
