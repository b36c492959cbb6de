/* cvml bench: builds (or loads) a model, warms up, runs it N times and reports the
 * latency distribution, threads, SIMD level, memory and a per-operator profile. */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#include <windows.h>  // before psapi.h, which needs its types
#include <psapi.h>
#else
#include <sys/resource.h>
#endif
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "cli.h"
#include "cvml.h"
#include "models.h"

namespace {

const char kUsage[] =
    "usage: cvml bench [MODEL [PARAMS]] [options]\n"
    "\n"
    "Measures inference latency of a built-in benchmark model or of a model file.\n"
    "\n"
    "model (one of):\n"
    "  MODEL [PARAMS]      a CVM model, named as for every cvml command: a directory\n"
    "                      (model.json + model.params, or symbol + params), a graph file\n"
    "                      (PARAMS beside it by default), or a prefix (PREFIX.json)\n"
    "  --model NAME        built-in model: resnet18, mobilenet, ssd (default resnet18)\n"
    "  --graph FILE --params FILE   a CVM model (graph JSON and params)\n"
    "options:\n"
    "  --batch N           batch of a built-in model (default 1)\n"
    "  --size S            input height and width of a built-in model\n"
    "  --seed S            weights and input seed (default 1)\n"
    "  --threads T         CPU threads (default: CVML_NUM_THREADS or 1)\n"
    "  --device NAMES      devices to use, comma-separated in priority order (the CPU is\n"
    "                      the fallback; see 'cvml devices')\n"
    "  --plugin PATH       load a device plugin first (repeatable)\n"
    "  --simd LEVEL        scalar, avx2 or avx512 (sets CVML_SIMD; default: the best)\n"
    "  --warmup W          untimed runs first (default 3)\n"
    "  --runs N            timed runs (default 20)\n"
    "  --gap-ms G          sleep G ms before each timed run, as a node or a server calls\n"
    "                      with gaps between inferences (default 0: back to back)\n"
    "  --profile           per-operator table (one more profiled pass of N runs)\n"
    "  --nodes             with --profile: also every node's mean and fastest time\n"
    "  --json              print one JSON object instead of text\n"
    "  --save DIR          write the built-in model to DIR/NAME.json + .params and exit\n"
    "  --output-hash       print the FNV-1a hash of the output bytes\n"
    "  -h, --help          show this help\n";

struct Options {
    bench::ModelSpec spec;
    std::string graph, params, save;
    std::vector<std::string> positionals;      /* MODEL [PARAMS] */
    std::vector<std::string> devices, plugins; /* --device names, --plugin paths */
    bool built_in_named = false;
    int threads = 0;
    std::string simd;
    int warmup = 3, runs = 20;
    int gap_ms = 0; /* --gap-ms: idle time before each timed run */
    bool profile = false, json = false, hash = false, nodes = false;
};

double now_ms() {
    using clock = std::chrono::steady_clock;
    return std::chrono::duration<double, std::milli>(clock::now().time_since_epoch()).count();
}

// The process's peak resident memory so far, in MiB.
double peak_rss_mb() {
#ifdef _WIN32
    PROCESS_MEMORY_COUNTERS pmc;
    if (!GetProcessMemoryInfo(GetCurrentProcess(), &pmc, sizeof pmc)) return 0;
    return static_cast<double>(pmc.PeakWorkingSetSize) / (1024.0 * 1024.0);
#else
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024.0;  // KiB on Linux
#endif
}

void set_env(const char* name, const char* value) {
#ifdef _WIN32
    _putenv_s(name, value);
#else
    setenv(name, value, 1);
#endif
}

/* Appends the comma-separated names in `list` (empty items dropped). */
void split_names(const std::string& list, std::vector<std::string>* out) {
    size_t start = 0;
    while (start <= list.size()) {
        size_t comma = list.find(',', start);
        if (comma == std::string::npos) comma = list.size();
        if (comma > start) out->push_back(list.substr(start, comma - start));
        start = comma + 1;
    }
}

/* --plugin and --device, as every cvml command applies them. */
int configure_devices(cvml_context* ctx, const Options& o) {
    for (const auto& path : o.plugins) {
        int rc = cvml_load_plugin(path.c_str());
        if (rc) {
            fprintf(stderr, "cvml bench: cannot load plugin '%s': %s\n", path.c_str(),
                    cvml_last_error());
            return rc;
        }
    }
    if (o.devices.empty()) return CVML_OK;
    std::vector<const char*> names;
    for (const auto& n : o.devices) names.push_back(n.c_str());
    int rc = cvml_context_set_devices(ctx, names.data(), (int)names.size());
    if (rc) fprintf(stderr, "cvml bench: cannot use the devices given: %s\n", cvml_last_error());
    return rc;
}

bool parse(int argc, char** argv, Options* o, std::string* err) {
    o->spec.name = "resnet18";
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&](const char* name) -> const char* {
            if (i + 1 >= argc) {
                *err = std::string(name) + " needs a value";
                return nullptr;
            }
            return argv[++i];
        };
        auto number = [&](const char* name, int lo, int* out) {
            const char* v = value(name);
            if (!v) return false;
            char* end = nullptr;
            long x = strtol(v, &end, 10);
            if (!*v || *end || x < lo || x > 1000000) {
                *err = std::string(name) + ": bad value '" + v + "'";
                return false;
            }
            *out = (int)x;
            return true;
        };
        int seed = 0;
        if (a.empty() || a[0] != '-') {
            if (o->positionals.size() == 2) {
                *err = "unexpected argument '" + a + "'";
                return false;
            }
            o->positionals.push_back(a);
        } else if (a == "--model") {
            const char* v = value("--model");
            if (!v) return false;
            o->spec.name = v;
            o->built_in_named = true;
        } else if (a == "--graph") {
            const char* v = value("--graph");
            if (!v) return false;
            o->graph = v;
        } else if (a == "--params") {
            const char* v = value("--params");
            if (!v) return false;
            o->params = v;
        } else if (a == "--device") {
            const char* v = value("--device");
            if (!v) return false;
            size_t before = o->devices.size();
            split_names(v, &o->devices);
            if (o->devices.size() == before) {
                *err = "--device needs a name";
                return false;
            }
        } else if (a == "--plugin") {
            const char* v = value("--plugin");
            if (!v) return false;
            o->plugins.push_back(v);
        } else if (a == "--save") {
            const char* v = value("--save");
            if (!v) return false;
            o->save = v;
        } else if (a == "--simd") {
            const char* v = value("--simd");
            if (!v) return false;
            o->simd = v;
            if (o->simd != "scalar" && o->simd != "avx2" && o->simd != "avx512") {
                *err = "--simd: expected scalar, avx2 or avx512";
                return false;
            }
        } else if (a == "--batch") {
            if (!number("--batch", 1, &o->spec.batch)) return false;
        } else if (a == "--size") {
            if (!number("--size", 8, &o->spec.size)) return false;
        } else if (a == "--seed") {
            if (!number("--seed", 0, &seed)) return false;
            o->spec.seed = (uint32_t)seed;
        } else if (a == "--threads") {
            if (!number("--threads", 1, &o->threads)) return false;
        } else if (a == "--warmup") {
            if (!number("--warmup", 0, &o->warmup)) return false;
        } else if (a == "--runs") {
            if (!number("--runs", 1, &o->runs)) return false;
        } else if (a == "--gap-ms") {
            if (!number("--gap-ms", 0, &o->gap_ms)) return false;
        } else if (a == "--profile") {
            o->profile = true;
        } else if (a == "--nodes") {
            o->nodes = true;
        } else if (a == "--json") {
            o->json = true;
        } else if (a == "--output-hash") {
            o->hash = true;
        } else {
            *err = "unknown option '" + a + "'";
            return false;
        }
    }
    if (o->graph.empty() != o->params.empty()) {
        *err = "--graph and --params go together";
        return false;
    }
    if (!o->positionals.empty() && (!o->graph.empty() || o->built_in_named)) {
        *err = "give MODEL, --graph/--params or --model, not several";
        return false;
    }
    if (!o->save.empty() && (!o->positionals.empty() || !o->graph.empty())) {
        *err = "--save writes a built-in model (--model NAME); 'cvml save' copies a model file";
        return false;
    }
    return true;
}

/* MODEL [PARAMS] resolved as every cvml command resolves it (tools/cvml). */
bool resolve_positionals(Options* o, std::string* err) {
    if (o->positionals.empty()) return true;
    try {
        cli::ModelPaths p = cli::resolve_model(o->positionals[0],
                                               o->positionals.size() == 2 ? o->positionals[1] : "");
        cli::refuse_compiled(p, "cvml bench");
        o->graph = p.graph;
        o->params = p.params;
    } catch (const cli::Error& e) {
        *err = e.what();
        return false;
    }
    return true;
}

struct OpRow {
    std::string op;
    double ms = 0;
    uint64_t macs = 0;
    int nodes = 0;
};

/* Everything the report shows, gathered before any of it is printed. */
struct BenchFacts {
    std::string model_name;
    int threads = 1;
    const char* simd = "";
    double load_rss_mb = 0, rss_mb = 0; /* peak RSS after loading, and at the end */
    bool hwm_reset = false;             /* rss_mb covers only preparing and running */
    double prerun_ms = 0, median = 0;
    std::vector<double> sorted; /* the timed runs' latencies, fastest first */
    std::vector<int32_t> output;
    size_t nonzero = 0, distinct = 0;
    uint64_t hash = 0;
    std::vector<std::string> node_names, node_ops;
    std::vector<uint64_t> macs; /* per node: conv2d and dense only */
    uint64_t total_macs = 0;
    std::vector<double> node_ms;     /* with --profile: the mean of the profiled runs */
    std::vector<double> node_min_ms; /* ... and their fastest: on a shared machine, the
                                        figure that other work disturbs least */
    std::vector<OpRow> rows;         /* with --profile: by operator, slowest first */
    double profiled_total = 0;
    uint64_t const_bytes = 0;
    size_t arena = 0;
};

/* The library, a context and a graph, released in that order's reverse. */
struct Session {
    bool initialized = false;
    cvml_context* ctx = nullptr;
    cvml_graph* g = nullptr;
    Session() = default;
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;
    ~Session() {
        if (g) cvml_graph_release(g);
        if (ctx) cvml_context_release(ctx);
        if (initialized) cvml_release();
    }
};

std::string json_escape(const std::string& s) {
    std::string o;
    for (char c : s) {
        if (c == '"' || c == '\\') o += '\\';
        o += c;
    }
    return o;
}

uint64_t fnv1a(const std::vector<int32_t>& v) {
    uint64_t h = 1469598103934665603ull;
    for (int32_t x : v)
        for (int b = 0; b < 4; ++b) {
            h ^= (uint8_t)((uint32_t)x >> (8 * b));
            h *= 1099511628211ull;
        }
    return h;
}

/* The input as upstream's bytes (what `cvml run --input` and CVMAPIInference take):
 * int8 when the input's type size is 1, else little-endian int32. */
int write_input_bytes(cvml_graph* g, const std::vector<int32_t>& values, const std::string& path) {
    size_t length = 0;
    int type_size = 4;
    if (cvml_graph_input_bytes(g, &length, &type_size)) {
        fprintf(stderr, "cvml bench: %s\n", cvml_last_error());
        return CVML_ERR_RUNTIME;
    }
    std::vector<uint8_t> bytes;
    for (int32_t v : values)
        for (int b = 0; b < type_size; ++b) bytes.push_back((uint8_t)((uint32_t)v >> (8 * b)));
    FILE* f = fopen(path.c_str(), "wb");
    bool ok = f && fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    if (f) ok = (fclose(f) == 0) && ok;
    if (!ok || bytes.size() != length) {
        fprintf(stderr, "cvml bench: cannot write %s\n", path.c_str());
        return CVML_ERR_RUNTIME;
    }
    return CVML_OK;
}

/* The library and a context with the options' SIMD level, threads, plugins and
 * devices; returns the exit status of a failure, else 0. */
int start(const Options& o, Session* s, BenchFacts* f) {
    if (!o.simd.empty()) set_env("CVML_SIMD", o.simd.c_str());
    if (cvml_init()) {
        fprintf(stderr, "cvml bench: %s\n", cvml_last_error());
        return 2;
    }
    s->initialized = true;
    cvml_context_create(&s->ctx);
    if (o.threads) cvml_context_set_threads(s->ctx, o.threads);
    if (int bad = configure_devices(s->ctx, o)) return bad;
    cvml_context_get_threads(s->ctx, &f->threads);
    return 0;
}

/* Loads the model file or builds the built-in model. */
int open_model(const Options& o, Session* s, BenchFacts* f) {
    std::string err;
    int rc;
    if (!o.graph.empty()) {
        rc = cvml_graph_load_file(s->ctx, "cvm", o.graph.c_str(), o.params.c_str(), &s->g);
        f->model_name = o.graph;
        if (rc) err = cvml_last_error();
    } else {
        rc = bench::build_model(s->ctx, o.spec, &s->g, &err);
        f->model_name = o.spec.name;
    }
    if (rc) fprintf(stderr, "cvml bench: %s: %s\n", f->model_name.c_str(), err.c_str());
    return rc;
}

/* --save: the built-in model as DIR/NAME.json + .params, with an input beside it. */
int save_model(const Options& o, cvml_graph* g) {
    std::string base =
        o.save + "/" + o.spec.name + (o.spec.batch != 1 ? "_b" + std::to_string(o.spec.batch) : "");
    int rc = cvml_graph_save_file(g, "cvm", (base + ".json").c_str(), (base + ".params").c_str());
    if (rc) {
        fprintf(stderr, "cvml bench: saving %s: %s\n", base.c_str(), cvml_last_error());
        return rc;
    }
    rc = write_input_bytes(g, bench::make_input(g, o.spec.seed), base + ".input.bin");
    if (!rc) printf("%s.json %s.params %s.input.bin\n", base.c_str(), base.c_str(), base.c_str());
    return rc;
}

/* Peak RSS of loading/building vs of preparing and running: Linux resets the
 * high-water mark when "5" is written to clear_refs. */
void start_memory_watch(BenchFacts* f) {
    f->load_rss_mb = peak_rss_mb();
#ifdef __GLIBC__
    malloc_trim(0);  // hand the builder's freed temporaries back before measuring
#endif
    if (FILE* file = fopen("/proc/self/clear_refs", "w")) {
        f->hwm_reset = fputs("5", file) >= 0;
        f->hwm_reset = (fclose(file) == 0) && f->hwm_reset;
    }
}

/* Sets the input, plans the graph, warms up and times `runs` runs. */
int time_runs(const Options& o, cvml_graph* g, BenchFacts* f) {
    std::vector<int32_t> input = bench::make_input(g, o.spec.seed);
    cvml_tensor* in = nullptr;
    cvml_graph_get_input(g, 0, &in);
    int rc = cvml_tensor_set_i32(in, input.data(), input.size());
    double t0 = now_ms();
    if (!rc) rc = cvml_graph_prerun(g);
    f->prerun_ms = now_ms() - t0;
    for (int i = 0; i < o.warmup && !rc; ++i) rc = cvml_graph_run(g);
    std::vector<double> times;
    for (int i = 0; i < o.runs && !rc; ++i) {
        if (o.gap_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(o.gap_ms));
        double s = now_ms();
        rc = cvml_graph_run(g);
        times.push_back(now_ms() - s);
    }
    if (rc) return rc;
    f->sorted = times;
    std::sort(f->sorted.begin(), f->sorted.end());
    const std::vector<double>& s = f->sorted;
    f->median = s.size() % 2 ? s[s.size() / 2] : (s[s.size() / 2 - 1] + s[s.size() / 2]) / 2;
    return 0;
}

/* Output facts: a hash, how many values are nonzero and how many distinct. */
void read_output(cvml_graph* g, BenchFacts* f) {
    cvml_tensor* out = nullptr;
    cvml_graph_get_output(g, 0, &out);
    size_t on = 0;
    cvml_tensor_element_count(out, &on);
    f->output.assign(on, 0);
    cvml_tensor_get_i32(out, f->output.data(), on);
    std::vector<int32_t> s2 = f->output;
    std::sort(s2.begin(), s2.end());
    f->distinct = std::unique(s2.begin(), s2.end()) - s2.begin();
    for (int32_t v : f->output) f->nonzero += v != 0;
    f->hash = fnv1a(f->output);
}

/* Each node's name and operator, and the MACs of conv2d and dense from their shapes:
 * output elements times K, where K is prod(weight dims)/dims[0] of the constants
 * consumed in node order. */
void count_macs(cvml_graph* g, BenchFacts* f) {
    int node_count = 0;
    cvml_graph_node_count(g, &node_count);
    f->macs.assign(node_count, 0);
    for (int i = 0; i < node_count; ++i) {
        const char* name = nullptr;
        const char* op = nullptr;
        cvml_graph_node_info(g, i, &name, &op);
        f->node_names.push_back(name ? name : "");
        f->node_ops.push_back(op);
        if (strcmp(op, "conv2d") && strcmp(op, "dense")) continue;
        cvml_tensor* t = nullptr;
        if (cvml_graph_find_tensor(g, name, &t)) continue;
        size_t n = 0;
        cvml_tensor_element_count(t, &n);
        f->macs[i] = n;  // times K, filled from the weight below
    }
    int tc = 0;
    cvml_graph_tensor_count(g, &tc);
    std::vector<uint64_t> weight_k;
    for (int t = 0; t < tc; ++t) {
        cvml_tensor* tt = nullptr;
        cvml_graph_get_tensor(g, t, &tt);
        int is_const = 0;
        cvml_tensor_is_const(tt, &is_const);
        int nd = 0;
        int32_t dims[CVML_MAX_DIMS];
        cvml_tensor_shape(tt, &nd, dims);
        if (is_const && (nd == 4 || nd == 2)) {
            uint64_t k = 1;
            for (int d = 1; d < nd; ++d) k *= (uint64_t)dims[d];
            weight_k.push_back(k);
        }
    }
    size_t wi = 0;
    for (int i = 0; i < node_count; ++i) {
        if (!f->macs[i]) continue;
        if (wi < weight_k.size()) f->macs[i] *= weight_k[wi++];
        f->total_macs += f->macs[i];
    }
}

/* --profile: one more pass of `runs` runs with node timing on, summed by operator. */
void profile_operators(const Options& o, cvml_graph* g, BenchFacts* f) {
    const size_t node_count = f->node_ops.size();
    f->node_ms.assign(node_count, 0);
    f->node_min_ms.assign(node_count, 0);
    cvml_graph_set_profiling(g, 1);
    for (int r = 0; r < o.runs; ++r) {
        cvml_graph_run(g);
        for (size_t i = 0; i < node_count; ++i) {
            uint64_t ns = 0;
            cvml_graph_node_time(g, (int)i, &ns);
            const double ms = ns / 1e6;
            f->node_ms[i] += ms / o.runs;
            if (r == 0 || ms < f->node_min_ms[i]) f->node_min_ms[i] = ms;
        }
    }
    cvml_graph_set_profiling(g, 0);
    std::map<std::string, OpRow> by_op;
    for (size_t i = 0; i < node_count; ++i) {
        const std::string& op = f->node_ops[i];
        if (op == "null") continue;
        OpRow& r = by_op[op];
        r.op = op;
        r.ms += f->node_ms[i];
        r.macs += f->macs[i];
        r.nodes++;
        f->profiled_total += f->node_ms[i];
    }
    for (auto& kv : by_op) f->rows.push_back(kv.second);
    std::sort(f->rows.begin(), f->rows.end(),
              [](const OpRow& a, const OpRow& b) { return a.ms > b.ms; });
}

/* Peak RSS at the end, the parameters' bytes as stored, the CPU arena, the SIMD level. */
void read_memory(cvml_graph* g, BenchFacts* f) {
    f->rss_mb = peak_rss_mb();
    int tc = 0;
    cvml_graph_tensor_count(g, &tc);
    for (int t = 0; t < tc; ++t) {
        cvml_tensor* tt = nullptr;
        cvml_graph_get_tensor(g, t, &tt);
        int is_const = 0, p = 32;
        cvml_tensor_is_const(tt, &is_const);
        cvml_tensor_precision(tt, &p);
        size_t n = 0;
        cvml_tensor_element_count(tt, &n);
        if (is_const) f->const_bytes += n * (p <= 8 ? 1 : 4);
    }
    cvml_graph_cpu_arena_bytes(g, &f->arena);
    f->simd = cvml_cpu_simd_level();
}

void print_json(const Options& o, const BenchFacts& f) {
    printf(
        "{\"model\": \"%s\", \"batch\": %d, \"threads\": %d, \"simd\": \"%s\", "
        "\"runs\": %d, \"warmup\": %d, \"gap_ms\": %d, \"median_ms\": %.4f, \"min_ms\": %.4f, "
        "\"max_ms\": %.4f, \"prerun_ms\": %.3f, \"macs\": %llu, \"gmacs_per_s\": %.2f, "
        "\"peak_rss_mb\": %.2f, \"run_peak_rss_mb\": %.2f, \"load_peak_rss_mb\": %.2f, "
        "\"param_bytes\": %llu, \"arena_bytes\": %zu, \"output_hash\": \"%016llx\", "
        "\"output_nonzero\": %zu, \"output_distinct\": %zu, \"output_count\": %zu",
        json_escape(f.model_name).c_str(), o.spec.batch, f.threads, f.simd, o.runs, o.warmup,
        o.gap_ms, f.median, f.sorted.front(), f.sorted.back(), f.prerun_ms,
        (unsigned long long)f.total_macs, f.total_macs / (f.median * 1e6),
        f.rss_mb > f.load_rss_mb ? f.rss_mb : f.load_rss_mb, f.hwm_reset ? f.rss_mb : -1.0,
        f.load_rss_mb, (unsigned long long)f.const_bytes, f.arena, (unsigned long long)f.hash,
        f.nonzero, f.distinct, f.output.size());
    if (o.profile) {
        printf(", \"operators\": [");
        for (size_t i = 0; i < f.rows.size(); ++i) {
            const OpRow& r = f.rows[i];
            printf(
                "%s{\"op\": \"%s\", \"nodes\": %d, \"ms\": %.4f, \"share\": %.4f, "
                "\"macs\": %llu, \"gmacs_per_s\": %.2f}",
                i ? ", " : "", r.op.c_str(), r.nodes, r.ms,
                f.profiled_total > 0 ? r.ms / f.profiled_total : 0.0, (unsigned long long)r.macs,
                r.ms > 0 ? r.macs / (r.ms * 1e6) : 0.0);
        }
        printf("]");
    }
    printf("}\n");
}

/* --profile as text: the operators, slowest first, and with --nodes every node. */
void print_profile(const Options& o, const BenchFacts& f) {
    printf("\n%-22s %5s %10s %7s %12s %9s\n", "operator", "nodes", "ms", "share", "MMAC", "GMAC/s");
    for (const OpRow& r : f.rows)
        printf("%-22s %5d %10.4f %6.1f%% %12.1f %9.1f\n", r.op.c_str(), r.nodes, r.ms,
               f.profiled_total > 0 ? 100 * r.ms / f.profiled_total : 0.0, r.macs / 1e6,
               r.ms > 0 ? r.macs / (r.ms * 1e6) : 0.0);
    printf("%-22s %5s %10.4f\n", "total (profiled)", "", f.profiled_total);
    if (!o.nodes) return;
    printf("\n%-28s %-18s %10s %12s %9s %10s\n", "node", "operator", "ms", "MMAC", "GMAC/s",
           "min ms");
    for (size_t i = 0; i < f.node_ops.size(); ++i) {
        if (f.node_ops[i] == "null") continue;
        printf("%-28s %-18s %10.4f %12.1f %9.1f %10.4f\n", f.node_names[i].c_str(),
               f.node_ops[i].c_str(), f.node_ms[i], f.macs[i] / 1e6,
               f.node_ms[i] > 0 ? f.macs[i] / (f.node_ms[i] * 1e6) : 0.0, f.node_min_ms[i]);
    }
}

void print_text(const Options& o, const BenchFacts& f) {
    printf("model      %s (batch %d)\n", f.model_name.c_str(), o.spec.batch);
    printf("threads    %d\nsimd       %s\n", f.threads, f.simd);
    printf("latency    median %.3f ms, min %.3f ms, max %.3f ms (%d runs, %d warm-up", f.median,
           f.sorted.front(), f.sorted.back(), o.runs, o.warmup);
    if (o.gap_ms > 0) printf(", %d ms idle before each", o.gap_ms);
    printf(")\n");
    printf("prerun     %.3f ms\n", f.prerun_ms);
    printf("compute    %.3f GMAC, %.1f GMAC/s at the median\n", f.total_macs / 1e9,
           f.total_macs / (f.median * 1e6));
    if (f.hwm_reset)
        printf(
            "memory     peak RSS %.1f MiB while preparing and running (%.1f MiB while "
            "building/loading), parameters %.2f MiB, arena %.2f MiB\n",
            f.rss_mb, f.load_rss_mb, f.const_bytes / 1048576.0, f.arena / 1048576.0);
    else
        printf("memory     peak RSS %.1f MiB, parameters %.2f MiB, arena %.2f MiB\n", f.rss_mb,
               f.const_bytes / 1048576.0, f.arena / 1048576.0);
    printf("output     %zu values, %zu nonzero, %zu distinct, hash %016llx\n", f.output.size(),
           f.nonzero, f.distinct, (unsigned long long)f.hash);
    if (o.profile) print_profile(o, f);
}

}  // namespace

int cvml_bench_main(int argc, char** argv) {
    Options o;
    std::string err;
    for (int i = 1; i < argc; ++i)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(kUsage, stdout);
            return 0;
        }
    if (!parse(argc, argv, &o, &err)) {
        // One line, as every cvml error; the options are on --help.
        fprintf(stderr, "cvml bench: %s (see 'cvml bench --help')\n", err.c_str());
        return 64;
    }
    if (!resolve_positionals(&o, &err)) {
        fprintf(stderr, "cvml bench: %s\n", err.c_str());
        return 1;
    }
    Session s;
    BenchFacts f;
    if (int rc = start(o, &s, &f)) return rc;
    if (int rc = open_model(o, &s, &f)) return rc;
    if (!o.save.empty()) return save_model(o, s.g);
    start_memory_watch(&f);
    if (int rc = time_runs(o, s.g, &f)) {
        fprintf(stderr, "cvml bench: %s: %s\n", f.model_name.c_str(), cvml_last_error());
        return rc;
    }
    read_output(s.g, &f);
    count_macs(s.g, &f);
    if (o.profile) profile_operators(o, s.g, &f);
    read_memory(s.g, &f);
    if (o.json)
        print_json(o, f);
    else
        print_text(o, f);
    if (o.hash && !o.json) printf("%016llx\n", (unsigned long long)f.hash);
    return 0;
}
