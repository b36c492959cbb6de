/* Lookup in the generated const tables (cmake/registry.cmake, cvml_registry_write_sorted):
 * rows sorted by name in strcmp order, found by binary search. */
#pragma once

#include <stdint.h>
#include <string.h>

/* The row of `table` (count rows) whose name, name_of(row), is `name`; nullptr if none. */
template <typename T, typename NameOf>
const T* sorted_table_find(const T* const* table, int32_t count, const char* name, NameOf name_of) {
    int32_t lo = 0, hi = count;
    while (lo < hi) {
        const int32_t mid = lo + (hi - lo) / 2;
        const int c = strcmp(name_of(table[mid]), name);
        if (c == 0) return table[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return nullptr;
}
