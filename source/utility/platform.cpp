#include "utility/platform.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "utility/memory.h"

#if defined(__NEWLIB__)
#include <malloc.h>
#endif

#if defined(_WIN32)
#include <malloc.h>
#include <windows.h>
#endif

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

#if defined(__unix__) || defined(__APPLE__) || defined(_WIN32)
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
    if (rounded == 0) rounded = alignment;
#if defined(_WIN32)
    return _aligned_malloc(rounded, alignment);
#elif defined(__NEWLIB__)
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
#if defined(_WIN32)
    _aligned_free(p);
#else
    free(p);
#endif
}

int cvml_cpu_count(void) {
#if defined(_WIN32)
    SYSTEM_INFO info;
    GetSystemInfo(&info);
    return info.dwNumberOfProcessors > 0 ? static_cast<int>(info.dwNumberOfProcessors) : 1;
#elif defined(_SC_NPROCESSORS_ONLN)
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus > 0 ? static_cast<int>(cpus) : 1;
#else
    return 1;
#endif
}

uint64_t cvml_monotonic_ns(void) {
#if defined(_WIN32)
    LARGE_INTEGER freq, now;
    QueryPerformanceFrequency(&freq);
    QueryPerformanceCounter(&now);
    // Split so that the product cannot overflow for any realistic uptime.
    const uint64_t f = static_cast<uint64_t>(freq.QuadPart);
    const uint64_t t = static_cast<uint64_t>(now.QuadPart);
    return t / f * 1000000000ull + t % f * 1000000000ull / f;
#elif defined(CLOCK_MONOTONIC)
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
