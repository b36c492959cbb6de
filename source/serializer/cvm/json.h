/* A small strict JSON reader for the CVM graph format.
 *
 * Why our own: the static library must link with only -lm -lpthread -ldl for C users
 * and microcontrollers, so no JSON library (Debian's or any other) can be a link
 * dependency, and the core may not use the C++ runtime. Writing it ourselves also
 * gives exact control over what upstream's dmlc reader accepts (its five string
 * escapes, duplicate keys) and over resources: nesting depth, string length and
 * element counts are limited, and every allocation comes from an arena whose total
 * is bounded by a multiple of the input size, so a 1 KB file can never make the
 * loader allocate more than a few hundred KB.
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

typedef struct json_value json_value;

struct json_value {
    uint8_t type;    /* enum json_type */
    uint8_t boolean; /* JSON_BOOL */
    uint8_t is_int;  /* JSON_NUMBER: an integer that fits int64 */
    int32_t count;   /* JSON_ARRAY / JSON_OBJECT: number of elements */
    int64_t integer; /* JSON_NUMBER with is_int */
    const char* str; /* JSON_STRING: NUL-terminated, `len` bytes (no embedded NUL) */
    size_t len;
    const char* key; /* set on members of an object */
    size_t key_len;
    json_value** items; /* JSON_ARRAY / JSON_OBJECT elements, in document order */
    json_value* next;   /* internal: sibling link while parsing */
    size_t offset;      /* byte offset of the value in the input, for messages */
};

/* Limits: nesting depth, one string's length, one container's elements. */
#define JSON_MAX_DEPTH 64
#define JSON_MAX_STRING (16u << 20)
#define JSON_MAX_ELEMENTS (1 << 26)

typedef struct json_chunk json_chunk;

typedef struct json_doc {
    json_value* root;
    json_chunk* chunks;
    size_t used;   /* bytes handed out so far */
    size_t budget; /* the most the arena may hand out */
} json_doc;

/* Parses `size` bytes (no terminator needed). Trailing whitespace is allowed,
 * anything else after the value is an error. On failure the document is empty and
 * the error is set. json_free() must be called in both cases. */
int json_parse(const char* text, size_t size, json_doc* doc);
/* With `standard` set, the full JSON escape set (\/ \b \f \uXXXX, decoded to UTF-8)
 * is accepted as well: for documents that are not CVM graphs (test metadata). */
int json_parse_ex(const char* text, size_t size, int standard, json_doc* doc);
void json_free(json_doc* doc);

/* The last member named `key` (upstream's readers let a later duplicate win), or
 * NULL. */
const json_value* json_get(const json_value* object, const char* key);
/* Type names for messages. */
const char* json_type_name(int type);
