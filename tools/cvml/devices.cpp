/* cvml devices: the devices in priority order, the plugins found or refused, and the
 * registries. */
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "command.h"

using namespace cli;

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
