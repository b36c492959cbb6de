// libFuzzer target: the JSON reader on arbitrary bytes (both escape modes).
#include <stddef.h>
#include <stdint.h>

#include "serializer/cvm/json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    for (int standard = 0; standard < 2; ++standard) {
        json_doc doc;
        if (json_parse_ex(reinterpret_cast<const char*>(data), size, standard, &doc) == 0) {
            // Walk the tree: every count and pointer must be consistent.
            const json_value* stack[JSON_MAX_DEPTH + 2];
            int top = 0;
            stack[top++] = doc.root;
            size_t seen = 0;
            while (top > 0) {
                const json_value* v = stack[--top];
                ++seen;
                if (v->type == JSON_STRING && v->str[v->len] != '\0') __builtin_trap();
                if (v->type == JSON_ARRAY || v->type == JSON_OBJECT)
                    for (int32_t i = 0; i < v->count && top < JSON_MAX_DEPTH + 1; ++i)
                        stack[top++] = v->items[i];
            }
            if (doc.used > doc.budget) __builtin_trap();
        }
        json_free(&doc);
    }
    return 0;
}
