/* The benchmark's ResNet-18 (tools/bench/models.cpp, small input) on the emulated CUDA
 * plugin: the bytes equal the CPU's, and every conv2d (all groups == 1 there) and the
 * dense run on the int8 tensor-core path. The emulator counts, per kernel, the launches
 * that ran mma.sync; one run must launch the implicit GEMM (igemm_s8) once per conv2d
 * and dense node, each launch on tensor cores. MobileNet checks the grouped path too. */
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdio.h>
#include <stdlib.h>

#include <map>
#include <string>
#include <vector>

#include "cvml.h"
#include "emu_setup.h"
#include "models.h"

namespace {

const std::string kPluginDir = CVML_CUDA_EMU_PLUGIN_DIR;

struct KernelCount {
    uint64_t launches = 0, mma_launches = 0, mma_ops = 0;
};

/* The emulated plugin's per-kernel counters (cuda_emu.h), by kernel name. */
std::map<std::string, KernelCount> kernel_counts() {
    std::map<std::string, KernelCount> out;
    void* h = dlopen((kPluginDir + "/libcvml_cuda.so").c_str(), RTLD_NOW | RTLD_NOLOAD);
    EXPECT_NE(h, nullptr) << "the emulated plugin is not loaded";
    if (!h) return out;
    using stat_fn = int (*)(int, const char**, uint64_t*, uint64_t*, uint64_t*);
    using mma_fn = int (*)(int, uint64_t*, uint64_t*);
    auto stat = reinterpret_cast<stat_fn>(dlsym(h, "cvml_cuda_emu_kernel_stat"));
    auto mma = reinterpret_cast<mma_fn>(dlsym(h, "cvml_cuda_emu_kernel_mma"));
    EXPECT_TRUE(stat && mma);
    const char* name = nullptr;
    uint64_t launches, threads, coop;
    for (int i = 0; stat && mma && stat(i, &name, &launches, &threads, &coop); ++i) {
        KernelCount& k = out[name];
        k.launches = launches;
        mma(i, &k.mma_launches, &k.mma_ops);
    }
    dlclose(h);
    return out;
}

using Model = emu_setup::LoadedGraph;

/* Builds the model on `device` ("cuda" with the CPU for what it lacks, or "cpu"). */
void build(const bench::ModelSpec& spec, bool cuda, Model* m) {
    emu_setup::use_devices(cuda, m);
    if (::testing::Test::HasFatalFailure()) return;
    std::string err;
    ASSERT_EQ(bench::build_model(m->ctx, spec, &m->graph, &err), CVML_OK) << err;
    ASSERT_EQ(cvml_graph_prerun(m->graph), CVML_OK) << cvml_last_error();
}

std::vector<int32_t> run(const bench::ModelSpec& spec, Model* m) {
    std::vector<int32_t> in = bench::make_input(m->graph, spec.seed);
    cvml_tensor* t = nullptr;
    EXPECT_EQ(cvml_graph_get_input(m->graph, 0, &t), CVML_OK);
    EXPECT_EQ(cvml_tensor_set_i32(t, in.data(), in.size()), CVML_OK);
    EXPECT_EQ(cvml_graph_run(m->graph), CVML_OK) << cvml_last_error();
    cvml_tensor* o = nullptr;
    EXPECT_EQ(cvml_graph_get_output(m->graph, 0, &o), CVML_OK);
    size_t n = 0;
    cvml_tensor_element_count(o, &n);
    std::vector<int32_t> out(n);
    EXPECT_EQ(cvml_tensor_get_i32(o, out.data(), n), CVML_OK);
    return out;
}

/* Nodes of `op` placed on the CUDA device. */
int nodes_on_cuda(const cvml_graph* g, const char* op) {
    int count = 0, n = 0;
    cvml_graph_node_count(g, &n);
    for (int i = 0; i < n; ++i) {
        const char *name = "", *node_op = "", *device = "";
        cvml_graph_node_info(g, i, &name, &node_op);
        cvml_graph_node_device(g, i, &device);
        count += std::string(node_op) == op && std::string(device) == "cuda";
    }
    return count;
}

struct TensorCores : ::testing::Test {
    void SetUp() override {
        setenv("CVML_PLUGIN_PATH", kPluginDir.c_str(), 1);
        setenv("CVML_CUDA_ISLAND_WORK", "0", 1);
        ASSERT_EQ(cvml_init(), CVML_OK) << cvml_last_error();
    }
    void TearDown() override {
        cvml_release();
        unsetenv("CVML_PLUGIN_PATH");
        unsetenv("CVML_CUDA_ISLAND_WORK");
    }
};

TEST_F(TensorCores, ResNet18RunsEveryConvAndTheDenseOnTensorCores) {
    bench::ModelSpec spec;
    spec.name = "resnet18";
    spec.size = 32;
    Model cpu, gpu;
    build(spec, false, &cpu);
    build(spec, true, &gpu);
    if (HasFatalFailure()) return;
    const std::vector<int32_t> want = run(spec, &cpu);
    {
        void* h = dlopen((kPluginDir + "/libcvml_cuda.so").c_str(), RTLD_NOW | RTLD_NOLOAD);
        auto memory = reinterpret_cast<void (*)(uint64_t*, uint64_t*, uint64_t*, uint64_t*)>(
            h ? dlsym(h, "cvml_cuda_emu_memory") : nullptr);
        uint64_t allocations = 0, bytes = 0, peak = 0, streams = 0;
        if (memory) memory(&allocations, &bytes, &peak, &streams);
        printf("resnet18 prepared: %llu device allocations, %llu bytes live, %llu peak\n",
               static_cast<unsigned long long>(allocations), static_cast<unsigned long long>(bytes),
               static_cast<unsigned long long>(peak));
        if (h) dlclose(h);
    }
    const int convs = nodes_on_cuda(gpu.graph, "conv2d"), dense = nodes_on_cuda(gpu.graph, "dense");
    EXPECT_EQ(convs, 20) << "ResNet-18 has 20 convolutions (17 3x3 or 7x7, 3 1x1 shortcuts)";
    EXPECT_EQ(dense, 1);
    for (int r = 0; r < 2; ++r) {
        const std::map<std::string, KernelCount> before = kernel_counts();
        EXPECT_EQ(run(spec, &gpu), want) << "run " << r;
        std::map<std::string, KernelCount> after = kernel_counts();
        const KernelCount& a = after["igemm_s8"];
        const KernelCount b = before.count("igemm_s8") ? before.at("igemm_s8") : KernelCount();
        EXPECT_EQ(a.launches - b.launches, static_cast<uint64_t>(convs + dense)) << "run " << r;
        EXPECT_EQ(a.mma_launches - b.mma_launches, static_cast<uint64_t>(convs + dense))
            << "run " << r << ": a GEMM launch did not use the tensor cores";
        EXPECT_GT(a.mma_ops, b.mma_ops);
        uint64_t launches = 0;
        for (const auto& k : after)
            launches +=
                k.second.launches - (before.count(k.first) ? before.at(k.first).launches : 0);
        int nodes = 0;
        cvml_graph_node_count(gpu.graph, &nodes);
        printf("resnet18 run %d: %llu kernel launches for %d nodes\n", r,
               static_cast<unsigned long long>(launches), nodes);
        for (const auto& k : after)
            if (k.first != "igemm_s8") {
                EXPECT_EQ(k.second.mma_launches, 0u) << k.first;
            }
    }
}

TEST_F(TensorCores, MobileNetMatchesTheCpuWithItsDepthwiseLayers) {
    bench::ModelSpec spec;
    spec.name = "mobilenet";
    spec.size = 32;
    Model cpu, gpu;
    build(spec, false, &cpu);
    build(spec, true, &gpu);
    if (HasFatalFailure()) return;
    EXPECT_EQ(run(spec, &gpu), run(spec, &cpu));
    const std::map<std::string, KernelCount> k = kernel_counts();
    EXPECT_GT(k.count("conv_grouped") ? k.at("conv_grouped").launches : 0u, 0u);
    EXPECT_GT(k.count("igemm_s8") ? k.at("igemm_s8").mma_launches : 0u, 0u);
}

}  // namespace
