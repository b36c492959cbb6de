/* A host emulation of the part of the CUDA runtime that the CUDA plugin uses, so that
 * g++ compiles the plugin's .cu files unchanged and their kernels run on the CPU (the
 * cvml_cuda_emu target). It stands in for <cuda_runtime.h> by coming first on the
 * include path. docs/architecture.md ("The CUDA device") says what it proves.
 *
 * - Device memory is host memory (cudaMalloc fills it with a garbage pattern, as fresh
 *   device memory is undefined). Allocations are tracked: a copy, a free or a kernel
 *   pointer argument outside a live allocation fails as it would on a GPU, and the
 *   sanitizer build sees every kernel access out of an allocation.
 * - A launch is validated as CUDA validates it (block and grid limits, dynamic shared
 *   memory, the stream) and then runs at once on the calling thread: each block in
 *   turn, the threads of a block one after the other. The first barrier a kernel
 *   reaches (__syncthreads, a warp shuffle) turns that launch cooperative: from then
 *   on every thread of a block is a fiber, and a thread at a barrier waits until all
 *   threads of its block (or all lanes of the shuffle's mask) have arrived. A barrier
 *   that cannot complete (a thread exited, or waits at another barrier) is a fault.
 * - Faults are sticky, as in a CUDA context: every later call returns the error. The
 *   details go to stderr.
 * - Streams capture into graphs (cudaStreamBeginCapture ... cudaStreamEndCapture): the
 *   launches, copies and event records are kept, and each cudaGraphLaunch of the
 *   instance runs them in order. Calls that could synchronise are refused during a
 *   capture as CUDA refuses them. Pinned host memory (cudaHostAlloc) is tracked; events
 *   read the host clock when they execute.
 * - CVML_CUDA_EMU_DEVICES=N emulates N devices (0: none), the current one per host
 *   thread (cudaSetDevice); memory and streams belong to the device current when made,
 *   and a kernel runs only on its stream's device, touching only that device's memory.
 * - CVML_CUDA_EMU_ORDER=reverse runs blocks and threads in reverse order (a kernel
 *   whose result depends on thread order has a race); CVML_CUDA_EMU_MEMORY=BYTES caps
 *   each device's memory. */
#pragma once

#ifdef __CUDACC__
#error "emu/cuda_runtime.h is the host emulation of CUDA; nvcc uses the real runtime"
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <functional>
#include <type_traits>

/* ---- language --------------------------------------------------------------------- */

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __align__(n) __attribute__((aligned(n)))
/* Blocks run one at a time on the launching thread (launches are serialised), so a
 * static per host thread is the running block's shared memory. */
#define __shared__ static thread_local

struct uint3 {
    unsigned int x, y, z;
};

struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1)
        : x(vx), y(vy), z(vz) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
};

/* The built-in indices of the thread that runs (set by the emulator before it runs or
 * resumes a thread). */
extern thread_local uint3 threadIdx;
extern thread_local uint3 blockIdx;
extern thread_local dim3 blockDim;
extern thread_local dim3 gridDim;
constexpr int warpSize = 32;

/* ---- runtime API ------------------------------------------------------------------ */

/* The values are CUDA's, so messages read as on a GPU. */
enum cudaError {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidDevicePointer = 17,
    cudaErrorInvalidMemcpyDirection = 21,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorIllegalState = 401,
    cudaErrorNotReady = 600,
    cudaErrorIllegalAddress = 700,
    cudaErrorLaunchFailure = 719,
    cudaErrorStreamCaptureUnsupported = 900,
    cudaErrorStreamCaptureInvalidated = 901,
    cudaErrorStreamCaptureImplicit = 906,
    cudaErrorStreamCaptureWrongThread = 908,
};
typedef enum cudaError cudaError_t;

enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4,
};

struct CUstream_st;
typedef struct CUstream_st* cudaStream_t;
constexpr unsigned int cudaStreamDefault = 0;
constexpr unsigned int cudaStreamNonBlocking = 1;
constexpr unsigned int cudaHostAllocDefault = 0;

/* Stream capture (CUDA graphs): between cudaStreamBeginCapture and
 * cudaStreamEndCapture, launches, copies and event records on the stream are recorded
 * into a graph instead of running; cudaGraphLaunch of its instance runs them in order.
 * While a thread captures in a mode other than relaxed (or any thread captures in
 * global mode) the calls that could synchronise (allocation, free, synchronous copies,
 * synchronisations) fail with cudaErrorStreamCaptureUnsupported and invalidate the
 * capture, as on a GPU. */
enum cudaStreamCaptureMode {
    cudaStreamCaptureModeGlobal = 0,
    cudaStreamCaptureModeThreadLocal = 1,
    cudaStreamCaptureModeRelaxed = 2,
};
enum cudaStreamCaptureStatus {
    cudaStreamCaptureStatusNone = 0,
    cudaStreamCaptureStatusActive = 1,
    cudaStreamCaptureStatusInvalidated = 2,
};
struct CUgraph_st;
typedef struct CUgraph_st* cudaGraph_t;
struct CUgraphExec_st;
typedef struct CUgraphExec_st* cudaGraphExec_t;
/* Events time the host clock when they execute (work runs at the call, or at a graph's
 * replay), so the time between two of them is what the work between them took here. */
struct CUevent_st;
typedef struct CUevent_st* cudaEvent_t;

struct cudaDeviceProp {
    char name[256];
    size_t totalGlobalMem;
    size_t sharedMemPerBlock;
    int warpSize;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    int major;
    int minor;
    int multiProcessorCount;
};

const char* cudaGetErrorName(cudaError_t e);
const char* cudaGetErrorString(cudaError_t e);
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaMalloc(void** ptr, size_t bytes);
cudaError_t cudaFree(void* ptr);
cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream = nullptr);
cudaError_t cudaMemset(void* dst, int value, size_t bytes);
cudaError_t cudaMemsetAsync(void* dst, int value, size_t bytes, cudaStream_t stream = nullptr);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaHostAlloc(void** ptr, size_t bytes, unsigned int flags);
cudaError_t cudaFreeHost(void* ptr);
cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode);
cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph);
cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* status);
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph,
                                 unsigned long long flags = 0);
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream);
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec);
cudaError_t cudaGraphDestroy(cudaGraph_t graph);
cudaError_t cudaEventCreate(cudaEvent_t* event);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = nullptr);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);

/* ---- device intrinsics ------------------------------------------------------------ */

/* Four signed byte products added to c, in 32-bit wrap-around arithmetic. */
inline int __dp4a(int a, int b, int c) {
    uint32_t acc = static_cast<uint32_t>(c);
    for (int k = 0; k < 32; k += 8) {
        const int32_t x = static_cast<int8_t>(static_cast<uint32_t>(a) >> k);
        const int32_t y = static_cast<int8_t>(static_cast<uint32_t>(b) >> k);
        acc += static_cast<uint32_t>(x * y);
    }
    return static_cast<int>(acc);
}

inline unsigned int __dp4a(unsigned int a, unsigned int b, unsigned int c) {
    for (int k = 0; k < 32; k += 8) c += ((a >> k) & 0xffu) * ((b >> k) & 0xffu);
    return c;
}

inline int __clz(int x) {
    return x == 0 ? 32 : __builtin_clz(static_cast<unsigned int>(x));
}

void __syncthreads(void);

/* Blocks run one at a time, each to its end: every store is seen by later blocks. */
inline void __threadfence(void) {}
/* A load through L2 only; here every load sees the last store. */
template <typename T>
T __ldcg(const T* p) {
    return *p;
}

/* Blocks and threads run one at a time on one host thread, so an atomic is a plain
 * read-modify-write; the old value is returned, and the sum wraps as the hardware's. */
inline int atomicAdd(int* address, int value) {
    const int old = *address;
    *address = static_cast<int>(static_cast<unsigned>(old) + static_cast<unsigned>(value));
    return old;
}

namespace cuda_emu {
/* The value of lane + delta in the calling thread's warp segment (own value past it);
 * waits until every lane of `mask` has arrived. */
uint64_t shfl_down(unsigned int mask, uint64_t value, unsigned int delta, int width);
}  // namespace cuda_emu

template <typename T>
T __shfl_down_sync(unsigned int mask, T var, unsigned int delta, int width = warpSize) {
    static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= 8, "shuffle type");
    uint64_t bits = 0;
    memcpy(&bits, &var, sizeof var);
    bits = cuda_emu::shfl_down(mask, bits, delta, width);
    memcpy(&var, &bits, sizeof var);
    return var;
}

namespace cuda_emu {
/* Counts one pass through a marked code path (CUDA_PATH in cuda_kernel.h), by name. */
void count_path(const char* name);
/* mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 for the calling lane: a warp
 * collective (all 32 lanes, full mask). Each lane passes its fragments in the PTX ISA's
 * layout (groupID = lane / 4, t = lane % 4): a[0..3] hold A (16x32, row-major) bytes
 * (row g, k 4t..4t+3), (g+8, 4t..), (g, 16+4t..), (g+8, 16+4t..); b[0..1] hold B (32x8)
 * bytes (k 4t..4t+3, n g), (k 16+4t.., n g); c and d hold (g, 2t), (g, 2t+1),
 * (g+8, 2t), (g+8, 2t+1). Sums wrap mod 2^32. */
void mma_m16n8k32_s8(int32_t d[4], const uint32_t a[4], const uint32_t b[2], const int32_t c[4]);
/* mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32 (Turing's int8 shape), a warp
 * collective: a holds A (8x16) bytes (row g, k 4t..4t+3), b holds B (16x8) bytes
 * (k 4t..4t+3, n g), c and d hold (g, 2t), (g, 2t+1). */
void mma_m8n8k16_s8(int32_t d[2], uint32_t a, uint32_t b, const int32_t c[2]);
/* ldmatrix.sync.aligned.m8n8.x4.shared.b16: a warp collective. Lane 8j + i passes the
 * address of row i of matrix j (16 bytes, 16-byte aligned); each lane gets, of each
 * matrix j, the 4 bytes at row lane / 4, bytes 4 * (lane % 4) .. +3, in out[j]. */
void ldmatrix_x4(uint32_t out[4], const void* row);
/* cp.async: copies src_bytes of `bytes` (4, 8 or 16, both ends aligned to it) from
 * device memory and zero-fills the rest, when a cp.async.wait_group retires the
 * commit group that holds it: until then the destination keeps its old bytes, so a
 * kernel that reads before waiting reads stale data here too. A thread that exits with
 * copies not waited for is a fault. */
void cp_async(void* dst, const void* src, unsigned bytes, unsigned src_bytes);
void cp_async_commit();
/* Waits until at most `pending` committed groups of the calling thread are in flight. */
void cp_async_wait(unsigned pending);
}  // namespace cuda_emu

/* ---- launches --------------------------------------------------------------------- */

namespace cuda_emu {

struct launch_site {
    const char* kernel; /* as written at the launch, template arguments included */
    const char* file;
    int line;
};

/* Checks the configuration and the stream (live, of the current device, not an
 * implicit join of a capture); false with the last error set. */
bool launch_check(const launch_site& site, dim3 grid, dim3 block, size_t shmem,
                  cudaStream_t stream);
/* A pointer argument must be null or inside a live device allocation of the current
 * device (a GPU would fault on a host pointer); false with a sticky fault otherwise. */
bool check_pointer_arg(const launch_site& site, int index, const void* p);
/* Runs the grid: body(arg) once per thread, with the indices set. */
void launch_run(const launch_site& site, dim3 grid, dim3 block, void (*body)(void*), void* arg);

/* A launch as a graph keeps it: it checks its arguments and runs the grid when called. */
typedef std::function<void(const launch_site&, dim3, dim3)> recorded_launch;
/* When `stream` is being captured, records the launch into its graph and returns true;
 * false when it is not (the launch runs now). */
bool capture_launch(const launch_site& site, dim3 grid, dim3 block, cudaStream_t stream,
                    const recorded_launch& launch);

template <typename A>
bool check_arg(const launch_site& site, int index, const A& a) {
    if constexpr (std::is_pointer<A>::value)
        return check_pointer_arg(site, index, static_cast<const void*>(a));
    (void)site;
    (void)index;
    (void)a;
    return true;
}

/* Checks the arguments (pointers against the live allocations) and runs the grid. */
template <typename K, typename... A>
void run_grid(const launch_site& site, dim3 grid, dim3 block, K kernel, A... args) {
    int index = 0;
    bool ok = true;
    ((ok = ok && check_arg(site, index++, args)), ...);
    if (!ok) return;
    auto body = [&]() { kernel(args...); };
    launch_run(
        site, grid, block, [](void* p) { (*static_cast<decltype(body)*>(p))(); }, &body);
}

/* The arguments are copied once, as a launch copies them to the device (a captured
 * launch keeps its copies for every replay); each thread then calls the kernel with its
 * own copies. */
template <typename K, typename... A>
void launch(const launch_site& site, dim3 grid, dim3 block, cudaStream_t stream, K kernel,
            A... args) {
    if (!launch_check(site, grid, block, 0, stream)) return;
    const recorded_launch later = [kernel, args...](const launch_site& s, dim3 g, dim3 b) {
        run_grid(s, g, b, kernel, args...);
    };
    if (capture_launch(site, grid, block, stream, later)) return;
    run_grid(site, grid, block, kernel, args...);
}

}  // namespace cuda_emu

/* The generic lambda lets a template kernel deduce its arguments, as <<<>>> does. */
#define CUDA_EMU_LAUNCH(kernel, grid, block, stream, ...)                                        \
    ::cuda_emu::launch(                                                                          \
        ::cuda_emu::launch_site{#kernel, __FILE__, __LINE__}, dim3(grid), dim3(block), (stream), \
        [](auto... emu_a) { kernel(emu_a...); }, __VA_ARGS__)
