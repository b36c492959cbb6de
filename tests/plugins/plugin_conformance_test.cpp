/* Every conformance case (tests/conformance/cases) with the test plugin loaded and
 * first in the context's devices, against the same case on the CPU alone: the load and
 * run status and the output bytes must be identical (issue 5 item 6). The plugin takes
 * relu and the element-wise and broadcast arithmetic it implements, so graphs are cut
 * into islands with boundary copies both ways. */
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "cvml.h"
#include "module/device.h"
#include "test_plugin.h"

namespace {

const std::string kPlugin = std::string(CVML_TEST_PLUGIN_DIR) + "/good/libcvml_testplugin.so";
const std::string kCases = std::string(CVML_SOURCE_DIR) + "/tests/conformance/cases";

std::string slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

struct Outcome {
    int load_rc = -1, run_rc = -1;
    std::string out, error;
    int on_plugin = 0;
};

Outcome run_case(const std::string& dir, bool plugin) {
    Outcome o;
    cvml_context* ctx = nullptr;
    EXPECT_EQ(cvml_context_create(&ctx), CVML_OK);
    const char* with[] = {"testplugin", "cpu"};
    const char* cpu[] = {"cpu"};
    EXPECT_EQ(cvml_context_set_devices(ctx, plugin ? with : cpu, plugin ? 2 : 1), CVML_OK)
        << cvml_last_error();
    cvml_graph* g = nullptr;
    o.load_rc = cvml_graph_load_file(ctx, "cvm", (dir + "/model.json").c_str(),
                                     (dir + "/model.params").c_str(), &g);
    if (o.load_rc) {
        o.error = cvml_last_error();
        cvml_context_release(ctx);
        return o;
    }
    const std::string input = slurp(dir + "/input.bin");
    size_t len = 0;
    int type = 0;
    o.run_rc = cvml_graph_output_bytes(g, &len, &type);
    if (!o.run_rc) o.run_rc = cvml_graph_prerun(g);
    if (!o.run_rc) {
        int nodes = 0;
        cvml_graph_node_count(g, &nodes);
        for (int i = 0; i < nodes; ++i) {
            const char* d = "";
            cvml_graph_node_device(g, i, &d);
            o.on_plugin += std::string(d) == "testplugin";
        }
        o.out.assign(len, '\0');
        o.run_rc = cvml_graph_run_bytes(g, input.data(), input.size(), &o.out[0], len);
    }
    if (o.run_rc) o.error = cvml_last_error();
    cvml_graph_release(g);
    cvml_context_release(ctx);
    return o;
}

TEST(PluginConformance, EveryCaseGivesTheCpuBytesWithTheTestPlugin) {
    unsetenv("CVML_PLUGIN_PATH");
    unsetenv("CVML_TESTPLUGIN_OPS");
    unsetenv("CVML_TESTPLUGIN_REFUSE");
    ASSERT_EQ(cvml_init(), CVML_OK) << cvml_last_error();
    ASSERT_EQ(cvml_load_plugin(kPlugin.c_str()), CVML_OK) << cvml_last_error();
    cvml_device* dev = device_registry_find("testplugin");
    ASSERT_NE(dev, nullptr);
    auto* stats = static_cast<test_plugin_stats*>(dev->priv);
    std::vector<std::string> cases;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(kCases, ec))
        if (std::filesystem::exists(e.path() / "model.json")) cases.push_back(e.path().string());
    std::sort(cases.begin(), cases.end());
    ASSERT_GT(cases.size(), 100u) << kCases;
    int cases_on_plugin = 0;
    for (const auto& dir : cases) {
        SCOPED_TRACE(dir);
        const Outcome cpu = run_case(dir, false);
        const int64_t before = stats->nodes_run;
        const Outcome with = run_case(dir, true);
        EXPECT_EQ(with.load_rc, cpu.load_rc) << with.error << " | " << cpu.error;
        EXPECT_EQ(with.run_rc, cpu.run_rc) << with.error << " | " << cpu.error;
        EXPECT_TRUE(with.out == cpu.out) << "output bytes differ";
        if (with.run_rc == 0 && with.on_plugin > 0) {
            EXPECT_GT(stats->nodes_run, before) << "nodes placed on the plugin did not run there";
            ++cases_on_plugin;
        }
    }
    // The plugin must really have taken part: many cases hold relu or arithmetic.
    EXPECT_GT(cases_on_plugin, 10);
    EXPECT_EQ(stats->live_buffers, 0);
    EXPECT_EQ(cvml_release(), CVML_OK);
}

}  // namespace
