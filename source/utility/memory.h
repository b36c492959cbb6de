/* The library's heap: every allocation of the core goes through these functions, so a
 * caller can give it an allocator of its own (cvml_set_allocator(): a counting one, a
 * pool in static memory, none at all on a microcontroller). Without one they are the
 * C library's malloc, calloc, realloc and free. A guard test (tests/memory.cmake,
 * memory.no_direct_malloc) fails when a core object calls the C library's directly. */
#pragma once

#include <stddef.h>

#include "cvml.h"

void* cvml_mem_alloc(size_t size);
/* count * size zeroed bytes; NULL when the product overflows. */
void* cvml_mem_calloc(size_t count, size_t size);
void* cvml_mem_realloc(void* p, size_t size);
void cvml_mem_free(void* p);
/* Whether a caller's allocator is installed (cvml_aligned_alloc then goes through it). */
int cvml_mem_is_custom(void);
/* Installs `a` (NULL: the C library's); the API checks that the library holds no memory. */
int cvml_mem_set_allocator(const cvml_allocator* a);

/* A load's scratch: the transient memory of reading a model (the graph JSON's pieces,
 * what the reader keeps of them, its sort buffers) taken from a region the caller
 * lends for that load: its arena, idle until the graph is prepared in it. A small
 * heap then never holds the transient blocks, nor the holes they would leave between
 * the graph's own (docs/embedded.md). One region at a time on the calling thread;
 * blocks are given back in any order and their space is reused from the newest down
 * (a stack). A block that does not fit, and every block while no region is lent, comes
 * from the heap: cvml_scratch_free() and _realloc() take either kind. */
void cvml_scratch_begin(void* region, size_t size);
/* Ends the lending; 0 when a block of the region was not given back (a bug: the
 * region is about to hold the arena's tensors), else 1. */
int cvml_scratch_end(void);
/* Whether a region is lent now. */
int cvml_scratch_active(void);
void* cvml_scratch_alloc(size_t size);
void* cvml_scratch_calloc(size_t count, size_t size);
void* cvml_scratch_realloc(void* p, size_t size);
void cvml_scratch_free(void* p);
/* Moves p, the newest block of the region, down over the freed blocks right below it
 * (a parse tree given back after the list made from it), so that their space is not
 * held until p goes; returns where p is now (p itself when nothing moved). */
void* cvml_scratch_settle(void* p);
