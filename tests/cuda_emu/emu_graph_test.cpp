/* The CUDA host emulation's streams as the CUDA device uses them: capture into a graph
 * and replay, pinned host memory, events, and several devices with one current per host
 * thread. Linked into cvml_cuda_emu_runtime_tests (with emu_runtime_test.cpp). */
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "cuda_emu.h"
#include "cuda_kernel.h"

namespace {

struct EmuStreams : ::testing::Test {
    void SetUp() override {
        unsetenv("CVML_CUDA_EMU_DEVICES");
        cuda_emu::reset_fault();
        cudaSetDevice(0);
    }
    void TearDown() override {
        unsetenv("CVML_CUDA_EMU_DEVICES");
        cudaSetDevice(0);
        cvml_cuda_emu_counts c = {};
        cvml_cuda_emu_counts_get(&c);
        EXPECT_EQ(c.host_allocations, 0u) << "a test leaked pinned memory";
        EXPECT_EQ(c.graphs + c.graph_execs + c.events, 0u) << "a test leaked a handle";
    }
};

__global__ void add_one(int32_t* x, int n) {
    const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) x[i] += 1;
}

__global__ void twice(const int32_t* x, int32_t* y, int n) {
    const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) y[i] = 2 * x[i];
}

cvml_cuda_emu_counts counts() {
    cvml_cuda_emu_counts c = {};
    cvml_cuda_emu_counts_get(&c);
    return c;
}

/* A captured run does nothing until launched; each launch replays the copies and
 * kernels in order, reading the pinned input as it is at the launch. */
TEST_F(EmuStreams, ACapturedGraphReplaysItsWorkInOrderAtEachLaunch) {
    const int n = 64;
    cudaStream_t s = nullptr;
    ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    void *hin = nullptr, *hout = nullptr, *dx = nullptr, *dy = nullptr;
    ASSERT_EQ(cudaHostAlloc(&hin, n * 4, cudaHostAllocDefault), cudaSuccess);
    ASSERT_EQ(cudaHostAlloc(&hout, n * 4, cudaHostAllocDefault), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dx, n * 4), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dy, n * 4), cudaSuccess);
    int32_t* in = static_cast<int32_t*>(hin);
    int32_t* out = static_cast<int32_t*>(hout);
    for (int i = 0; i < n; ++i) in[i] = i, out[i] = -1;

    const cvml_cuda_emu_counts before = counts();
    ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    EXPECT_EQ(cudaStreamIsCapturing(s, &status), cudaSuccess);
    EXPECT_EQ(status, cudaStreamCaptureStatusActive);
    EXPECT_EQ(cudaMemcpyAsync(dx, hin, n * 4, cudaMemcpyHostToDevice, s), cudaSuccess);
    CUDA_LAUNCH(add_one, 1, n, s, static_cast<int32_t*>(dx), n);
    CUDA_LAUNCH(twice, 1, n, s, static_cast<const int32_t*>(dx), static_cast<int32_t*>(dy), n);
    EXPECT_EQ(cudaMemcpyAsync(hout, dy, n * 4, cudaMemcpyDeviceToHost, s), cudaSuccess);
    cudaGraph_t graph = nullptr;
    ASSERT_EQ(cudaStreamEndCapture(s, &graph), cudaSuccess);
    EXPECT_EQ(out[0], -1) << "capture ran the work";
    cudaGraphExec_t exec = nullptr;
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess) << "the instance outlives its graph";

    for (int round = 0; round < 3; ++round) {
        for (int i = 0; i < n; ++i) in[i] = i * (round + 1);
        ASSERT_EQ(cudaGraphLaunch(exec, s), cudaSuccess);
        ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
        for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], 2 * (i * (round + 1) + 1)) << round;
    }
    cvml_cuda_emu_counts after = counts();
    EXPECT_EQ(after.captures - before.captures, 1u);
    EXPECT_EQ(after.graph_launches - before.graph_launches, 3u);
    EXPECT_EQ(after.graph_kernels - before.graph_kernels, 6u);
    EXPECT_EQ(after.graph_copies - before.graph_copies, 6u);
    EXPECT_EQ(after.launches - before.launches, 0u);
    EXPECT_EQ(after.copies - before.copies, 0u);
    EXPECT_EQ(after.syncs - before.syncs, 3u);

    EXPECT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
    EXPECT_EQ(cudaGraphExecDestroy(exec), cudaErrorInvalidResourceHandle);
    EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidResourceHandle);
    EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "not sticky";
    cudaFree(dx);
    cudaFree(dy);
    cudaFreeHost(hin);
    cudaFreeHost(hout);
    cudaStreamDestroy(s);
}

/* A memset on a captured stream runs at each replay, not at the capture. */
TEST_F(EmuStreams, ACapturedMemsetRunsAtEachReplay) {
    const int n = 32;
    cudaStream_t s = nullptr;
    ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    void* d = nullptr;
    ASSERT_EQ(cudaMalloc(&d, n * 4), cudaSuccess);
    ASSERT_EQ(cudaMemset(d, 0, n * 4), cudaSuccess);
    ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    EXPECT_EQ(cudaMemsetAsync(d, 0, n * 4, s), cudaSuccess);
    CUDA_LAUNCH(add_one, 1, n, s, static_cast<int32_t*>(d), n);
    cudaGraph_t graph = nullptr;
    ASSERT_EQ(cudaStreamEndCapture(s, &graph), cudaSuccess);
    cudaGraphExec_t exec = nullptr;
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    std::vector<int32_t> h(n, -1);
    for (int round = 0; round < 2; ++round) {
        ASSERT_EQ(cudaMemset(d, 0x7f, n * 4), cudaSuccess);
        ASSERT_EQ(cudaGraphLaunch(exec, s), cudaSuccess);
        ASSERT_EQ(cudaMemcpy(h.data(), d, n * 4, cudaMemcpyDeviceToHost), cudaSuccess);
        EXPECT_EQ(h, std::vector<int32_t>(n, 1)) << "round " << round;
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaFree(d);
    cudaStreamDestroy(s);
}

/* A call that may wait for the device is refused while the thread captures, and the
 * capture then ends in an error, as on a GPU; other threads may allocate while one
 * captures in thread-local mode, not in global mode. */
TEST_F(EmuStreams, SynchronisingDuringACaptureInvalidatesIt) {
    cudaStream_t s = nullptr;
    ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    EXPECT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaErrorIllegalState);
    cudaError_t other = cudaErrorLaunchFailure;
    std::thread([&] {
        void* p = nullptr;
        other = cudaMalloc(&p, 16);
        cudaFree(p);
    }).join();
    EXPECT_EQ(other, cudaSuccess) << "thread-local capture blocks only its own thread";
    EXPECT_EQ(cudaStreamSynchronize(s), cudaErrorStreamCaptureUnsupported);
    void* p = nullptr;
    EXPECT_EQ(cudaMalloc(&p, 16), cudaErrorStreamCaptureUnsupported);
    cudaGraph_t graph = nullptr;
    EXPECT_EQ(cudaStreamEndCapture(s, &graph), cudaErrorStreamCaptureInvalidated);
    EXPECT_EQ(graph, nullptr);

    ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    std::thread([&] { other = cudaMalloc(&p, 16); }).join();
    EXPECT_EQ(other, cudaErrorStreamCaptureUnsupported) << "global capture blocks every thread";
    EXPECT_EQ(cudaStreamEndCapture(s, &graph), cudaSuccess);
    EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
    EXPECT_EQ(cudaStreamDestroy(s), cudaSuccess);
    cudaGetLastError();
    EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "capture errors are not sticky";
}

/* Events time the work between them; recorded inside a graph they time each replay. */
TEST_F(EmuStreams, EventsTimeTheWorkBetweenThem) {
    const int n = 1 << 16;
    void* d = nullptr;
    ASSERT_EQ(cudaMalloc(&d, n * 4), cudaSuccess);
    cudaStream_t s = nullptr;
    ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    cudaEvent_t a = nullptr, b = nullptr;
    ASSERT_EQ(cudaEventCreate(&a), cudaSuccess);
    ASSERT_EQ(cudaEventCreate(&b), cudaSuccess);
    float ms = -1;
    EXPECT_EQ(cudaEventElapsedTime(&ms, a, b), cudaErrorInvalidResourceHandle) << "not recorded";
    cudaGetLastError();
    ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    EXPECT_EQ(cudaEventRecord(a, s), cudaSuccess);
    CUDA_LAUNCH(add_one, n / 256, 256, s, static_cast<int32_t*>(d), n);
    EXPECT_EQ(cudaEventRecord(b, s), cudaSuccess);
    cudaGraph_t graph = nullptr;
    ASSERT_EQ(cudaStreamEndCapture(s, &graph), cudaSuccess);
    cudaGraphExec_t exec = nullptr;
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph), cudaSuccess);
    EXPECT_EQ(cudaEventElapsedTime(&ms, a, b), cudaErrorInvalidResourceHandle)
        << "a captured record executes at the launch";
    cudaGetLastError();
    ASSERT_EQ(cudaGraphLaunch(exec, s), cudaSuccess);
    EXPECT_EQ(cudaEventSynchronize(b), cudaSuccess);
    ASSERT_EQ(cudaEventElapsedTime(&ms, a, b), cudaSuccess);
    EXPECT_GT(ms, 0.0f) << "65536 emulated threads take time";
    EXPECT_LT(ms, 60000.0f);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    cudaStreamDestroy(s);
    cudaFree(d);
}

/* With two devices: memory and streams belong to the device current when they were
 * made, each host thread has its own current device (0 until it sets one), and a kernel
 * may run only on its stream's device, with that device's memory. */
TEST_F(EmuStreams, EachThreadHasItsCurrentDeviceAndKernelsStayOnTheirs) {
    setenv("CVML_CUDA_EMU_DEVICES", "2", 1);
    ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
    int current = -1;
    EXPECT_EQ(cudaGetDevice(&current), cudaSuccess);
    EXPECT_EQ(current, 1);
    std::thread([&] { cudaGetDevice(&current); }).join();
    EXPECT_EQ(current, 0) << "a new thread starts on device 0";
    void* on1 = nullptr;
    ASSERT_EQ(cudaMalloc(&on1, 256), cudaSuccess);
    EXPECT_EQ(cvml_cuda_emu_device_bytes(1), 256u);
    EXPECT_EQ(cvml_cuda_emu_device_bytes(0), 0u);
    cudaStream_t s1 = nullptr;
    ASSERT_EQ(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), cudaSuccess);
    CUDA_LAUNCH(add_one, 1, 64, s1, static_cast<int32_t*>(on1), 64);
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);

    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    CUDA_LAUNCH(add_one, 1, 64, s1, static_cast<int32_t*>(on1), 64);
    EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidResourceHandle)
        << "a stream of device 1 while device 0 is current";
    EXPECT_EQ(cudaSetDevice(2), cudaErrorInvalidDevice);
    cudaGetLastError();
    CUDA_LAUNCH(add_one, 1, 64, nullptr, static_cast<int32_t*>(on1), 64);
    EXPECT_EQ(cudaGetLastError(), cudaErrorIllegalAddress) << "memory of device 1 on device 0";
    EXPECT_NE(std::string(cvml_cuda_emu_fault()).find("device 1"), std::string::npos);
    cuda_emu::reset_fault();
    cudaSetDevice(1);
    EXPECT_EQ(cudaStreamDestroy(s1), cudaSuccess);
    EXPECT_EQ(cudaFree(on1), cudaSuccess);
}

}  // namespace
