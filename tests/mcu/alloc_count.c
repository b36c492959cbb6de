/* The counting allocator: the library's allocation calls, wrapped by the linker
 * (-Wl,--wrap=SYMBOL sends the library's calls to __wrap_SYMBOL, which reaches newlib's
 * through __real_SYMBOL). */
#include <malloc.h>
#include <stdlib.h>

#include "memory_stats.h"

void* __real_malloc(size_t size);
void* __real_calloc(size_t count, size_t size);
void* __real_realloc(void* p, size_t size);
void* __real_aligned_alloc(size_t alignment, size_t size);
void __real_free(void* p);

static struct alloc_counts g_counts;

static void count_block(void* p, void* caller) {
    if (!p) return;
    ++g_counts.allocations;
    g_counts.last_caller = (uintptr_t)caller;
    g_counts.live_bytes += malloc_usable_size(p);
    if (g_counts.live_bytes > g_counts.peak_live_bytes)
        g_counts.peak_live_bytes = g_counts.live_bytes;
}

static void uncount_block(void* p) {
    if (!p) return;
    ++g_counts.frees;
    g_counts.live_bytes -= malloc_usable_size(p);
}

void* __wrap_malloc(size_t size) {
    void* p = __real_malloc(size);
    count_block(p, __builtin_return_address(0));
    return p;
}

void* __wrap_calloc(size_t count, size_t size) {
    void* p = __real_calloc(count, size);
    count_block(p, __builtin_return_address(0));
    return p;
}

void* __wrap_aligned_alloc(size_t alignment, size_t size) {
    void* p = __real_aligned_alloc(alignment, size);
    count_block(p, __builtin_return_address(0));
    return p;
}

void* __wrap_realloc(void* old, size_t size) {
    size_t old_bytes = old ? malloc_usable_size(old) : 0;
    void* p = __real_realloc(old, size);
    if (p) {
        /* A successful realloc frees the old block (if any) and hands out a new one. */
        if (old) {
            ++g_counts.frees;
            g_counts.live_bytes -= old_bytes;
        }
        count_block(p, __builtin_return_address(0));
    }
    return p;
}

void __wrap_free(void* p) {
    uncount_block(p);
    __real_free(p);
}

struct alloc_counts alloc_counts_now(void) {
    return g_counts;
}
