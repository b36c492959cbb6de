/* Compiled, never run: the installed cvml_plugin.h alone, as strict C99. */
#include <cvml_plugin.h>

int plugin_header_probe(const cvml_host_api* host) {
    return CVML_PLUGIN_HAS(cvml_ir_api, host->ir, tensor_storage) &&
           CVML_PLUGIN_ABI_MAJOR_OF(host->abi_version) == CVML_PLUGIN_ABI_MAJOR;
}
