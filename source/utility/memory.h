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
