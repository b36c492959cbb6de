/* cvml save: a model written back with cvm-lite's CVM writer, or as a compiled plan
 * (docs/compiled-plan.md), and loaded again to check. */
#include <sys/stat.h>

#include <cstdio>
#include <string>

#include "command.h"

using namespace cli;

namespace {

/* Deterministic input bytes of every value the input's type holds (an LCG). */
std::vector<uint8_t> probe_input(cvml_graph* g) {
    size_t len = 0;
    int type = 1;
    check(cvml_graph_input_bytes(g, &len, &type), "cannot size the input bytes");
    std::vector<uint8_t> in(len);
    uint32_t x = 12345;
    for (auto& b : in) {
        x = x * 1103515245u + 12345u;
        b = static_cast<uint8_t>(x >> 16);
    }
    return in;
}

struct RunResult {
    std::vector<uint8_t> output;
    uint64_t gas = 0;
};

RunResult run_once(cvml_graph* g, const std::vector<uint8_t>& input) {
    RunResult r;
    size_t len = 0;
    int type = 1;
    check(cvml_graph_output_bytes(g, &len, &type), "cannot size the output bytes");
    r.output.assign(len, 0);
    check(cvml_graph_run_bytes(g, input.data(), input.size(), r.output.data(), len),
          "cannot run the model");
    check(cvml_graph_gas(g, &r.gas), "cannot compute gas");
    return r;
}

/* The plan loaded again must charge the model's gas and give its output bytes. */
void check_compiled(Context& ctx, const ModelPaths& paths, const std::string& out) {
    LoadedModel model, plan;
    load_model(ctx, paths, &model);
    load_model(ctx, {out, "", kCompiledLayout}, &plan);
    const std::vector<uint8_t> input = probe_input(model.graph.g);
    const RunResult a = run_once(model.graph.g, input), b = run_once(plan.graph.g, input);
    if (a.gas != b.gas || a.output != b.output)
        throw Error(kRuntime, "the compiled plan's " +
                                  std::string(a.gas != b.gas ? "gas" : "output") +
                                  " differs from the model's");
}

int save_compiled(const Args& args, const ModelPaths& paths) {
    const std::string out = args.get("--compiled");
    if (out.empty()) usage_error("--compiled needs a file name");
    const std::string target = args.has("--target") ? args.get("--target") : "scalar";
    Library lib;
    Context ctx;
    ctx.configure(args);
    LoadedModel m;
    load_model(ctx, paths, &m);
    void* data = nullptr;
    size_t size = 0;
    check(cvml_graph_save_compiled(m.graph.g, target.c_str(), &data, &size),
          "cannot compile '" + paths.graph + "' for " + target);
    std::vector<uint8_t> bytes(static_cast<uint8_t*>(data), static_cast<uint8_t*>(data) + size);
    cvml_free(data);
    write_file(out, bytes.data(), bytes.size(), "compiled plan");
    size_t arena = 0, bound = 0, need = 0;
    check(cvml_compiled_plan_arena(bytes.data(), bytes.size(), &arena, &bound), "cannot read it");
    printf(
        "wrote %s (%zu bytes) for target %s: arena %zu bytes (the largest step's inputs and "
        "outputs %zu)",
        out.c_str(), bytes.size(), target.c_str(), arena, bound);
    // A plan for another core (a Cortex-M's) is checked by the part that runs it.
    if (cvml_graph_compiled_arena_bytes(bytes.data(), bytes.size(), &need) == 0) {
        if (!args.has("--no-check")) check_compiled(ctx, paths, out);
        printf(", %zu with this build's runtime state\n", need);
    } else {
        printf("; not run here: %s\n", cvml_last_error());
    }
    return kOk;
}

}  // namespace

int cmd_save(int argc, char** argv) {
    Args args;
    if (!parse_args(argc, argv,
                    with_device_options({{"--out", true, false},
                                         {"--compiled", true, false},
                                         {"--target", true, false},
                                         {"--no-check", false, false}}),
                    &args)) {
        print_help(
            "usage: cvml save MODEL [PARAMS] --out PREFIX\n"
            "       cvml save MODEL [PARAMS] --compiled FILE.cvmc [--target T] [--threads N]\n\n"
            "Loads a model and writes it with cvm-lite's CVM writer as PREFIX.json and\n"
            "PREFIX.params (DIR/model.json and DIR/model.params when PREFIX is a\n"
            "directory), or as a compiled plan for target T (docs/compiled-plan.md), which\n"
            "cvml_graph_load_compiled() runs in place and `cvml run FILE.cvmc` runs. The\n"
            "written files are loaded again and must verify with the same gas (a plan: and\n"
            "give the model's output bytes on a probe input).",
            "  --out PREFIX       where to write the CVM files\n"
            "  --compiled FILE    where to write the compiled plan\n"
            "  --target T         the plan's target (default scalar; docs/compiled-plan.md)\n"
            "  --no-check         skip loading the written files again\n");
        return kOk;
    }
    if (args.has("--compiled")) return save_compiled(args, model_from(args));
    if (!args.has("--out")) usage_error("missing --out PREFIX or --compiled FILE");
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
