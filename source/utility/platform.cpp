#include "utility/platform.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "utility/memory.h"

#if defined(__NEWLIB__)
#include <malloc.h>
#endif

#if defined(__unix__) || defined(__APPLE__)
#include <sys/stat.h>
#define CVML_HAVE_POSIX_FILES 1
#else
#define CVML_HAVE_POSIX_FILES 0
#endif

void* cvml_aligned_alloc(size_t alignment, size_t size) {
    if (cvml_mem_is_custom()) {
        // The caller's allocator aligns for any object only: take `alignment` more bytes
        // and keep the block's start just before the aligned address.
        if (size > static_cast<size_t>(-1) - alignment - sizeof(void*)) return nullptr;
        uint8_t* block = static_cast<uint8_t*>(cvml_mem_alloc(size + alignment + sizeof(void*)));
        if (!block) return nullptr;
        const uintptr_t start = reinterpret_cast<uintptr_t>(block) + sizeof(void*);
        uint8_t* aligned = block + sizeof(void*) + (alignment - start % alignment) % alignment;
        memcpy(aligned - sizeof(void*), &block, sizeof(void*));
        return aligned;
    }
    /* aligned_alloc wants a size that is a multiple of the alignment. */
    size_t rounded = (size + alignment - 1) / alignment * alignment;
    if (rounded < size) return nullptr;
#if defined(__NEWLIB__)
    return memalign(alignment, rounded);
#else
    return aligned_alloc(alignment, rounded);
#endif
}

void cvml_aligned_free(void* p) {
    if (!p) return;
    if (cvml_mem_is_custom()) {
        void* block;
        memcpy(&block, static_cast<uint8_t*>(p) - sizeof(void*), sizeof(void*));
        cvml_mem_free(block);
        return;
    }
    free(p);
}

uint64_t cvml_monotonic_ns(void) {
#if defined(CLOCK_MONOTONIC)
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
#else
    clock_t c = clock();
    if (c == static_cast<clock_t>(-1)) return 0;
    return static_cast<uint64_t>(c) * (1000000000u / CLOCKS_PER_SEC);
#endif
}

int cvml_regular_file_size(FILE* f, size_t* size) {
#if CVML_HAVE_POSIX_FILES
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0) return 0;
    *size = static_cast<size_t>(st.st_size);
    return 1;
#else
    (void)f;
    (void)size;
    return 0;
#endif
}
