#!/bin/sh
# no_direct_malloc.sh NM LIBRARY: every heap allocation of the core goes through its
# allocator (source/utility/memory.h), so cvml_set_allocator() sees all of it: no object
# but memory.cpp and platform.cpp (the allocator itself and its aligned variant) may
# call the C library's malloc, calloc, realloc, free or their relatives (qsort too: glibc's
# allocates; the core sorts with cvml_sort).
nm=$1 lib=$2
bad=$("$nm" -u -A "$lib" 2>/dev/null |
  grep -Ev '(memory|platform)\.cpp\.o' |
  grep -E ' U (malloc|calloc|realloc|free|aligned_alloc|memalign|posix_memalign|strdup|strndup|valloc|pvalloc|qsort|_Znwm|_Znam|_Znwj|_Znaj)$')
if [ -n "$bad" ]; then
  echo "objects of the core call the C library's allocator directly (use cvml_mem_alloc,"
  echo "cvml_mem_calloc, cvml_mem_realloc, cvml_mem_free from utility/memory.h):"
  echo "$bad"
  exit 1
fi
echo "no direct allocator calls outside utility/memory.cpp and platform.cpp"
