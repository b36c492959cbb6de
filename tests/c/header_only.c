/* Compiled, never run: every public header must be valid strict C99. */
#include "cvml.h"

int cvml_header_c99_probe(void) {
    return CVML_OK + CVML_MAX_DIMS;
}
