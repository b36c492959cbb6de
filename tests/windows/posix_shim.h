/* Force-included into the tests built for Windows: the few POSIX calls they use to set
 * the environment (CVML_SIMD, CVML_NO_FUSION) mapped onto the C runtime's _putenv_s.
 * The library itself needs none of this. */
#pragma once
#ifdef _WIN32
#include <stdlib.h>

static inline int setenv(const char* name, const char* value, int overwrite) {
    if (!overwrite && getenv(name)) return 0;
    return _putenv_s(name, value);
}

static inline int unsetenv(const char* name) {
    return _putenv_s(name, "");  // an empty value removes the variable on Windows
}
#endif
