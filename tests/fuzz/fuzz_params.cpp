// libFuzzer target: the params reader on arbitrary bytes against a fixed graph
// (conformance case 000_conv2d_basic), checking the loaded values obey precision, and
// that the reader working through a FILE (cvml_graph_load_file) gives the same outcome,
// error message and constants as the one working in memory.
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <string>

#include "cvml.h"
#include "graph/graph.h"
#include "serializer/cvm/cvm_format.h"

namespace {
std::string g_graph;

std::string read_all(const char* path) {
    std::string s;
    FILE* f = fopen(path, "rb");
    if (!f) return s;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
    fclose(f);
    return s;
}
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    if (cvml_init() != 0) abort();
    g_graph = read_all(CVML_SOURCE_DIR "/tests/conformance/cases/000_conv2d_basic/model.json");
    if (g_graph.empty()) abort();
    return 0;
}

/* The same bytes through the FILE reader: the same return code and message, and the
 * same constants when it succeeds. */
static void check_file_reader(const uint8_t* data, size_t size, int rc, const std::string& error,
                              const ir_graph* mem) {
    FILE* f = tmpfile();
    if (!f) return;
    if (size && fwrite(data, 1, size, f) != size) abort();
    if (fseek(f, 0, SEEK_SET) != 0) abort();
    ir_graph* g = ir_graph_create();
    if (cvm_read_graph(g_graph.data(), g_graph.size(), g) != 0) abort();
    const int file_rc = cvm_read_params_file(f, size, g);
    if (file_rc != rc) __builtin_trap();
    if (rc && error != cvml_last_error()) __builtin_trap();
    for (int32_t i = 0; !rc && i < g->tensor_count; ++i) {
        const ir_tensor* a = mem->tensors[i];
        const ir_tensor* b = g->tensors[i];
        if (a->kind != TENSOR_CONST) continue;
        for (int64_t k = 0; k < ir_tensor_element_count(a); ++k)
            if (ir_const_value(a, k) != ir_const_value(b, k)) __builtin_trap();
    }
    ir_graph_release(g);
    fclose(f);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    ir_graph* g = ir_graph_create();
    if (cvm_read_graph(g_graph.data(), g_graph.size(), g) != 0) abort();
    const int rc = cvm_read_params(data, size, g);
    check_file_reader(data, size, rc, rc ? cvml_last_error() : "", g);
    if (rc == 0) {
        for (int32_t i = 0; i < g->tensor_count; ++i) {
            const ir_tensor* t = g->tensors[i];
            if (t->kind != TENSOR_CONST) continue;
            if (!t->const_data) __builtin_trap();
            int32_t bound = ir_precision_bound(t->precision);
            for (int64_t k = 0; k < ir_tensor_element_count(t); ++k) {
                int32_t v = ir_const_value(t, k);
                if (v < -bound || v > bound) __builtin_trap();
            }
        }
    }
    ir_graph_release(g);
    return 0;
}
