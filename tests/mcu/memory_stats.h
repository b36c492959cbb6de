/* What the harness measures about memory (docs/embedded.md, "Measuring"):
 * - the heap's high-water: the most bytes _sbrk ever handed to malloc (syscalls.c);
 * - the stack's high-water: the deepest word changed below the stack top since reset
 *   (startup.c paints the stack with a pattern);
 * - data/bss: the static RAM of the whole image (linker symbols);
 * - the counting allocator: every malloc/calloc/realloc/aligned_alloc/memalign/free the library
 *   makes, wrapped at link time (-Wl,--wrap=malloc,...), so the harness can prove that
 *   nothing is allocated after load. */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct alloc_counts {
    uint32_t allocations; /* malloc, calloc, aligned_alloc, and realloc */
    uint32_t frees;       /* free of a non-NULL pointer */
    size_t live_bytes;    /* usable bytes of the blocks not yet freed */
    size_t peak_live_bytes;
    uintptr_t last_caller; /* the return address of the latest allocation: where it came from */
};

/* The counters so far (the counting allocator, alloc_count.c). */
struct alloc_counts alloc_counts_now(void);

size_t heap_high_water(void);  /* syscalls.c */
size_t stack_high_water(void); /* startup.c */
size_t static_ram_bytes(void); /* startup.c: .data + .bss */
