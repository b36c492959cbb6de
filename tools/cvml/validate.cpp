/* cvml validate: load and plan a model; the first rule it breaks, with upstream's class. */
#include <cinttypes>
#include <cstdio>
#include <string>

#include "command.h"

using namespace cli;

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
