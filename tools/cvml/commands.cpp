/* The subcommands of cvml. */
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "cli.h"

#include "cvm_api.h"

using namespace cli;

namespace {

const char kModelHelp[] =
    "MODEL is a directory (model.json + model.params, or symbol + params), a graph file\n"
    "(its params: PARAMS when given, else NAME.params beside NAME.json, or params beside\n"
    "symbol), a prefix (PREFIX.json + PREFIX.params), or a params file (its graph beside\n"
    "it).\n";

const char kDeviceHelp[] =
    "  --device NAMES     devices to use, comma-separated in priority order; the CPU is\n"
    "                     always the fallback (see 'cvml devices')\n"
    "  --plugin PATH      load a device plugin first (repeatable; CVML_PLUGIN_PATH and\n"
    "                     lib/cvml/plugins are searched anyway)\n"
    "  --threads N        CPU threads (default: CVML_NUM_THREADS or 1)\n";

/* Options every model command takes. */
std::vector<OptionSpec> with_device_options(std::vector<OptionSpec> specs) {
    specs.push_back({"--device", true, true});
    specs.push_back({"--threads", true, false});
    specs.push_back({"--plugin", true, true});
    return specs;
}

bool print_help(const char* usage, const char* options) {
    printf("%s\n\n%s\noptions:\n%s  -h, --help         show this help\n", usage, kModelHelp,
           options);
    return true;
}

/* MODEL [PARAMS] from the positionals. */
ModelPaths model_from(const Args& args) {
    if (args.positionals.empty()) usage_error("missing MODEL");
    if (args.positionals.size() > 2)
        usage_error("unexpected argument '" + args.positionals[2] + "'");
    return resolve_model(args.positionals[0],
                         args.positionals.size() == 2 ? args.positionals[1] : "");
}

template <typename Int>
std::string shape_text(const std::vector<Int>& dims) {
    std::string s = "(";
    for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
    return s + ")";
}

std::string shape_json(const std::vector<int32_t>& dims) {
    std::string s = "[";
    for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
    return s + "]";
}

struct TensorFacts {
    std::string name;
    std::vector<int32_t> shape;
    int precision = 0;
    int type_size = 4;
    size_t elements = 0;
};

TensorFacts tensor_facts(const cvml_tensor* t) {
    TensorFacts f;
    const char* name = nullptr;
    check(cvml_tensor_name(t, &name), "cannot read a tensor name");
    f.name = name ? name : "";
    int ndim = 0;
    int32_t dims[CVML_MAX_DIMS];
    check(cvml_tensor_shape(t, &ndim, dims), "cannot read the shape of '" + f.name + "'");
    f.shape.assign(dims, dims + ndim);
    check(cvml_tensor_precision(t, &f.precision), "cannot read the precision of '" + f.name + "'");
    cvml_dtype dt;
    check(cvml_tensor_dtype(t, &dt), "cannot read the type of '" + f.name + "'");
    f.type_size = dt == CVML_DTYPE_INT8 ? 1 : 4;
    check(cvml_tensor_element_count(t, &f.elements), "cannot count '" + f.name + "'");
    return f;
}

const char* type_name(int type_size) {
    return type_size == 1 ? "int8" : "int32";
}

struct NodeFacts {
    std::string name, op, device;
    std::vector<int32_t> shape;
    int precision = 0;
    int fused_into = -1;             /* after prerun: cvml_graph_node_fused_into() */
    bool is_const = false;           /* a variable holding a parameter */
    std::vector<int> input_nodes;    /* the producer of each input, -1 for none */
    std::vector<std::string> inputs; /* each input as "node", "node:k" or a tensor name */
};

/* How a node ran, for the profile: "" when as itself, else which node did its work. */
std::string runs_as(const std::vector<NodeFacts>& nodes, const NodeFacts& n) {
    if (n.fused_into == CVML_NODE_VIEW) return "view of its input (no work)";
    if (n.fused_into >= 0 && static_cast<size_t>(n.fused_into) < nodes.size())
        return "fused into " + nodes[n.fused_into].name;
    return "";
}

/* The node's inputs; an input made by a node is completed with that node's name by
 * the caller (node_facts), here it holds only the ":k" of an output after the first. */
void read_edges(cvml_graph* g, int index, NodeFacts* n) {
    int count = 0;
    check(cvml_graph_node_input_count(g, index, &count), "cannot read the inputs of " + n->name);
    for (int k = 0; k < count; ++k) {
        int producer = -1, output = 0;
        const char* tensor = nullptr;
        check(cvml_graph_node_input(g, index, k, &producer, &output, &tensor),
              "cannot read the inputs of " + n->name);
        n->input_nodes.push_back(producer);
        if (producer >= 0)
            n->inputs.push_back(output ? ":" + std::to_string(output) : "");
        else
            n->inputs.push_back(tensor ? tensor : "?");
    }
}

std::vector<NodeFacts> node_facts(cvml_graph* g, bool with_devices) {
    int count = 0;
    check(cvml_graph_node_count(g, &count), "cannot count nodes");
    std::vector<NodeFacts> nodes(count);
    for (int i = 0; i < count; ++i) {
        const char *name = nullptr, *op = nullptr;
        check(cvml_graph_node_info(g, i, &name, &op), "cannot read node " + std::to_string(i));
        nodes[i].name = name ? name : "";
        nodes[i].op = op ? op : "";
        if (with_devices) {
            const char* dev = nullptr;
            check(cvml_graph_node_device(g, i, &dev),
                  "cannot read the device of node " + nodes[i].name);
            nodes[i].device = dev ? dev : "";
            check(cvml_graph_node_fused_into(g, i, &nodes[i].fused_into),
                  "cannot read how node " + nodes[i].name + " runs");
        }
        cvml_tensor* t = nullptr;
        if (cvml_graph_find_tensor(g, name, &t) == CVML_OK && t) {
            TensorFacts f = tensor_facts(t);
            nodes[i].shape = f.shape;
            nodes[i].precision = f.precision;
            int is_const = 0;
            check(cvml_tensor_is_const(t, &is_const), "cannot read tensor " + nodes[i].name);
            nodes[i].is_const = is_const != 0;
        }
        read_edges(g, i, &nodes[i]);
    }
    for (auto& n : nodes)
        for (size_t k = 0; k < n.inputs.size(); ++k)
            if (n.input_nodes[k] >= 0 && n.input_nodes[k] < count)
                n.inputs[k] = nodes[n.input_nodes[k]].name + n.inputs[k];
    return nodes;
}

/* The operators a model needs as a CVML_OPERATORS value ("conv2d;dense;relu"): a build
 * configured with it runs the model and nothing more. */
std::string operator_list(const std::map<std::string, int>& op_counts) {
    std::string list;
    for (const auto& kv : op_counts) list += (list.empty() ? "" : ";") + kv.first;
    return list;
}

std::string format_label(const std::string& version) {
    return version.empty() ? "2019 layout (no version key, read as cvm_1.0.0)" : version;
}

}  // namespace

/* ---- info --------------------------------------------------------------------------- */

namespace {

std::string joined(const std::vector<std::string>& items, const char* separator) {
    std::string s;
    for (size_t i = 0; i < items.size(); ++i) s += (i ? separator : "") + items[i];
    return s;
}

/* `info --graph`: one line per node, as an expression of its inputs (parameters are
 * named where they are read, not listed). */
void print_graph(const std::vector<NodeFacts>& nodes) {
    for (size_t i = 0; i < nodes.size(); ++i) {
        const NodeFacts& n = nodes[i];
        if (n.is_const) continue;
        std::string how = runs_as(nodes, n);
        if (n.op == "null")
            printf("%5zu  %s = input %s\n", i, n.name.c_str(), shape_text(n.shape).c_str());
        else
            printf("%5zu  %s = %s(%s) %s  %s%s%s\n", i, n.name.c_str(), n.op.c_str(),
                   joined(n.inputs, ", ").c_str(), shape_text(n.shape).c_str(), n.device.c_str(),
                   how.empty() ? "" : ", ", how.c_str());
    }
}

/* A DOT quoted string: '"' and '\\' escaped; control characters dropped. */
std::string dot_quote(const std::string& s) {
    std::string q = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') q += '\\';
        if (c >= 0x20) q += static_cast<char>(c);
    }
    return q + "\"";
}

/* `info --dot`: the graph for Graphviz (`dot -Tsvg FILE -o graph.svg`). Operator nodes
 * and inputs are boxes labelled with name, operator and shape; parameters are left
 * out; fused nodes are dashed and views dotted. */
std::string dot_text(const std::vector<NodeFacts>& nodes, const std::string& title) {
    std::string d = "digraph " + dot_quote(title) + " {\n  rankdir=TB;\n";
    d += "  node [shape=box, fontname=\"Helvetica\", fontsize=10];\n";
    for (size_t i = 0; i < nodes.size(); ++i) {
        const NodeFacts& n = nodes[i];
        if (n.is_const) continue;
        /* The two characters \\n in a label are Graphviz's line break. */
        std::string label = dot_quote(n.name);
        label.insert(label.size() - 1, "\\n" + std::string(n.op == "null" ? "input" : n.op) + " " +
                                           shape_text(n.shape));
        std::string style = n.op == "null" ? ", style=rounded" : "";
        if (n.fused_into >= 0) style = ", style=dashed";
        if (n.fused_into == CVML_NODE_VIEW) style = ", style=dotted";
        d += "  n" + std::to_string(i) + " [label=" + label + style + "];\n";
    }
    for (size_t i = 0; i < nodes.size(); ++i)
        for (int from : nodes[i].input_nodes)
            if (from >= 0 && !nodes[from].is_const)
                d += "  n" + std::to_string(from) + " -> n" + std::to_string(i) + ";\n";
    return d + "}\n";
}

}  // namespace

int cmd_info(int argc, char** argv) {
    Args args;
    const char* options =
        "  --json             print the facts as JSON\n"
        "  --brief            omit the per-node table\n"
        "  --graph            print only the graph: each node as NAME = OP(INPUTS) with its\n"
        "                     shape, device, and the node it is fused into\n"
        "  --dot FILE         also write the graph for Graphviz to FILE ('-': stdout only);\n"
        "                     render it with 'dot -Tsvg FILE -o graph.svg'\n";
    if (!parse_args(argc, argv,
                    with_device_options({{"--json", false, false},
                                         {"--brief", false, false},
                                         {"--graph", false, false},
                                         {"--dot", true, false}}),
                    &args)) {
        print_help(
            "usage: cvml info MODEL [PARAMS] [--json] [--brief] [--graph] [--dot FILE]\n"
            "                 [--device NAMES]\n\n"
            "Describes a model: format, operators, inputs and outputs with shape, precision\n"
            "and byte type, gas (operations + memory), storage size, parameters, and the\n"
            "device that would run each node with its inputs.",
            (std::string(options) + kDeviceHelp).c_str());
        return kOk;
    }
    if (args.has("--dot") && args.get("--dot").empty()) usage_error("--dot needs a file name");
    ModelPaths paths = model_from(args);
    Library lib;
    Context ctx;
    ctx.configure(args);
    LoadedModel m;
    load_model(ctx, paths, &m, KeepBytes::kYes);
    cvml_graph* g = m.graph.g;
    check(cvml_graph_prerun(g), "cannot plan the graph on its devices");

    const char *version = "", *post = "";
    check(cvml_graph_version(g, &version), "cannot read the version");
    check(cvml_graph_postprocess(g, &post), "cannot read the post-processing");
    uint64_t gas = 0, gas_ops = 0, gas_mem = 0;
    check(cvml_graph_gas(g, &gas), "cannot compute gas");
    check(cvml_graph_gas_split(g, &gas_ops, &gas_mem), "cannot compute gas");
    size_t in_len = 0, out_len = 0;
    int in_ts = 0, out_ts = 0;
    check(cvml_graph_input_bytes(g, &in_len, &in_ts), "cannot size the input bytes");
    check(cvml_graph_output_bytes(g, &out_len, &out_ts), "cannot size the output bytes");

    std::vector<TensorFacts> inputs, outputs;
    int n_in = 0, n_out = 0;
    check(cvml_graph_input_count(g, &n_in), "cannot count inputs");
    check(cvml_graph_output_count(g, &n_out), "cannot count outputs");
    for (int i = 0; i < n_in; ++i) {
        cvml_tensor* t = nullptr;
        check(cvml_graph_get_input(g, i, &t), "cannot read input " + std::to_string(i));
        inputs.push_back(tensor_facts(t));
    }
    for (int i = 0; i < n_out; ++i) {
        cvml_tensor* t = nullptr;
        check(cvml_graph_get_output(g, i, &t), "cannot read output " + std::to_string(i));
        outputs.push_back(tensor_facts(t));
    }
    int n_tensors = 0;
    check(cvml_graph_tensor_count(g, &n_tensors), "cannot count tensors");
    uint64_t param_tensors = 0, param_values = 0;
    for (int i = 0; i < n_tensors; ++i) {
        cvml_tensor* t = nullptr;
        int is_const = 0;
        check(cvml_graph_get_tensor(g, i, &t), "cannot read tensor " + std::to_string(i));
        check(cvml_tensor_is_const(t, &is_const), "cannot read tensor " + std::to_string(i));
        if (!is_const) continue;
        size_t n = 0;
        check(cvml_tensor_element_count(t, &n), "cannot count tensor " + std::to_string(i));
        ++param_tensors;
        param_values += n;
    }
    std::vector<NodeFacts> nodes = node_facts(g, true);
    if (args.has("--dot")) {
        std::string dot = dot_text(nodes, paths.graph), file = args.get("--dot");
        if (file == "-") {
            fputs(dot.c_str(), stdout);
            return kOk;
        }
        write_file(file, dot.data(), dot.size(), "Graphviz file");
    }
    if (args.has("--graph")) {
        print_graph(nodes);
        return kOk;
    }
    std::map<std::string, int> op_counts, device_counts;
    int variables = 0;
    for (const auto& n : nodes) {
        if (n.op == "null") {
            ++variables;
            continue;
        }
        ++op_counts[n.op];
        ++device_counts[n.device];
    }
    bool have_storage = false;
    unsigned long long storage = 0;
    {
        /* Upstream's storage figure comes from its memory plan; the drop-in API
         * computes it the way CVMAPIGetStorageSize does. */
        void* net = nullptr;
        if (CVMAPILoadModel(reinterpret_cast<const char*>(m.graph_bytes.data()),
                            static_cast<int>(m.graph_bytes.size()),
                            reinterpret_cast<const char*>(m.params_bytes.data()),
                            static_cast<int>(m.params_bytes.size()), &net, 0, 0) == 0) {
            have_storage = CVMAPIGetStorageSize(net, &storage) == 0;
            CVMAPIFreeModel(net);
        }
    }

    if (args.has("--json")) {
        Json j;
        j.begin_object();
        j.value("graph", paths.graph).value("params", paths.params).value("layout", paths.layout);
        j.value("version", version).value("postprocess", post);
        j.value("nodes", static_cast<int64_t>(nodes.size()));
        j.value("variables", variables);
        j.begin_object("operators");
        for (const auto& kv : op_counts) j.value(kv.first, kv.second);
        j.end_object();
        j.value("cvml_operators", operator_list(op_counts));
        auto tensors = [&](const char* key, const std::vector<TensorFacts>& ts) {
            j.begin_array(key);
            for (const auto& t : ts) {
                j.begin_object();
                j.value("name", t.name).raw("shape", shape_json(t.shape));
                j.value("precision", t.precision).value("dtype", type_name(t.type_size));
                j.end_object();
            }
            j.end_array();
        };
        tensors("inputs", inputs);
        tensors("outputs", outputs);
        j.begin_object("input_bytes").value("length", static_cast<uint64_t>(in_len));
        j.value("type_size", in_ts).end_object();
        j.begin_object("output_bytes").value("length", static_cast<uint64_t>(out_len));
        j.value("type_size", out_ts).end_object();
        j.begin_object("gas").value("total", gas).value("ops", gas_ops).value("memory", gas_mem);
        j.end_object();
        if (have_storage) j.value("storage_size", static_cast<uint64_t>(storage));
        j.begin_object("parameters").value("tensors", param_tensors).value("values", param_values);
        j.value("bytes", param_values * 4).end_object();
        j.begin_object("devices");
        for (const auto& kv : device_counts) j.value(kv.first, kv.second);
        j.end_object();
        j.begin_array("node_list");
        for (size_t i = 0; i < nodes.size(); ++i) {
            j.begin_object().value("index", static_cast<int64_t>(i)).value("name", nodes[i].name);
            j.value("op", nodes[i].op).value("device", nodes[i].device);
            j.raw("shape", shape_json(nodes[i].shape)).value("precision", nodes[i].precision);
            j.begin_array("inputs");
            for (const auto& in : nodes[i].inputs) j.value("", in);
            j.end_array();
            if (nodes[i].fused_into >= 0) j.value("fused_into", nodes[nodes[i].fused_into].name);
            j.end_object();
        }
        j.end_array();
        j.end_object();
        fputs(j.str().c_str(), stdout);
        return kOk;
    }

    printf("model        %s + %s\n", paths.graph.c_str(), paths.params.c_str());
    printf("layout       %s\n", paths.layout.c_str());
    printf("format       %s\n", format_label(version).c_str());
    printf("postprocess  %s\n", *post ? post : "none");
    printf("nodes        %zu (%d variables, %zu operator nodes)\n", nodes.size(), variables,
           nodes.size() - variables);
    std::string ops;
    for (const auto& kv : op_counts)
        ops += (ops.empty() ? "" : ", ") + kv.first + " x" + std::to_string(kv.second);
    printf("operators    %s\n", ops.empty() ? "none" : ops.c_str());
    printf("build with   -DCVML_OPERATORS=\"%s\"\n", operator_list(op_counts).c_str());
    for (size_t i = 0; i < inputs.size(); ++i)
        printf("input %-6zu %s %s precision %d %s\n", i, inputs[i].name.c_str(),
               shape_text(inputs[i].shape).c_str(), inputs[i].precision,
               type_name(inputs[i].type_size));
    for (size_t i = 0; i < outputs.size(); ++i)
        printf("output %-5zu %s %s precision %d %s\n", i, outputs[i].name.c_str(),
               shape_text(outputs[i].shape).c_str(), outputs[i].precision,
               type_name(outputs[i].type_size));
    printf("input bytes  %zu (%s elements)\n", in_len, type_name(in_ts));
    printf("output bytes %zu (%s elements)\n", out_len, type_name(out_ts));
    printf("gas          %" PRIu64 " (ops %" PRIu64 " + memory %" PRIu64 ")\n", gas, gas_ops,
           gas_mem);
    if (have_storage) printf("storage      %llu bytes\n", storage);
    printf("parameters   %" PRIu64 " tensors, %" PRIu64 " values, %" PRIu64 " bytes as int32\n",
           param_tensors, param_values, param_values * 4);
    std::string devs;
    for (const auto& kv : device_counts)
        devs += (devs.empty() ? "" : ", ") + kv.first + " " + std::to_string(kv.second) +
                (kv.second == 1 ? " node" : " nodes");
    printf("devices      %s\n", devs.empty() ? "none" : devs.c_str());
    if (!args.has("--brief")) {
        size_t wname = 4, wop = 2;
        for (const auto& n : nodes)
            wname = std::max(wname, n.name.size()), wop = std::max(wop, n.op.size());
        size_t wshape = 5;
        for (const auto& n : nodes) wshape = std::max(wshape, shape_text(n.shape).size());
        printf("\n%5s  %-*s  %-*s  %-7s %4s  %-*s  %s\n", "#", static_cast<int>(wname), "node",
               static_cast<int>(wop), "op", "device", "prec", static_cast<int>(wshape), "shape",
               "inputs");
        for (size_t i = 0; i < nodes.size(); ++i)
            printf("%5zu  %-*s  %-*s  %-7s %4d  %-*s  %s\n", i, static_cast<int>(wname),
                   nodes[i].name.c_str(), static_cast<int>(wop), nodes[i].op.c_str(),
                   nodes[i].device.empty() ? "-" : nodes[i].device.c_str(), nodes[i].precision,
                   static_cast<int>(wshape), shape_text(nodes[i].shape).c_str(),
                   nodes[i].inputs.empty() ? "-" : joined(nodes[i].inputs, ", ").c_str());
    }
    return kOk;
}

/* ---- run ---------------------------------------------------------------------------- */

namespace {

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

}  // namespace

int cmd_run(int argc, char** argv) {
    Args args;
    const char* options =
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
    std::vector<OptionSpec> specs = {
        {"--input", true, false},  {"--input-format", true, false},  {"--output", true, false},
        {"--expect", true, false}, {"--expect-format", true, false}, {"--profile", false, false},
        {"--repeat", true, false}, {"--json", false, false},         {"--quiet", false, false},
        {"-q", false, false}};
    specs = with_device_options(specs);
    if (!parse_args(argc, argv, specs, &args)) {
        print_help(
            "usage: cvml run MODEL [PARAMS] --input FILE [--output FILE] [--expect FILE]\n"
            "                [--device NAMES] [--threads N] [--profile] [--json]\n\n"
            "Runs a model on one input, as upstream's CVMAPIInference does (the same\n"
            "input and output bytes), and prints the output values on one line.",
            (std::string(options) + kDeviceHelp).c_str());
        return kOk;
    }
    if (!args.has("--input")) usage_error("missing --input FILE");
    ModelPaths paths = model_from(args);
    Format in_format = parse_format("--input-format", args.get("--input-format", "auto"));
    Format expect_format = parse_format("--expect-format", args.get("--expect-format", "auto"));
    int repeat = args.has("--repeat") ? parse_int("--repeat", args.get("--repeat"), 1, 1000000) : 1;
    bool profile = args.has("--profile"), json = args.has("--json");
    bool quiet = args.has("--quiet") || args.has("-q");

    Library lib;
    Context ctx;
    ctx.configure(args);
    LoadedModel m;
    load_model(ctx, paths, &m);
    cvml_graph* g = m.graph.g;

    size_t in_len = 0, out_len = 0;
    int in_ts = 0, out_ts = 0;
    check(cvml_graph_input_bytes(g, &in_len, &in_ts), "cannot size the input bytes");
    check(cvml_graph_output_bytes(g, &out_len, &out_ts), "cannot size the output bytes");

    const std::string in_path = args.get("--input");
    FileData in = read_data_file(in_path, in_format, "--input-format", "input file", in_len);
    std::vector<uint8_t> input = input_bytes(g, in, in_path, in_len, in_ts);
    FileData expected;
    if (args.has("--expect"))
        expected = read_data_file(args.get("--expect"), expect_format, "--expect-format",
                                  "expected-output file", out_len);

    check(cvml_graph_prerun(g), "cannot plan the graph on its devices");
    int node_count = 0;
    check(cvml_graph_node_count(g, &node_count), "cannot count nodes");
    std::vector<uint64_t> node_ns(node_count, 0);
    if (profile) check(cvml_graph_set_profiling(g, 1), "cannot turn profiling on");
    std::vector<uint8_t> output(out_len);
    double total_ns = 0;
    for (int r = 0; r < repeat; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        check(cvml_graph_run_bytes(g, input.data(), input.size(), output.data(), output.size()),
              "inference failed");
        total_ns +=
            std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
        if (profile)
            for (int i = 0; i < node_count; ++i) {
                uint64_t ns = 0;
                check(cvml_graph_node_time(g, i, &ns), "cannot read node times");
                node_ns[i] += ns;
            }
    }

    if (args.has("--output")) {
        std::string path = args.get("--output"), ext = ext_of(path);
        std::vector<uint8_t> file;
        if (ext == "npy") {
            std::vector<int64_t> shape = {static_cast<int64_t>(out_len / out_ts)};
            const char* post = "";
            int n_out = 0;
            check(cvml_graph_postprocess(g, &post), "cannot read the post-processing");
            check(cvml_graph_output_count(g, &n_out), "cannot count outputs");
            if (n_out == 1 && !*post) {
                /* A single output without post-processing keeps its shape. */
                cvml_tensor* t = nullptr;
                check(cvml_graph_get_output(g, 0, &t), "cannot read output 0");
                TensorFacts f = tensor_facts(t);
                shape.assign(f.shape.begin(), f.shape.end());
            }
            file = npy_encode(output, out_ts, shape);
        } else if (ext == "txt") {
            std::vector<int64_t> v = from_bytes(output, out_ts);
            std::string s = std::to_string(v.size()) + "\n" + text_values(v) + "\n";
            file.assign(s.begin(), s.end());
        } else {
            file = output;
        }
        write_file(path, file.data(), file.size(), "output file");
    }

    std::vector<int64_t> values = from_bytes(output, out_ts);
    std::vector<NodeFacts> nodes;
    if (profile) nodes = node_facts(g, true);
    uint64_t node_total = 0;
    for (auto ns : node_ns) node_total += ns;
    std::map<std::string, std::pair<int, uint64_t>> by_op;
    for (size_t i = 0; i < nodes.size(); ++i)
        if (nodes[i].op != "null") {
            by_op[nodes[i].op].first += 1;
            by_op[nodes[i].op].second += node_ns[i];
        }
    auto pct = [&](uint64_t ns) { return node_total ? 100.0 * ns / node_total : 0.0; };

    if (json) {
        Json j;
        j.begin_object();
        j.value("type_size", out_ts);
        if (!quiet) {
            std::string arr = "[";
            for (size_t i = 0; i < values.size(); ++i)
                arr += (i ? ", " : "") + std::to_string(values[i]);
            j.raw("output", arr + "]");
        }
        if (profile) {
            j.begin_object("profile");
            j.value("runs", repeat)
                .value("total_us", total_ns / 1e3)
                .value("operators_us", node_total / 1e3);
            j.begin_array("nodes");
            for (size_t i = 0; i < nodes.size(); ++i) {
                if (nodes[i].op == "null") continue;
                j.begin_object()
                    .value("index", static_cast<int64_t>(i))
                    .value("name", nodes[i].name);
                j.value("op", nodes[i].op).value("device", nodes[i].device);
                j.value("time_us", node_ns[i] / 1e3).value("percent", pct(node_ns[i]));
                if (nodes[i].fused_into >= 0)
                    j.value("fused_into", nodes[nodes[i].fused_into].name);
                if (nodes[i].fused_into == CVML_NODE_VIEW) j.value("view", true);
                j.end_object();
            }
            j.end_array();
            j.begin_array("operators");
            for (const auto& kv : by_op) {
                j.begin_object().value("op", kv.first).value("count", kv.second.first);
                j.value("time_us", kv.second.second / 1e3).value("percent", pct(kv.second.second));
                j.end_object();
            }
            j.end_array();
            j.end_object();
        }
        j.end_object();
        fputs(j.str().c_str(), stdout);
    } else {
        if (!quiet && !args.has("--output")) printf("%s\n", text_values(values).c_str());
        if (profile) {
            size_t wname = 4, wop = 8;
            for (const auto& n : nodes)
                wname = std::max(wname, n.name.size()), wop = std::max(wop, n.op.size());
            printf("\nprofile: %d run%s, %.3f ms wall, %.3f ms in operators\n", repeat,
                   repeat == 1 ? "" : "s", total_ns / 1e6, node_total / 1e6);
            printf("%5s  %-*s  %-*s  %-7s %12s %7s\n", "#", static_cast<int>(wname), "node",
                   static_cast<int>(wop), "op", "device", "time (us)", "%");
            for (size_t i = 0; i < nodes.size(); ++i) {
                if (nodes[i].op == "null") continue;
                std::string how = runs_as(nodes, nodes[i]);
                printf("%5zu  %-*s  %-*s  %-7s %12.3f %7.2f%s%s\n", i, static_cast<int>(wname),
                       nodes[i].name.c_str(), static_cast<int>(wop), nodes[i].op.c_str(),
                       nodes[i].device.c_str(), node_ns[i] / 1e3, pct(node_ns[i]),
                       how.empty() ? "" : "  ", how.c_str());
            }
            std::vector<std::pair<std::string, std::pair<int, uint64_t>>> sorted(by_op.begin(),
                                                                                 by_op.end());
            std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
                return a.second.second > b.second.second;
            });
            printf("\n%-*s  %5s %12s %7s\n", static_cast<int>(wop), "operator", "nodes",
                   "time (us)", "%");
            for (const auto& kv : sorted)
                printf("%-*s  %5d %12.3f %7.2f\n", static_cast<int>(wop), kv.first.c_str(),
                       kv.second.first, kv.second.second / 1e3, pct(kv.second.second));
        }
    }
    fflush(stdout);
    if (args.has("--expect")) compare_expected(output, out_ts, expected, args.get("--expect"));
    return kOk;
}

/* ---- validate ----------------------------------------------------------------------- */

int cmd_validate(int argc, char** argv) {
    Args args;
    if (!parse_args(argc, argv,
                    with_device_options({{"--quiet", false, false}, {"-q", false, false}}),
                    &args)) {
        print_help(
            "usage: cvml validate MODEL [PARAMS] [-q]\n\n"
            "Loads a model and checks every rule upstream enforces at load time (JSON\n"
            "keys, attributes, shapes, precisions, storage plan, params), then plans it\n"
            "on the devices. Exit status 0 when valid, 1 (logic) or 2 (runtime) with the\n"
            "class upstream reports, and the first broken rule on stderr.",
            "  -q, --quiet        print nothing when the model is valid\n"
            "  --device NAMES     devices to plan for (comma-separated)\n");
        return kOk;
    }
    ModelPaths paths = model_from(args);
    Library lib;
    Context ctx;
    ctx.configure(args);
    LoadedModel m;
    load_model(ctx, paths, &m);
    check(cvml_graph_prerun(m.graph.g), "cannot plan the graph on its devices");
    const char* version = "";
    uint64_t gas = 0;
    int nodes = 0;
    check(cvml_graph_version(m.graph.g, &version), "cannot read the version");
    check(cvml_graph_gas(m.graph.g, &gas), "cannot compute gas");
    check(cvml_graph_node_count(m.graph.g, &nodes), "cannot count nodes");
    if (!args.has("--quiet") && !args.has("-q"))
        printf("%s: valid (%s, %d nodes, gas %" PRIu64 ")\n", paths.graph.c_str(),
               format_label(version).c_str(), nodes, gas);
    return kOk;
}

/* ---- devices ------------------------------------------------------------------------ */

int cmd_devices(int argc, char** argv) {
    Args args;
    std::vector<OptionSpec> specs = {{"--json", false, false}};
    specs.push_back({"--plugin", true, true});
    if (!parse_args(argc, argv, specs, &args)) {
        printf(
            "usage: cvml devices [--json]\n\n"
            "Lists the devices a graph can run on, in the default priority order (plugin\n"
            "devices first, the CPU last), the plugins found or refused and why, and the\n"
            "registries.\n\n"
            "options:\n  --json             print the list as JSON\n"
            "  --plugin PATH      load a device plugin first (repeatable)\n"
            "  -h, --help         show this help\n");
        return kOk;
    }
    if (!args.positionals.empty()) usage_error("unexpected argument '" + args.positionals[0] + "'");
    Library lib;
    Context ctx;
    ctx.configure(args);
    int ops = 0, sers = 0, devs = 0, threads = 1;
    check(cvml_registry_counts(&ops, &sers, &devs), "cannot read the registries");
    check(cvml_context_get_threads(ctx.ctx, &threads), "cannot read the thread count");
    struct Device {
        std::string name, version;
    };
    struct Plugin {
        std::string name, version, path, reason;
        bool loaded;
    };
    std::vector<Device> found;
    std::vector<Plugin> plugins;
    for (int i = 0; i < devs; ++i) {
        const char *name = nullptr, *version = nullptr;
        check(cvml_device_info(i, &name, &version), "cannot read device " + std::to_string(i));
        found.push_back({name ? name : "", version ? version : ""});
    }
    int n_plugins = 0;
    check(cvml_plugin_count(&n_plugins), "cannot list plugins");
    for (int i = 0; i < n_plugins; ++i) {
        const char *name = "", *version = "", *path = "", *reason = "";
        int loaded = 0;
        check(cvml_plugin_info(i, &name, &version, &path, &loaded, &reason),
              "cannot read plugin " + std::to_string(i));
        plugins.push_back({name ? name : "", version ? version : "", path ? path : "",
                           reason ? reason : "", loaded != 0});
    }
    const char* plugin_path = getenv("CVML_PLUGIN_PATH");
    if (args.has("--json")) {
        Json j;
        j.begin_object().value("version", cvml_version());
        j.begin_array("devices");
        for (const auto& d : found)
            j.begin_object().value("name", d.name).value("version", d.version).end_object();
        j.end_array();
        j.begin_array("plugins");
        for (const auto& p : plugins) {
            j.begin_object()
                .value("name", p.name)
                .value("version", p.version)
                .value("path", p.path);
            j.value("loaded", p.loaded).value("reason", p.reason).end_object();
        }
        j.end_array();
        j.value("threads", threads).value("operators", ops).value("serializers", sers);
        j.value("plugin_path", plugin_path ? plugin_path : "");
        j.end_object();
        fputs(j.str().c_str(), stdout);
        return kOk;
    }
    printf("cvm-lite %s\n", cvml_version());
    printf("devices (priority order):\n");
    for (const auto& d : found) printf("  %-8s %s\n", d.name.c_str(), d.version.c_str());
    if (!plugins.empty()) {
        printf("plugins:\n");
        for (const auto& p : plugins)
            printf("  %-8s %s%s%s%s%s\n", p.name.c_str(), p.loaded ? "loaded" : "not loaded",
                   p.path.empty() ? "" : " ", p.path.c_str(), p.reason.empty() ? "" : ": ",
                   p.reason.c_str());
    }
    printf("cpu threads  %d (CVML_NUM_THREADS or --threads)\n", threads);
    printf("cpu simd     %s (CVML_SIMD, or the best this CPU and build have)\n",
           cvml_cpu_simd_level());
    printf("registries   %d operators, %d serializers, %d devices\n", ops, sers, devs);
    printf("plugin path  %s\n", plugin_path ? plugin_path : "(CVML_PLUGIN_PATH not set)");
    return kOk;
}

/* ---- save --------------------------------------------------------------------------- */

int cmd_save(int argc, char** argv) {
    Args args;
    if (!parse_args(argc, argv, {{"--out", true, false}, {"--no-check", false, false}}, &args)) {
        print_help(
            "usage: cvml save MODEL [PARAMS] --out PREFIX\n\n"
            "Loads a model and writes it with cvm-lite's CVM writer as PREFIX.json and\n"
            "PREFIX.params (DIR/model.json and DIR/model.params when PREFIX is a\n"
            "directory). The written files are loaded again and must verify with the\n"
            "same gas.",
            "  --out PREFIX       where to write\n"
            "  --no-check         skip loading the written files again\n");
        return kOk;
    }
    if (!args.has("--out")) usage_error("missing --out PREFIX");
    ModelPaths paths = model_from(args);
    std::string prefix = args.get("--out");
    if (prefix.empty()) usage_error("--out needs a prefix");
    struct stat st;
    if (stat(prefix.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
        prefix += (last_separator(prefix) == prefix.size() - 1 ? "" : "/") + std::string("model");
    std::string graph_out = prefix + ".json", params_out = prefix + ".params";

    Library lib;
    Context ctx;
    LoadedModel m;
    load_model(ctx, paths, &m);
    check(cvml_graph_save_file(m.graph.g, "cvm", graph_out.c_str(), params_out.c_str()),
          "cannot save to '" + prefix + "'");
    if (!args.has("--no-check")) {
        LoadedModel again;
        load_model(ctx, {graph_out, params_out, "saved"}, &again);
        uint64_t gas_a = 0, gas_b = 0;
        check(cvml_graph_gas(m.graph.g, &gas_a), "cannot compute gas");
        check(cvml_graph_gas(again.graph.g, &gas_b), "cannot compute gas");
        if (gas_a != gas_b)
            throw Error(kRuntime, "the saved model's gas " + std::to_string(gas_b) +
                                      " differs from the original's " + std::to_string(gas_a));
    }
    printf("wrote %s and %s\n", graph_out.c_str(), params_out.c_str());
    return kOk;
}
