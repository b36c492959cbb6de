// libFuzzer target: the whole upstream path. The input is graph JSON, the separator
// "\n#PARAMS#\n", then the params blob. Gas from the graph, load, run on a zero
// input, save and reload: none may crash, leak or read uninitialised memory.
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <string>
#include <vector>

#include "cvm_api.h"
#include "cvml.h"

namespace {
const char kSep[] = "\n#PARAMS#\n";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string all(reinterpret_cast<const char*>(data), size);
    size_t cut = all.find(kSep);
    std::string graph = all.substr(0, cut);
    std::string params = cut == std::string::npos ? std::string() : all.substr(cut + strlen(kSep));
    unsigned long long gas = 0;
    CVMAPIGetGasFromGraphFile(graph.c_str(), &gas);
    void* net = nullptr;
    int rc = CVMAPILoadModel(graph.data(), static_cast<int>(graph.size()), params.data(),
                             static_cast<int>(params.size()), &net, 0, 0);
    if (rc != 0) return 0;
    unsigned long long in_len = 0, out_len = 0, model_gas = 0;
    if (CVMAPIGetInputLength(net, &in_len) || CVMAPIGetOutputLength(net, &out_len) ||
        CVMAPIGetGasFromModel(net, &model_gas))
        __builtin_trap();
    if (model_gas != gas) __builtin_trap();
    // Bounded work per input: skip running models with huge tensors.
    if (in_len <= (1u << 20) && out_len <= (1u << 20) && model_gas <= (1u << 22)) {
        std::vector<char> in(in_len + 1, 0), out(out_len + 1, 0);
        CVMAPIInference(net, in.data(), static_cast<int>(in_len), out.data());
    }
    cvml_graph* g = static_cast<cvml_graph*>(net);
    void *gd = nullptr, *pd = nullptr;
    size_t gs = 0, ps = 0;
    if (cvml_graph_save_memory(g, "cvm", &gd, &gs, &pd, &ps) == 0) {
        void* again = nullptr;
        if (CVMAPILoadModel(static_cast<char*>(gd), static_cast<int>(gs), static_cast<char*>(pd),
                            static_cast<int>(ps), &again, 0, 0) != 0)
            __builtin_trap();  // a saved model must load
        CVMAPIFreeModel(again);
    }
    cvml_free(gd);
    cvml_free(pd);
    CVMAPIFreeModel(net);
    return 0;
}
