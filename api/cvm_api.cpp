/* Upstream's CVMAPI* calls over the cvml API and the "cvm" serializer. */
#include "cvm_api.h"

#include <stdlib.h>
#include <string.h>

#include "cvml.h"
#include "graph/graph.h"
#include "module/device.h"
#include "module/graph_handle.h"
#include "serializer/cvm/cvm_format.h"
#include "utility/error.h"

#if CVML_WITH_THREADS
#include <pthread.h>
#endif

namespace {

/* The upstream API has no init call: the library is initialised on first use and the
 * reference is kept for the life of the process. */
int g_init_rc = -1;

void init_once(void) {
    g_init_rc = cvml_init();
}

int ensure_init(void) {
#if CVML_WITH_THREADS
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, init_once);
#else
    if (g_init_rc < 0) init_once();
#endif
    if (g_init_rc != CVML_OK)
        return cvml_fail(CVML_ERR_RUNTIME, "the library failed to initialise");
    return CVML_OK;
}

cvml_graph* as_graph(void* net) {
    return static_cast<cvml_graph*>(net);
}

}  // namespace

int CVMAPILoadModel(const char* graph_json, int graph_strlen, const char* param_bytes,
                    int param_strlen, void** net, int device_type, int device_id) {
    // A NULL out-pointer is the caller's bug like every other NULL argument: runtime.
    if (!net) return cvml_fail(ERROR_RUNTIME, "CVMAPILoadModel: NULL net");
    *net = nullptr;
    int rc = ensure_init();
    if (rc) return rc;
    // Step 1 of upstream's load: the device.
    const char* device = nullptr;
    if (device_type == 0 || device_type == 2) {
        // FORMAL is upstream's reference device; its results are the CPU's except in
        // documented kernel quirks, where cvm-lite follows the CPU.
        device = "cpu";
    } else if (device_type == 1) {
        if (!device_registry_find("cuda"))
            return cvml_fail(ERROR_RUNTIME,
                             "CVMAPILoadModel: GPU device requested (id %d) but no "
                             "CUDA device is available",
                             device_id);
        device = "cuda";
    } else {
        return cvml_fail(ERROR_RUNTIME, "CVMAPILoadModel: device type %d is not supported",
                         device_type);
    }
    if (!graph_json || graph_strlen < 0)
        return cvml_fail(ERROR_LOGIC, "CVMAPILoadModel: no graph JSON");
    if (param_strlen < 0 || (param_strlen > 0 && !param_bytes))
        return cvml_fail(ERROR_LOGIC, "CVMAPILoadModel: bad params buffer");
    cvml_context* ctx = nullptr;
    rc = cvml_context_create(&ctx);
    if (rc) return rc;
    const char* devices[1] = {device};
    rc = cvml_context_set_devices(ctx, devices, 1);
    static const char empty = 0;
    cvml_graph* g = nullptr;
    if (!rc)
        rc = cvml_graph_load_memory(ctx, "cvm", graph_json, static_cast<size_t>(graph_strlen),
                                    param_bytes ? param_bytes : &empty,
                                    static_cast<size_t>(param_strlen), &g);
    cvml_context_release(ctx);
    // Kernels are resolved and memory is planned at load, as upstream does.
    if (!rc) rc = cvml_graph_prerun(g);
    if (rc) {
        if (g) cvml_graph_release(g);
        return rc;
    }
    *net = g;
    return SUCCEED;
}

int CVMAPIFreeModel(void* net) {
    if (!net) return SUCCEED;
    return cvml_graph_release(as_graph(net));
}

int CVMAPIInference(void* net, char* input_data, int input_len, char* output_data) {
    if (!net || !input_data || !output_data)
        return cvml_fail(ERROR_RUNTIME, "CVMAPIInference: NULL argument");
    if (input_len < 0) return cvml_fail(ERROR_LOGIC, "CVMAPIInference: negative input length");
    size_t out_len = 0;
    int type = 0;
    int rc = cvml_graph_output_bytes(as_graph(net), &out_len, &type);
    if (rc) return rc;
    return cvml_graph_run_bytes(as_graph(net), input_data, static_cast<size_t>(input_len),
                                output_data, out_len);
}

static int copy_string(char* dst, const char* src) {
    size_t n = strlen(src);
    if (n > 31) n = 31;
    memcpy(dst, src, n);
    dst[n] = '\0';
    return SUCCEED;
}

int CVMAPIGetVersion(void* net, char* version) {
    if (!net || !version) return cvml_fail(ERROR_RUNTIME, "CVMAPIGetVersion: NULL argument");
    const char* v = nullptr;
    int rc = cvml_graph_version(as_graph(net), &v);
    if (rc) return rc;
    // Upstream's runtime defaults the version to cvm_1.0.0 when the key is absent.
    return copy_string(version, v[0] ? v : "cvm_1.0.0");
}

int CVMAPIGetPreprocessMethod(void* net, char* method) {
    if (!net || !method)
        return cvml_fail(ERROR_RUNTIME, "CVMAPIGetPreprocessMethod: NULL argument");
    const char* p = nullptr;
    int rc = cvml_graph_postprocess(as_graph(net), &p);
    if (rc) return rc;
    return copy_string(method, p);
}

int CVMAPIGetInputLength(void* net, unsigned long long* size) {
    if (!net || !size) return cvml_fail(ERROR_RUNTIME, "CVMAPIGetInputLength: NULL argument");
    size_t len = 0;
    int type = 0;
    int rc = cvml_graph_input_bytes(as_graph(net), &len, &type);
    if (!rc) *size = len;
    return rc;
}

int CVMAPIGetOutputLength(void* net, unsigned long long* size) {
    if (!net || !size) return cvml_fail(ERROR_RUNTIME, "CVMAPIGetOutputLength: NULL argument");
    size_t len = 0;
    int type = 0;
    int rc = cvml_graph_output_bytes(as_graph(net), &len, &type);
    if (!rc) *size = len;
    return rc;
}

int CVMAPIGetInputTypeSize(void* net, unsigned long long* size) {
    if (!net || !size) return cvml_fail(ERROR_RUNTIME, "CVMAPIGetInputTypeSize: NULL argument");
    size_t len = 0;
    int type = 0;
    int rc = cvml_graph_input_bytes(as_graph(net), &len, &type);
    if (!rc) *size = static_cast<unsigned long long>(type);
    return rc;
}

int CVMAPIGetOutputTypeSize(void* net, unsigned long long* size) {
    if (!net || !size) return cvml_fail(ERROR_RUNTIME, "CVMAPIGetOutputTypeSize: NULL argument");
    size_t len = 0;
    int type = 0;
    int rc = cvml_graph_output_bytes(as_graph(net), &len, &type);
    if (!rc) *size = static_cast<unsigned long long>(type);
    return rc;
}

int CVMAPIGetStorageSize(void* net, unsigned long long* gas) {
    if (!net || !gas) return cvml_fail(ERROR_RUNTIME, "CVMAPIGetStorageSize: NULL argument");
    uint64_t size = 0;
    int rc = cvm_storage_size(as_graph(net)->ir, &size);
    if (!rc) *gas = size;
    return rc;
}

int CVMAPIGetGasFromModel(void* net, unsigned long long* gas) {
    if (!net || !gas) return cvml_fail(ERROR_RUNTIME, "CVMAPIGetGasFromModel: NULL argument");
    uint64_t v = 0;
    int rc = cvml_graph_gas(as_graph(net), &v);
    if (!rc) *gas = v;
    return rc;
}

int CVMAPIGetGasFromGraphFile(const char* graph_json, unsigned long long* gas) {
    if (!graph_json || !gas)
        return cvml_fail(ERROR_RUNTIME, "CVMAPIGetGasFromGraphFile: NULL argument");
    int rc = ensure_init();
    if (rc) return rc;
    ir_graph* g = ir_graph_create();
    if (!g) return cvml_fail(ERROR_RUNTIME, "out of memory");
    rc = cvm_read_graph(graph_json, strlen(graph_json), g);
    if (!rc) *gas = g->gas;
    ir_graph_release(g);
    return rc;
}
