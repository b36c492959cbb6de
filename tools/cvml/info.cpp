/* cvml info: what a model is (format, operators, tensors, gas, storage, parameters) and
 * which device would run each node; --graph and --dot draw the graph instead. */
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "command.h"

#include "cvm_api.h"

using namespace cli;

namespace {

const char kInfoOptions[] =
    "  --json             print the facts as JSON\n"
    "  --brief            omit the per-node table\n"
    "  --graph            print only the graph: each node as NAME = OP(INPUTS) with its\n"
    "                     shape, device, and the node it is fused into\n"
    "  --dot FILE         also write the graph for Graphviz to FILE ('-': stdout only);\n"
    "                     render it with 'dot -Tsvg FILE -o graph.svg'\n";

/* Everything `info` reports, gathered before anything is printed. */
struct InfoFacts {
    ModelPaths paths;
    std::string version, postprocess;
    uint64_t gas = 0, gas_ops = 0, gas_mem = 0;
    size_t in_len = 0, out_len = 0;
    int in_ts = 0, out_ts = 0;
    std::vector<TensorFacts> inputs, outputs;
    uint64_t param_tensors = 0, param_values = 0;
    std::vector<NodeFacts> nodes;
    /* summary(): */
    std::map<std::string, int> op_counts, device_counts;
    int variables = 0;
    bool have_storage = false;
    unsigned long long storage = 0;
};

/* The graph's inputs (`outputs` false) or outputs. */
std::vector<TensorFacts> io_facts(cvml_graph* g, bool outputs) {
    int count = 0;
    check(outputs ? cvml_graph_output_count(g, &count) : cvml_graph_input_count(g, &count),
          outputs ? "cannot count outputs" : "cannot count inputs");
    std::vector<TensorFacts> facts;
    for (int i = 0; i < count; ++i) {
        cvml_tensor* t = nullptr;
        if (outputs)
            check(cvml_graph_get_output(g, i, &t), "cannot read output " + std::to_string(i));
        else
            check(cvml_graph_get_input(g, i, &t), "cannot read input " + std::to_string(i));
        facts.push_back(tensor_facts(t));
    }
    return facts;
}

/* How many parameter tensors the graph holds, and their values. */
void count_parameters(cvml_graph* g, InfoFacts* f) {
    int n_tensors = 0;
    check(cvml_graph_tensor_count(g, &n_tensors), "cannot count tensors");
    for (int i = 0; i < n_tensors; ++i) {
        cvml_tensor* t = nullptr;
        int is_const = 0;
        check(cvml_graph_get_tensor(g, i, &t), "cannot read tensor " + std::to_string(i));
        check(cvml_tensor_is_const(t, &is_const), "cannot read tensor " + std::to_string(i));
        if (!is_const) continue;
        size_t n = 0;
        check(cvml_tensor_element_count(t, &n), "cannot count tensor " + std::to_string(i));
        ++f->param_tensors;
        f->param_values += n;
    }
}

/* What the planned graph says about itself. */
void read_graph(cvml_graph* g, InfoFacts* f) {
    const char *version = "", *post = "";
    check(cvml_graph_version(g, &version), "cannot read the version");
    check(cvml_graph_postprocess(g, &post), "cannot read the post-processing");
    f->version = version;
    f->postprocess = post;
    check(cvml_graph_gas(g, &f->gas), "cannot compute gas");
    check(cvml_graph_gas_split(g, &f->gas_ops, &f->gas_mem), "cannot compute gas");
    check(cvml_graph_input_bytes(g, &f->in_len, &f->in_ts), "cannot size the input bytes");
    check(cvml_graph_output_bytes(g, &f->out_len, &f->out_ts), "cannot size the output bytes");
    f->inputs = io_facts(g, false);
    f->outputs = io_facts(g, true);
    count_parameters(g, f);
    f->nodes = node_facts(g, true);
}

/* The counts by operator and device, and upstream's storage figure. */
void summary(const LoadedModel& m, InfoFacts* f) {
    for (const auto& n : f->nodes) {
        if (n.op == "null") {
            ++f->variables;
            continue;
        }
        ++f->op_counts[n.op];
        ++f->device_counts[n.device];
    }
    /* Upstream's storage figure comes from its memory plan; the drop-in API computes it
     * the way CVMAPIGetStorageSize does. */
    void* net = nullptr;
    if (CVMAPILoadModel(reinterpret_cast<const char*>(m.graph_bytes.data()),
                        static_cast<int>(m.graph_bytes.size()),
                        reinterpret_cast<const char*>(m.params_bytes.data()),
                        static_cast<int>(m.params_bytes.size()), &net, 0, 0) == 0) {
        f->have_storage = CVMAPIGetStorageSize(net, &f->storage) == 0;
        CVMAPIFreeModel(net);
    }
}

/* ---- --graph and --dot -------------------------------------------------------------- */

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

/* ---- printing ----------------------------------------------------------------------- */

void json_tensors(Json& j, const char* key, const std::vector<TensorFacts>& ts) {
    j.begin_array(key);
    for (const auto& t : ts) {
        j.begin_object();
        j.value("name", t.name).raw("shape", shape_json(t.shape));
        j.value("precision", t.precision).value("dtype", type_name(t.type_size));
        j.end_object();
    }
    j.end_array();
}

void json_nodes(Json& j, const std::vector<NodeFacts>& nodes) {
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
}

void print_json(const InfoFacts& f) {
    Json j;
    j.begin_object();
    j.value("graph", f.paths.graph).value("params", f.paths.params).value("layout", f.paths.layout);
    j.value("version", f.version).value("postprocess", f.postprocess);
    j.value("nodes", static_cast<int64_t>(f.nodes.size()));
    j.value("variables", f.variables);
    j.begin_object("operators");
    for (const auto& kv : f.op_counts) j.value(kv.first, kv.second);
    j.end_object();
    j.value("cvml_operators", operator_list(f.op_counts));
    json_tensors(j, "inputs", f.inputs);
    json_tensors(j, "outputs", f.outputs);
    j.begin_object("input_bytes").value("length", static_cast<uint64_t>(f.in_len));
    j.value("type_size", f.in_ts).end_object();
    j.begin_object("output_bytes").value("length", static_cast<uint64_t>(f.out_len));
    j.value("type_size", f.out_ts).end_object();
    j.begin_object("gas").value("total", f.gas).value("ops", f.gas_ops).value("memory", f.gas_mem);
    j.end_object();
    if (f.have_storage) j.value("storage_size", static_cast<uint64_t>(f.storage));
    j.begin_object("parameters").value("tensors", f.param_tensors).value("values", f.param_values);
    j.value("bytes", f.param_values * 4).end_object();
    j.begin_object("devices");
    for (const auto& kv : f.device_counts) j.value(kv.first, kv.second);
    j.end_object();
    json_nodes(j, f.nodes);
    j.end_object();
    fputs(j.str().c_str(), stdout);
}

/* The per-node table of the text report. */
void print_node_table(const std::vector<NodeFacts>& nodes) {
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

void print_tensor_lines(const char* format, const std::vector<TensorFacts>& ts) {
    for (size_t i = 0; i < ts.size(); ++i)
        printf(format, i, ts[i].name.c_str(), shape_text(ts[i].shape).c_str(), ts[i].precision,
               type_name(ts[i].type_size));
}

/* "a x2, b x1" or "cpu 3 nodes": each key with its count, in key order. */
std::string counts_text(const std::map<std::string, int>& counts, bool as_nodes) {
    std::string s;
    for (const auto& kv : counts)
        s += (s.empty() ? "" : ", ") + kv.first +
             (as_nodes ? " " + std::to_string(kv.second) + (kv.second == 1 ? " node" : " nodes")
                       : " x" + std::to_string(kv.second));
    return s.empty() ? "none" : s;
}

void print_text(const InfoFacts& f, bool brief) {
    printf("model        %s + %s\n", f.paths.graph.c_str(), f.paths.params.c_str());
    printf("layout       %s\n", f.paths.layout.c_str());
    printf("format       %s\n", format_label(f.version).c_str());
    printf("postprocess  %s\n", f.postprocess.empty() ? "none" : f.postprocess.c_str());
    printf("nodes        %zu (%d variables, %zu operator nodes)\n", f.nodes.size(), f.variables,
           f.nodes.size() - f.variables);
    printf("operators    %s\n", counts_text(f.op_counts, false).c_str());
    printf("build with   -DCVML_OPERATORS=\"%s\"\n", operator_list(f.op_counts).c_str());
    print_tensor_lines("input %-6zu %s %s precision %d %s\n", f.inputs);
    print_tensor_lines("output %-5zu %s %s precision %d %s\n", f.outputs);
    printf("input bytes  %zu (%s elements)\n", f.in_len, type_name(f.in_ts));
    printf("output bytes %zu (%s elements)\n", f.out_len, type_name(f.out_ts));
    printf("gas          %" PRIu64 " (ops %" PRIu64 " + memory %" PRIu64 ")\n", f.gas, f.gas_ops,
           f.gas_mem);
    if (f.have_storage) printf("storage      %llu bytes\n", f.storage);
    printf("parameters   %" PRIu64 " tensors, %" PRIu64 " values, %" PRIu64 " bytes as int32\n",
           f.param_tensors, f.param_values, f.param_values * 4);
    printf("devices      %s\n", counts_text(f.device_counts, true).c_str());
    if (!brief) print_node_table(f.nodes);
}

}  // namespace

int cmd_info(int argc, char** argv) {
    Args args;
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
            (std::string(kInfoOptions) + kDeviceHelp).c_str());
        return kOk;
    }
    if (args.has("--dot") && args.get("--dot").empty()) usage_error("--dot needs a file name");
    ModelPaths paths = model_from(args);
    refuse_compiled(paths, "cvml info");
    Library lib;
    Context ctx;
    ctx.configure(args);
    LoadedModel m;
    load_model(ctx, paths, &m, KeepBytes::kYes);
    check(cvml_graph_prerun(m.graph.g), "cannot plan the graph on its devices");
    InfoFacts f;
    f.paths = paths;
    read_graph(m.graph.g, &f);
    if (args.has("--dot")) {
        std::string dot = dot_text(f.nodes, paths.graph), file = args.get("--dot");
        if (file == "-") {
            fputs(dot.c_str(), stdout);
            return kOk;
        }
        write_file(file, dot.data(), dot.size(), "Graphviz file");
    }
    if (args.has("--graph")) {
        print_graph(f.nodes);
        return kOk;
    }
    summary(m, &f);
    if (args.has("--json"))
        print_json(f);
    else
        print_text(f, args.has("--brief"));
    return kOk;
}
