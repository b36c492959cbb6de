/* The CUDA host emulation itself (source/device/cuda/emu): its indices, launch checks,
 * barriers, warp shuffles, memory and error rules, with small kernels written as the
 * plugin's are (CUDA_LAUNCH). The plugin's kernels rely on all of it being CUDA's. */
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "cuda_emu.h"
#include "cuda_kernel.h"
#include "fiber_switch.h"
#include "mma.cuh"

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

namespace {

/* Runs with both thread orders where the test loops over this. */
const char* const kOrders[] = {"forward", "reverse"};

struct Emu : ::testing::Test {
    void SetUp() override {
        unsetenv("CVML_CUDA_EMU_ORDER");
        unsetenv("CVML_CUDA_EMU_DEVICES");
        unsetenv("CVML_CUDA_EMU_MEMORY");
        cuda_emu::reset_fault();
    }
    void TearDown() override {
        SetUp();
        uint64_t allocations, bytes, peak, streams;
        cvml_cuda_emu_memory(&allocations, &bytes, &peak, &streams);
        EXPECT_EQ(allocations, 0u) << "a test leaked device memory";
        EXPECT_EQ(streams, 0u);
    }
};

/* Device buffers of int32 that free themselves. */
struct Buffer {
    int32_t* p = nullptr;
    size_t n;
    explicit Buffer(size_t count) : n(count) {
        void* v = nullptr;
        EXPECT_EQ(cudaMalloc(&v, n * sizeof(int32_t)), cudaSuccess);
        p = static_cast<int32_t*>(v);
    }
    ~Buffer() { cudaFree(p); }
    std::vector<int32_t> get() const {
        std::vector<int32_t> h(n);
        EXPECT_EQ(cudaMemcpy(h.data(), p, n * sizeof(int32_t), cudaMemcpyDeviceToHost),
                  cudaSuccess);
        return h;
    }
    void set(const std::vector<int32_t>& h) {
        EXPECT_EQ(cudaMemcpy(p, h.data(), n * sizeof(int32_t), cudaMemcpyHostToDevice),
                  cudaSuccess);
    }
};

/* ---- kernels -------------------------------------------------------------------------- */

/* Each thread writes what it sees of its indices at its global linear index. */
__global__ void indices_kernel(int32_t* out) {
    const unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    const unsigned per_block = blockDim.x * blockDim.y * blockDim.z;
    int32_t* o = out + 4 * (b * per_block + t);
    o[0] = static_cast<int32_t>(b);
    o[1] = static_cast<int32_t>(t);
    o[2] = static_cast<int32_t>(per_block);
    o[3] = static_cast<int32_t>(gridDim.x * gridDim.y * gridDim.z);
}

__global__ void set_flag(int32_t* flag) {
    *flag = 1;
}

/* A block-wide tree sum in shared memory: wrong without a real __syncthreads. */
__global__ void block_sum(const int32_t* x, int32_t* y) {
    __shared__ int32_t part[1024];
    const unsigned t = threadIdx.x;
    part[t] = x[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
        if (t < half) part[t] += part[t + half];
        __syncthreads();
    }
    if (t == 0) y[blockIdx.x] = part[0];
}

/* out[t] = the shuffle of (lane * 10 + warp) by delta within width. */
__global__ void shuffle_kernel(int32_t* out, unsigned delta, int width) {
    const unsigned t = threadIdx.x;
    const int32_t v = static_cast<int32_t>((t % 32) * 10 + t / 32);
    out[t] = __shfl_down_sync(0xffffffffu, v, delta, width);
}

/* Warp w folds w + 1 values: the warps of one block shuffle different numbers of
 * times, as the plugin's reduce does. */
__global__ void uneven_warps(int32_t* out) {
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (unsigned k = 0; k <= warp; ++k) {
        int32_t v = static_cast<int32_t>(lane + k);
        for (unsigned off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
        if (lane == 0) out[warp * 8 + k] = v;
    }
}

/* Threads past `live` leave before the barrier the others wait at. */
__global__ void divergent_sync(int32_t* out, unsigned live) {
    if (threadIdx.x >= live) return;
    __syncthreads();
    out[threadIdx.x] = 1;
}

__global__ void divergent_shuffle(int32_t* out, unsigned live) {
    if (threadIdx.x >= live) return;
    out[threadIdx.x] = __shfl_down_sync(0xffffffffu, 1, 1);
}

__global__ void shuffle_with_mask(int32_t* out, unsigned mask) {
    out[threadIdx.x] = __shfl_down_sync(mask, 1, 1);
}

__global__ void read_host(const int32_t* x, int32_t* y) {
    y[threadIdx.x] = x[threadIdx.x];
}

/* ---- launches ----------------------------------------------------------------------------- */

/* One warp: D = A (16x32 int8, row-major bytes) x B (32x8 int8, column n's 32 bytes
 * contiguous) + C, `steps` times accumulating (C then holds D), with each lane loading
 * its fragments by the layout mma.cuh documents. */
__global__ void mma_kernel(const int32_t* a_words, const int32_t* b_words, const int32_t* c,
                           int32_t* d, int steps) {
    const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    uint32_t a[4], b[2];
    a[0] = static_cast<uint32_t>(a_words[g * 8 + t]);
    a[1] = static_cast<uint32_t>(a_words[(g + 8) * 8 + t]);
    a[2] = static_cast<uint32_t>(a_words[g * 8 + 4 + t]);
    a[3] = static_cast<uint32_t>(a_words[(g + 8) * 8 + 4 + t]);
    b[0] = static_cast<uint32_t>(b_words[g * 8 + t]);
    b[1] = static_cast<uint32_t>(b_words[g * 8 + 4 + t]);
    int32_t acc[4] = {c[g * 8 + 2 * t], c[g * 8 + 2 * t + 1], c[(g + 8) * 8 + 2 * t],
                      c[(g + 8) * 8 + 2 * t + 1]};
    for (int s = 0; s < steps; ++s) mma_s8_m16n8k32(acc, a, b, acc);
    d[g * 8 + 2 * t] = acc[0];
    d[g * 8 + 2 * t + 1] = acc[1];
    d[(g + 8) * 8 + 2 * t] = acc[2];
    d[(g + 8) * 8 + 2 * t + 1] = acc[3];
}

/* Four 8x16-byte matrices in shared memory, row r of matrix j holding bytes
 * 16 * (8 j + r) + 0..15; lane 8 j + i passes row i of matrix j; out[lane][j] is
 * what the lane gets. */
__global__ void ldmatrix_kernel(int32_t* out) {
    __shared__ __align__(16) unsigned char rows[32 * 16];
    const int lane = threadIdx.x;
    for (int b = 0; b < 16; ++b) rows[lane * 16 + b] = static_cast<unsigned char>(lane * 16 + b);
    __syncthreads();
    uint32_t r[4];
    ldmatrix_x4(r, rows + lane * 16);
    for (int j = 0; j < 4; ++j) out[lane * 4 + j] = static_cast<int32_t>(r[j]);
}

/* Each thread copies 16 bytes of src (or zeros where it is odd) by cp.async and reports
 * its shared words before the wait and after it. */
__global__ void cp_async_kernel(const int32_t* src, int32_t* before, int32_t* after) {
    __shared__ __align__(16) int32_t buf[32 * 4];
    const int t = threadIdx.x;
    for (int k = 0; k < 4; ++k) buf[t * 4 + k] = -1;
    cp_async_zfill<16>(buf + t * 4, src + t * 4, t % 2 == 0);
    cp_async_commit();
    before[t] = buf[t * 4];
    cp_async_wait<0>();
    after[t] = buf[t * 4 + 1];
}

__global__ void cp_async_never_waited(const int32_t* src) {
    __shared__ __align__(16) int32_t buf[4];
    cp_async_zfill<4>(buf, src, true);
    cp_async_commit();
}

/* A warp with a lane missing cannot meet at mma.sync. */
__global__ void mma_partial_warp(int32_t* d) {
    uint32_t a[4] = {}, b[2] = {};
    int32_t acc[4] = {};
    mma_s8_m16n8k32(acc, a, b, acc);
    d[threadIdx.x] = acc[0];
}

/* The fiber switch under the launch engine: two contexts handing control back and forth
 * a hundred thousand times, each with integer and floating-point values live in
 * registers across every switch, end with the values a plain loop computes. */
struct PingPong {
    cuda_emu::fiber_context main, other;
    uint64_t fiber_sum = 0;
    double fiber_product = 0;
};
PingPong* g_ping_pong;

void ping_pong_fiber() {
    PingPong& p = *g_ping_pong;
    uint64_t sum = 1;
    double product = 1.5;
    for (uint64_t i = 0;; ++i) {
        sum = sum * 31 + i;
        product = product * 1.000001 + 0.5;
        p.fiber_sum = sum;
        p.fiber_product = product;
        cuda_emu::fiber_context_switch(&p.other, &p.main);
    }
}

TEST(FiberSwitch, RegistersSurviveEverySwitchBothWays) {
    constexpr int kSwitches = 100000;
    PingPong p;
    g_ping_pong = &p;
    std::vector<char> stack(64 * 1024);
    cuda_emu::fiber_context_init(&p.other, stack.data(), stack.size(), ping_pong_fiber);
    uint64_t sum = 7, want_fiber_sum = 1, want_sum = 7;
    double product = 2.25, want_fiber_product = 1.5, want_product = 2.25;
    for (int i = 0; i < kSwitches; ++i) {
        sum = sum * 3 + static_cast<uint64_t>(i);
        product = product * 0.999 + 1;
        cuda_emu::fiber_context_switch(&p.main, &p.other);
    }
    for (int i = 0; i < kSwitches; ++i) {
        want_fiber_sum = want_fiber_sum * 31 + static_cast<uint64_t>(i);
        want_fiber_product = want_fiber_product * 1.000001 + 0.5;
        want_sum = want_sum * 3 + static_cast<uint64_t>(i);
        want_product = want_product * 0.999 + 1;
    }
    EXPECT_EQ(p.fiber_sum, want_fiber_sum);
    EXPECT_EQ(p.fiber_product, want_fiber_product);
    EXPECT_EQ(sum, want_sum);
    EXPECT_EQ(product, want_product);
}

TEST_F(Emu, EveryThreadRunsOnceWithItsIndices) {
    for (const char* order : kOrders) {
        SCOPED_TRACE(order);
        setenv("CVML_CUDA_EMU_ORDER", order, 1);
        const dim3 grid(3, 2, 2), block(4, 3, 2);
        const size_t threads = 12 * 24;
        Buffer out(4 * threads);
        out.set(std::vector<int32_t>(4 * threads, -1));
        CUDA_LAUNCH(indices_kernel, grid, block, nullptr, out.p);
        ASSERT_EQ(cudaGetLastError(), cudaSuccess);
        const std::vector<int32_t> h = out.get();
        for (size_t i = 0; i < threads; ++i) {
            ASSERT_EQ(h[4 * i], static_cast<int32_t>(i / 24)) << i;
            ASSERT_EQ(h[4 * i + 1], static_cast<int32_t>(i % 24)) << i;
            ASSERT_EQ(h[4 * i + 2], 24);
            ASSERT_EQ(h[4 * i + 3], 12);
        }
    }
}

TEST_F(Emu, LaunchesOutsideCudasLimitsFailWithoutRunning) {
    const struct {
        dim3 grid, block;
    } bad[] = {
        {dim3(1), dim3(1025)},        {dim3(1), dim3(32, 33)},   {dim3(1), dim3(1, 1, 65)},
        {dim3(0), dim3(1)},           {dim3(1), dim3(0)},        {dim3(1, 65536), dim3(1)},
        {dim3(1, 1, 65536), dim3(1)}, {dim3(1u << 31), dim3(1)},
    };
    Buffer flag(1);
    for (const auto& b : bad) {
        flag.set({0});
        CUDA_LAUNCH(set_flag, b.grid, b.block, nullptr, flag.p);
        EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration)
            << b.grid.x << "," << b.grid.y << "," << b.grid.z << " / " << b.block.x << ","
            << b.block.y << "," << b.block.z;
        EXPECT_EQ(flag.get()[0], 0) << "an invalid launch ran";
    }
    // Not sticky: the error was returned once, and the next launch runs.
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
    CUDA_LAUNCH(set_flag, dim3(1, 65535), dim3(1), nullptr, flag.p);
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
    EXPECT_EQ(flag.get()[0], 1);
    flag.set({0});
    CUDA_LAUNCH(set_flag, 1, dim3(16, 16, 4), nullptr, flag.p);
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
    EXPECT_EQ(flag.get()[0], 1);
}

TEST_F(Emu, LaunchOnADestroyedStreamFails) {
    cudaStream_t s = nullptr;
    ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    Buffer flag(1);
    flag.set({0});
    CUDA_LAUNCH(set_flag, 1, 1, s, flag.p);
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
    EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    ASSERT_EQ(cudaStreamDestroy(s), cudaSuccess);
    EXPECT_EQ(cudaStreamDestroy(s), cudaErrorInvalidResourceHandle);
    CUDA_LAUNCH(set_flag, 1, 1, s, flag.p);
    EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidResourceHandle);
    EXPECT_EQ(cudaStreamSynchronize(s), cudaErrorInvalidResourceHandle);
}

TEST_F(Emu, AHostPointerArgumentIsAStickyFault) {
    std::vector<int32_t> host(32, 7);
    Buffer y(32);
    CUDA_LAUNCH(read_host, 1, 32, nullptr, host.data(), y.p);
    EXPECT_EQ(cudaGetLastError(), cudaErrorIllegalAddress);
    EXPECT_EQ(cudaGetLastError(), cudaErrorIllegalAddress) << "a fault stays";
    void* p = nullptr;
    EXPECT_EQ(cudaMalloc(&p, 4), cudaErrorIllegalAddress);
    EXPECT_NE(std::string(cvml_cuda_emu_fault()).find("argument 0"), std::string::npos)
        << cvml_cuda_emu_fault();
    cuda_emu::reset_fault();
}

TEST_F(Emu, AFreedPointerArgumentIsAFault) {
    void* p = nullptr;
    ASSERT_EQ(cudaMalloc(&p, 64), cudaSuccess);
    ASSERT_EQ(cudaFree(p), cudaSuccess);
    CUDA_LAUNCH(set_flag, 1, 1, nullptr, static_cast<int32_t*>(p));
    EXPECT_EQ(cudaGetLastError(), cudaErrorIllegalAddress);
    cuda_emu::reset_fault();
}

/* ---- barriers and shuffles ----------------------------------------------------------- */

TEST_F(Emu, SyncthreadsMakesSharedMemoryReductionsExact) {
    for (const char* order : kOrders) {
        SCOPED_TRACE(order);
        setenv("CVML_CUDA_EMU_ORDER", order, 1);
        for (unsigned threads : {32u, 256u, 1024u}) {
            const unsigned blocks = 5;
            Buffer x(blocks * threads), y(blocks);
            std::vector<int32_t> h(blocks * threads);
            std::vector<int32_t> want(blocks, 0);
            for (size_t i = 0; i < h.size(); ++i) {
                h[i] = static_cast<int32_t>(i * 7919 % 1000) - 500;
                want[i / threads] += h[i];
            }
            x.set(h);
            CUDA_LAUNCH(block_sum, blocks, threads, nullptr, x.p, y.p);
            ASSERT_EQ(cudaGetLastError(), cudaSuccess) << cvml_cuda_emu_fault();
            EXPECT_EQ(y.get(), want) << threads << " threads";
        }
    }
}

TEST_F(Emu, ShuffleDownReadsTheLaneBelowWithinItsWidth) {
    for (const char* order : kOrders) {
        SCOPED_TRACE(order);
        setenv("CVML_CUDA_EMU_ORDER", order, 1);
        for (int width : {32, 16, 8, 1}) {
            for (unsigned delta : {0u, 1u, 5u, 16u, 31u}) {
                Buffer out(96);
                CUDA_LAUNCH(shuffle_kernel, 1, 96, nullptr, out.p, delta, width);
                ASSERT_EQ(cudaGetLastError(), cudaSuccess) << cvml_cuda_emu_fault();
                const std::vector<int32_t> h = out.get();
                for (unsigned t = 0; t < 96; ++t) {
                    const unsigned lane = t % 32, w = static_cast<unsigned>(width);
                    const unsigned src = (lane % w) + delta < w ? lane + delta : lane;
                    EXPECT_EQ(h[t], static_cast<int32_t>(src * 10 + t / 32))
                        << "thread " << t << " width " << width << " delta " << delta;
                }
            }
        }
    }
}

TEST_F(Emu, WarpsOfABlockMayShuffleDifferentNumbersOfTimes) {
    Buffer out(64);
    out.set(std::vector<int32_t>(64, -1));
    CUDA_LAUNCH(uneven_warps, 1, 256, nullptr, out.p);
    ASSERT_EQ(cudaGetLastError(), cudaSuccess) << cvml_cuda_emu_fault();
    const std::vector<int32_t> h = out.get();
    for (unsigned w = 0; w < 8; ++w)
        for (unsigned k = 0; k <= w; ++k)  // sum over lanes of (lane + k)
            EXPECT_EQ(h[w * 8 + k], static_cast<int32_t>(496 + 32 * k)) << w << " " << k;
}

TEST_F(Emu, ABarrierSomeThreadsNeverReachIsAFaultNotAHang) {
    for (unsigned live : {5u, 40u}) {
        Buffer out(64);
        CUDA_LAUNCH(divergent_sync, 1, 64, nullptr, out.p, live);
        EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
        EXPECT_NE(std::string(cvml_cuda_emu_fault()).find("never completes"), std::string::npos)
            << cvml_cuda_emu_fault();
        cuda_emu::reset_fault();
    }
}

TEST_F(Emu, AShuffleWhoseMaskNamesAnExitedLaneIsAFault) {
    Buffer out(32);
    CUDA_LAUNCH(divergent_shuffle, 1, 32, nullptr, out.p, 20u);
    EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
    cuda_emu::reset_fault();
    // A full mask in a warp cut short by the block size names lanes that do not exist.
    CUDA_LAUNCH(shuffle_with_mask, 1, 48, nullptr, out.p, 0xffffffffu);
    EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
    cuda_emu::reset_fault();
    // The calling lane must be in the mask.
    CUDA_LAUNCH(shuffle_with_mask, 1, 32, nullptr, out.p, 0xfffffffeu);
    EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
    cuda_emu::reset_fault();
}

TEST_F(Emu, KernelsAreCountedAndCooperativeOnesMarked) {
    Buffer out(256);
    CUDA_LAUNCH(uneven_warps, 1, 256, nullptr, out.p);
    CUDA_LAUNCH(set_flag, 2, 3, nullptr, out.p);
    const char* name;
    uint64_t launches, threads, coop;
    bool seen_uneven = false, seen_flag = false;
    for (int i = 0; cvml_cuda_emu_kernel_stat(i, &name, &launches, &threads, &coop); ++i) {
        if (std::string(name) == "uneven_warps") {
            seen_uneven = true;
            EXPECT_GE(coop, 1u);
        }
        if (std::string(name) == "set_flag") {
            seen_flag = true;
            EXPECT_GE(threads, 6u);
        }
    }
    EXPECT_TRUE(seen_uneven && seen_flag);
}

/* ---- memory, device, intrinsics ----------------------------------------------------------- */

TEST_F(Emu, MemoryStartsAsGarbageAndCopiesStayInsideAllocations) {
    void* p = nullptr;
    ASSERT_EQ(cudaMalloc(&p, 16), cudaSuccess);
    unsigned char h[32] = {};
    ASSERT_EQ(cudaMemcpy(h, p, 16, cudaMemcpyDeviceToHost), cudaSuccess);
    // Under valgrind fresh device memory is left undefined (valgrind reports its use).
    if (!RUNNING_ON_VALGRIND) {
        EXPECT_EQ(h[0], 0xa5) << "fresh device memory must not look zeroed";
    }
    EXPECT_EQ(cudaMemcpy(h, p, 17, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
    EXPECT_EQ(cudaMemcpy(static_cast<char*>(p) + 8, h, 9, cudaMemcpyHostToDevice),
              cudaErrorInvalidValue);
    EXPECT_EQ(cudaMemcpy(p, h, 16, cudaMemcpyDeviceToHost), cudaErrorInvalidValue)
        << "the kind must match the pointers";
    EXPECT_EQ(cudaMemcpyAsync(p, h, 16, cudaMemcpyHostToDevice, nullptr), cudaSuccess);
    void* q = nullptr;
    ASSERT_EQ(cudaMalloc(&q, 16), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(q, p, 16, cudaMemcpyDeviceToDevice), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(q, p, 16, cudaMemcpyDefault), cudaSuccess);
    EXPECT_EQ(cudaFree(static_cast<char*>(p) + 4), cudaErrorInvalidValue);
    EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
    EXPECT_EQ(cudaFree(p), cudaSuccess);
    EXPECT_EQ(cudaFree(q), cudaSuccess);
    EXPECT_EQ(cudaFree(nullptr), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&p, 0), cudaSuccess);
    EXPECT_EQ(p, nullptr);
}

TEST_F(Emu, DeviceMemoryCanBeCapped) {
    setenv("CVML_CUDA_EMU_MEMORY", "1000", 1);
    void *a = nullptr, *b = nullptr;
    ASSERT_EQ(cudaMalloc(&a, 600), cudaSuccess);
    EXPECT_EQ(cudaMalloc(&b, 600), cudaErrorMemoryAllocation);
    EXPECT_EQ(cudaGetLastError(), cudaErrorMemoryAllocation);
    EXPECT_EQ(cudaFree(a), cudaSuccess);
}

TEST_F(Emu, OneDeviceOrNone) {
    int n = 0;
    EXPECT_EQ(cudaGetDeviceCount(&n), cudaSuccess);
    EXPECT_EQ(n, 1);
    cudaDeviceProp prop;
    EXPECT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
    EXPECT_EQ(prop.maxThreadsPerBlock, 1024);
    EXPECT_EQ(cudaSetDevice(1), cudaErrorInvalidDevice);
    cudaGetLastError();
    setenv("CVML_CUDA_EMU_DEVICES", "0", 1);
    EXPECT_EQ(cudaGetDeviceCount(&n), cudaErrorNoDevice);
    EXPECT_EQ(n, 0);
    EXPECT_STREQ(cudaGetErrorName(cudaErrorNoDevice), "cudaErrorNoDevice");
    cudaGetLastError();
}

TEST_F(Emu, Dp4aAndClzAreTheHardwaresOperations) {
    uint32_t s = 12345;
    auto next = [&s] { return s = s * 1664525u + 1013904223u; };
    for (int i = 0; i < 10000; ++i) {
        const uint32_t a = next(), b = next(), c = next();
        int64_t want = static_cast<int32_t>(c), uwant = c;
        for (int k = 0; k < 4; ++k) {
            want += static_cast<int8_t>(a >> (8 * k)) * static_cast<int8_t>(b >> (8 * k));
            uwant += ((a >> (8 * k)) & 0xff) * ((b >> (8 * k)) & 0xff);
        }
        ASSERT_EQ(__dp4a(static_cast<int>(a), static_cast<int>(b), static_cast<int>(c)),
                  static_cast<int32_t>(static_cast<uint32_t>(want)));
        ASSERT_EQ(__dp4a(a, b, c), static_cast<uint32_t>(uwant));
    }
    EXPECT_EQ(__clz(0), 32);
    EXPECT_EQ(__clz(1), 31);
    EXPECT_EQ(__clz(-1), 0);
    EXPECT_EQ(__clz(INT32_MIN), 0);
    EXPECT_EQ(__clz(0x00010000), 15);
}

}  // namespace

namespace {

/* A 16x8x32 product as the PTX ISA defines it, from every lane's fragments: random
 * bytes (all of -128..127), accumulators near the int32 limits so the sums wrap, and
 * several steps. Under the layout the kernel loads by, D must be A x B + C exactly. */
TEST_F(Emu, MmaSyncM16n8k32IsTheMatrixProductInPtxLayouts) {
    for (const char* order : kOrders) {
        setenv("CVML_CUDA_EMU_ORDER", order, 1);
        uint32_t seed = 12345;
        auto next = [&seed]() {
            seed = seed * 1103515245u + 12345u;
            return seed >> 8;
        };
        int8_t A[16][32], B[32][8];
        std::vector<int32_t> a(16 * 8), b(8 * 8), c(16 * 8);
        for (int r = 0; r < 16; ++r)
            for (int k = 0; k < 32; ++k) A[r][k] = static_cast<int8_t>(next());
        for (int k = 0; k < 32; ++k)
            for (int n = 0; n < 8; ++n) B[k][n] = static_cast<int8_t>(next());
        A[0][0] = B[0][0] = -128;
        for (int r = 0; r < 16; ++r)
            for (int w = 0; w < 8; ++w) {
                uint32_t word = 0;
                for (int j = 0; j < 4; ++j)
                    word |= static_cast<uint32_t>(static_cast<uint8_t>(A[r][4 * w + j])) << (8 * j);
                a[static_cast<size_t>(r * 8 + w)] = static_cast<int32_t>(word);
            }
        for (int n = 0; n < 8; ++n)
            for (int w = 0; w < 8; ++w) {
                uint32_t word = 0;
                for (int j = 0; j < 4; ++j)
                    word |= static_cast<uint32_t>(static_cast<uint8_t>(B[4 * w + j][n])) << (8 * j);
                b[static_cast<size_t>(n * 8 + w)] = static_cast<int32_t>(word);
            }
        for (size_t i = 0; i < c.size(); ++i)
            c[i] = static_cast<int32_t>(i % 2 ? 0x7fffff00u + next() % 512
                                              : 0x80000000u + next() % 512);
        Buffer da(a.size()), db(b.size()), dc(c.size()), dd(c.size());
        da.set(a);
        db.set(b);
        dc.set(c);
        const int steps = 3;
        CUDA_LAUNCH(mma_kernel, 1, 32, nullptr, da.p, db.p, dc.p, dd.p, steps);
        ASSERT_EQ(cudaGetLastError(), cudaSuccess) << cvml_cuda_emu_fault();
        const std::vector<int32_t> d = dd.get();
        for (int r = 0; r < 16; ++r)
            for (int n = 0; n < 8; ++n) {
                uint32_t dot = 0;
                for (int k = 0; k < 32; ++k) dot += static_cast<uint32_t>(A[r][k] * B[k][n]);
                const uint32_t want =
                    static_cast<uint32_t>(c[static_cast<size_t>(r * 8 + n)]) + steps * dot;
                ASSERT_EQ(static_cast<uint32_t>(d[static_cast<size_t>(r * 8 + n)]), want)
                    << "row " << r << " column " << n << " (" << order << ")";
            }
    }
}

TEST_F(Emu, MmaSyncWithoutAFullWarpIsAFault) {
    Buffer d(64);
    CUDA_LAUNCH(mma_partial_warp, 1, 20, nullptr, d.p);
    EXPECT_NE(cudaGetLastError(), cudaSuccess);
    EXPECT_NE(std::string(cvml_cuda_emu_fault()).find("mma.sync"), std::string::npos)
        << cvml_cuda_emu_fault();
    cuda_emu::reset_fault();
}

TEST_F(Emu, MemsetFillsDeviceMemoryOnly) {
    Buffer d(4);
    ASSERT_EQ(cudaMemset(d.p, 0, 4 * sizeof(int32_t)), cudaSuccess);
    ASSERT_EQ(cudaMemsetAsync(d.p + 1, 1, 2 * sizeof(int32_t)), cudaSuccess);
    EXPECT_EQ(d.get(), (std::vector<int32_t>{0, 0x01010101, 0x01010101, 0}));
    int32_t host[4];
    EXPECT_EQ(cudaMemset(host, 0, sizeof host), cudaErrorInvalidValue);
    EXPECT_EQ(cudaMemset(d.p + 3, 0, 2 * sizeof(int32_t)), cudaErrorInvalidValue);
    cudaGetLastError();
}

}  // namespace

namespace {

TEST_F(Emu, LdmatrixGivesEachLaneItsFragmentWords) {
    Buffer out(32 * 4);
    CUDA_LAUNCH(ldmatrix_kernel, 1, 32, nullptr, out.p);
    ASSERT_EQ(cudaGetLastError(), cudaSuccess) << cvml_cuda_emu_fault();
    const std::vector<int32_t> got = out.get();
    for (int lane = 0; lane < 32; ++lane)
        for (int j = 0; j < 4; ++j) {
            const int first = 16 * (8 * j + lane / 4) + 4 * (lane % 4); /* row lane/4 of j */
            uint32_t want = 0;
            for (int b = 0; b < 4; ++b)
                want |= static_cast<uint32_t>((first + b) & 0xff) << (8 * b);
            EXPECT_EQ(static_cast<uint32_t>(got[static_cast<size_t>(lane * 4 + j)]), want)
                << "lane " << lane << " matrix " << j;
        }
}

TEST_F(Emu, CpAsyncLandsAtTheWaitAndZeroFills) {
    std::vector<int32_t> host(32 * 4);
    for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<int32_t>(i + 100);
    Buffer src(host.size()), before(32), after(32);
    src.set(host);
    CUDA_LAUNCH(cp_async_kernel, 1, 32, nullptr, src.p, before.p, after.p);
    ASSERT_EQ(cudaGetLastError(), cudaSuccess) << cvml_cuda_emu_fault();
    const std::vector<int32_t> b = before.get(), a = after.get();
    for (int t = 0; t < 32; ++t) {
        EXPECT_EQ(b[static_cast<size_t>(t)], -1)
            << "thread " << t << " saw the copy before waiting";
        EXPECT_EQ(a[static_cast<size_t>(t)], t % 2 == 0 ? t * 4 + 1 + 100 : 0) << "thread " << t;
    }
}

TEST_F(Emu, ACpAsyncNeverWaitedForIsAFault) {
    Buffer src(4);
    src.set({1, 2, 3, 4});
    CUDA_LAUNCH(cp_async_never_waited, 1, 1, nullptr, src.p);
    EXPECT_NE(cudaGetLastError(), cudaSuccess);
    EXPECT_NE(std::string(cvml_cuda_emu_fault()).find("never waited"), std::string::npos)
        << cvml_cuda_emu_fault();
    cuda_emu::reset_fault();
}

}  // namespace
