/* cvml: inspect, validate, run, convert and benchmark CVM models with cvm-lite. */
#include <cstdio>
#include <cstring>
#include <string>

#include "cli.h"

#include "bench/bench.h"

namespace {

const char kUsage[] =
    "usage: cvml <command> [options] [arguments]\n"
    "\n"
    "Deterministic integer inference for CVM models (cvm-lite).\n"
    "\n"
    "commands:\n"
    "  info MODEL            describe a model: format, operators, inputs/outputs, gas, devices\n"
    "  run MODEL --input F   run a model on an input file and print or save its output\n"
    "  validate MODEL        load and verify a model, report the first rule it breaks\n"
    "  devices               list the devices a graph can run on\n"
    "  save MODEL --out P    write a model back as P.json + P.params\n"
    "  bench [MODEL]         measure inference speed of a model or a built-in one\n"
    "  version               print the library version\n"
    "\n"
    "MODEL is one of:\n"
    "  DIR                   a directory holding model.json + model.params,\n"
    "                        or symbol + params (Cortex's layout)\n"
    "  GRAPH [PARAMS]        a graph JSON file; PARAMS defaults to GRAPH's NAME.params\n"
    "                        (model.json -> model.params, symbol -> params)\n"
    "  PREFIX                PREFIX.json + PREFIX.params\n"
    "  PARAMS                a params file: its graph beside it (params -> symbol,\n"
    "                        NAME.params -> NAME.json)\n"
    "\n"
    "exit status: 0 success, 1 logic error (invalid model, input or mismatching output),\n"
    "             2 runtime error (the system or the runtime failed), 64 usage error.\n"
    "\n"
    "Run 'cvml <command> --help' for the options of a command.\n";

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        // Errors are one line on stderr; the full usage is on --help.
        fputs("cvml: missing command (try 'cvml --help')\n", stderr);
        return cli::kUsage;
    }
    std::string cmd = argv[1];
    if (cmd == "-h" || cmd == "--help" || cmd == "help") {
        fputs(kUsage, stdout);
        return cli::kOk;
    }
    if (cmd == "version" || cmd == "--version") {
        printf("cvml %s\n", cvml_version());
        return cli::kOk;
    }
    try {
        int sub_argc = argc - 2;
        char** sub_argv = argv + 2;
        if (cmd == "info") return cmd_info(sub_argc, sub_argv);
        if (cmd == "run") return cmd_run(sub_argc, sub_argv);
        if (cmd == "validate") return cmd_validate(sub_argc, sub_argv);
        if (cmd == "devices") return cmd_devices(sub_argc, sub_argv);
        if (cmd == "save") return cmd_save(sub_argc, sub_argv);
        if (cmd == "bench") {
            /* The benchmark parses its own arguments with argv[0] == "bench". */
            return cvml_bench_main(argc - 1, argv + 1);
        }
        fprintf(stderr, "cvml: unknown command '%s' (see 'cvml --help')\n", cmd.c_str());
        return cli::kUsage;
    } catch (const cli::Error& e) {
        fprintf(stderr, "cvml %s: %s%s\n", cmd.c_str(), e.what(),
                e.code == cli::kUsage ? (" (see 'cvml " + cmd + " --help')").c_str() : "");
        return e.code;
    } catch (const std::bad_alloc&) {
        fprintf(stderr, "cvml %s: out of memory\n", cmd.c_str());
        return cli::kRuntime;
    } catch (const std::exception& e) {
        fprintf(stderr, "cvml %s: %s\n", cmd.c_str(), e.what());
        return cli::kRuntime;
    }
}
