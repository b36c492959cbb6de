#include "serializer/cvm/name_index.h"

#include <stdlib.h>
#include <string.h>

#include "utility/memory.h"
#include "utility/sort.h"

namespace {

int compare_bytes(const char* a, size_t alen, const char* b, size_t blen) {
    int c = memcmp(a, b, alen < blen ? alen : blen);
    if (c) return c;
    return alen < blen ? -1 : alen > blen;
}

int by_name_then_id(const void* a, const void* b) {
    const name_entry* x = static_cast<const name_entry*>(a);
    const name_entry* y = static_cast<const name_entry*>(b);
    int c = compare_bytes(x->name, x->len, y->name, y->len);
    if (c) return c;
    return x->id < y->id ? -1 : x->id > y->id;
}

}  // namespace

void name_index_init(name_index* x, name_entry* entries, int32_t count) {
    x->entries = entries;
    x->count = entries ? count : 0;
    if (x->count > 1)
        cvml_sort(x->entries, static_cast<size_t>(count), sizeof(name_entry), by_name_then_id);
}

void name_index_free(name_index* x) {
    cvml_scratch_free(x->entries);
    x->entries = nullptr;
    x->count = 0;
}

int32_t name_index_find(const name_index* x, const char* name, size_t len) {
    int32_t lo = 0, hi = x->count;  // first entry not below the name
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        const name_entry& e = x->entries[mid];
        if (compare_bytes(e.name, e.len, name, len) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == x->count) return -1;
    const name_entry& e = x->entries[lo];
    return compare_bytes(e.name, e.len, name, len) == 0 ? e.id : -1;
}

int name_index_first_duplicate(const name_index* x, int32_t* first, int32_t* second) {
    int found = 0;
    for (int32_t i = 1; i < x->count; ++i) {
        const name_entry& a = x->entries[i - 1];
        const name_entry& b = x->entries[i];
        if (compare_bytes(a.name, a.len, b.name, b.len) != 0) continue;
        // b is the second of its group only if the entry before a differs.
        bool second_of_group = i == 1 || compare_bytes(x->entries[i - 2].name,
                                                       x->entries[i - 2].len, a.name, a.len) != 0;
        if (!second_of_group) continue;
        if (!found || b.id < *second) {
            *first = a.id;
            *second = b.id;
            found = 1;
        }
    }
    return found;
}

int name_entries_first_duplicate(name_entry* entries, int32_t count, int32_t* first,
                                 int32_t* second) {
    name_index index;
    name_index_init(&index, entries, count);
    int duplicate = name_index_first_duplicate(&index, first, second);
    name_index_free(&index);
    return duplicate;
}
