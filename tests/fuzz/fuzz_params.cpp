// libFuzzer target: the params reader on arbitrary bytes against a fixed graph
// (conformance case 000_conv2d_basic), checking the loaded values obey precision.
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

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    ir_graph* g = ir_graph_create();
    if (cvm_read_graph(g_graph.data(), g_graph.size(), g) != 0) abort();
    if (cvm_read_params(data, size, g) == 0) {
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
