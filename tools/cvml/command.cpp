/* The pieces the model subcommands share (command.h). */
#include "command.h"

#include <cstdio>

namespace cli {

namespace {

const char kModelHelp[] =
    "MODEL is a directory (model.json + model.params, or symbol + params), a graph file\n"
    "(its params: PARAMS when given, else NAME.params beside NAME.json, or params beside\n"
    "symbol), a prefix (PREFIX.json + PREFIX.params), or a params file (its graph beside\n"
    "it).\n";

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

/* Node `i`'s name, operator, and with `with_devices` its device and fusion. */
NodeFacts node_at(cvml_graph* g, int i, bool with_devices) {
    NodeFacts n;
    const char *name = nullptr, *op = nullptr;
    check(cvml_graph_node_info(g, i, &name, &op), "cannot read node " + std::to_string(i));
    n.name = name ? name : "";
    n.op = op ? op : "";
    if (with_devices) {
        const char* dev = nullptr;
        check(cvml_graph_node_device(g, i, &dev), "cannot read the device of node " + n.name);
        n.device = dev ? dev : "";
        check(cvml_graph_node_fused_into(g, i, &n.fused_into),
              "cannot read how node " + n.name + " runs");
    }
    cvml_tensor* t = nullptr;
    if (cvml_graph_find_tensor(g, name, &t) == CVML_OK && t) {
        TensorFacts f = tensor_facts(t);
        n.shape = f.shape;
        n.precision = f.precision;
        int is_const = 0;
        check(cvml_tensor_is_const(t, &is_const), "cannot read tensor " + n.name);
        n.is_const = is_const != 0;
    }
    read_edges(g, i, &n);
    return n;
}

}  // namespace

const char kDeviceHelp[] =
    "  --device NAMES     devices to use, comma-separated in priority order; the CPU is\n"
    "                     always the fallback (see 'cvml devices')\n"
    "  --plugin PATH      load a device plugin first (repeatable; CVML_PLUGIN_PATH and\n"
    "                     lib/cvml/plugins are searched anyway)\n"
    "  --threads N        CPU threads (default: CVML_NUM_THREADS or 1)\n";

std::vector<OptionSpec> with_device_options(std::vector<OptionSpec> specs) {
    specs.push_back({"--device", true, true});
    specs.push_back({"--threads", true, false});
    specs.push_back({"--plugin", true, true});
    return specs;
}

void print_help(const char* usage, const char* options) {
    printf("%s\n\n%s\noptions:\n%s  -h, --help         show this help\n", usage, kModelHelp,
           options);
}

ModelPaths model_from(const Args& args) {
    if (args.positionals.empty()) usage_error("missing MODEL");
    if (args.positionals.size() > 2)
        usage_error("unexpected argument '" + args.positionals[2] + "'");
    return resolve_model(args.positionals[0],
                         args.positionals.size() == 2 ? args.positionals[1] : "");
}

std::string shape_json(const std::vector<int32_t>& dims) {
    std::string s = "[";
    for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
    return s + "]";
}

std::string joined(const std::vector<std::string>& items, const char* separator) {
    std::string s;
    for (size_t i = 0; i < items.size(); ++i) s += (i ? separator : "") + items[i];
    return s;
}

const char* type_name(int type_size) {
    return type_size == 1 ? "int8" : "int32";
}

std::string format_label(const std::string& version) {
    return version.empty() ? "2019 layout (no version key, read as cvm_1.0.0)" : version;
}

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

std::vector<NodeFacts> node_facts(cvml_graph* g, bool with_devices) {
    int count = 0;
    check(cvml_graph_node_count(g, &count), "cannot count nodes");
    std::vector<NodeFacts> nodes;
    nodes.reserve(count);
    for (int i = 0; i < count; ++i) nodes.push_back(node_at(g, i, with_devices));
    for (auto& n : nodes)
        for (size_t k = 0; k < n.inputs.size(); ++k)
            if (n.input_nodes[k] >= 0 && n.input_nodes[k] < count)
                n.inputs[k] = nodes[n.input_nodes[k]].name + n.inputs[k];
    return nodes;
}

std::string runs_as(const std::vector<NodeFacts>& nodes, const NodeFacts& n) {
    if (n.fused_into == CVML_NODE_VIEW) return "view of its input (no work)";
    if (n.fused_into >= 0 && static_cast<size_t>(n.fused_into) < nodes.size())
        return "fused into " + nodes[n.fused_into].name;
    return "";
}

std::string operator_list(const std::map<std::string, int>& op_counts) {
    std::string list;
    for (const auto& kv : op_counts) list += (list.empty() ? "" : ";") + kv.first;
    return list;
}

}  // namespace cli
