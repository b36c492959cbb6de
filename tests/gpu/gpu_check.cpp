/* GPU check without GoogleTest: runs every conformance case and the real model on the
 * CUDA device and on the CPU alone, compares the bytes with each other and with the
 * expected output, and times models given with --bench. Needs the CUDA plugin
 * (CVML_PLUGIN_PATH) and a GPU, or the plugin's host emulation (cvml_cuda_emu).
 *
 *   gpu_check [--bench DIR]... [--require-cuda SRC] [--kernel-coverage] [--some-cuda]
 *             CASE_OR_CASES_DIR...
 *
 * --require-cuda SRC (the plugin's sources, source/device/cuda): every node whose
 *   operator has a kernel there (op/NAME.cu) must run on the CUDA device (set
 *   CVML_CUDA_ISLAND_WORK=0, or the island policy moves small islands to the CPU); with
 *   the emulated plugin, no device memory or stream may outlive a case either.
 * --kernel-coverage: with --require-cuda and the emulated plugin, every __global__
 *   function in SRC must have run at least once over the whole check.
 * --some-cuda: every case that runs must have at least one node on the CUDA device.
 *
 * Exit status: 0 every comparison holds; 1 some comparison failed; 2 the library did
 * not initialise; 3 no CUDA device: the CUDA plugin is not loaded (no GPU, no driver,
 * or the plugin was not found), with the loader's reason on stderr; 77 none of the
 * given directories exists (nothing checked).
 *
 * A case directory holds model.json, model.params, input.bin and (when its
 * meta.json expects an output) output.bin. */
#include <dirent.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
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

std::vector<std::string> list_dir(const std::string& dir) {
    std::vector<std::string> names;
    if (DIR* d = opendir(dir.c_str())) {
        while (dirent* e = readdir(d))
            if (e->d_name[0] != '.') names.push_back(e->d_name);
        closedir(d);
    }
    std::sort(names.begin(), names.end());
    return names;
}

bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

/* What the plugin's sources promise: the operators with a kernel file (op/NAME.cu) and
 * the __global__ functions of every .cu and .cuh. */
struct CudaSources {
    std::set<std::string> ops, kernels;
};

bool is_ident(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* The NAME of every "__global__ void NAME(" in text. */
void find_kernels(const std::string& text, std::set<std::string>* out) {
    const std::string key = "__global__";
    for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
        std::istringstream rest(text.substr(at + key.size(), 200));
        std::string type, name;
        rest >> type >> name;
        size_t n = 0;
        while (n < name.size() && is_ident(name[n])) ++n;
        if (type == "void" && n > 0 && n < name.size() && name[n] == '(')
            out->insert(name.substr(0, n));
    }
}

CudaSources scan_sources(const std::string& root) {
    CudaSources src;
    for (const std::string& dir : {root, root + "/op"}) {
        for (const std::string& name : list_dir(dir)) {
            if (!ends_with(name, ".cu") && !ends_with(name, ".cuh")) continue;
            if (dir != root && ends_with(name, ".cu"))
                src.ops.insert(name.substr(0, name.size() - 3));
            std::ifstream f(dir + "/" + name);
            std::stringstream text;
            text << f.rdbuf();
            find_kernels(text.str(), &src.kernels);
        }
    }
    return src;
}

/* The emulated plugin's counters (source/device/cuda/emu/cuda_emu.h), found in the
 * loaded plugin; all null with a real GPU. */
struct Emulator {
    int (*kernel_stat)(int, const char**, uint64_t*, uint64_t*, uint64_t*) = nullptr;
    void (*memory)(uint64_t*, uint64_t*, uint64_t*, uint64_t*) = nullptr;
    const char* (*fault)() = nullptr;
    int (*path_stat)(int, const char**, uint64_t*) = nullptr; /* optional: marked paths */
};

Emulator find_emulator(const std::string& plugin_path) {
    Emulator e;
    void* h = dlopen(plugin_path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (!h) return e;
    e.kernel_stat =
        reinterpret_cast<decltype(e.kernel_stat)>(dlsym(h, "cvml_cuda_emu_kernel_stat"));
    e.memory = reinterpret_cast<decltype(e.memory)>(dlsym(h, "cvml_cuda_emu_memory"));
    e.fault = reinterpret_cast<decltype(e.fault)>(dlsym(h, "cvml_cuda_emu_fault"));
    e.path_stat = reinterpret_cast<decltype(e.path_stat)>(dlsym(h, "cvml_cuda_emu_path_stat"));
    dlclose(h);  // the library's own handle keeps it loaded
    if (!e.kernel_stat || !e.memory || !e.fault) e = Emulator();
    return e;
}

struct Options {
    bool require_cuda = false, kernel_coverage = false, some_cuda = false;
    CudaSources sources;
    Emulator emu;
};
Options g_opt;

struct Outcome {
    int load_rc = 0, run_rc = 0;
    std::vector<unsigned char> out;
    int on_cuda = 0, nodes = 0;
    std::vector<std::string> off_cuda; /* nodes with a CUDA kernel that ran elsewhere */
    std::string error;
    bool runs_differ = false; /* a later run's bytes were not the first run's */
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
            const char *d = "", *name = "", *op = "";
            cvml_graph_node_device(g, i, &d);
            cvml_graph_node_info(g, i, &name, &op);
            o.on_cuda += strcmp(d, "cuda") == 0;
            if (strcmp(d, "cuda") != 0 && g_opt.sources.ops.count(op))
                o.off_cuda.push_back(std::string(name) + " (" + op + ") on " + d);
        }
        o.out.assign(len, 0);
        std::vector<unsigned char> later(len, 0);
        auto t0 = std::chrono::steady_clock::now();
        for (int r = 0; r < repeat && !o.run_rc; ++r) {
            unsigned char* out = r == 0 ? o.out.data() : later.data();
            o.run_rc = cvml_graph_run_bytes(g, input.data(), input.size(), out, len);
            o.runs_differ |= !o.run_rc && r > 0 && later != o.out;
        }
        auto t1 = std::chrono::steady_clock::now();
        if (ms) *ms = std::chrono::duration<double, std::milli>(t1 - t0).count() / repeat;
    }
    if (o.run_rc) o.error = cvml_last_error();
    cvml_graph_release(g);
    cvml_context_release(ctx);
    return o;
}

int g_fail = 0, g_pass = 0;

/* Where the CUDA run fell short of the options' demands ("" when it did not). */
std::string placement_problem(const Outcome& g) {
    std::string why;
    if (g_opt.require_cuda && !g.off_cuda.empty()) {
        why = "not on cuda:";
        for (const auto& n : g.off_cuda) why += " " + n;
    }
    if (g_opt.some_cuda && g.load_rc == 0 && g.run_rc == 0 && g.on_cuda == 0)
        why += "no node on cuda";
    if (g_opt.require_cuda && g_opt.emu.memory) {
        uint64_t allocations, bytes, peak, streams;
        g_opt.emu.memory(&allocations, &bytes, &peak, &streams);
        if (allocations || streams)
            why += " device memory left after release: " + std::to_string(allocations) +
                   " allocations (" + std::to_string(bytes) + " bytes), " +
                   std::to_string(streams) + " streams";
    }
    return why;
}

/* The expected output's file: meta.json's "expect": {"output": FILE} (null where the
 * case expects an error, or where upstream's bytes are not the law: a divergence), or
 * output.bin when there is no meta.json. "" when none. */
std::string expected_output(const std::string& dir) {
    std::vector<unsigned char> meta;
    if (!read_file(dir + "/meta.json", &meta)) return "output.bin";
    const std::string text(meta.begin(), meta.end());
    const std::string key = "\"output\":";
    const size_t at = text.find(key);
    if (at == std::string::npos) return "";
    const size_t open = text.find_first_not_of(" \t\r\n", at + key.size());
    if (open == std::string::npos || text[open] != '"') return "";  // null
    const size_t close = text.find('"', open + 1);
    return close == std::string::npos ? "" : text.substr(open + 1, close - open - 1);
}

void check_case(const std::string& dir) {
    std::vector<unsigned char> input, expected;
    if (!read_file(dir + "/input.bin", &input)) return;
    const std::string expected_file = expected_output(dir);
    bool has_expected = !expected_file.empty() && read_file(dir + "/" + expected_file, &expected);
    Outcome c = run_case(dir, false, input);
    // Three runs on the GPU: the CUDA device enqueues its first run directly, captures
    // the second into a CUDA graph and replays that graph from the third on.
    Outcome g = run_case(dir, true, input, 3);
    bool same = c.load_rc == g.load_rc && c.run_rc == g.run_rc && c.out == g.out && !g.runs_differ;
    bool matches = !has_expected || (c.run_rc == 0 && c.out == expected);
    const std::string placement = placement_problem(g);
    if (same && matches && placement.empty()) {
        ++g_pass;
        printf("ok    %-48s %d/%d nodes on cuda\n", dir.substr(dir.rfind('/') + 1).c_str(),
               g.on_cuda, g.nodes);
    } else {
        ++g_fail;
        printf("FAIL  %-48s cpu rc %d/%d, cuda rc %d/%d, %s%s%s %s\n",
               dir.substr(dir.rfind('/') + 1).c_str(), c.load_rc, c.run_rc, g.load_rc, g.run_rc,
               same            ? ""
               : g.runs_differ ? "cuda runs differ; "
                               : "cuda bytes differ from cpu; ",
               matches ? "" : "cpu differs from expected; ", placement.c_str(),
               (c.error + " | " + g.error).c_str());
    }
}

/* With the emulated plugin: each kernel's launches, and the kernels never launched. */
void report_kernels() {
    if (!g_opt.emu.kernel_stat) {
        if (g_opt.kernel_coverage)
            printf("kernel coverage: not available (not the emulated plugin)\n");
        return;
    }
    std::set<std::string> launched;
    const char* name;
    uint64_t launches, threads, cooperative;
    for (int i = 0; g_opt.emu.kernel_stat(i, &name, &launches, &threads, &cooperative); ++i) {
        printf("kernel %-24s %8llu launches %12llu threads%s\n", name,
               static_cast<unsigned long long>(launches), static_cast<unsigned long long>(threads),
               cooperative ? " (cooperative)" : "");
        if (launches) launched.insert(name);
    }
    // Marked paths inside kernels (CUDA_PATH): reported; the plugin tests require them.
    uint64_t passes = 0;
    for (int i = 0; g_opt.emu.path_stat && g_opt.emu.path_stat(i, &name, &passes); ++i)
        printf("path   %-50s %10llu passes\n", name, static_cast<unsigned long long>(passes));
    if (g_opt.emu.fault()[0]) {
        printf("FAIL  emulated device fault: %s\n", g_opt.emu.fault());
        ++g_fail;
    }
    if (!g_opt.kernel_coverage) return;
    for (const auto& k : g_opt.sources.kernels) {
        if (launched.count(k)) continue;
        printf("FAIL  kernel %s never ran\n", k.c_str());
        ++g_fail;
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
    std::string why = "the CUDA plugin was not found (CVML_PLUGIN_PATH)", cuda_path;
    cvml_plugin_count(&n);
    for (int i = 0; i < n; ++i) {
        const char *name, *version, *path, *reason;
        int loaded;
        cvml_plugin_info(i, &name, &version, &path, &loaded, &reason);
        printf("plugin %s %s %s %s\n", name, version, loaded ? "loaded" : "ABSENT:", reason);
        if (strcmp(name, "cuda") != 0) continue;
        cuda |= loaded != 0;
        if (loaded) cuda_path = path;
        if (!loaded && reason) why = reason;
    }
    if (!cuda) {
        fprintf(stderr, "gpu_check: no CUDA device: %s\n", why.c_str());
        cvml_release();
        return 3;
    }
    std::vector<std::string> benches, roots;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--bench") == 0 && i + 1 < argc) {
            benches.push_back(argv[++i]);
        } else if (strcmp(argv[i], "--require-cuda") == 0 && i + 1 < argc) {
            g_opt.require_cuda = true;
            g_opt.sources = scan_sources(argv[++i]);
            if (g_opt.sources.ops.empty()) {
                fprintf(stderr, "gpu_check: no op/*.cu in %s\n", argv[i]);
                cvml_release();
                return 1;
            }
        } else if (strcmp(argv[i], "--kernel-coverage") == 0) {
            g_opt.kernel_coverage = true;
        } else if (strcmp(argv[i], "--some-cuda") == 0) {
            g_opt.some_cuda = true;
        } else {
            roots.push_back(argv[i]);
        }
    }
    g_opt.emu = find_emulator(cuda_path);
    if (g_opt.emu.kernel_stat) printf("the CUDA device is the host emulation\n");
    int found = 0;
    for (const auto& root : roots) {
        if (!is_dir(root)) {
            printf("skip  %s: not found\n", root.c_str());
            continue;
        }
        ++found;
        struct stat st;
        if (stat((root + "/model.json").c_str(), &st) == 0) {
            check_case(root);
            continue;
        }
        for (const auto& name : list_dir(root)) check_case(root + "/" + name);
    }
    for (const auto& b : benches) bench(b);
    report_kernels();
    printf("gpu_check: %d passed, %d failed\n", g_pass, g_fail);
    cvml_release();
    if (!found && benches.empty()) return 77;
    return g_fail ? 1 : 0;
}
