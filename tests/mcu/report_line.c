#include "report_line.h"

#include <stdarg.h>
#include <stdio.h>

#include "semihosting.h"

/* A line is at most a `mcu-run` line or a message: static RAM that ram_peak counts, so
 * it is no larger than it must be. */
static char g_line[1024];
static size_t g_line_used;

void line_reset(void) {
    g_line_used = 0;
    g_line[0] = '\0';
}

void line_add(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(g_line + g_line_used, sizeof g_line - g_line_used, fmt, ap);
    va_end(ap);
    if (n > 0) g_line_used += (size_t)n;
    if (g_line_used >= sizeof g_line) g_line_used = sizeof g_line - 1;
}

void line_send(void) {
    semihost_write(g_line);
}

const char* u64_text(uint64_t v, char* buf, size_t size) {
    char* p = buf + size - 1;
    *p = '\0';
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v && p > buf);
    return p;
}

int32_t output_value(const uint8_t* bytes, size_t i, int type_size) {
    if (type_size == 1) return (int8_t)bytes[i];
    uint32_t u = (uint32_t)bytes[4 * i] | (uint32_t)bytes[4 * i + 1] << 8 |
                 (uint32_t)bytes[4 * i + 2] << 16 | (uint32_t)bytes[4 * i + 3] << 24;
    return (int32_t)u;
}
