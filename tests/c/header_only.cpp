// Compiled, never run: every public header must be valid C++ with -pedantic.
#include "cvml.h"
#include "cvml_ops.h"
#include "cvml_plugin.h"

int cvml_header_cxx_probe() {
    const cvml_step clip = {CVML_STEP_CLIP, -1, 1, 0};
    const cvml_plugin_header header = {sizeof(cvml_plugin_header), CVML_PLUGIN_ABI_VERSION, "probe",
                                       "0"};
    return CVML_OK + CVML_MAX_DIMS + cvml_step_value(&clip, 5, 0) +
           (int)CVML_PLUGIN_ABI_MAJOR_OF(header.abi_version);
}
