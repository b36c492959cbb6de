/* The counting allocator: the library's allocation calls, wrapped by the linker
 * (-Wl,--wrap=SYMBOL sends the library's calls to __wrap_SYMBOL, which reaches newlib's
 * through __real_SYMBOL).
 *
 * With MCU_TRACE_ALLOC_MIN > 0 (scripts/test_mcu.sh: CVML_MCU_TRACE_ALLOC=BYTES) every
 * block of at least that many bytes is also printed as it comes and goes
 * ("mcu-alloc BYTES CALLER BLOCK", "mcu-free BYTES BLOCK"), so the script can say which
 * functions hold the heap. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>

#include "memory_stats.h"
#include "semihosting.h"

#ifndef MCU_TRACE_ALLOC_MIN
#define MCU_TRACE_ALLOC_MIN 0
#endif

void* __real_malloc(size_t size);
void* __real_calloc(size_t count, size_t size);
void* __real_realloc(void* p, size_t size);
void* __real_aligned_alloc(size_t alignment, size_t size);
void* __real_memalign(size_t alignment, size_t size);
void __real_free(void* p);

static struct alloc_counts g_counts;

static const size_t g_trace_min = MCU_TRACE_ALLOC_MIN;

static void trace(const char* what, size_t bytes, void* caller, void* p) {
    if (g_trace_min == 0 || bytes < g_trace_min) return;
    char line[96];
    if (caller)
        snprintf(line, sizeof line, "%s %lu %p %p\n", what, (unsigned long)bytes, caller, p);
    else
        snprintf(line, sizeof line, "%s %lu %p\n", what, (unsigned long)bytes, p);
    semihost_write(line);
}

static void count_block(void* p, void* caller) {
    if (!p) return;
    trace("mcu-alloc", malloc_usable_size(p), caller, p);
    ++g_counts.allocations;
    g_counts.last_caller = (uintptr_t)caller;
    g_counts.live_bytes += malloc_usable_size(p);
    if (g_counts.live_bytes > g_counts.peak_live_bytes)
        g_counts.peak_live_bytes = g_counts.live_bytes;
}

static void uncount_block(void* p) {
    if (!p) return;
    trace("mcu-free", malloc_usable_size(p), NULL, p);
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

/* newlib's aligned allocation (utility/platform.cpp's cvml_aligned_alloc uses it). */
void* __wrap_memalign(size_t alignment, size_t size) {
    void* p = __real_memalign(alignment, size);
    count_block(p, __builtin_return_address(0));
    return p;
}

void* __wrap_realloc(void* old, size_t size) {
    size_t old_bytes = old ? malloc_usable_size(old) : 0;
    void* p = __real_realloc(old, size);
    if (p) {
        /* A successful realloc frees the old block (if any) and hands out a new one. */
        if (old) {
            trace("mcu-free", old_bytes, NULL, old);
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
