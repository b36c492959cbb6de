/* cvml run: one input through a model, as upstream's CVMAPIInference takes and gives
 * bytes; the output printed, written to a file or compared, and --profile's per-node
 * times. */
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "command.h"

using namespace cli;

namespace {

const char kRunOptions[] =
    "  --input FILE       the input: upstream's raw bytes (int8 when the input precision\n"
    "                     is <= 8, else little-endian int32), a .npy array, or text\n"
    "                     (.txt: NDIM, the shape, then the values, as Cortex's cpu.txt)\n"
    "  --input-format F   raw, npy, text or auto (default: the extension decides,\n"
    "                     .npy, .txt or .bin; without one, a file of the model's input\n"
    "                     size is raw, else .npy by its magic, else raw). A .npy or\n"
    "                     NDIM text input must have the input's shape\n"
    "  --output FILE      write the output instead of printing it: .npy, .txt (a count,\n"
    "                     then the values, as result_0.txt), anything else raw bytes\n"
    "  --expect FILE      compare the output with FILE (raw bytes, .npy or .txt) and fail\n"
    "                     with exit status 1 at the first differing index\n"
    "  --expect-format F  raw, npy, text or auto\n"
    "  --profile          time each operator and print a per-node and per-operator table\n"
    "  --repeat N         run N times (default 1); the profile adds up all runs\n"
    "  --json             print the output (and the profile) as JSON\n"
    "  -q, --quiet        do not print the output values\n";

/* The command line of `run`, checked before the library starts. */
struct RunOptions {
    ModelPaths paths;
    Format in_format = Format::kAuto, expect_format = Format::kAuto;
    int repeat = 1;
    bool profile = false, json = false, quiet = false;
};

/* What the runs gave: the output bytes, the wall time, and with --profile each node's
 * time (summed over the runs) and the sums by operator. */
struct RunFacts {
    size_t in_len = 0, out_len = 0;
    int in_ts = 0, out_ts = 0;
    std::vector<uint8_t> output;
    double total_ns = 0;
    std::vector<uint64_t> node_ns;
    std::vector<NodeFacts> nodes; /* with --profile only */
    uint64_t node_total = 0;
    std::map<std::string, std::pair<int, uint64_t>> by_op; /* nodes, ns */
    double percent(uint64_t ns) const { return node_total ? 100.0 * ns / node_total : 0.0; }
};

std::string ext_of(const std::string& path) {
    size_t dot = path.find_last_of('.');
    size_t slash = last_separator(path);
    if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
    std::string e = path.substr(dot + 1);
    for (auto& c : e) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
    return e;
}

/* The first difference between the output and the expected values, reported as one
 * line naming the element index. */
void compare_expected(const std::vector<uint8_t>& out, int type_size, const FileData& expected,
                      const std::string& path) {
    std::vector<int64_t> got = from_bytes(out, type_size);
    std::vector<int64_t> want;
    if (expected.is_raw) {
        if (expected.raw.size() != out.size())
            throw Error(kLogic, "output has " + std::to_string(out.size()) + " bytes, '" + path +
                                    "' has " + std::to_string(expected.raw.size()));
        want = from_bytes(expected.raw, type_size);
    } else {
        want = expected.array.values;
        if (want.size() != got.size())
            throw Error(kLogic, "output has " + std::to_string(got.size()) + " values, '" + path +
                                    "' has " + std::to_string(want.size()));
    }
    size_t first = got.size(), differing = 0;
    for (size_t i = 0; i < got.size(); ++i)
        if (got[i] != want[i]) {
            if (first == got.size()) first = i;
            ++differing;
        }
    if (differing)
        throw Error(kLogic, "output differs from '" + path + "' at index " + std::to_string(first) +
                                ": got " + std::to_string(got[first]) + ", expected " +
                                std::to_string(want[first]) + " (" + std::to_string(differing) +
                                " of " + std::to_string(got.size()) + " " + type_name(type_size) +
                                " values differ)");
}

/* Shapes agree when they are equal after leading dimensions of 1: Cortex's cpu.txt
 * gives the real model's (1, 3, 32, 32) input as (3, 32, 32). */
bool same_shape(std::vector<int64_t> a, std::vector<int64_t> b) {
    auto strip = [](std::vector<int64_t>& v) {
        size_t k = 0;
        while (k + 1 < v.size() && v[k] == 1) ++k;
        v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k));
    };
    strip(a);
    strip(b);
    return a == b;
}

/* The model's input bytes from an input file: raw bytes must have the model's length;
 * values must fit its element type and, where the file states a shape (.npy, text with
 * NDIM), match the input's shape up to leading 1s; a bare count of values only its
 * element count. */
std::vector<uint8_t> input_bytes(cvml_graph* g, FileData& in, const std::string& path,
                                 size_t in_len, int in_ts) {
    const std::string values_text =
        std::to_string(in_len / in_ts) + " " + type_name(in_ts) + " values";
    if (in.is_raw) {
        if (in.raw.size() != in_len)
            throw Error(kLogic, "input '" + path + "' has " + std::to_string(in.raw.size()) +
                                    " bytes, the model takes " + std::to_string(in_len) + " (" +
                                    values_text + "); if it is not raw bytes, say " +
                                    "--input-format npy or text");
        return std::move(in.raw);
    }
    int n_in = 0;
    check(cvml_graph_input_count(g, &n_in), "cannot count inputs");
    if (in.array.shaped && n_in == 1) {
        cvml_tensor* t = nullptr;
        check(cvml_graph_get_input(g, 0, &t), "cannot read input 0");
        TensorFacts f = tensor_facts(t);
        std::vector<int64_t> want(f.shape.begin(), f.shape.end());
        if (!same_shape(in.array.shape, want))
            throw Error(kLogic, "input '" + path + "' has shape " + shape_text(in.array.shape) +
                                    ", the model's input '" + f.name + "' has shape " +
                                    shape_text(want));
    }
    if (in.array.values.size() * in_ts != in_len)
        throw Error(kLogic, "input '" + path + "' has " + std::to_string(in.array.values.size()) +
                                " values, the model takes " + values_text);
    return to_bytes(in.array, in_ts, "input '" + path + "'");
}

/* Parses the command line; false when --help was asked for (and printed). */
bool parse_run(int argc, char** argv, Args* args, RunOptions* o) {
    std::vector<OptionSpec> specs = {
        {"--input", true, false},  {"--input-format", true, false},  {"--output", true, false},
        {"--expect", true, false}, {"--expect-format", true, false}, {"--profile", false, false},
        {"--repeat", true, false}, {"--json", false, false},         {"--quiet", false, false},
        {"-q", false, false}};
    if (!parse_args(argc, argv, with_device_options(specs), args)) {
        print_help(
            "usage: cvml run MODEL [PARAMS] --input FILE [--output FILE] [--expect FILE]\n"
            "                [--device NAMES] [--threads N] [--profile] [--json]\n\n"
            "Runs a model on one input, as upstream's CVMAPIInference does (the same\n"
            "input and output bytes), and prints the output values on one line.",
            (std::string(kRunOptions) + kDeviceHelp).c_str());
        return false;
    }
    if (!args->has("--input")) usage_error("missing --input FILE");
    o->paths = model_from(*args);
    o->in_format = parse_format("--input-format", args->get("--input-format", "auto"));
    o->expect_format = parse_format("--expect-format", args->get("--expect-format", "auto"));
    if (args->has("--repeat")) o->repeat = parse_int("--repeat", args->get("--repeat"), 1, 1000000);
    o->profile = args->has("--profile");
    if (o->profile) refuse_compiled(o->paths, "--profile");
    o->json = args->has("--json");
    o->quiet = args->has("--quiet") || args->has("-q");
    return true;
}

/* Runs the graph `repeat` times on `input`, adding up the wall time and, when
 * profiling, each node's time. */
void run_graph(cvml_graph* g, const RunOptions& o, const std::vector<uint8_t>& input, RunFacts* r) {
    check(cvml_graph_prerun(g), "cannot plan the graph on its devices");
    int node_count = 0;
    check(cvml_graph_node_count(g, &node_count), "cannot count nodes");
    r->node_ns.assign(node_count, 0);
    if (o.profile) check(cvml_graph_set_profiling(g, 1), "cannot turn profiling on");
    r->output.resize(r->out_len);
    for (int rep = 0; rep < o.repeat; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        check(
            cvml_graph_run_bytes(g, input.data(), input.size(), r->output.data(), r->output.size()),
            "inference failed");
        r->total_ns +=
            std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
        if (o.profile)
            for (int i = 0; i < node_count; ++i) {
                uint64_t ns = 0;
                check(cvml_graph_node_time(g, i, &ns), "cannot read node times");
                r->node_ns[i] += ns;
            }
    }
}

/* --output: .npy (a single output without post-processing keeps its shape), .txt (a
 * count, then the values) or raw bytes. */
void write_output(cvml_graph* g, const std::string& path, const RunFacts& r) {
    std::string ext = ext_of(path);
    std::vector<uint8_t> file;
    if (ext == "npy") {
        std::vector<int64_t> shape = {static_cast<int64_t>(r.out_len / r.out_ts)};
        const char* post = "";
        int n_out = 0;
        check(cvml_graph_postprocess(g, &post), "cannot read the post-processing");
        check(cvml_graph_output_count(g, &n_out), "cannot count outputs");
        if (n_out == 1 && !*post) {
            cvml_tensor* t = nullptr;
            check(cvml_graph_get_output(g, 0, &t), "cannot read output 0");
            TensorFacts f = tensor_facts(t);
            shape.assign(f.shape.begin(), f.shape.end());
        }
        file = npy_encode(r.output, r.out_ts, shape);
    } else if (ext == "txt") {
        std::vector<int64_t> v = from_bytes(r.output, r.out_ts);
        std::string s = std::to_string(v.size()) + "\n" + text_values(v) + "\n";
        file.assign(s.begin(), s.end());
    } else {
        file = r.output;
    }
    write_file(path, file.data(), file.size(), "output file");
}

/* The profile's nodes, and their times summed by operator. */
void profile_facts(cvml_graph* g, RunFacts* r) {
    r->nodes = node_facts(g, true);
    for (auto ns : r->node_ns) r->node_total += ns;
    for (size_t i = 0; i < r->nodes.size(); ++i)
        if (r->nodes[i].op != "null") {
            r->by_op[r->nodes[i].op].first += 1;
            r->by_op[r->nodes[i].op].second += r->node_ns[i];
        }
}

void json_profile(Json& j, const RunOptions& o, const RunFacts& r) {
    j.begin_object("profile");
    j.value("runs", o.repeat).value("total_us", r.total_ns / 1e3);
    j.value("operators_us", r.node_total / 1e3);
    j.begin_array("nodes");
    for (size_t i = 0; i < r.nodes.size(); ++i) {
        const NodeFacts& n = r.nodes[i];
        if (n.op == "null") continue;
        j.begin_object().value("index", static_cast<int64_t>(i)).value("name", n.name);
        j.value("op", n.op).value("device", n.device);
        j.value("time_us", r.node_ns[i] / 1e3).value("percent", r.percent(r.node_ns[i]));
        if (n.fused_into >= 0) j.value("fused_into", r.nodes[n.fused_into].name);
        if (n.fused_into == CVML_NODE_VIEW) j.value("view", true);
        j.end_object();
    }
    j.end_array();
    j.begin_array("operators");
    for (const auto& kv : r.by_op) {
        j.begin_object().value("op", kv.first).value("count", kv.second.first);
        j.value("time_us", kv.second.second / 1e3).value("percent", r.percent(kv.second.second));
        j.end_object();
    }
    j.end_array();
    j.end_object();
}

void print_json(const RunOptions& o, const RunFacts& r, const std::vector<int64_t>& values) {
    Json j;
    j.begin_object();
    j.value("type_size", r.out_ts);
    if (!o.quiet) {
        std::string arr = "[";
        for (size_t i = 0; i < values.size(); ++i)
            arr += (i ? ", " : "") + std::to_string(values[i]);
        j.raw("output", arr + "]");
    }
    if (o.profile) json_profile(j, o, r);
    j.end_object();
    fputs(j.str().c_str(), stdout);
}

/* --profile as text: every node, then the operators by time. */
void print_profile(const RunOptions& o, const RunFacts& r) {
    size_t wname = 4, wop = 8;
    for (const auto& n : r.nodes)
        wname = std::max(wname, n.name.size()), wop = std::max(wop, n.op.size());
    printf("\nprofile: %d run%s, %.3f ms wall, %.3f ms in operators\n", o.repeat,
           o.repeat == 1 ? "" : "s", r.total_ns / 1e6, r.node_total / 1e6);
    printf("%5s  %-*s  %-*s  %-7s %12s %7s\n", "#", static_cast<int>(wname), "node",
           static_cast<int>(wop), "op", "device", "time (us)", "%");
    for (size_t i = 0; i < r.nodes.size(); ++i) {
        const NodeFacts& n = r.nodes[i];
        if (n.op == "null") continue;
        std::string how = runs_as(r.nodes, n);
        printf("%5zu  %-*s  %-*s  %-7s %12.3f %7.2f%s%s\n", i, static_cast<int>(wname),
               n.name.c_str(), static_cast<int>(wop), n.op.c_str(), n.device.c_str(),
               r.node_ns[i] / 1e3, r.percent(r.node_ns[i]), how.empty() ? "" : "  ", how.c_str());
    }
    std::vector<std::pair<std::string, std::pair<int, uint64_t>>> sorted(r.by_op.begin(),
                                                                         r.by_op.end());
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
        return a.second.second > b.second.second;
    });
    printf("\n%-*s  %5s %12s %7s\n", static_cast<int>(wop), "operator", "nodes", "time (us)", "%");
    for (const auto& kv : sorted)
        printf("%-*s  %5d %12.3f %7.2f\n", static_cast<int>(wop), kv.first.c_str(), kv.second.first,
               kv.second.second / 1e3, r.percent(kv.second.second));
}

}  // namespace

int cmd_run(int argc, char** argv) {
    Args args;
    RunOptions o;
    if (!parse_run(argc, argv, &args, &o)) return kOk;
    Library lib;
    Context ctx;
    ctx.configure(args);
    LoadedModel m;
    load_model(ctx, o.paths, &m);
    cvml_graph* g = m.graph.g;

    RunFacts r;
    check(cvml_graph_input_bytes(g, &r.in_len, &r.in_ts), "cannot size the input bytes");
    check(cvml_graph_output_bytes(g, &r.out_len, &r.out_ts), "cannot size the output bytes");
    const std::string in_path = args.get("--input");
    FileData in = read_data_file(in_path, o.in_format, "--input-format", "input file", r.in_len);
    std::vector<uint8_t> input = input_bytes(g, in, in_path, r.in_len, r.in_ts);
    FileData expected;
    if (args.has("--expect"))
        expected = read_data_file(args.get("--expect"), o.expect_format, "--expect-format",
                                  "expected-output file", r.out_len);

    run_graph(g, o, input, &r);
    if (args.has("--output")) write_output(g, args.get("--output"), r);
    std::vector<int64_t> values = from_bytes(r.output, r.out_ts);
    if (o.profile) profile_facts(g, &r);
    if (o.json) {
        print_json(o, r, values);
    } else {
        if (!o.quiet && !args.has("--output")) printf("%s\n", text_values(values).c_str());
        if (o.profile) print_profile(o, r);
    }
    fflush(stdout);
    if (args.has("--expect")) compare_expected(r.output, r.out_ts, expected, args.get("--expect"));
    return kOk;
}
