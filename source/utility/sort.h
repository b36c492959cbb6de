/* An in-place sort for the core: C's qsort may allocate (glibc's is a merge sort with a
 * malloc'd buffer), which would bypass the caller's allocator (utility/memory.h) and
 * break a load with no heap. Heapsort: O(n log n), no memory, not stable (callers
 * compare with a total order, so the result is what qsort's would be). */
#pragma once

#include <stddef.h>

void cvml_sort(void* base, size_t count, size_t size, int (*compare)(const void*, const void*));
