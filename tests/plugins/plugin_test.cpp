/* The plugin ABI, loader and scheduler, exercised with the test plugin
 * (tests/plugins/test_plugin.cpp): loading by path and by CVML_PLUGIN_PATH, refusals,
 * partitioning, boundary copies, fallback to the CPU, the island policy, and byte
 * equality with a CPU-only run. */
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "cvml.h"
#include "module/device.h"
#include "module/graph_handle.h"
#include "test_plugin.h"

namespace {

const std::string kDir = CVML_TEST_PLUGIN_DIR;
const std::string kGood = kDir + "/good/libcvml_testplugin.so";
const std::string kBadAbi = kDir + "/bad/libcvml_testplugin_badabi.so";
const std::string kFailing = kDir + "/bad/libcvml_testplugin_fail.so";
const std::string kNotPlugin = kDir + "/bad/libcvml_notaplugin.so";

struct PluginInfo {
    std::string name, version, path, reason;
    int loaded = 0;
};

std::vector<PluginInfo> plugins() {
    std::vector<PluginInfo> out;
    int n = 0;
    EXPECT_EQ(cvml_plugin_count(&n), CVML_OK);
    for (int i = 0; i < n; ++i) {
        const char *name, *version, *path, *reason;
        PluginInfo p;
        EXPECT_EQ(cvml_plugin_info(i, &name, &version, &path, &p.loaded, &reason), CVML_OK);
        p.name = name;
        p.version = version;
        p.path = path;
        p.reason = reason;
        out.push_back(p);
    }
    return out;
}

/* The records other than those of plugins the build expects but no test loads (the
 * CUDA plugin, when CMake built it, is listed as absent with its reason). */
std::vector<PluginInfo> test_plugins() {
    std::vector<PluginInfo> out;
    for (auto& p : plugins())
        if (p.name != "cuda") out.push_back(p);
    return out;
}

std::vector<std::string> devices() {
    std::vector<std::string> out;
    const char *name, *version;
    for (int i = 0; cvml_device_info(i, &name, &version) == CVML_OK; ++i) out.push_back(name);
    return out;
}

test_plugin_stats* stats() {
    cvml_device* d = device_registry_find("testplugin");
    return d ? static_cast<test_plugin_stats*>(d->priv) : nullptr;
}

/* Each test starts from a clean library and environment. */
class Plugin : public ::testing::Test {
  protected:
    void SetUp() override {
        unsetenv("CVML_PLUGIN_PATH");
        unsetenv("CVML_TESTPLUGIN_OPS");
        unsetenv("CVML_TESTPLUGIN_REFUSE");
        ASSERT_EQ(cvml_init(), CVML_OK) << cvml_last_error();
    }
    void TearDown() override {
        if (graph) cvml_graph_release(graph);
        if (ctx) cvml_context_release(ctx);
        EXPECT_EQ(cvml_release(), CVML_OK);
    }
    void load() {
        ASSERT_EQ(cvml_load_plugin(kGood.c_str()), CVML_OK) << cvml_last_error();
        ASSERT_NE(stats(), nullptr);
    }

    /* x (1×n, 8 bits) → relus named in `names`, each reading the previous one, or the
     * node (or "x") named after a colon ("c:a"); the graph outputs are `outs`. */
    void build(const std::vector<std::string>& names, const std::vector<std::string>& outs,
               int n = 64) {
        ASSERT_EQ(cvml_context_create(&ctx), CVML_OK);
        if (!context_devices.empty()) {
            std::vector<const char*> p;
            for (auto& d : context_devices) p.push_back(d.c_str());
            ASSERT_EQ(cvml_context_set_devices(ctx, p.data(), static_cast<int>(p.size())), CVML_OK)
                << cvml_last_error();
        }
        ASSERT_EQ(cvml_graph_create(ctx, &graph), CVML_OK);
        int32_t dims[2] = {1, n};
        cvml_tensor* x = nullptr;
        ASSERT_EQ(cvml_graph_add_input(graph, "x", 2, dims, 8, &x), CVML_OK);
        cvml_tensor* prev = x;
        std::vector<std::pair<std::string, cvml_tensor*>> made;
        for (const auto& raw : names) {
            size_t colon = raw.find(':');
            std::string name = raw.substr(0, colon);
            cvml_tensor* in = prev;
            if (colon != std::string::npos) {
                std::string src = raw.substr(colon + 1);
                in = src == "x" ? x : nullptr;
                for (auto& m : made)
                    if (m.first == src) in = m.second;
                ASSERT_NE(in, nullptr) << raw;
            }
            cvml_tensor* out = nullptr;
            ASSERT_EQ(cvml_graph_add_node(graph, "relu", name.c_str(), nullptr, nullptr, 0, &in, 1,
                                          &out, 1),
                      CVML_OK)
                << cvml_last_error();
            made.push_back({name, out});
            prev = out;
        }
        std::vector<cvml_tensor*> o;
        for (const auto& name : outs)
            for (auto& m : made)
                if (m.first == name) o.push_back(m.second);
        ASSERT_EQ(cvml_graph_set_outputs(graph, o.data(), static_cast<int>(o.size())), CVML_OK);
        ASSERT_EQ(cvml_graph_verify(graph), CVML_OK) << cvml_last_error();
        input.resize(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i) input[static_cast<size_t>(i)] = (i * 37) % 255 - 127;
        cvml_tensor* t = nullptr;
        ASSERT_EQ(cvml_graph_get_input(graph, 0, &t), CVML_OK);
        ASSERT_EQ(cvml_tensor_set_i32(t, input.data(), input.size()), CVML_OK);
    }

    std::string device_of(const char* node) {
        int count = 0;
        cvml_graph_node_count(graph, &count);
        for (int i = 0; i < count; ++i) {
            const char *name, *op, *dev;
            cvml_graph_node_info(graph, i, &name, &op);
            if (std::string(name) == node) {
                EXPECT_EQ(cvml_graph_node_device(graph, i, &dev), CVML_OK);
                return dev;
            }
        }
        return "?";
    }

    std::vector<int32_t> output(int index) {
        cvml_tensor* t = nullptr;
        EXPECT_EQ(cvml_graph_get_output(graph, index, &t), CVML_OK);
        size_t n = 0;
        cvml_tensor_element_count(t, &n);
        std::vector<int32_t> v(n);
        EXPECT_EQ(cvml_tensor_get_i32(t, v.data(), n), CVML_OK) << cvml_last_error();
        return v;
    }

    std::vector<int32_t> relu_of_input() const {
        std::vector<int32_t> r = input;
        for (auto& v : r) v = v > 0 ? v : 0;
        return r;
    }

    cvml_context* ctx = nullptr;
    cvml_graph* graph = nullptr;
    std::vector<int32_t> input;
    std::vector<std::string> context_devices;
};

TEST_F(Plugin, LoadByPathListsPluginAndDeviceFirst) {
    load();
    auto p = test_plugins();
    ASSERT_EQ(p.size(), 1u);
    EXPECT_EQ(p[0].name, "testplugin");
    EXPECT_EQ(p[0].version, "0.0.1");
    EXPECT_EQ(p[0].loaded, 1);
    EXPECT_EQ(p[0].reason, "");
    auto d = devices();
    ASSERT_EQ(d.size(), 2u);
    EXPECT_EQ(d[0], "testplugin");
    EXPECT_EQ(d[1], "cpu");
}

TEST_F(Plugin, LoadingTwiceIsHarmless) {
    load();
    test_plugin_stats* s = stats();
    ASSERT_EQ(cvml_load_plugin(kGood.c_str()), CVML_OK) << cvml_last_error();
    std::string again = kDir + "/good/../good/libcvml_testplugin.so";
    ASSERT_EQ(cvml_load_plugin(again.c_str()), CVML_OK) << cvml_last_error();
    EXPECT_EQ(test_plugins().size(), 1u);
    EXPECT_EQ(devices().size(), 2u);
    EXPECT_EQ(stats(), s);
}

TEST_F(Plugin, WrongAbiVersionIsRefusedNamingBothVersions) {
    EXPECT_EQ(cvml_load_plugin(kBadAbi.c_str()), CVML_ERR_RUNTIME);
    std::string msg = cvml_last_error();
    const std::string next = std::to_string(CVML_PLUGIN_ABI_MAJOR + 1) + ".0";
    const std::string ours =
        std::to_string(CVML_PLUGIN_ABI_MAJOR) + "." + std::to_string(CVML_PLUGIN_ABI_MINOR);
    EXPECT_NE(msg.find("ABI version " + next), std::string::npos) << msg;
    EXPECT_NE(msg.find("ABI version " + ours), std::string::npos) << msg;
    EXPECT_EQ(device_registry_find("testplugin"), nullptr);
    auto p = test_plugins();
    ASSERT_EQ(p.size(), 1u);
    EXPECT_EQ(p[0].loaded, 0);
    EXPECT_EQ(p[0].reason, msg);
    // The refusal leaves the library as it was: the good plugin still loads.
    load();
}

TEST_F(Plugin, FailingEntryLeavesNothingRegistered) {
    EXPECT_EQ(cvml_load_plugin(kFailing.c_str()), CVML_ERR_RUNTIME);
    std::string msg = cvml_last_error();
    EXPECT_NE(msg.find("planned failure"), std::string::npos) << msg;
    EXPECT_EQ(device_registry_find("testplugin_fail"), nullptr);
    EXPECT_EQ(devices(), (std::vector<std::string>{"cpu"}));
    auto p = test_plugins();
    ASSERT_EQ(p.size(), 1u);
    EXPECT_EQ(p[0].name, "testplugin_fail");
    EXPECT_EQ(p[0].loaded, 0);
    EXPECT_NE(p[0].reason.find("planned failure"), std::string::npos);
}

TEST_F(Plugin, MissingAndForeignLibrariesAreClearErrors) {
    EXPECT_EQ(cvml_load_plugin((kDir + "/nowhere/libcvml_nothing.so").c_str()), CVML_ERR_RUNTIME);
    EXPECT_NE(std::string(cvml_last_error()).find("not found"), std::string::npos)
        << cvml_last_error();
    EXPECT_EQ(cvml_load_plugin(kNotPlugin.c_str()), CVML_ERR_RUNTIME);
    EXPECT_NE(std::string(cvml_last_error()).find("not a cvm-lite plugin"), std::string::npos)
        << cvml_last_error();
    std::string text = kDir + "/../CTestTestfile.cmake";
    EXPECT_EQ(cvml_load_plugin(text.c_str()), CVML_ERR_RUNTIME);
    EXPECT_NE(std::string(cvml_last_error()).find("cannot open plugin"), std::string::npos)
        << cvml_last_error();
    EXPECT_EQ(cvml_load_plugin(nullptr), CVML_ERR_LOGIC);
    EXPECT_EQ(devices(), (std::vector<std::string>{"cpu"}));
}

TEST(PluginLoader, LoadsFromPluginPathAtInit) {
    std::string path = kDir + "/good:" + kDir + "/missing_dir";
    setenv("CVML_PLUGIN_PATH", path.c_str(), 1);
    ASSERT_EQ(cvml_init(), CVML_OK) << cvml_last_error();
    auto p = test_plugins();
    ASSERT_GE(p.size(), 2u);
    EXPECT_EQ(p[0].name, "testplugin");
    EXPECT_EQ(p[0].loaded, 1);
    EXPECT_EQ(p[1].loaded, 0);
    EXPECT_NE(p[1].reason.find("not found"), std::string::npos) << p[1].reason;
    EXPECT_EQ(devices()[0], "testplugin");
    EXPECT_EQ(cvml_release(), CVML_OK);
    unsetenv("CVML_PLUGIN_PATH");
}

TEST(PluginLoader, PluginPathDirectoryWithBrokenPluginsStillInitialises) {
    setenv("CVML_PLUGIN_PATH", (kDir + "/bad").c_str(), 1);
    ASSERT_EQ(cvml_init(), CVML_OK) << cvml_last_error();
    auto p = test_plugins();
    int refused = 0;
    for (auto& x : p) refused += x.loaded == 0 && !x.reason.empty();
    EXPECT_GE(refused, 3);
    EXPECT_EQ(devices(), (std::vector<std::string>{"cpu"}));
    EXPECT_EQ(cvml_release(), CVML_OK);
    unsetenv("CVML_PLUGIN_PATH");
}

/* Also run under valgrind (plugin_valgrind): nothing leaks across init/release. */
TEST(PluginLoader, InitReleaseInitRuns) {
    setenv("CVML_PLUGIN_PATH", (kDir + "/good").c_str(), 1);
    for (int round = 0; round < 2; ++round) {
        ASSERT_EQ(cvml_init(), CVML_OK) << cvml_last_error();
        ASSERT_NE(stats(), nullptr);
        cvml_context* ctx = nullptr;
        cvml_graph* g = nullptr;
        ASSERT_EQ(cvml_context_create(&ctx), CVML_OK);
        ASSERT_EQ(cvml_graph_create(ctx, &g), CVML_OK);
        int32_t dims[1] = {5};
        cvml_tensor *x = nullptr, *y = nullptr;
        ASSERT_EQ(cvml_graph_add_input(g, "x", 1, dims, 8, &x), CVML_OK);
        ASSERT_EQ(cvml_graph_add_node(g, "relu", "r", nullptr, nullptr, 0, &x, 1, &y, 1), CVML_OK);
        ASSERT_EQ(cvml_graph_set_outputs(g, &y, 1), CVML_OK);
        int32_t in[5] = {-2, -1, 0, 1, 2}, out[5] = {9, 9, 9, 9, 9};
        ASSERT_EQ(cvml_tensor_set_i32(x, in, 5), CVML_OK);
        ASSERT_EQ(cvml_graph_run(g), CVML_OK) << cvml_last_error();
        ASSERT_EQ(cvml_tensor_get_i32(y, out, 5), CVML_OK);
        EXPECT_EQ(std::vector<int32_t>(out, out + 5), (std::vector<int32_t>{0, 0, 0, 1, 2}));
        EXPECT_EQ(stats()->nodes_run, 1);
        cvml_graph_release(g);
        cvml_context_release(ctx);
        ASSERT_EQ(cvml_release(), CVML_OK);
        EXPECT_EQ(device_registry_find("testplugin"), nullptr);
        int n = -1;
        cvml_plugin_count(&n);
        EXPECT_EQ(n, 0);  // forgotten at release, found again at the next init
    }
    unsetenv("CVML_PLUGIN_PATH");
}

TEST_F(Plugin, PartitionsAroundARefusedNodeWithBoundaryCopies) {
    load();
    setenv("CVML_TESTPLUGIN_REFUSE", "r2", 1);
    build({"r1", "r2", "r3"}, {"r3"});
    ASSERT_EQ(cvml_graph_run(graph), CVML_OK) << cvml_last_error();
    EXPECT_EQ(device_of("r1"), "testplugin");
    EXPECT_EQ(device_of("r2"), "cpu");
    EXPECT_EQ(device_of("r3"), "testplugin");
    EXPECT_EQ(graph->ir->subgraph_count, 3);
    test_plugin_stats* s = stats();
    EXPECT_EQ(s->nodes_run, 2);
    EXPECT_EQ(s->subgraphs_run, 2);
    // x in and r1 out for the first island, r2 in and r3 out for the second.
    EXPECT_EQ(s->copies_in, 2);
    EXPECT_EQ(s->copies_out, 2);
    EXPECT_EQ(s->bytes_in, 2 * 64 * 4);
    EXPECT_EQ(output(0), relu_of_input());
    ASSERT_EQ(cvml_graph_run(graph), CVML_OK);
    EXPECT_EQ(s->copies_in, 4);
    EXPECT_EQ(s->live_buffers, 4);
    cvml_graph_release(graph);
    graph = nullptr;
    EXPECT_EQ(s->live_buffers, 0);
    EXPECT_EQ(s->preruns, s->postruns);
}

TEST_F(Plugin, MergesInterleavedNeighboursOfOneDevice) {
    load();
    setenv("CVML_TESTPLUGIN_REFUSE", "b", 1);
    // File order a(plugin) b(cpu) c(plugin): c does not need b, so a and c share one
    // subgraph and the graph is cut in two, not three.
    build({"a:x", "b:x", "c:a"}, {"b", "c"});
    ASSERT_EQ(cvml_graph_prerun(graph), CVML_OK) << cvml_last_error();
    EXPECT_EQ(graph->ir->subgraph_count, 2);
    EXPECT_EQ(device_of("a"), "testplugin");
    EXPECT_EQ(device_of("c"), "testplugin");
    EXPECT_EQ(device_of("b"), "cpu");
    ASSERT_EQ(cvml_graph_run(graph), CVML_OK) << cvml_last_error();
    EXPECT_EQ(output(0), relu_of_input());
    EXPECT_EQ(output(1), relu_of_input());
    // Only x goes in and only c comes out: a stays on the device.
    EXPECT_EQ(stats()->copies_in, 1);
    EXPECT_EQ(stats()->copies_out, 1);
}

TEST_F(Plugin, UnsupportedOperatorFallsBackToCpu) {
    load();
    setenv("CVML_TESTPLUGIN_OPS", "elemwise_add", 1);
    build({"r1", "r2"}, {"r2"});
    ASSERT_EQ(cvml_graph_run(graph), CVML_OK) << cvml_last_error();
    EXPECT_EQ(device_of("r1"), "cpu");
    EXPECT_EQ(device_of("r2"), "cpu");
    EXPECT_EQ(stats()->nodes_run, 0);
    EXPECT_EQ(output(0), relu_of_input());
}

TEST_F(Plugin, ContextNamingOnlyCpuKeepsThePluginOut) {
    load();
    context_devices = {"cpu"};
    build({"r1"}, {"r1"});
    ASSERT_EQ(cvml_graph_run(graph), CVML_OK) << cvml_last_error();
    EXPECT_EQ(device_of("r1"), "cpu");
    EXPECT_EQ(stats()->nodes_run, 0);
}

TEST_F(Plugin, IslandPolicyKeepsTinyIslandsOnTheCpu) {
    load();
    cvml_device* dev = device_registry_find("testplugin");
    // A relu island copies 2 elements per element of work (one in, one out): with a
    // price of 4 work units per copied element it is not worth the bus.
    dev->island_work_per_element = 4;
    setenv("CVML_TESTPLUGIN_REFUSE", "r2", 1);
    build({"r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10"}, {"r10"});
    ASSERT_EQ(cvml_graph_run(graph), CVML_OK) << cvml_last_error();
    EXPECT_EQ(device_of("r1"), "cpu");  // 1 node of work for 2 copied: moved
    EXPECT_EQ(device_of("r2"), "cpu");
    EXPECT_EQ(device_of("r3"), "testplugin");  // 8 nodes of work for 2 copied: kept
    EXPECT_EQ(device_of("r10"), "testplugin");
    EXPECT_EQ(graph->ir->subgraph_count, 2);
    EXPECT_EQ(stats()->nodes_run, 8);
    EXPECT_EQ(output(0), relu_of_input());
    dev->island_work_per_element = 0;
}

TEST_F(Plugin, SameBytesAsCpuOnly) {
    load();
    setenv("CVML_TESTPLUGIN_REFUSE", "b,e", 1);
    std::vector<std::string> nodes = {"a", "b:x", "c:a", "d", "e:b", "f:d"};
    build(nodes, {"a", "c", "f", "b"}, 1000);
    ASSERT_EQ(cvml_graph_run(graph), CVML_OK) << cvml_last_error();
    EXPECT_GT(stats()->nodes_run, 0);
    std::vector<std::vector<int32_t>> with_plugin;
    for (int i = 0; i < 4; ++i) with_plugin.push_back(output(i));
    cvml_graph_release(graph);
    graph = nullptr;
    cvml_context_release(ctx);
    ctx = nullptr;
    context_devices = {"cpu"};
    build(nodes, {"a", "c", "f", "b"}, 1000);
    ASSERT_EQ(cvml_graph_run(graph), CVML_OK) << cvml_last_error();
    for (int i = 0; i < 4; ++i) EXPECT_EQ(output(i), with_plugin[static_cast<size_t>(i)]) << i;
}

/* The CPU may store a tensor as int8 (a proven value bound), but never one that leaves
 * its subgraph; boundary copies move int32. A stale narrow mark on a tensor the plugin
 * produces is reset at prerun, and a narrow tensor reaching the boundary is refused
 * with a runtime error instead of being copied as if it were int32. */
TEST_F(Plugin, BoundaryTensorsCrossAsInt32) {
    load();
    setenv("CVML_TESTPLUGIN_REFUSE", "a,c", 1);
    build({"a", "b", "c"}, {"c"});
    ir_graph* ir = graph->ir;
    auto tensor_of = [&](const char* node) -> ir_tensor* {
        for (int32_t i = 0; i < ir->node_count; ++i)
            if (std::string(ir->nodes[i]->name) == node)
                return ir->tensors[ir->nodes[i]->outputs[0]];
        return nullptr;
    };
    ir_tensor* a = tensor_of("a");  // cpu -> plugin
    ir_tensor* b = tensor_of("b");  // plugin -> cpu
    ASSERT_TRUE(a && b);
    b->storage = STORAGE_INT8;  // as a CPU prerun might have left it
    ASSERT_EQ(cvml_graph_run(graph), CVML_OK) << cvml_last_error();
    EXPECT_EQ(device_of("a"), "cpu");
    EXPECT_EQ(device_of("b"), "testplugin");
    EXPECT_EQ(device_of("c"), "cpu");
    EXPECT_EQ(a->storage, STORAGE_INT32);
    EXPECT_EQ(b->storage, STORAGE_INT32);
    EXPECT_EQ(stats()->bytes_in, 64 * 4);
    EXPECT_EQ(output(0), relu_of_input());
    a->storage = STORAGE_INT8;
    EXPECT_EQ(cvml_graph_run(graph), CVML_ERR_RUNTIME);
    EXPECT_NE(std::string(cvml_last_error()).find("1-byte storage"), std::string::npos)
        << cvml_last_error();
    EXPECT_EQ(stats()->bytes_in, 64 * 4);
    a->storage = STORAGE_INT32;
    ASSERT_EQ(cvml_graph_run(graph), CVML_OK) << cvml_last_error();
    EXPECT_EQ(output(0), relu_of_input());
}

#ifdef CVML_CUDA_PLUGIN
/* The CUDA plugin from CVML_PLUGIN_PATH: on a machine with a GPU its device comes
 * first; without one (CI) the plugin is listed as absent with the reason and graphs
 * still run, on the CPU. Either way the bytes are the CPU's. */
TEST(CudaPlugin, LoadsOrSaysWhyAndGraphsStillRun) {
    std::string dir = CVML_CUDA_PLUGIN;
    dir = dir.substr(0, dir.rfind('/'));
    setenv("CVML_PLUGIN_PATH", dir.c_str(), 1);
    ASSERT_EQ(cvml_init(), CVML_OK) << cvml_last_error();
    unsetenv("CVML_PLUGIN_PATH");
    PluginInfo cuda;
    for (auto& p : plugins())
        if (p.name == "cuda") cuda = p;
    ASSERT_EQ(cuda.name, "cuda");
    bool gpu = device_registry_find("cuda") != nullptr;
    if (gpu) {
        EXPECT_EQ(cuda.loaded, 1);
        EXPECT_EQ(devices()[0], "cuda");
    } else {
        EXPECT_EQ(cuda.loaded, 0);
        EXPECT_NE(cuda.reason.find("CUDA"), std::string::npos) << cuda.reason;
        EXPECT_EQ(devices(), (std::vector<std::string>{"cpu"}));
        // An explicit load says the same.
        EXPECT_EQ(cvml_load_plugin(CVML_CUDA_PLUGIN), CVML_ERR_RUNTIME);
        EXPECT_NE(std::string(cvml_last_error()).find("CUDA"), std::string::npos);
        printf("CUDA plugin absent, as expected without a GPU: %s\n", cuda.reason.c_str());
    }
    cvml_context* ctx = nullptr;
    cvml_graph* g = nullptr;
    ASSERT_EQ(cvml_context_create(&ctx), CVML_OK);
    ASSERT_EQ(cvml_graph_create(ctx, &g), CVML_OK);
    std::vector<int32_t> in(100000), out(in.size());
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<int32_t>(i % 255) - 127;
    int32_t dims[2] = {100, 1000};
    cvml_tensor *x = nullptr, *y = nullptr, *z = nullptr;
    ASSERT_EQ(cvml_graph_add_input(g, "x", 2, dims, 8, &x), CVML_OK);
    ASSERT_EQ(cvml_graph_add_node(g, "relu", "r", nullptr, nullptr, 0, &x, 1, &y, 1), CVML_OK);
    ASSERT_EQ(cvml_graph_add_node(g, "relu", "s", nullptr, nullptr, 0, &y, 1, &z, 1), CVML_OK);
    ASSERT_EQ(cvml_graph_set_outputs(g, &z, 1), CVML_OK);
    ASSERT_EQ(cvml_tensor_set_i32(x, in.data(), in.size()), CVML_OK);
    ASSERT_EQ(cvml_graph_run(g), CVML_OK) << cvml_last_error();
    ASSERT_EQ(cvml_tensor_get_i32(z, out.data(), out.size()), CVML_OK);
    for (size_t i = 0; i < in.size(); ++i) ASSERT_EQ(out[i], in[i] > 0 ? in[i] : 0) << i;
    const char* dev = nullptr;
    ASSERT_EQ(cvml_graph_node_device(g, 1, &dev), CVML_OK);
    if (!gpu) {
        EXPECT_STREQ(dev, "cpu");
    }
    cvml_graph_release(g);
    cvml_context_release(ctx);
    EXPECT_EQ(cvml_release(), CVML_OK);
}
#endif

}  // namespace
