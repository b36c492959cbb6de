/* Compiled by scripts/test_windows.sh with clang in MSVC mode (--target
 * x86_64-pc-windows-msvc), as C and as C++: the public headers use nothing an MSVC user
 * lacks (no GCC attributes, no POSIX headers) and declare the API as plain functions a
 * program resolves against cvml.lib / the DLL. */
#include "cvm_api.h"
#include "cvml.h"
#include "cvml_ops.h"
#include "cvml_plugin.h"

int msvc_headers_use(void);
int msvc_headers_use(void) {
    return cvml_init() + CVMAPIFreeModel(0);
}
