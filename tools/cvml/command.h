/* What the model subcommands share: their help text and options, MODEL from the
 * positionals, and the facts they read from a loaded graph (tensors, nodes). */
#pragma once

#include <stdint.h>

#include <map>
#include <string>
#include <vector>

#include "cli.h"

namespace cli {

extern const char kDeviceHelp[];

/* Adds --device, --threads and --plugin, the options every model command takes. */
std::vector<OptionSpec> with_device_options(std::vector<OptionSpec> specs);

/* Prints a model command's --help: its usage, what MODEL may be, and its options. */
void print_help(const char* usage, const char* options);

/* MODEL [PARAMS] from the positionals. */
ModelPaths model_from(const Args& args);

/* "(1, 3, 32, 32)" */
template <typename Int>
std::string shape_text(const std::vector<Int>& dims) {
    std::string s = "(";
    for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
    return s + ")";
}
/* "[1, 3, 32, 32]" */
std::string shape_json(const std::vector<int32_t>& dims);
std::string joined(const std::vector<std::string>& items, const char* separator);
const char* type_name(int type_size);
/* The format as `info` and `validate` name it. */
std::string format_label(const std::string& version);

struct TensorFacts {
    std::string name;
    std::vector<int32_t> shape;
    int precision = 0;
    int type_size = 4;
    size_t elements = 0;
};
TensorFacts tensor_facts(const cvml_tensor* t);

struct NodeFacts {
    std::string name, op, device;
    std::vector<int32_t> shape;
    int precision = 0;
    int fused_into = -1;             /* after prerun: cvml_graph_node_fused_into() */
    bool is_const = false;           /* a variable holding a parameter */
    std::vector<int> input_nodes;    /* the producer of each input, -1 for none */
    std::vector<std::string> inputs; /* each input as "node", "node:k" or a tensor name */
};
/* Every node of `g`, with its device and fusion when `with_devices` (after prerun). */
std::vector<NodeFacts> node_facts(cvml_graph* g, bool with_devices);

/* How a node ran, for the profile: "" when as itself, else which node did its work. */
std::string runs_as(const std::vector<NodeFacts>& nodes, const NodeFacts& n);

/* The operators a model needs as a CVML_OPERATORS value ("conv2d;dense;relu"): a build
 * configured with it runs the model and nothing more. */
std::string operator_list(const std::map<std::string, int>& op_counts);

}  // namespace cli
