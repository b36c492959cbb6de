/* The ResNet-18-shaped benchmark model's output bytes are identical at every SIMD level
 * this CPU has and at 1, 2 and 3 threads, with fusion/views/narrow storage on and off;
 * MobileNet (depthwise path) and the SSD head (views, NMS) are checked the same way. */
#include <stdio.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "cvml.h"
#include "models.h"

namespace {

bool run(const bench::ModelSpec& spec, const char* simd, int threads, bool fusion,
         std::vector<int32_t>* out, std::string* level) {
    setenv("CVML_SIMD", simd, 1);
    if (fusion)
        unsetenv("CVML_NO_FUSION");
    else
        setenv("CVML_NO_FUSION", "1", 1);
    cvml_context* ctx = nullptr;
    cvml_context_create(&ctx);
    cvml_context_set_threads(ctx, threads);
    cvml_graph* g = nullptr;
    std::string err;
    int rc = bench::build_model(ctx, spec, &g, &err);
    if (rc) {
        fprintf(stderr, "build %s: %s\n", spec.name.c_str(), err.c_str());
        cvml_context_release(ctx);
        return false;
    }
    std::vector<int32_t> in = bench::make_input(g, spec.seed);
    cvml_tensor* t = nullptr;
    cvml_graph_get_input(g, 0, &t);
    rc = cvml_tensor_set_i32(t, in.data(), in.size());
    if (!rc) rc = cvml_graph_run(g);
    *level = cvml_cpu_simd_level();
    if (!rc) {
        cvml_tensor* o = nullptr;
        cvml_graph_get_output(g, 0, &o);
        size_t n = 0;
        cvml_tensor_element_count(o, &n);
        out->assign(n, 0);
        rc = cvml_tensor_get_i32(o, out->data(), n);
    }
    if (rc) fprintf(stderr, "run %s: %s\n", spec.name.c_str(), cvml_last_error());
    cvml_graph_release(g);
    cvml_context_release(ctx);
    return rc == CVML_OK;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> models = {"resnet18", "mobilenet", "ssd"};
    if (argc > 1) models.assign(argv + 1, argv + argc);
    cvml_init();
    int failures = 0;
    for (const std::string& name : models) {
        bench::ModelSpec spec;
        spec.name = name;
        if (name != "resnet18") spec.size = name == "ssd" ? 96 : 128;
        std::vector<int32_t> ref;
        std::string level;
        if (!run(spec, "scalar", 1, false, &ref, &level)) return 1;
        size_t nonzero = 0;
        for (int32_t v : ref) nonzero += v != 0;
        if (nonzero == 0) {
            fprintf(stderr, "%s: the output is all zeros\n", name.c_str());
            ++failures;
        }
        for (const char* simd : {"scalar", "avx2", "avx512"}) {
            for (int threads = 1; threads <= 3; ++threads)
                for (int fusion = 0; fusion <= 1; ++fusion) {
                    std::vector<int32_t> out;
                    if (!run(spec, simd, threads, fusion, &out, &level)) return 1;
                    if (level != simd) {
                        printf("%s: %s not available on this CPU, skipped\n", name.c_str(), simd);
                        goto next_level;
                    }
                    bool same = out == ref;
                    printf("%s %-6s threads=%d fusion=%d: %s\n", name.c_str(), simd, threads,
                           fusion, same ? "identical" : "DIFFERENT");
                    failures += !same;
                }
        next_level:;
        }
    }
    cvml_release();
    return failures ? 1 : 0;
}
