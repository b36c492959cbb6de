/* Portability shims: the few things the core needs from its platform that C++17 alone
 * does not give everywhere it runs (Linux, Windows with MinGW-w64, bare-metal Cortex-M
 * with newlib; see docs/embedded.md and docs/windows.md). Everything else in the core is
 * plain C++17 with the C library. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* printf's conversion for size_t: "%" CVML_PRIuSIZE, as "%" PRId32 for int32_t. The
 * newlib of Debian's gcc-arm-none-eabi is built without C99 formats (_WANT_IO_C99_FORMATS),
 * so its printf prints %zu as "zu"; size_t is unsigned int in the Arm AAPCS. */
#if defined(__NEWLIB__) && !defined(_WANT_IO_C99_FORMATS) && defined(__arm__)
#define CVML_PRIuSIZE "u"
#else
#define CVML_PRIuSIZE "zu"
#endif

/* Format checking of printf-like functions. MinGW's printf family is Microsoft's unless
 * __USE_MINGW_ANSI_STDIO is set (the build sets it); the checker must then be told to
 * expect the C99 conversions (%zu, %lld), hence gnu_printf. */
#if defined(__MINGW32__)
#define CVML_PRINTF(fmt, args) __attribute__((format(gnu_printf, fmt, args)))
#elif defined(__GNUC__)
#define CVML_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define CVML_PRINTF(fmt, args)
#endif

/* CVML_BARE_METAL (set by CMake for a CMAKE_SYSTEM_NAME Generic target): one thread of
 * execution and no operating system. */
#ifndef CVML_BARE_METAL
#define CVML_BARE_METAL 0
#endif

/* Thread-local storage for per-thread state such as the last-error message. A bare-metal
 * image has one thread and no TLS runtime (newlib provides neither __tls_get_addr nor
 * __aeabi_read_tp), so there the state is a plain global. */
#if CVML_BARE_METAL
#define CVML_THREAD_LOCAL
#else
#define CVML_THREAD_LOCAL thread_local
#endif

/* A statistics counter bumped from any thread. With threads it is a relaxed atomic; in
 * the single-threaded profile it is a plain add, because 64-bit atomics are not lock-free
 * on 32-bit cores and would need libatomic (not part of a bare-metal toolchain). */
static inline void cvml_counter_bump(int64_t* counter) {
#if CVML_WITH_THREADS
    __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
#else
    ++*counter;
#endif
}

static inline int64_t cvml_counter_read(const int64_t* counter) {
#if CVML_WITH_THREADS
    return __atomic_load_n(counter, __ATOMIC_RELAXED);
#else
    return *counter;
#endif
}

/* Memory aligned to `alignment` (a power of two, a multiple of sizeof(void*)), released
 * with cvml_aligned_free(). C++17's aligned_alloc where the C library has it; newlib
 * declares aligned_alloc but its version calls a posix_memalign it does not provide, so
 * there memalign (which free() releases). Windows has no aligned_alloc: there
 * _aligned_malloc, whose memory must not reach free(). */
void* cvml_aligned_alloc(size_t alignment, size_t size);
void cvml_aligned_free(void* p);

/* Online CPUs, at least 1 (1 where the platform cannot tell). */
int cvml_cpu_count(void);

/* Nanoseconds from a monotonic clock, for profiling only: CLOCK_MONOTONIC where POSIX
 * clocks exist, QueryPerformanceCounter on Windows, else the C library's processor
 * clock (clock()), which a bare-metal C library may not implement: the figures are then
 * 0, nothing else depends on them. */
uint64_t cvml_monotonic_ns(void);

/* Whether `f` is a regular file whose size is known without reading it (*size: its
 * length in bytes). Returns 0 for pipes, devices, and wherever the platform has no
 * POSIX file status (the caller then reads the stream to its end). */
int cvml_regular_file_size(FILE* f, size_t* size);
