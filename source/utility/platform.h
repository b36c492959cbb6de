/* What the core needs from the operating system, in one place: printf-style format
 * checking, aligned allocation, the number of CPUs and a monotonic clock. POSIX,
 * Windows (MinGW-w64) and bare-metal newlib differ on each of these; everything
 * else in the core is plain C and C++17. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Format checking of printf-like functions. MinGW's printf family is Microsoft's
 * unless __USE_MINGW_ANSI_STDIO is set (the build sets it); the checker must then
 * be told to expect the C99 conversions (%zu, %lld), hence gnu_printf. */
#if defined(__MINGW32__)
#define CVML_PRINTF(fmt, args) __attribute__((format(gnu_printf, fmt, args)))
#elif defined(__GNUC__)
#define CVML_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define CVML_PRINTF(fmt, args)
#endif

/* Memory aligned to `align` (a power of two), released with cvml_aligned_free.
 * Windows has no aligned_alloc: its _aligned_malloc memory must not reach free(). */
void* cvml_aligned_alloc(size_t align, size_t bytes);
void cvml_aligned_free(void* p);

/* Online CPUs, at least 1. */
int cvml_cpu_count(void);

/* A monotonic clock in nanoseconds, for profiles and benchmarks only (never for
 * results). */
uint64_t cvml_monotonic_ns(void);

#ifdef __cplusplus
}
#endif
