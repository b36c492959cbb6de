// libFuzzer target: the JSON reader on arbitrary bytes (both escape modes).
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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
                if (json_type(v) == JSON_STRING && json_str(v)[strlen(json_str(v))] != '\0')
                    __builtin_trap();
                if (json_offset(v) >= size) __builtin_trap();
                if (json_type(v) == JSON_OBJECT)
                    for (int32_t i = 0; i < json_count(v); ++i) (void)strlen(json_key_at(v, i));
                for (int32_t i = 0; i < json_count(v) && top < JSON_MAX_DEPTH + 1; ++i)
                    stack[top++] = json_at(v, i);
            }
            // The tree is bounded by the document: 16 bytes a value at most, plus its
            // string bytes, plus the root.
            if (doc.tree_bytes > 16 * size + 16) __builtin_trap();
        }
        json_free(&doc);
    }
    return 0;
}
