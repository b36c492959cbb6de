/* GPU check without GoogleTest: runs every conformance case and the real model on the
 * CUDA device and on the CPU alone, compares the bytes with each other and with the
 * expected output, and times models given with --bench. Needs the CUDA plugin
 * (CVML_PLUGIN_PATH) and a GPU.
 *
 *   gpu_check [--bench DIR]... CASE_OR_CASES_DIR...
 *
 * Exit status: 0 every comparison holds; 1 some comparison failed; 2 the library did
 * not initialise; 3 no CUDA device: the CUDA plugin is not loaded (no GPU, no driver,
 * or the plugin was not found), with the loader's reason on stderr.
 *
 * A case directory holds model.json, model.params, input.bin and (when its
 * meta.json expects an output) output.bin. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "cvml.h"

namespace {

bool read_file(const std::string& path, std::vector<unsigned char>* out) {
    FILE* f = fopen(path.c_str(), "rb");
    if (!f) return false;
    out->clear();
    unsigned char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) out->insert(out->end(), buf, buf + n);
    fclose(f);
    return true;
}

bool is_dir(const std::string& p) {
    struct stat st;
    return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

struct Outcome {
    int load_rc = 0, run_rc = 0;
    std::vector<unsigned char> out;
    int on_cuda = 0, nodes = 0;
    std::string error;
};

Outcome run_case(const std::string& dir, bool cuda, const std::vector<unsigned char>& input,
                 int repeat = 1, double* ms = nullptr) {
    Outcome o;
    cvml_context* ctx = nullptr;
    cvml_context_create(&ctx);
    const char* cpu[] = {"cpu"};
    const char* gpu[] = {"cuda"};
    cvml_context_set_devices(ctx, cuda ? gpu : cpu, 1);
    cvml_graph* g = nullptr;
    o.load_rc = cvml_graph_load_file(ctx, "cvm", (dir + "/model.json").c_str(),
                                     (dir + "/model.params").c_str(), &g);
    if (o.load_rc) {
        o.error = cvml_last_error();
        cvml_context_release(ctx);
        return o;
    }
    size_t len = 0;
    int type = 0;
    o.run_rc = cvml_graph_output_bytes(g, &len, &type);
    if (!o.run_rc) o.run_rc = cvml_graph_prerun(g);
    if (!o.run_rc) {
        cvml_graph_node_count(g, &o.nodes);
        for (int i = 0; i < o.nodes; ++i) {
            const char* d = "";
            cvml_graph_node_device(g, i, &d);
            o.on_cuda += strcmp(d, "cuda") == 0;
        }
        o.out.assign(len, 0);
        auto t0 = std::chrono::steady_clock::now();
        for (int r = 0; r < repeat && !o.run_rc; ++r)
            o.run_rc = cvml_graph_run_bytes(g, input.data(), input.size(), o.out.data(), len);
        auto t1 = std::chrono::steady_clock::now();
        if (ms) *ms = std::chrono::duration<double, std::milli>(t1 - t0).count() / repeat;
    }
    if (o.run_rc) o.error = cvml_last_error();
    cvml_graph_release(g);
    cvml_context_release(ctx);
    return o;
}

int g_fail = 0, g_pass = 0;

void check_case(const std::string& dir) {
    std::vector<unsigned char> input, expected;
    if (!read_file(dir + "/input.bin", &input)) return;
    bool has_expected = read_file(dir + "/output.bin", &expected);
    Outcome c = run_case(dir, false, input);
    Outcome g = run_case(dir, true, input);
    bool same = c.load_rc == g.load_rc && c.run_rc == g.run_rc && c.out == g.out;
    bool matches = !has_expected || (c.run_rc == 0 && c.out == expected);
    if (same && matches) {
        ++g_pass;
        printf("ok    %-48s %d/%d nodes on cuda\n", dir.substr(dir.rfind('/') + 1).c_str(),
               g.on_cuda, g.nodes);
    } else {
        ++g_fail;
        printf("FAIL  %-48s cpu rc %d/%d, cuda rc %d/%d, %s%s %s\n",
               dir.substr(dir.rfind('/') + 1).c_str(), c.load_rc, c.run_rc, g.load_rc, g.run_rc,
               same ? "" : "cuda bytes differ from cpu; ",
               matches ? "" : "cpu differs from expected", (c.error + " | " + g.error).c_str());
    }
}

void bench(const std::string& dir) {
    std::vector<unsigned char> input;
    if (!read_file(dir + "/input.bin", &input)) {
        printf("bench %s: no input.bin\n", dir.c_str());
        return;
    }
    double cpu_ms = 0, gpu_ms = 0;
    run_case(dir, true, input, 3, &gpu_ms);  // warm-up: context, uploads
    Outcome g = run_case(dir, true, input, 20, &gpu_ms);
    Outcome c = run_case(dir, false, input, 3, &cpu_ms);
    printf("bench %-40s cuda %.3f ms/run (%d/%d nodes), cpu %.3f ms/run, bytes %s\n", dir.c_str(),
           gpu_ms, g.on_cuda, g.nodes, cpu_ms, c.out == g.out ? "equal" : "DIFFER");
    if (c.out != g.out) ++g_fail;
}

}  // namespace

int main(int argc, char** argv) {
    if (cvml_init() != CVML_OK) {
        fprintf(stderr, "gpu_check: init: %s\n", cvml_last_error());
        return 2;
    }
    int n = 0;
    bool cuda = false;
    std::string why = "the CUDA plugin was not found (CVML_PLUGIN_PATH)";
    cvml_plugin_count(&n);
    for (int i = 0; i < n; ++i) {
        const char *name, *version, *path, *reason;
        int loaded;
        cvml_plugin_info(i, &name, &version, &path, &loaded, &reason);
        printf("plugin %s %s %s %s\n", name, version, loaded ? "loaded" : "ABSENT:", reason);
        if (strcmp(name, "cuda") != 0) continue;
        cuda |= loaded != 0;
        if (!loaded && reason) why = reason;
    }
    if (!cuda) {
        fprintf(stderr, "gpu_check: no CUDA device: %s\n", why.c_str());
        cvml_release();
        return 3;
    }
    std::vector<std::string> benches, roots;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--bench") == 0 && i + 1 < argc)
            benches.push_back(argv[++i]);
        else
            roots.push_back(argv[i]);
    }
    for (const auto& root : roots) {
        if (!is_dir(root)) continue;
        struct stat st;
        if (stat((root + "/model.json").c_str(), &st) == 0) {
            check_case(root);
            continue;
        }
        std::vector<std::string> dirs;
        if (DIR* d = opendir(root.c_str())) {
            while (dirent* e = readdir(d))
                if (e->d_name[0] != '.') dirs.push_back(root + "/" + e->d_name);
            closedir(d);
        }
        std::sort(dirs.begin(), dirs.end());
        for (const auto& dir : dirs) check_case(dir);
    }
    for (const auto& b : benches) bench(b);
    printf("gpu_check: %d passed, %d failed\n", g_pass, g_fail);
    cvml_release();
    return g_fail ? 1 : 0;
}
