// Compiled, never run: every public header must be valid C++ with -pedantic.
#include "cvml.h"

int cvml_header_cxx_probe() {
    return CVML_OK + CVML_MAX_DIMS;
}
