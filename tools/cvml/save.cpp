/* cvml save: a model written back with cvm-lite's CVM writer, and loaded again to check. */
#include <sys/stat.h>

#include <cstdio>
#include <string>

#include "command.h"

using namespace cli;

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
