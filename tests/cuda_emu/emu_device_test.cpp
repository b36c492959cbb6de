/* The CUDA device's run-time behaviour through its host emulation (the cvml_cuda_emu
 * build of source/device/cuda): what one run of a graph asks of the CUDA runtime. The
 * model is the benchmark's ResNet-18 (tools/bench/models.cpp) at a small input size, all
 * of it on "cuda"; the emulation's counters (emu/cuda_emu.h) say how many kernels,
 * copies, graph launches and host waits each run took. */
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <string.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "cuda_emu.h"
#include "emu_setup.h"
#include "cvml.h"
#include "models.h"

namespace {

const std::string kPluginDir = emu_setup::plugin_dir();

/* The emulated plugin's exports, found in the loaded plugin. */
struct Emu {
    void (*counts)(cvml_cuda_emu_counts*) = nullptr;
    void (*memory)(uint64_t*, uint64_t*, uint64_t*, uint64_t*) = nullptr;
    const char* (*fault)(void) = nullptr;
    uint64_t (*device_bytes)(int) = nullptr;
    void (*reset_peak)(void) = nullptr;
    uint64_t (*arena_bytes)(void) = nullptr;
};

Emu find_emu() {
    Emu e;
    void* h = dlopen((kPluginDir + "/libcvml_cuda.so").c_str(), RTLD_NOW | RTLD_NOLOAD);
    EXPECT_NE(h, nullptr) << "the emulated plugin is not loaded";
    if (!h) return e;
    e.counts =
        reinterpret_cast<void (*)(cvml_cuda_emu_counts*)>(dlsym(h, "cvml_cuda_emu_counts_get"));
    e.memory = reinterpret_cast<void (*)(uint64_t*, uint64_t*, uint64_t*, uint64_t*)>(
        dlsym(h, "cvml_cuda_emu_memory"));
    e.fault = reinterpret_cast<const char* (*)(void)>(dlsym(h, "cvml_cuda_emu_fault"));
    e.device_bytes = reinterpret_cast<uint64_t (*)(int)>(dlsym(h, "cvml_cuda_emu_device_bytes"));
    e.reset_peak = reinterpret_cast<void (*)(void)>(dlsym(h, "cvml_cuda_emu_reset_peak"));
    e.arena_bytes = reinterpret_cast<uint64_t (*)(void)>(dlsym(h, "cvml_cuda_emu_arena_bytes"));
    dlclose(h);  // still loaded by the library
    EXPECT_TRUE(e.counts && e.memory && e.fault && e.device_bytes && e.reset_peak && e.arena_bytes);
    return e;
}

cvml_cuda_emu_counts counts_now(const Emu& e) {
    cvml_cuda_emu_counts c = {};
    if (e.counts) e.counts(&c);
    return c;
}

/* What happened between two readings of the counters. */
cvml_cuda_emu_counts since(const cvml_cuda_emu_counts& a, const cvml_cuda_emu_counts& b) {
    cvml_cuda_emu_counts d = b;
    d.launches -= a.launches;
    d.copies -= a.copies;
    d.syncs -= a.syncs;
    d.captures -= a.captures;
    d.graph_launches -= a.graph_launches;
    d.graph_kernels -= a.graph_kernels;
    d.graph_copies -= a.graph_copies;
    return d;
}

struct CudaDevice : ::testing::Test {
    void SetUp() override {
        emu_setup::init_with_emulated_plugin();
        if (HasFatalFailure()) return;
        emu = find_emu();
    }
    void TearDown() override {
        EXPECT_EQ(cvml_release(), CVML_OK);
        unsetenv("CVML_PLUGIN_PATH");
        unsetenv("CVML_CUDA_ISLAND_WORK");
    }
    Emu emu;
};

/* A built-in benchmark model on the given devices, prerun. */
struct Model {
    cvml_context* ctx = nullptr;
    cvml_graph* g = nullptr;
    Model(const char* name, int size, const std::vector<const char*>& devices) {
        EXPECT_EQ(cvml_context_create(&ctx), CVML_OK);
        EXPECT_EQ(cvml_context_set_devices(ctx, devices.data(), static_cast<int>(devices.size())),
                  CVML_OK);
        bench::ModelSpec spec;
        spec.name = name;
        spec.size = size;
        std::string error;
        EXPECT_EQ(bench::build_model(ctx, spec, &g, &error), CVML_OK) << error;
        if (g) {
            EXPECT_EQ(cvml_graph_prerun(g), CVML_OK) << cvml_last_error();
        }
    }
    ~Model() {
        if (g) cvml_graph_release(g);
        cvml_context_release(ctx);
    }
    std::vector<int32_t> run(uint32_t seed) {
        std::vector<int32_t> in = bench::make_input(g, seed);
        cvml_tensor *x = nullptr, *y = nullptr;
        EXPECT_EQ(cvml_graph_get_input(g, 0, &x), CVML_OK);
        EXPECT_EQ(cvml_graph_get_output(g, 0, &y), CVML_OK);
        EXPECT_EQ(cvml_tensor_set_i32(x, in.data(), in.size()), CVML_OK);
        EXPECT_EQ(cvml_graph_run(g), CVML_OK) << cvml_last_error();
        size_t n = 0;
        cvml_tensor_element_count(y, &n);
        std::vector<int32_t> out(n);
        EXPECT_EQ(cvml_tensor_get_i32(y, out.data(), n), CVML_OK);
        return out;
    }
    /* Nodes (operators, not variables) and how many of them are on `device`. */
    int nodes_on(const char* device, int* total) {
        int count = 0, on = 0;
        *total = 0;
        cvml_graph_node_count(g, &count);
        for (int i = 0; i < count; ++i) {
            const char *d = "", *name = "", *op = "";
            cvml_graph_node_device(g, i, &d);
            cvml_graph_node_info(g, i, &name, &op);
            if (strcmp(op, "null") == 0) continue;
            ++*total;
            on += strcmp(d, device) == 0;
        }
        return on;
    }
};

/* Issue 17: one launch per run. The first run enqueues its work directly, the second
 * captures it into a CUDA graph, and from then on a run is one graph launch and one host
 * wait: no kernel launch, no copy outside the graph. The bytes are the CPU's every time,
 * with a new input each run. */
TEST_F(CudaDevice, ResNet18ReplaysOneGraphPerRun) {
    Model cpu("resnet18", 32, {"cpu"});
    Model gpu("resnet18", 32, {"cuda"});
    ASSERT_TRUE(cpu.g && gpu.g);
    int total = 0;
    EXPECT_EQ(gpu.nodes_on("cuda", &total), total);
    EXPECT_GT(total, 40);
    uint64_t kernels_per_run = 0;
    for (uint32_t run = 0; run < 4; ++run) {
        SCOPED_TRACE("run " + std::to_string(run));
        const cvml_cuda_emu_counts before = counts_now(emu);
        const std::vector<int32_t> got = gpu.run(run + 1);
        const cvml_cuda_emu_counts d = since(before, counts_now(emu));
        EXPECT_EQ(got, cpu.run(run + 1));
        EXPECT_STREQ(emu.fault(), "");
        EXPECT_EQ(d.syncs, 1u) << "one host wait per run";
        if (run == 0) {
            EXPECT_EQ(d.graph_launches, 0u) << "the first run enqueues its work directly";
            EXPECT_GT(d.launches, 20u) << "at least the 20 convolutions and the dense";
            kernels_per_run = d.launches;
            continue;
        }
        EXPECT_EQ(d.captures, run == 1 ? 1u : 0u) << "captured once, at the second run";
        EXPECT_EQ(d.graph_launches, 1u);
        EXPECT_EQ(d.launches, 0u) << "every kernel inside the graph";
        // The input is narrowed to int8 and copied as it is staged, ahead of the graph
        // on its stream (one part: it is small); the widening and the output's copy are
        // inside the graph.
        EXPECT_EQ(d.copies, 1u) << "the narrow input's copy, at staging";
        EXPECT_EQ(d.graph_kernels, kernels_per_run) << "the first run's kernels, replayed";
        EXPECT_EQ(d.graph_copies, 1u) << "one output out";
        printf("run %u: 1 graph launch of %llu kernels and %llu copies, %llu host wait\n", run,
               static_cast<unsigned long long>(d.graph_kernels),
               static_cast<unsigned long long>(d.graph_copies),
               static_cast<unsigned long long>(d.syncs));
    }
}

/* The staging buffers, graphs and streams go with the graph. */
TEST_F(CudaDevice, ReleasingAGraphFreesItsStagingAndCudaGraph) {
    const cvml_cuda_emu_counts before = counts_now(emu);
    {
        Model gpu("resnet18", 32, {"cuda"});
        ASSERT_TRUE(gpu.g);
        gpu.run(1);
        gpu.run(2);
        const cvml_cuda_emu_counts during = counts_now(emu);
        EXPECT_EQ(during.host_allocations, before.host_allocations + 2) << "input and output";
        EXPECT_EQ(during.graph_execs, before.graph_execs + 1);
    }
    const cvml_cuda_emu_counts after = counts_now(emu);
    EXPECT_EQ(after.host_allocations, before.host_allocations);
    EXPECT_EQ(after.graph_execs, before.graph_execs);
    EXPECT_EQ(after.graphs, before.graphs);
    uint64_t allocations = 0, bytes = 0, peak = 0, streams = 0;
    emu.memory(&allocations, &bytes, &peak, &streams);
    EXPECT_EQ(allocations, 0u);
    EXPECT_EQ(streams, 0u);
}

/* Issue 17, tooling: a profiled run reports each node's GPU time from CUDA events
 * (cvml_graph_node_time; cvml run --profile and cvml bench --profile print it). Every
 * convolution and the dense get a time; fused nodes none (theirs is their head's); the
 * sum is within the run's wall time and most of it (the emulated kernels dominate);
 * still one host wait, and the CPU's bytes. */
TEST_F(CudaDevice, AProfiledRunGivesEachNodeItsGpuTime) {
    Model cpu("resnet18", 32, {"cpu"});
    Model gpu("resnet18", 32, {"cuda"});
    ASSERT_TRUE(cpu.g && gpu.g);
    gpu.run(1);
    ASSERT_EQ(cvml_graph_set_profiling(gpu.g, 1), CVML_OK);
    const cvml_cuda_emu_counts before = counts_now(emu);
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<int32_t> got = gpu.run(2);
    const double wall_ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    const cvml_cuda_emu_counts d = since(before, counts_now(emu));
    EXPECT_EQ(got, cpu.run(2));
    EXPECT_EQ(d.syncs, 1u);
    EXPECT_EQ(d.graph_launches, 0u) << "a profiled run is enqueued directly, between events";
    int count = 0, timed = 0, heavy = 0;
    double sum = 0;
    cvml_graph_node_count(gpu.g, &count);
    for (int i = 0; i < count; ++i) {
        const char *name = "", *op = "";
        cvml_graph_node_info(gpu.g, i, &name, &op);
        uint64_t ns = 0;
        ASSERT_EQ(cvml_graph_node_time(gpu.g, i, &ns), CVML_OK);
        sum += static_cast<double>(ns);
        timed += ns > 0;
        if (strcmp(op, "conv2d") == 0 || strcmp(op, "dense") == 0) {
            ++heavy;
            EXPECT_GT(ns, 0u) << name;
        }
    }
    EXPECT_EQ(heavy, 21);
    EXPECT_GE(timed, heavy);
    EXPECT_LE(sum, wall_ns);
    EXPECT_GE(sum, 0.5 * wall_ns) << "the kernels are most of an emulated run";
    printf("profiled run: %d nodes timed, %.1f ms of %.1f ms wall\n", timed, sum / 1e6,
           wall_ns / 1e6);
    // Profiling off: the next runs replay the graph again.
    ASSERT_EQ(cvml_graph_set_profiling(gpu.g, 0), CVML_OK);
    const cvml_cuda_emu_counts again = counts_now(emu);
    EXPECT_EQ(gpu.run(3), cpu.run(3));
    EXPECT_EQ(since(again, counts_now(emu)).graph_launches, 1u);
}

/* The bytes of the graph's parameters as the GPU needs them: int8 where their precision
 * is at most 8 (weights, packed), int32 otherwise (biases). */
uint64_t parameter_bytes(cvml_graph* g, uint64_t* as_int32) {
    int count = 0;
    uint64_t bytes = 0;
    *as_int32 = 0;
    cvml_graph_tensor_count(g, &count);
    for (int i = 0; i < count; ++i) {
        cvml_tensor* t = nullptr;
        int is_const = 0, precision = 32;
        size_t n = 0;
        if (cvml_graph_get_tensor(g, i, &t) || cvml_tensor_is_const(t, &is_const) || !is_const)
            continue;
        cvml_tensor_element_count(t, &n);
        cvml_tensor_precision(t, &precision);
        bytes += n * (precision <= 8 ? 1 : 4);
        *as_int32 += n * 4;
    }
    return bytes;
}

/* Issue 17, device memory: ResNet-18 holds at most 1.3 x (its int8 weights + the arena of
 * its intermediate tensors) on the GPU, at its peak from prerun through captured runs:
 * the int32 copies of the packed weights are never on the device. */
TEST_F(CudaDevice, ResNet18HoldsLittleMoreThanItsInt8WeightsAndArena) {
    uint64_t allocations = 0, live = 0, peak = 0, streams = 0;
    emu.memory(&allocations, &live, &peak, &streams);
    const uint64_t before = live;
    emu.reset_peak();
    Model cpu("resnet18", 32, {"cpu"});
    Model gpu("resnet18", 32, {"cuda"});
    ASSERT_TRUE(gpu.g);
    for (uint32_t r = 1; r <= 3; ++r) EXPECT_EQ(gpu.run(r), cpu.run(r));
    const uint64_t arena = emu.arena_bytes();
    uint64_t int32_params = 0;
    const uint64_t params = parameter_bytes(gpu.g, &int32_params);
    emu.memory(&allocations, &live, &peak, &streams);
    const double held = static_cast<double>(peak - before);
    const double bound = 1.3 * static_cast<double>(params + arena);
    printf(
        "device memory: peak %.2f MB; int8 weights (+ int32 biases) %.2f MB, arena %.2f MB, "
        "bound %.2f MB; the parameters as int32 would be %.2f MB\n",
        held / 1e6, static_cast<double>(params) / 1e6, static_cast<double>(arena) / 1e6,
        bound / 1e6, static_cast<double>(int32_params) / 1e6);
    EXPECT_GT(arena, 0u);
    EXPECT_LE(held, bound);
}

/* ---- several GPUs ------------------------------------------------------------------ */

/* The library with the emulated plugin on two emulated GPUs; `default_gpu` is what
 * CVML_CUDA_DEVICE says ("" : unset). */
struct TwoGpus : ::testing::Test {
    void start(const char* default_gpu) {
        setenv("CVML_PLUGIN_PATH", kPluginDir.c_str(), 1);
        setenv("CVML_CUDA_ISLAND_WORK", "0", 1);
        setenv("CVML_CUDA_EMU_DEVICES", "2", 1);
        if (default_gpu[0]) setenv("CVML_CUDA_DEVICE", default_gpu, 1);
        ASSERT_EQ(cvml_init(), CVML_OK) << cvml_last_error();
        started = true;
    }
    void TearDown() override {
        if (started) {
            EXPECT_EQ(cvml_release(), CVML_OK);
        }
        unsetenv("CVML_PLUGIN_PATH");
        unsetenv("CVML_CUDA_ISLAND_WORK");
        unsetenv("CVML_CUDA_EMU_DEVICES");
        unsetenv("CVML_CUDA_DEVICE");
    }
    static std::vector<std::string> device_names() {
        std::vector<std::string> names;
        const char *name = "", *version = "";
        for (int i = 0; cvml_device_info(i, &name, &version) == CVML_OK; ++i) names.push_back(name);
        return names;
    }
    bool started = false;
};

/* Issue 17, devices: with several GPUs each is also a device of its own, "cuda:K"; a
 * context that names "cuda:1" places its graph on GPU 1 (all its memory there, none on
 * GPU 0), and the graph runs there from whichever thread runs it (the emulator faults a
 * kernel launched on another GPU's stream or reading another GPU's memory). */
TEST_F(TwoGpus, AContextNamingCuda1PlacesItsGraphOnGpu1ForEveryThread) {
    start("");
    EXPECT_EQ(device_names(), (std::vector<std::string>{"cuda", "cuda:0", "cuda:1", "cpu"}));
    Emu emu = find_emu();
    ASSERT_TRUE(emu.device_bytes);
    const uint64_t gpu0 = emu.device_bytes(0), gpu1 = emu.device_bytes(1);
    Model cpu("resnet18", 32, {"cpu"});
    std::vector<int32_t> want[3];
    for (uint32_t r = 0; r < 3; ++r) want[r] = cpu.run(r + 1);
    {
        Model gpu("resnet18", 32, {"cuda:1"});
        ASSERT_TRUE(gpu.g);
        int total = 0;
        EXPECT_EQ(gpu.nodes_on("cuda:1", &total), total);
        EXPECT_GT(emu.device_bytes(1), gpu1) << "weights and arena on GPU 1";
        EXPECT_EQ(emu.device_bytes(0), gpu0) << "nothing on GPU 0";
        EXPECT_EQ(gpu.run(1), want[0]);
        // Runs 2 (captured) and 3 (replayed) from threads that never chose a GPU.
        for (uint32_t r = 1; r < 3; ++r) {
            std::vector<int32_t> got;
            std::thread([&] { got = gpu.run(r + 1); }).join();
            EXPECT_EQ(got, want[r]) << "run " << r + 1;
        }
        EXPECT_STREQ(emu.fault(), "");
    }
    EXPECT_EQ(emu.device_bytes(1), gpu1) << "released";
}

/* CVML_CUDA_DEVICE picks the GPU of the device "cuda", for every thread. */
TEST_F(TwoGpus, CvmlCudaDeviceChoosesTheGpuOfCuda) {
    start("1");
    Emu emu = find_emu();
    ASSERT_TRUE(emu.device_bytes);
    const uint64_t gpu0 = emu.device_bytes(0);
    Model cpu("resnet18", 32, {"cpu"});
    Model gpu("resnet18", 32, {"cuda"});
    ASSERT_TRUE(gpu.g);
    EXPECT_GT(emu.device_bytes(1), 0u);
    EXPECT_EQ(emu.device_bytes(0), gpu0);
    std::vector<int32_t> got;
    std::thread([&] { got = gpu.run(7); }).join();
    EXPECT_EQ(got, cpu.run(7));
    EXPECT_STREQ(emu.fault(), "");
}

/* A GPU that is not there, or not a number, is refused with the reason: the CPU runs. */
TEST_F(TwoGpus, ACvmlCudaDeviceOutsideTheGpusIsRefused) {
    for (const char* bad : {"2", "-1", "one", ""}) {
        SCOPED_TRACE(bad);
        setenv("CVML_CUDA_DEVICE", bad, 1);
        start(bad[0] ? bad : "x");
        EXPECT_EQ(device_names(), std::vector<std::string>{"cpu"});
        EXPECT_EQ(cvml_release(), CVML_OK);
        started = false;
    }
}

}  // namespace
