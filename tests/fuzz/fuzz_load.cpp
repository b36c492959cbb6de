// libFuzzer target: the whole upstream path. The input is graph JSON, the separator
// "\n#PARAMS#\n", then the params blob. Gas from the graph, load, run on a zero
// input, save and reload: none may crash, leak or read uninitialised memory, and
// none may take longer than its bound (see check_bound).
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <string>
#include <vector>

#include "cvm_api.h"
#include "cvml.h"

namespace {
const char kSep[] = "\n#PARAMS#\n";

/* Resource property (issue 18): the gas query and the load take time bounded by the
 * input's size, and a run time bounded by its gas and I/O bytes. The bounds are loose
 * (a sanitized, instrumented build is slow) but finite: a quadratic planner or an
 * operator whose gas under-charges it breaks them on a grown seed. */
double seconds_now() {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

void check_bound(const char* what, double took, double bound) {
    if (took <= bound) return;
    fprintf(stderr, "resource property: %s took %.3f s, bound %.3f s\n", what, took, bound);
    __builtin_trap();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string all(reinterpret_cast<const char*>(data), size);
    size_t cut = all.find(kSep);
    std::string graph = all.substr(0, cut);
    std::string params = cut == std::string::npos ? std::string() : all.substr(cut + strlen(kSep));
    unsigned long long gas = 0;
    double start = seconds_now();
    CVMAPIGetGasFromGraphFile(graph.c_str(), &gas);
    void* net = nullptr;
    int rc = CVMAPILoadModel(graph.data(), static_cast<int>(graph.size()), params.data(),
                             static_cast<int>(params.size()), &net, 0, 0);
    check_bound("gas query + load", seconds_now() - start, 1.0 + 20e-6 * static_cast<double>(size));
    if (rc != 0) return 0;
    unsigned long long in_len = 0, out_len = 0, model_gas = 0;
    if (CVMAPIGetInputLength(net, &in_len) || CVMAPIGetOutputLength(net, &out_len) ||
        CVMAPIGetGasFromModel(net, &model_gas))
        __builtin_trap();
    if (model_gas != gas) __builtin_trap();
    // Runs up to 2^25 gas (the bound on time per gas is what is tested), inputs and
    // outputs up to 16 MB.
    if (in_len <= (16u << 20) && out_len <= (16u << 20) && model_gas <= (1u << 25)) {
        std::vector<char> in(in_len + 1, 0), out(out_len + 1, 0);
        start = seconds_now();
        CVMAPIInference(net, in.data(), static_cast<int>(in_len), out.data());
        check_bound("inference", seconds_now() - start,
                    1.0 + 1e-6 * static_cast<double>(model_gas + in_len + out_len));
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
