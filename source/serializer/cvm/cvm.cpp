/* The "cvm" serializer: upstream CVM models (graph JSON + params blob). */
#include "module/serializer.h"
#include "serializer/cvm/cvm_format.h"
#include "utility/error.h"

namespace {

int cvm_load(const void* graph_data, size_t graph_size, const void* params_data, size_t params_size,
             ir_graph* out) {
    int rc = cvm_read_graph(static_cast<const char*>(graph_data), graph_size, out);
    if (!rc) rc = cvm_check_loadable(out);
    if (!rc) rc = cvm_read_params(static_cast<const uint8_t*>(params_data), params_size, out);
    return rc;
}

#if !CVML_BARE_METAL
int cvm_load_params_file(const void* graph_data, size_t graph_size, FILE* params,
                         size_t params_size, ir_graph* out) {
    int rc = cvm_read_graph(static_cast<const char*>(graph_data), graph_size, out);
    if (!rc) rc = cvm_check_loadable(out);
    if (!rc) rc = cvm_read_params_file(params, params_size, out);
    return rc;
}
#endif

#if CVML_BARE_METAL
/* A bare-metal image loads and runs models; the writer (about 2.5 KB of code) is left
 * out so that it is not linked through this table (docs/embedded.md). */
int cvm_save(const ir_graph*, char**, size_t*, uint8_t**, size_t*) {
    return cvml_fail(CVML_ERR_LOGIC, "cvml_graph_save: a bare-metal build cannot save a model");
}
#else
int cvm_save(const ir_graph* g, char** graph_out, size_t* graph_size, uint8_t** params_out,
             size_t* params_size) {
    int rc = cvm_write_graph(g, graph_out, graph_size);
    if (!rc) rc = cvm_write_params(g, params_out, params_size);
    return rc;
}
#endif

const cvml_serializer kCvm = {"cvm", cvm_load, cvm_save};

}  // namespace

int register_serializer_cvm(void) {
    int rc = serializer_registry_add(&kCvm);
#if !CVML_BARE_METAL
    // Bare metal reads a params file whole (cvml_graph_load_file's other way): a model
    // there is loaded from memory, and the streaming reader's code is not linked.
    if (!rc) rc = serializer_set_params_file_loader(&kCvm, cvm_load_params_file);
#endif
    return rc;
}

int unregister_serializer_cvm(void) {
    return serializer_registry_remove(&kCvm);
}
