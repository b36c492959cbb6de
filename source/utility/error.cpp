#include "utility/error.h"

#include "utility/platform.h"

#include <stdio.h>
#include <string.h>

namespace {
// Trivially destructible, so thread_local needs no C++ runtime support.
CVML_THREAD_LOCAL char t_message[1024];
}  // namespace

int cvml_vfail(int status, const char* fmt, va_list ap) {
    vsnprintf(t_message, sizeof t_message, fmt, ap);
    return status;
}

int cvml_fail(int status, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    cvml_vfail(status, fmt, ap);
    va_end(ap);
    return status;
}

int cvml_fail_out_of_memory(void) {
    return cvml_fail(CVML_ERR_RUNTIME, "out of memory");
}

int cvml_fail_context(int status, const char* fmt, ...) {
    char prefix[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    // Shift the old message right and put the prefix in front (truncating the end).
    size_t plen = strlen(prefix);
    size_t cap = sizeof t_message - 1;
    if (plen > cap) plen = cap;
    size_t keep = strlen(t_message);
    if (plen + keep > cap) keep = cap - plen;
    memmove(t_message + plen, t_message, keep);
    memcpy(t_message, prefix, plen);
    t_message[plen + keep] = '\0';
    return status;
}

void cvml_clear_error(void) {
    t_message[0] = '\0';
}

const char* cvml_error_message(void) {
    return t_message;
}

void cvml_strlcpy(char* dst, const char* src, size_t cap) {
    if (cap == 0) return;
    size_t n = strlen(src);
    if (n >= cap) n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}
