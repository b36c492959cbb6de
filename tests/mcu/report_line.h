/* The harness's output: one line built piece by piece and written through semihosting
 * (scripts/test_mcu.sh reads it), and the little conversions it needs on newlib-nano. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Empties the line. */
void line_reset(void);
/* Appends printf-style text; a line is cut at 1023 bytes. */
void line_add(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
/* Writes the line to the host's console. */
void line_send(void);
/* v in decimal: newlib-nano's printf (--specs=nano.specs) has no long long. */
const char* u64_text(uint64_t v, char* buf, size_t size);
/* Value i of upstream's output bytes: int8, or little-endian int32 (type_size 4). */
int32_t output_value(const uint8_t* bytes, size_t i, int type_size);
