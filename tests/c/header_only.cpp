// Compiled, never run: every public header must be valid C++ with -pedantic.
#include "cvml.h"
#include "cvml_ops.h"

int cvml_header_cxx_probe() {
    const cvml_step clip = {CVML_STEP_CLIP, -1, 1, 0};
    return CVML_OK + CVML_MAX_DIMS + cvml_step_value(&clip, 5, 0);
}
