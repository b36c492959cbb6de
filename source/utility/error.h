/* Status codes and the per-thread last-error message of the core. */
#pragma once

#include <stdarg.h>
#include <stddef.h>

#include "cvml.h"
#include "utility/platform.h"

/* Sets the thread's last-error message and returns `status`, so a failing
 * check reads `return cvml_fail(CVML_ERR_LOGIC, "...", ...);`. */
int cvml_fail(int status, const char* fmt, ...) CVML_PRINTF(2, 3);
int cvml_vfail(int status, const char* fmt, va_list ap);

/* Prepends context ("node 3 'conv2d_0': ") to the current message and returns
 * `status`; used by callers that know where a callee's failure happened. */
int cvml_fail_context(int status, const char* fmt, ...) CVML_PRINTF(2, 3);

/* cvml_fail(CVML_ERR_RUNTIME, "out of memory"): the core's most frequent failure, one
 * call instead of its arguments at each of its eighty places. */
int cvml_fail_out_of_memory(void);

void cvml_clear_error(void);
const char* cvml_error_message(void);

/* Bounded string formatting helpers that never overflow `dst`. */
void cvml_strlcpy(char* dst, const char* src, size_t cap);
