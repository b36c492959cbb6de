/* Names looked up and checked for duplicates in O(n log n): graph variable names, arg
 * node names, params names. A sorted index rather than a hash table: its worst case
 * is the same as its average (a fixed hash can be flooded with colliding names by a
 * hostile model), and its results are the same on every machine. Sorting compares
 * names byte by byte, so it costs O(total name bytes x log n) at worst. */
#pragma once

#include <stddef.h>
#include <stdint.h>

typedef struct name_entry {
    const char* name; /* not owned */
    size_t len;
    int32_t id; /* the caller's number for the name, e.g. a node index */
} name_entry;

typedef struct name_index {
    name_entry* entries; /* sorted by (bytes, id) */
    int32_t count;
} name_index;

/* Takes `count` entries (allocated by the caller with cvml_mem_alloc, owned by the index from now
 * on, freed by name_index_free even on failure) and sorts them. */
void name_index_init(name_index* x, name_entry* entries, int32_t count);
void name_index_free(name_index* x);

/* The lowest id with exactly these bytes, or -1. */
int32_t name_index_find(const name_index* x, const char* name, size_t len);

/* Of every name held by several ids, the pair (first id, second id) with the smallest
 * second id: the duplicate a scan in id order would meet first. Returns 0 when all
 * names are distinct. */
int name_index_first_duplicate(const name_index* x, int32_t* first, int32_t* second);

/* The same for entries that need no lookup afterwards: takes them as name_index_init
 * does, finds the first duplicate and frees them. */
int name_entries_first_duplicate(name_entry* entries, int32_t count, int32_t* first,
                                 int32_t* second);
