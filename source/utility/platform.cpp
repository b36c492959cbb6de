#include "utility/platform.h"

#include <stdlib.h>

#if defined(_WIN32)
#include <malloc.h>
#include <windows.h>
#else
#include <time.h>
#include <unistd.h>
#endif

extern "C" {

void* cvml_aligned_alloc(size_t align, size_t bytes) {
    // aligned_alloc wants a size that is a multiple of the alignment.
    const size_t rounded = (bytes + align - 1) / align * align;
#if defined(_WIN32)
    return _aligned_malloc(rounded ? rounded : align, align);
#else
    return aligned_alloc(align, rounded ? rounded : align);
#endif
}

void cvml_aligned_free(void* p) {
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
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
#else
    return 0;  // no clock on this target: profiles read zero
#endif
}

}  // extern "C"
