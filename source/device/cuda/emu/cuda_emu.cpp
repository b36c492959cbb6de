/* The host emulation of the CUDA runtime (cuda_runtime.h): errors, devices and their
 * memory, pinned host memory, streams, stream capture and graphs, events, and the launch
 * engine with its fibers. CVML_CUDA_EMU_DEVICES devices (1 by default), the current one
 * per host thread as in CUDA: memory and streams belong to the device current when they
 * were made, and a kernel may only run on its stream's device and touch that device's
 * memory. Every call and every launch holds one mutex, so launches from several host
 * threads run one at a time, as kernels of one stream would. */
#include "cuda_runtime.h"

#include <limits.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cuda_emu.h"
#include "fiber_switch.h"

#if defined(__SANITIZE_ADDRESS__)
#define CUDA_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CUDA_EMU_ASAN 1
#endif
#endif
#ifdef CUDA_EMU_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#else
#define VALGRIND_STACK_REGISTER(start, end) 0u
#define VALGRIND_STACK_DEREGISTER(id) ((void)(id))
#define RUNNING_ON_VALGRIND 0
#endif

thread_local uint3 threadIdx;
thread_local uint3 blockIdx;
thread_local dim3 blockDim;
thread_local dim3 gridDim;

namespace cuda_emu {
namespace {

/* ---- state ----------------------------------------------------------------------- */

std::mutex g_mutex;
cudaError_t g_sticky = cudaSuccess; /* a fault: the context is unusable from then on */
std::string g_fault;
thread_local cudaError_t t_last = cudaSuccess;

/* The environment is read at each use, so a test can change it between calls. */
struct config {
    int devices = 1;
    bool reverse = false;
    size_t memory = static_cast<size_t>(80) << 30;
};

config settings() {
    config k;
    if (const char* d = getenv("CVML_CUDA_EMU_DEVICES")) k.devices = atoi(d);
    if (const char* o = getenv("CVML_CUDA_EMU_ORDER")) k.reverse = strcmp(o, "reverse") == 0;
    if (const char* m = getenv("CVML_CUDA_EMU_MEMORY")) k.memory = strtoull(m, nullptr, 10);
    return k;
}

struct allocation {
    size_t bytes;
    int device;
};
std::map<uintptr_t, allocation> g_allocs;  /* by base address */
size_t g_live_bytes, g_peak_bytes;         /* all devices */
std::map<int, size_t> g_device_bytes;      /* live, by device */
std::map<uintptr_t, size_t> g_host_allocs; /* pinned host memory: base -> bytes */
std::set<const CUstream_st*> g_streams;
std::set<const CUgraph_st*> g_graphs;
std::set<const CUgraphExec_st*> g_execs;
std::set<const CUevent_st*> g_events;
thread_local int t_device = 0; /* cudaSetDevice's */
thread_local bool t_replaying; /* a graph launch runs its kernels */
cvml_cuda_emu_counts g_counts;

struct kernel_stats {
    uint64_t launches = 0, threads = 0, cooperative = 0;
    uint64_t mma_launches = 0, mma_ops = 0; /* launches that ran mma.sync; warp mma.syncs */
};
std::map<std::string, kernel_stats> g_kernels; /* by name, template arguments dropped */
std::map<std::string, uint64_t> g_paths;       /* CUDA_PATH marks passed, by name */

cudaError_t fail(cudaError_t e) {
    t_last = e;
    return e;
}

/* Records a fault (the first one's message is kept) and makes it sticky. */
void fault(cudaError_t e, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void fault(cudaError_t e, const char* fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "cuda-emu: %s\n", msg);
    if (g_sticky != cudaSuccess) return;
    g_sticky = e;
    g_fault = msg;
}

/* A launch-time error: not sticky (CUDA returns it once from cudaGetLastError). */
bool launch_error(cudaError_t e, const launch_site& s, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));
bool launch_error(cudaError_t e, const launch_site& s, const char* fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "cuda-emu: %s:%d: launch of %s: %s\n", s.file, s.line, s.kernel, msg);
    t_last = e;
    return false;
}

/* The live allocation holding [p, p + bytes) (its end included when bytes is 0), or
 * null. */
const allocation* find_device(const void* p, size_t bytes) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    auto it = g_allocs.upper_bound(a);
    if (it == g_allocs.begin()) return nullptr;
    --it;
    const uintptr_t off = a - it->first;
    return off <= it->second.bytes && bytes <= it->second.bytes - off ? &it->second : nullptr;
}

bool is_device(const void* p, size_t bytes) {
    return find_device(p, bytes) != nullptr;
}

bool valid_stream(cudaStream_t s) {
    return !s || g_streams.count(s) > 0;
}

#define EMU_LOCK                               \
    std::lock_guard<std::mutex> lock(g_mutex); \
    if (g_sticky != cudaSuccess) return g_sticky

/* ---- capture ------------------------------------------------------------------------- */

/* One step of a graph: a kernel launch, a copy or an event record. */
struct graph_node {
    enum kind_t { KERNEL, COPY, MEMSET, EVENT } kind;
    launch_site site;
    dim3 grid, block;
    recorded_launch launch;
    void* dst;
    const void* src;
    size_t bytes;
    cudaMemcpyKind copy_kind;
    int value; /* of a memset */
    cudaEvent_t event;
};
typedef std::vector<graph_node> node_list;

struct capture_state {
    cudaStreamCaptureMode mode;
    std::thread::id thread;
    bool invalidated;
    node_list nodes;
};

}  // namespace
}  // namespace cuda_emu

struct CUstream_st {
    unsigned int flags;
    int device;
    std::unique_ptr<cuda_emu::capture_state> capture; /* while being captured */
};

struct CUgraph_st {
    cuda_emu::node_list nodes;
    int device;
};

struct CUgraphExec_st {
    std::shared_ptr<const cuda_emu::node_list> nodes; /* shared with launches running it */
    int device;
};

struct CUevent_st {
    bool recorded;
    uint64_t ns; /* the host clock when it executed */
};

namespace cuda_emu {
namespace {

uint64_t now_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

/* A call that could synchronise with the device is refused while this thread captures
 * (except in relaxed mode) or any thread captures in global mode; the refusal
 * invalidates this thread's captures. Returns true (and sets the error) when refused. */
bool capture_forbids() {
    const std::thread::id me = std::this_thread::get_id();
    bool forbid = false;
    for (const CUstream_st* s : g_streams) {
        const capture_state* c = s->capture.get();
        if (!c) continue;
        if (c->thread == me ? c->mode != cudaStreamCaptureModeRelaxed
                            : c->mode == cudaStreamCaptureModeGlobal)
            forbid = true;
    }
    if (!forbid) return false;
    for (const CUstream_st* s : g_streams)
        if (s->capture && s->capture->thread == me) s->capture->invalidated = true;
    fprintf(stderr, "cuda-emu: a call that may synchronise during a stream capture\n");
    fail(cudaErrorStreamCaptureUnsupported);
    return true;
}

capture_state* capturing(cudaStream_t s) {
    return s && g_streams.count(s) ? s->capture.get() : nullptr;
}

/* This thread captures some stream in a mode other than relaxed: work on the legacy
 * default stream would join the capture implicitly, which CUDA refuses. */
bool thread_captures_strictly() {
    const std::thread::id me = std::this_thread::get_id();
    for (const CUstream_st* s : g_streams)
        if (s->capture && s->capture->thread == me &&
            s->capture->mode != cudaStreamCaptureModeRelaxed)
            return true;
    return false;
}

}  // namespace
}  // namespace cuda_emu

using namespace cuda_emu;

/* ---- errors and device -------------------------------------------------------------- */

const char* cudaGetErrorName(cudaError_t e) {
    switch (e) {
        case cudaSuccess:
            return "cudaSuccess";
        case cudaErrorInvalidValue:
            return "cudaErrorInvalidValue";
        case cudaErrorMemoryAllocation:
            return "cudaErrorMemoryAllocation";
        case cudaErrorInvalidConfiguration:
            return "cudaErrorInvalidConfiguration";
        case cudaErrorInvalidDevicePointer:
            return "cudaErrorInvalidDevicePointer";
        case cudaErrorInvalidMemcpyDirection:
            return "cudaErrorInvalidMemcpyDirection";
        case cudaErrorNoDevice:
            return "cudaErrorNoDevice";
        case cudaErrorInvalidDevice:
            return "cudaErrorInvalidDevice";
        case cudaErrorInvalidResourceHandle:
            return "cudaErrorInvalidResourceHandle";
        case cudaErrorIllegalAddress:
            return "cudaErrorIllegalAddress";
        case cudaErrorLaunchFailure:
            return "cudaErrorLaunchFailure";
        case cudaErrorIllegalState:
            return "cudaErrorIllegalState";
        case cudaErrorNotReady:
            return "cudaErrorNotReady";
        case cudaErrorStreamCaptureUnsupported:
            return "cudaErrorStreamCaptureUnsupported";
        case cudaErrorStreamCaptureInvalidated:
            return "cudaErrorStreamCaptureInvalidated";
        case cudaErrorStreamCaptureImplicit:
            return "cudaErrorStreamCaptureImplicit";
        case cudaErrorStreamCaptureWrongThread:
            return "cudaErrorStreamCaptureWrongThread";
    }
    return "cudaErrorUnknown";
}

const char* cudaGetErrorString(cudaError_t e) {
    switch (e) {
        case cudaSuccess:
            return "no error";
        case cudaErrorInvalidValue:
            return "invalid argument";
        case cudaErrorMemoryAllocation:
            return "out of memory";
        case cudaErrorInvalidConfiguration:
            return "invalid configuration argument";
        case cudaErrorInvalidDevicePointer:
            return "invalid device pointer";
        case cudaErrorInvalidMemcpyDirection:
            return "invalid copy direction for memcpy";
        case cudaErrorNoDevice:
            return "no CUDA-capable device is detected";
        case cudaErrorInvalidDevice:
            return "invalid device ordinal";
        case cudaErrorInvalidResourceHandle:
            return "invalid resource handle";
        case cudaErrorIllegalAddress:
            return "an illegal memory access was encountered";
        case cudaErrorLaunchFailure:
            return "unspecified launch failure";
        case cudaErrorIllegalState:
            return "the operation cannot be performed in the present state";
        case cudaErrorNotReady:
            return "device not ready";
        case cudaErrorStreamCaptureUnsupported:
            return "operation not permitted when stream is capturing";
        case cudaErrorStreamCaptureInvalidated:
            return "operation failed due to a previous error during capture";
        case cudaErrorStreamCaptureImplicit:
            return "operation would make the legacy stream depend on a capturing blocking stream";
        case cudaErrorStreamCaptureWrongThread:
            return "attempt to terminate a thread-local capture sequence from another thread";
    }
    return "unknown error";
}

cudaError_t cudaGetLastError(void) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_sticky != cudaSuccess) return g_sticky;
    const cudaError_t e = t_last;
    t_last = cudaSuccess;
    return e;
}

cudaError_t cudaPeekAtLastError(void) {
    std::lock_guard<std::mutex> lock(g_mutex);
    return g_sticky != cudaSuccess ? g_sticky : t_last;
}

cudaError_t cudaGetDeviceCount(int* count) {
    EMU_LOCK;
    if (!count) return fail(cudaErrorInvalidValue);
    const int devices = settings().devices;
    *count = devices > 0 ? devices : 0;
    return *count ? cudaSuccess : fail(cudaErrorNoDevice);
}

cudaError_t cudaSetDevice(int device) {
    EMU_LOCK;
    if (device < 0 || device >= settings().devices) return fail(cudaErrorInvalidDevice);
    t_device = device;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
    EMU_LOCK;
    if (!device) return fail(cudaErrorInvalidValue);
    *device = t_device;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
    EMU_LOCK;
    if (!prop) return fail(cudaErrorInvalidValue);
    if (device < 0 || device >= settings().devices) return fail(cudaErrorInvalidDevice);
    memset(prop, 0, sizeof *prop);
    snprintf(prop->name, sizeof prop->name, "host emulation");
    prop->totalGlobalMem = settings().memory;
    prop->sharedMemPerBlock = 48 * 1024;
    prop->warpSize = 32;
    prop->maxThreadsPerBlock = 1024;
    prop->maxThreadsDim[0] = prop->maxThreadsDim[1] = 1024;
    prop->maxThreadsDim[2] = 64;
    prop->maxGridSize[0] = INT_MAX;
    prop->maxGridSize[1] = prop->maxGridSize[2] = 65535;
    prop->major = 9;
    prop->minor = 0;
    prop->multiProcessorCount = 1;
    return cudaSuccess;
}

/* Work runs at the call, so there is never anything to wait for. */
cudaError_t cudaDeviceSynchronize(void) {
    EMU_LOCK;
    if (capture_forbids()) return cudaErrorStreamCaptureUnsupported;
    ++g_counts.syncs;
    return cudaSuccess;
}

/* ---- memory ------------------------------------------------------------------------ */

cudaError_t cudaMalloc(void** ptr, size_t bytes) {
    EMU_LOCK;
    if (!ptr) return fail(cudaErrorInvalidValue);
    *ptr = nullptr;
    if (capture_forbids()) return cudaErrorStreamCaptureUnsupported;
    if (bytes == 0) return cudaSuccess;
    const size_t cap = settings().memory;  // per device
    const size_t used = g_device_bytes[t_device];
    if (used > cap || bytes > cap - used) return fail(cudaErrorMemoryAllocation);
    void* p = nullptr;
    // Exactly `bytes`, so that the sanitizer sees a kernel reading past an allocation.
    if (posix_memalign(&p, 256, bytes) != 0) return fail(cudaErrorMemoryAllocation);
    // Fresh device memory holds whatever was there: a pattern, never zeros. Under
    // valgrind it stays undefined instead, so reading it before writing is reported.
    if (!RUNNING_ON_VALGRIND) memset(p, 0xa5, bytes);
    g_allocs[reinterpret_cast<uintptr_t>(p)] = {bytes, t_device};
    g_live_bytes += bytes;
    g_device_bytes[t_device] += bytes;
    if (g_live_bytes > g_peak_bytes) g_peak_bytes = g_live_bytes;
    *ptr = p;
    return cudaSuccess;
}

cudaError_t cudaFree(void* ptr) {
    EMU_LOCK;
    if (capture_forbids()) return cudaErrorStreamCaptureUnsupported;
    if (!ptr) return cudaSuccess;
    auto it = g_allocs.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == g_allocs.end()) {
        fprintf(stderr, "cuda-emu: cudaFree(%p): not a live allocation\n", ptr);
        return fail(cudaErrorInvalidValue);
    }
    g_live_bytes -= it->second.bytes;
    g_device_bytes[it->second.device] -= it->second.bytes;
    g_allocs.erase(it);
    free(ptr);
    return cudaSuccess;
}

namespace {

/* Both ends of a copy must be what its kind says, the device end inside one live
 * allocation (of any device: copies between devices go through UVA). */
cudaError_t check_copy(void* dst, const void* src, size_t bytes, cudaMemcpyKind& kind) {
    if (bytes == 0) return cudaSuccess;
    if (!dst || !src) return fail(cudaErrorInvalidValue);
    const bool dst_dev = is_device(dst, bytes), src_dev = is_device(src, bytes);
    if (kind == cudaMemcpyDefault)
        kind = static_cast<cudaMemcpyKind>((src_dev ? 2 : 0) | (dst_dev ? 1 : 0));
    const bool want_src = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    const bool want_dst = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDeviceToDevice)
        return fail(cudaErrorInvalidMemcpyDirection);
    if (want_src != src_dev || want_dst != dst_dev || (!want_src && is_device(src, 0)) ||
        (!want_dst && is_device(dst, 0))) {
        fprintf(stderr, "cuda-emu: copy of %zu bytes %p -> %p (kind %d): %s\n", bytes, src, dst,
                static_cast<int>(kind), "an end is not the memory its kind says");
        return fail(cudaErrorInvalidValue);
    }
    return cudaSuccess;
}

cudaError_t copy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
    const cudaError_t e = check_copy(dst, src, bytes, kind);
    if (e == cudaSuccess && bytes) memmove(dst, src, bytes);
    g_counts.device_to_device += e == cudaSuccess && bytes && kind == cudaMemcpyDeviceToDevice;
    return e;
}

}  // namespace

cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
    EMU_LOCK;
    if (capture_forbids()) return cudaErrorStreamCaptureUnsupported;
    const cudaError_t e = copy(dst, src, bytes, kind);
    g_counts.copies += e == cudaSuccess;
    g_counts.syncs += e == cudaSuccess;
    return e;
}

/* Synchronous: the copy is done when the call returns, which every caller of the async
 * form must already tolerate. On a stream being captured it is recorded instead. */
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream) {
    EMU_LOCK;
    if (!valid_stream(stream)) return fail(cudaErrorInvalidResourceHandle);
    if (!stream && thread_captures_strictly()) return fail(cudaErrorStreamCaptureImplicit);
    if (capture_state* c = capturing(stream)) {
        const cudaError_t e = check_copy(dst, src, bytes, kind);
        if (e != cudaSuccess) {
            c->invalidated = true;
            return e;
        }
        graph_node n = {};
        n.kind = graph_node::COPY;
        n.dst = dst;
        n.src = src;
        n.bytes = bytes;
        n.copy_kind = kind;
        c->nodes.push_back(n);
        return cudaSuccess;
    }
    const cudaError_t e = copy(dst, src, bytes, kind);
    g_counts.copies += e == cudaSuccess;
    return e;
}

/* ---- pinned host memory -------------------------------------------------------------- */

cudaError_t cudaHostAlloc(void** ptr, size_t bytes, unsigned int flags) {
    EMU_LOCK;
    if (!ptr || flags != cudaHostAllocDefault) return fail(cudaErrorInvalidValue);
    *ptr = nullptr;
    if (capture_forbids()) return cudaErrorStreamCaptureUnsupported;
    void* p = malloc(bytes ? bytes : 1);
    if (!p) return fail(cudaErrorMemoryAllocation);
    g_host_allocs[reinterpret_cast<uintptr_t>(p)] = bytes;
    *ptr = p;
    return cudaSuccess;
}

cudaError_t cudaFreeHost(void* ptr) {
    EMU_LOCK;
    if (capture_forbids()) return cudaErrorStreamCaptureUnsupported;
    if (!ptr) return cudaSuccess;
    if (!g_host_allocs.erase(reinterpret_cast<uintptr_t>(ptr))) {
        fprintf(stderr, "cuda-emu: cudaFreeHost(%p): not pinned host memory\n", ptr);
        return fail(cudaErrorInvalidValue);
    }
    free(ptr);
    return cudaSuccess;
}

/* Device memory only, inside one live allocation; synchronous like the copies. */
namespace {

cudaError_t memset_now(void* dst, int value, size_t bytes) {
    if (bytes == 0) return cudaSuccess;
    if (!dst || !is_device(dst, bytes)) {
        fprintf(stderr, "cuda-emu: memset of %zu bytes at %p: not device memory\n", bytes, dst);
        return fail(cudaErrorInvalidValue);
    }
    memset(dst, value, bytes);
    return cudaSuccess;
}

}  // namespace

/* On a stream being captured it is recorded, and runs at each replay. */
cudaError_t cudaMemsetAsync(void* dst, int value, size_t bytes, cudaStream_t stream) {
    EMU_LOCK;
    if (!valid_stream(stream)) return fail(cudaErrorInvalidResourceHandle);
    if (!stream && thread_captures_strictly()) return fail(cudaErrorStreamCaptureImplicit);
    if (capture_state* c = capturing(stream)) {
        if (bytes && (!dst || !is_device(dst, bytes))) {
            c->invalidated = true;
            return memset_now(dst, value, bytes);  // the error, nothing written
        }
        graph_node n = {};
        n.kind = graph_node::MEMSET;
        n.dst = dst;
        n.bytes = bytes;
        n.value = value;
        c->nodes.push_back(n);
        return cudaSuccess;
    }
    return memset_now(dst, value, bytes);
}

cudaError_t cudaMemset(void* dst, int value, size_t bytes) {
    EMU_LOCK;
    if (capture_forbids()) return cudaErrorStreamCaptureUnsupported;
    return memset_now(dst, value, bytes);
}

/* ---- streams ----------------------------------------------------------------------- */

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) {
    EMU_LOCK;
    if (!stream || (flags != cudaStreamDefault && flags != cudaStreamNonBlocking))
        return fail(cudaErrorInvalidValue);
    *stream = new CUstream_st{flags, t_device, nullptr};
    g_streams.insert(*stream);
    return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
    EMU_LOCK;
    if (!stream || !g_streams.count(stream)) return fail(cudaErrorInvalidResourceHandle);
    g_streams.erase(stream);
    delete stream;  // a capture in progress is dropped with it
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
    EMU_LOCK;
    if (!valid_stream(stream)) return fail(cudaErrorInvalidResourceHandle);
    if (capturing(stream)) {
        stream->capture->invalidated = true;
        return fail(cudaErrorStreamCaptureUnsupported);
    }
    if (capture_forbids()) return cudaErrorStreamCaptureUnsupported;
    ++g_counts.syncs;
    return cudaSuccess;
}

/* ---- capture and graphs ------------------------------------------------------------- */

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode) {
    EMU_LOCK;
    // The legacy default stream cannot be captured.
    if (!stream || !g_streams.count(stream)) return fail(cudaErrorInvalidResourceHandle);
    if (mode < cudaStreamCaptureModeGlobal || mode > cudaStreamCaptureModeRelaxed)
        return fail(cudaErrorInvalidValue);
    if (stream->capture) return fail(cudaErrorIllegalState);
    stream->capture.reset(new capture_state{mode, std::this_thread::get_id(), false, node_list()});
    return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph) {
    EMU_LOCK;
    if (!graph) return fail(cudaErrorInvalidValue);
    *graph = nullptr;
    if (!stream || !g_streams.count(stream)) return fail(cudaErrorInvalidResourceHandle);
    capture_state* c = stream->capture.get();
    if (!c) return fail(cudaErrorIllegalState);
    if (c->mode != cudaStreamCaptureModeRelaxed && c->thread != std::this_thread::get_id())
        return fail(cudaErrorStreamCaptureWrongThread);
    std::unique_ptr<capture_state> done(stream->capture.release());
    if (done->invalidated) return fail(cudaErrorStreamCaptureInvalidated);
    CUgraph_st* g = new CUgraph_st{std::move(done->nodes), stream->device};
    g_graphs.insert(g);
    ++g_counts.captures;
    *graph = g;
    return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* status) {
    EMU_LOCK;
    if (!status) return fail(cudaErrorInvalidValue);
    if (!valid_stream(stream)) return fail(cudaErrorInvalidResourceHandle);
    const capture_state* c = capturing(stream);
    *status = !c               ? cudaStreamCaptureStatusNone
              : c->invalidated ? cudaStreamCaptureStatusInvalidated
                               : cudaStreamCaptureStatusActive;
    return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long) {
    EMU_LOCK;
    if (!exec) return fail(cudaErrorInvalidValue);
    *exec = nullptr;
    if (!graph || !g_graphs.count(graph)) return fail(cudaErrorInvalidResourceHandle);
    CUgraphExec_st* e =
        new CUgraphExec_st{std::make_shared<const node_list>(graph->nodes), graph->device};
    g_execs.insert(e);
    *exec = e;
    return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
    EMU_LOCK;
    if (!graph || !g_graphs.erase(graph)) return fail(cudaErrorInvalidResourceHandle);
    delete graph;
    return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
    EMU_LOCK;
    if (!exec || !g_execs.erase(exec)) return fail(cudaErrorInvalidResourceHandle);
    delete exec;
    return cudaSuccess;
}

namespace {

/* One step of a graph launch, the mutex not held (a kernel takes it as it runs). */
void replay(const graph_node& n) {
    if (n.kind == graph_node::KERNEL) {
        t_replaying = true;
        n.launch(n.site, n.grid, n.block);
        t_replaying = false;
        return;
    }
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_sticky != cudaSuccess) return;
    if (n.kind == graph_node::EVENT) {
        // The event may have been destroyed since the capture: then nothing is timed.
        if (g_events.count(n.event)) *n.event = {true, now_ns()};
        return;
    }
    if (n.kind == graph_node::MEMSET) {
        if (memset_now(n.dst, n.value, n.bytes) != cudaSuccess)
            fault(cudaErrorIllegalAddress, "graph memset of %zu bytes at %p: not live memory",
                  n.bytes, n.dst);
        return;
    }
    // The memory may have been freed since the capture: a fault, as on a GPU.
    if (copy(n.dst, n.src, n.bytes, n.copy_kind) != cudaSuccess)
        fault(cudaErrorIllegalAddress, "graph copy of %zu bytes %p -> %p: not live memory", n.bytes,
              n.src, n.dst);
    ++g_counts.graph_copies;
}

}  // namespace

/* Runs the graph's steps in order at the call, as everything here runs. */
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
    std::shared_ptr<const node_list> nodes;
    {
        EMU_LOCK;
        if (!exec || !g_execs.count(exec) || !valid_stream(stream))
            return fail(cudaErrorInvalidResourceHandle);
        // Child graphs inside a capture are not emulated; the plugin does not nest them.
        if (capturing(stream) || (!stream && thread_captures_strictly()))
            return fail(cudaErrorStreamCaptureUnsupported);
        if ((stream && stream->device != exec->device) || t_device != exec->device)
            return fail(cudaErrorInvalidResourceHandle);
        nodes = exec->nodes;
        ++g_counts.graph_launches;
    }
    for (const graph_node& n : *nodes) {
        {
            std::lock_guard<std::mutex> lock(g_mutex);
            if (g_sticky != cudaSuccess) return g_sticky;
        }
        replay(n);
    }
    return cudaSuccess;
}

/* ---- events --------------------------------------------------------------------------- */

cudaError_t cudaEventCreate(cudaEvent_t* event) {
    EMU_LOCK;
    if (!event) return fail(cudaErrorInvalidValue);
    *event = new CUevent_st{false, 0};
    g_events.insert(*event);
    return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
    EMU_LOCK;
    if (!event || !g_events.erase(event)) return fail(cudaErrorInvalidResourceHandle);
    delete event;
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
    EMU_LOCK;
    if (!event || !g_events.count(event) || !valid_stream(stream))
        return fail(cudaErrorInvalidResourceHandle);
    if (!stream && thread_captures_strictly()) return fail(cudaErrorStreamCaptureImplicit);
    if (capture_state* c = capturing(stream)) {
        graph_node n = {};
        n.kind = graph_node::EVENT;
        n.event = event;
        c->nodes.push_back(n);
        return cudaSuccess;
    }
    *event = {true, now_ns()};
    return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
    EMU_LOCK;
    if (!event || !g_events.count(event)) return fail(cudaErrorInvalidResourceHandle);
    if (capture_forbids()) return cudaErrorStreamCaptureUnsupported;
    ++g_counts.syncs;
    return cudaSuccess;
}

/* Milliseconds from `start` to `end`, both recorded and executed. */
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
    EMU_LOCK;
    if (!ms) return fail(cudaErrorInvalidValue);
    if (!start || !end || !g_events.count(start) || !g_events.count(end))
        return fail(cudaErrorInvalidResourceHandle);
    if (!start->recorded || !end->recorded) return fail(cudaErrorInvalidResourceHandle);
    *ms = static_cast<float>(static_cast<double>(static_cast<int64_t>(end->ns - start->ns)) / 1e6);
    return cudaSuccess;
}

/* ---- the launch engine -------------------------------------------------------------- */

namespace cuda_emu {
namespace {

/* Kernel frames are small; the sanitizer's redzones make them larger. */
#ifdef CUDA_EMU_ASAN
constexpr size_t kStackBytes = 512 * 1024;
#else
constexpr size_t kStackBytes = 128 * 1024;
#endif

struct fiber {
    fiber_context ctx;
    char* stack = nullptr; /* above a guard page, so an overflow faults */
    size_t size = 0;
    void* fake_stack = nullptr; /* ASan's bookkeeping while switched out */
    unsigned valgrind_id = 0;
};

/* Fibers are kept from launch to launch (one per thread of the largest cooperative
 * block, plus the runner); freed when the plugin is unloaded. */
struct fiber_pool {
    std::vector<fiber*> fibers;
    ~fiber_pool() {
        const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
        for (fiber* f : fibers) {
            VALGRIND_STACK_DEREGISTER(f->valgrind_id);
            munmap(f->stack - page, f->size + page);
            delete f;
        }
    }
    fiber* at(size_t i) {
        const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
        while (fibers.size() <= i) {
            void* m = mmap(nullptr, kStackBytes + page, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            if (m == MAP_FAILED) return nullptr;
            mprotect(m, page, PROT_NONE);
            fiber* f = new fiber;
            f->stack = static_cast<char*>(m) + page;
            f->size = kStackBytes;
            f->valgrind_id = VALGRIND_STACK_REGISTER(f->stack, f->stack + f->size);
            fibers.push_back(f);
        }
        return fibers[i];
    }
};
fiber_pool g_pool;

enum thread_state : uint8_t { T_NEW, T_READY, T_RUNNING, T_WAIT_BLOCK, T_WAIT_WARP, T_DONE };

/* A cp.async in flight: done at the cp.async.wait_group that retires its group. */
struct async_copy {
    void* dst;
    const void* src;
    unsigned bytes, src_bytes; /* src_bytes read, the rest of bytes zero-filled */
};

struct sim_thread {
    fiber* f = nullptr;
    uint8_t state = T_NEW;
    unsigned gen = 0;               /* the warp barrier generation it arrived at */
    std::vector<async_copy> copies; /* issued, not yet done, oldest first */
    std::vector<size_t> groups;     /* copies in each committed group, oldest first */
    size_t uncommitted = 0;         /* the newest copies, in no group yet */
};

/* The most bytes one lane hands to a warp collective (mma.sync's fragments: 40). */
constexpr size_t kLaneBytes = 48;

struct warp_state {
    unsigned arrived = 0, mask = 0, gen = 0;
    /* By generation parity: a lane can be one collective ahead of a lane still reading. */
    unsigned char value[2][32][kLaneBytes];
};

struct grid_run {
    launch_site site;
    dim3 grid, block;
    uint64_t blocks = 0;
    unsigned threads = 0;
    void (*body)(void*) = nullptr;
    void* arg = nullptr;
    bool reverse = false;
    bool coop = false;         /* a barrier was reached: blocks run as fibers */
    bool failed = false;       /* a fault: stop running */
    uint64_t mma_lanes = 0;    /* lanes' mma.sync calls (32 per warp operation) */
    bool start_runner = false; /* what the next new fiber runs */
    uint64_t block_pos = 0;    /* in run order */
    unsigned thread_pos = 0;   /* plain mode, in run order */
    unsigned current = 0;      /* linear index of the running thread in its block */
    fiber main;                /* the launching context */
    const void* main_bottom = nullptr;
    size_t main_size = 0;
    fiber* runner = nullptr;
    std::vector<sim_thread> th;
    std::vector<warp_state> warps;
    unsigned block_arrived = 0;
};

thread_local grid_run* t_run;

uint64_t nth(const grid_run& r, uint64_t pos, uint64_t count) {
    return r.reverse ? count - 1 - pos : pos;
}

uint3 unflatten(uint64_t i, dim3 d) {
    return {static_cast<unsigned>(i % d.x), static_cast<unsigned>((i / d.x) % d.y),
            static_cast<unsigned>(i / (static_cast<uint64_t>(d.x) * d.y))};
}

void enter_block(grid_run& r) {
    blockIdx = unflatten(nth(r, r.block_pos, r.blocks), r.grid);
}

void enter_thread(grid_run& r, unsigned t) {
    r.current = t;
    threadIdx = unflatten(t, r.block);
}

/* ---- context switches (annotated for ASan, which otherwise loses track of stacks) -- */

void asan_start(void** fake_save, const void* bottom, size_t size) {
#ifdef CUDA_EMU_ASAN
    __sanitizer_start_switch_fiber(fake_save, bottom, size);
#else
    (void)fake_save, (void)bottom, (void)size;
#endif
}

void asan_finish(void* fake_save, const void** bottom_old, size_t* size_old) {
#ifdef CUDA_EMU_ASAN
    __sanitizer_finish_switch_fiber(fake_save, bottom_old, size_old);
#else
    (void)fake_save, (void)bottom_old, (void)size_old;
#endif
}

/* From a fiber back to the launching context; `finished`: it will not be resumed. */
void yield_to_main(grid_run& r, fiber* self, bool finished) {
    asan_start(finished ? nullptr : &self->fake_stack, r.main_bottom, r.main_size);
    fiber_context_switch(&self->ctx, &r.main.ctx);
    asan_finish(self->fake_stack, &r.main_bottom, &r.main_size);
}

void resume(grid_run& r, fiber* f) {
    asan_start(&r.main.fake_stack, f->stack, f->size);
    fiber_context_switch(&r.main.ctx, &f->ctx);
    asan_finish(r.main.fake_stack, nullptr, nullptr);
}

void fiber_main();

void prepare(fiber* f) {
#ifdef CUDA_EMU_ASAN
    // An abandoned fiber (a fault) may have left its frames poisoned.
    ASAN_UNPOISON_MEMORY_REGION(f->stack, f->size);
#endif
    f->fake_stack = nullptr;
    fiber_context_init(&f->ctx, f->stack, f->size, fiber_main);
}

/* ---- blocks ------------------------------------------------------------------------- */

/* The running thread returned from the kernel. Copies it never waited for would land
 * at some unknown time on a GPU: a fault (a missing cp.async.wait_group). */
void finish_thread(grid_run& r) {
    sim_thread& me = r.th[r.current];
    me.state = T_DONE;
    if (me.copies.empty()) return;
    fault(cudaErrorLaunchFailure,
          "%s:%d: %s, block (%u,%u,%u) thread (%u,%u,%u): exits with %zu cp.async copies never "
          "waited for",
          r.site.file, r.site.line, r.site.kernel, blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x,
          threadIdx.y, threadIdx.z, me.copies.size());
    r.failed = true;
}

/* Plain mode, on the runner fiber: blocks in turn, threads one after the other, until
 * a thread reaches a barrier (then it goes on as a fiber of a cooperative block). */
void run_plain(grid_run& r) {
    for (; r.block_pos < r.blocks; ++r.block_pos) {
        enter_block(r);
        for (r.thread_pos = 0; r.thread_pos < r.threads; ++r.thread_pos) {
            enter_thread(r, static_cast<unsigned>(nth(r, r.thread_pos, r.threads)));
            r.body(r.arg);
            if (r.coop) {
                finish_thread(r);
                return;
            }
        }
    }
}

void fiber_main() {
    grid_run& r = *t_run;
    asan_finish(nullptr, &r.main_bottom, &r.main_size);
    fiber* self;
    if (r.start_runner) {
        self = r.runner;
        run_plain(r);
    } else {
        self = r.th[r.current].f;
        r.body(r.arg);
        finish_thread(r);
    }
    yield_to_main(r, self, true);
    abort();  // never resumed
}

/* A fault inside a kernel: the thread stops here and the launch ends. */
[[noreturn]] void abandon(grid_run& r) {
    r.failed = true;
    yield_to_main(r, r.th[r.current].f, true);
    abort();
}

/* Threads and warps of the block about to run cooperatively. When the launch turns
 * cooperative mid-block, the threads before the current one in run order have
 * already finished (they never reached a barrier, which is itself a fault if the
 * barrier needed them), and the current one goes on on the runner's stack. */
bool setup_block(grid_run& r, bool converting) {
    r.th.assign(r.threads, sim_thread());
    r.warps.assign((r.threads + 31) / 32, warp_state());
    r.block_arrived = 0;
    size_t next = 1;  // fiber 0 is the runner
    for (unsigned pos = 0; pos < r.threads; ++pos) {
        sim_thread& s = r.th[nth(r, pos, r.threads)];
        if (converting && pos < r.thread_pos) {
            s.state = T_DONE;
        } else if (converting && pos == r.thread_pos) {
            s.f = r.runner;
            s.state = T_RUNNING;
        } else {
            s.f = g_pool.at(next++);
            if (!s.f) {
                fault(cudaErrorLaunchFailure, "%s: no memory for %u fiber stacks", r.site.kernel,
                      r.threads);
                return false;
            }
            s.state = T_NEW;
        }
    }
    return true;
}

void make_cooperative(grid_run& r) {
    r.coop = true;
    if (!setup_block(r, true)) abandon(r);
}

const char* where(const grid_run& r, char* buf, size_t cap) {
    snprintf(buf, cap, "%s:%d: %s, block (%u,%u,%u) thread (%u,%u,%u)", r.site.file, r.site.line,
             r.site.kernel, blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y,
             threadIdx.z);
    return buf;
}

/* Nothing can run but some threads have not finished: a barrier can never complete. */
void deadlock(grid_run& r) {
    unsigned at_block = 0, at_warp = 0, done = 0;
    for (const sim_thread& s : r.th) {
        at_block += s.state == T_WAIT_BLOCK;
        at_warp += s.state == T_WAIT_WARP;
        done += s.state == T_DONE;
    }
    fault(cudaErrorLaunchFailure,
          "%s:%d: %s, block (%u,%u,%u): barrier never completes: %u threads at __syncthreads, %u "
          "at a warp shuffle, %u exited",
          r.site.file, r.site.line, r.site.kernel, blockIdx.x, blockIdx.y, blockIdx.z, at_block,
          at_warp, done);
    r.failed = true;
}

/* Runs the threads of a cooperative block until all finish or none can go on. */
void schedule_block(grid_run& r) {
    for (bool ran = true; ran && !r.failed;) {
        ran = false;
        for (unsigned pos = 0; pos < r.threads && !r.failed; ++pos) {
            const unsigned t = static_cast<unsigned>(nth(r, pos, r.threads));
            sim_thread& s = r.th[t];
            if (s.state != T_NEW && s.state != T_READY) continue;
            if (s.state == T_NEW) prepare(s.f);
            s.state = T_RUNNING;
            r.start_runner = false;
            enter_thread(r, t);
            resume(r, s.f);
            ran = true;
        }
    }
    if (r.failed) return;
    for (const sim_thread& s : r.th)
        if (s.state != T_DONE) return deadlock(r);
}

grid_run& running(const char* what) {
    if (!t_run) {
        fprintf(stderr, "cuda-emu: %s called outside a kernel\n", what);
        abort();
    }
    return *t_run;
}

void wait_here(grid_run& r, uint8_t state) {
    sim_thread& me = r.th[r.current];
    me.state = state;
    yield_to_main(r, me.f, false);
}

}  // namespace

bool launch_check(const launch_site& site, dim3 grid, dim3 block, size_t shmem,
                  cudaStream_t stream) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_sticky != cudaSuccess) return false;
    const uint64_t threads = static_cast<uint64_t>(block.x) * block.y * block.z;
    if (!grid.x || !grid.y || !grid.z || !threads || block.x > 1024 || block.y > 1024 ||
        block.z > 64 || threads > 1024 || grid.x > static_cast<unsigned>(INT_MAX) ||
        grid.y > 65535 || grid.z > 65535)
        return launch_error(cudaErrorInvalidConfiguration, site,
                            "grid (%u,%u,%u), block (%u,%u,%u) outside CUDA's limits", grid.x,
                            grid.y, grid.z, block.x, block.y, block.z);
    if (shmem > 48 * 1024)
        return launch_error(cudaErrorInvalidValue, site, "%zu bytes of dynamic shared memory",
                            shmem);
    if (!valid_stream(stream))
        return launch_error(cudaErrorInvalidResourceHandle, site, "stream %p is not live",
                            static_cast<const void*>(stream));
    if (stream && stream->device != t_device)
        return launch_error(cudaErrorInvalidResourceHandle, site,
                            "stream of device %d while device %d is current", stream->device,
                            t_device);
    if (!stream && thread_captures_strictly())
        return launch_error(cudaErrorStreamCaptureImplicit, site,
                            "on the legacy stream while this thread captures a stream");
    return true;
}

bool capture_launch(const launch_site& site, dim3 grid, dim3 block, cudaStream_t stream,
                    const recorded_launch& launch) {
    std::lock_guard<std::mutex> lock(g_mutex);
    capture_state* c = capturing(stream);
    if (!c) return false;
    graph_node n = {};
    n.kind = graph_node::KERNEL;
    n.site = site;
    n.grid = grid;
    n.block = block;
    n.launch = launch;
    c->nodes.push_back(n);
    return true;
}

bool check_pointer_arg(const launch_site& site, int index, const void* p) {
    std::lock_guard<std::mutex> lock(g_mutex);
    const allocation* a = p ? find_device(p, 0) : nullptr;
    if (!p || (a && a->device == t_device)) return true;
    if (a)
        fault(cudaErrorIllegalAddress, "%s:%d: %s: argument %d (%p) is memory of device %d, not %d",
              site.file, site.line, site.kernel, index, p, a->device, t_device);
    else
        fault(cudaErrorIllegalAddress, "%s:%d: %s: argument %d (%p) is not device memory",
              site.file, site.line, site.kernel, index, p);
    return false;
}

void launch_run(const launch_site& site, dim3 grid, dim3 block, void (*body)(void*), void* arg) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_sticky != cudaSuccess) return;
    if (t_run) {
        fault(cudaErrorLaunchFailure, "%s: launched from inside a kernel", site.kernel);
        return;
    }
    grid_run r;
    r.site = site;
    r.grid = grid;
    r.block = block;
    r.blocks = static_cast<uint64_t>(grid.x) * grid.y * grid.z;
    r.threads = block.x * block.y * block.z;
    r.body = body;
    r.arg = arg;
    r.reverse = settings().reverse;
    gridDim = grid;
    blockDim = block;
    r.runner = g_pool.at(0);
    if (!r.runner) {
        fault(cudaErrorLaunchFailure, "%s: no memory for a fiber stack", site.kernel);
        return;
    }
    t_run = &r;
    prepare(r.runner);
    r.start_runner = true;
    resume(r, r.runner);  // back when every block ran plainly, or at the first barrier
    if (r.coop && !r.failed) {
        schedule_block(r);
        for (++r.block_pos; r.block_pos < r.blocks && !r.failed; ++r.block_pos) {
            enter_block(r);
            if (!setup_block(r, false)) break;
            schedule_block(r);
        }
    }
    t_run = nullptr;
    // The kernel's name as the launch spelled it: "(igemm_s8<4, 16>)" counts as igemm_s8
    // (a template with several arguments is parenthesized for the macro).
    std::string name(site.kernel);
    name = name.substr(name[0] == '(' ? 1 : 0);
    kernel_stats& k = g_kernels[name.substr(0, name.find('<'))];
    ++k.launches;
    k.threads += r.blocks * r.threads;
    k.cooperative += r.coop;
    k.mma_launches += r.mma_lanes > 0;
    k.mma_ops += r.mma_lanes / 32;
    ++(t_replaying ? g_counts.graph_kernels : g_counts.launches);
}

namespace {

/* A warp collective: each lane of `mask` deposits `bytes` bytes and waits until every
 * lane of the mask has; returns the deposits of the warp's 32 lanes (lane l at
 * l * kLaneBytes), valid until this lane's next collective. */
const unsigned char* warp_exchange(grid_run& r, unsigned mask, const void* mine, size_t bytes,
                                   const char* what) {
    char buf[256];
    const unsigned t = r.current, lane = t % 32, w = t / 32;
    const unsigned lanes = r.threads - w * 32 < 32 ? r.threads - w * 32 : 32;
    const unsigned existing = lanes == 32 ? ~0u : (1u << lanes) - 1;
    if (!((mask >> lane) & 1u) || (mask & ~existing) || bytes > kLaneBytes) {
        fault(cudaErrorLaunchFailure, "%s: %s with mask %#x from lane %u of %u",
              where(r, buf, sizeof buf), what, mask, lane, lanes);
        abandon(r);
    }
    warp_state& ws = r.warps[w];
    if (ws.arrived && ws.mask != mask) {
        fault(cudaErrorLaunchFailure, "%s: lanes of one warp meet at %s with masks %#x and %#x",
              where(r, buf, sizeof buf), what, ws.mask, mask);
        abandon(r);
    }
    sim_thread& me = r.th[t];
    me.gen = ws.gen;
    ws.mask = mask;
    memcpy(ws.value[ws.gen & 1][lane], mine, bytes);
    ws.arrived |= 1u << lane;
    if (ws.arrived == mask) {
        ws.arrived = 0;
        ++ws.gen;
        for (unsigned l = 0; l < lanes; ++l)
            if (r.th[w * 32 + l].state == T_WAIT_WARP) r.th[w * 32 + l].state = T_READY;
    } else {
        wait_here(r, T_WAIT_WARP);
    }
    return &ws.value[r.th[t].gen & 1][0][0];
}

}  // namespace

uint64_t shfl_down(unsigned int mask, uint64_t value, unsigned int delta, int width) {
    grid_run& r = running("__shfl_down_sync");
    if (!r.coop) make_cooperative(r);
    char buf[256];
    const unsigned lane = r.current % 32;
    if (width <= 0 || width > 32 || (width & (width - 1))) {
        fault(cudaErrorLaunchFailure, "%s: __shfl_down_sync(mask %#x, width %d) from lane %u",
              where(r, buf, sizeof buf), mask, width, lane);
        abandon(r);
    }
    const unsigned char* all = warp_exchange(r, mask, &value, sizeof value, "__shfl_down_sync");
    const unsigned seg = static_cast<unsigned>(width);
    if ((lane & (seg - 1)) + delta >= seg) return value;
    const unsigned src = lane + delta;
    if (!((mask >> src) & 1u)) {
        fault(cudaErrorLaunchFailure, "%s: __shfl_down_sync reads lane %u, outside mask %#x",
              where(r, buf, sizeof buf), src, mask);
        abandon(r);
    }
    uint64_t out;
    memcpy(&out, all + src * kLaneBytes, sizeof out);
    return out;
}

namespace {

struct mma_fragments {
    uint32_t a[4], b[2];
    int32_t c[4];
};

/* Byte k % 4 of register `reg` (a word index into mma_fragments) of `lane`, as int8
 * (little-endian: byte 0 is the register's low byte, as on a GPU). */
int32_t byte_at(const unsigned char* all, unsigned lane, size_t reg, unsigned k) {
    return static_cast<int8_t>(all[lane * kLaneBytes + reg * 4 + k % 4]);
}

/* A[row][k] of the m16n8k32 tile from the lanes' fragments (PTX ISA layout). */
int32_t a_at(const unsigned char* all, unsigned row, unsigned k) {
    const size_t reg = offsetof(mma_fragments, a) / 4 + (row >= 8 ? 1 : 0) + (k >= 16 ? 2 : 0);
    return byte_at(all, 4 * (row % 8) + (k % 16) / 4, reg, k);
}

/* B[k][col] likewise. */
int32_t b_at(const unsigned char* all, unsigned k, unsigned col) {
    const size_t reg = offsetof(mma_fragments, b) / 4 + (k >= 16 ? 1 : 0);
    return byte_at(all, 4 * col + (k % 16) / 4, reg, k);
}

}  // namespace

void mma_m16n8k32_s8(int32_t d[4], const uint32_t a[4], const uint32_t b[2], const int32_t c[4]) {
    grid_run& r = running("mma.sync");
    if (!r.coop) make_cooperative(r);
    mma_fragments mine;
    memcpy(mine.a, a, sizeof mine.a);
    memcpy(mine.b, b, sizeof mine.b);
    memcpy(mine.c, c, sizeof mine.c);
    const unsigned char* all = warp_exchange(r, ~0u, &mine, sizeof mine, "mma.sync.m16n8k32");
    ++r.mma_lanes;
    const unsigned lane = r.current % 32, g = lane / 4, t = lane % 4;
    for (unsigned i = 0; i < 4; ++i) {
        const unsigned row = g + (i >= 2 ? 8 : 0), col = 2 * t + (i & 1);
        uint32_t acc = static_cast<uint32_t>(mine.c[i]);
        for (unsigned k = 0; k < 32; ++k)
            acc += static_cast<uint32_t>(a_at(all, row, k) * b_at(all, k, col));
        d[i] = static_cast<int32_t>(acc);
    }
}

void mma_m8n8k16_s8(int32_t d[2], uint32_t a, uint32_t b, const int32_t c[2]) {
    grid_run& r = running("mma.sync");
    if (!r.coop) make_cooperative(r);
    struct fragments {
        uint32_t a, b;
        int32_t c[2];
    } mine = {a, b, {c[0], c[1]}};
    const unsigned char* all = warp_exchange(r, ~0u, &mine, sizeof mine, "mma.sync.m8n8k16");
    ++r.mma_lanes;
    const unsigned lane = r.current % 32, g = lane / 4, t = lane % 4;
    for (unsigned i = 0; i < 2; ++i) {
        const unsigned col = 2 * t + i;
        uint32_t acc = static_cast<uint32_t>(mine.c[i]);
        for (unsigned k = 0; k < 16; ++k) {
            const int32_t x = static_cast<int8_t>(all[(4 * g + k / 4) * kLaneBytes + k % 4]);
            const int32_t y = static_cast<int8_t>(all[(4 * col + k / 4) * kLaneBytes + 4 + k % 4]);
            acc += static_cast<uint32_t>(x * y);
        }
        d[i] = static_cast<int32_t>(acc);
    }
}

void ldmatrix_x4(uint32_t out[4], const void* row) {
    grid_run& r = running("ldmatrix");
    if (!r.coop) make_cooperative(r);
    char buf[256];
    if (reinterpret_cast<uintptr_t>(row) % 16) {
        fault(cudaErrorLaunchFailure, "%s: ldmatrix row address %p is not 16-byte aligned",
              where(r, buf, sizeof buf), row);
        abandon(r);
    }
    const unsigned char* all = warp_exchange(r, ~0u, &row, sizeof row, "ldmatrix.x4");
    const unsigned lane = r.current % 32;
    for (unsigned j = 0; j < 4; ++j) {
        const unsigned char* src;
        memcpy(&src, all + (8 * j + lane / 4) * kLaneBytes, sizeof src);
        memcpy(&out[j], src + 4 * (lane % 4), sizeof out[j]);
    }
}

void cp_async(void* dst, const void* src, unsigned bytes, unsigned src_bytes) {
    grid_run& r = running("cp.async");
    if (!r.coop) make_cooperative(r);
    char buf[256];
    const bool size_ok = (bytes == 4 || bytes == 8 || bytes == 16) && src_bytes <= bytes;
    const uintptr_t d = reinterpret_cast<uintptr_t>(dst), s = reinterpret_cast<uintptr_t>(src);
    if (!size_ok || d % bytes || s % bytes || (src_bytes && !is_device(src, src_bytes))) {
        fault(cudaErrorLaunchFailure,
              "%s: cp.async of %u bytes (%u read) from %p to %p: misaligned or not device memory",
              where(r, buf, sizeof buf), bytes, src_bytes, src, dst);
        abandon(r);
    }
    sim_thread& me = r.th[r.current];
    me.copies.push_back({dst, src, bytes, src_bytes});
    ++me.uncommitted;
}

void cp_async_commit() {
    grid_run& r = running("cp.async.commit_group");
    if (!r.coop) make_cooperative(r);
    sim_thread& me = r.th[r.current];
    me.groups.push_back(me.uncommitted);
    me.uncommitted = 0;
}

void cp_async_wait(unsigned pending) {
    grid_run& r = running("cp.async.wait_group");
    if (!r.coop) make_cooperative(r);
    sim_thread& me = r.th[r.current];
    size_t done = 0;
    while (me.groups.size() > pending) {
        for (size_t i = 0; i < me.groups.front(); ++i, ++done) {
            const async_copy& c = me.copies[done];
            memcpy(c.dst, c.src, c.src_bytes);
            memset(static_cast<char*>(c.dst) + c.src_bytes, 0, c.bytes - c.src_bytes);
        }
        me.groups.erase(me.groups.begin());
    }
    me.copies.erase(me.copies.begin(), me.copies.begin() + static_cast<ptrdiff_t>(done));
}

}  // namespace cuda_emu

void __syncthreads(void) {
    grid_run& r = running("__syncthreads");
    if (!r.coop) make_cooperative(r);
    if (++r.block_arrived == r.threads) {
        r.block_arrived = 0;
        for (sim_thread& s : r.th)
            if (s.state == T_WAIT_BLOCK) s.state = T_READY;
        return;
    }
    wait_here(r, T_WAIT_BLOCK);
}

/* ---- counters for the tests (cuda_emu.h) --------------------------------------------- */

extern "C" CUDA_EMU_EXPORT int cvml_cuda_emu_kernel_stat(int index, const char** name,
                                                         uint64_t* launches, uint64_t* threads,
                                                         uint64_t* cooperative) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (index < 0 || static_cast<size_t>(index) >= g_kernels.size()) return 0;
    auto it = g_kernels.begin();
    std::advance(it, index);
    *name = it->first.c_str();
    *launches = it->second.launches;
    *threads = it->second.threads;
    *cooperative = it->second.cooperative;
    return 1;
}

extern "C" CUDA_EMU_EXPORT void cvml_cuda_emu_counts_get(cvml_cuda_emu_counts* out) {
    std::lock_guard<std::mutex> lock(g_mutex);
    *out = g_counts;
    out->host_allocations = g_host_allocs.size();
    out->host_bytes = 0;
    for (const auto& h : g_host_allocs) out->host_bytes += h.second;
    out->graphs = g_graphs.size();
    out->graph_execs = g_execs.size();
    out->events = g_events.size();
}

extern "C" CUDA_EMU_EXPORT uint64_t cvml_cuda_emu_device_bytes(int device) {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = g_device_bytes.find(device);
    return it == g_device_bytes.end() ? 0 : it->second;
}

extern "C" CUDA_EMU_EXPORT void cvml_cuda_emu_reset_peak(void) {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_peak_bytes = g_live_bytes;
}

/* From a kernel (whose launch holds the mutex) or from host code (which does not). */
void cuda_emu::count_path(const char* name) {
    if (t_run) {
        ++g_paths[name];
        return;
    }
    std::lock_guard<std::mutex> lock(g_mutex);
    ++g_paths[name];
}

extern "C" CUDA_EMU_EXPORT int cvml_cuda_emu_path_stat(int index, const char** name,
                                                       uint64_t* passes) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (index < 0 || static_cast<size_t>(index) >= g_paths.size()) return 0;
    auto it = g_paths.begin();
    std::advance(it, index);
    *name = it->first.c_str();
    *passes = it->second;
    return 1;
}

extern "C" CUDA_EMU_EXPORT int cvml_cuda_emu_kernel_mma(int index, uint64_t* mma_launches,
                                                        uint64_t* mma_ops) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (index < 0 || static_cast<size_t>(index) >= g_kernels.size()) return 0;
    auto it = g_kernels.begin();
    std::advance(it, index);
    *mma_launches = it->second.mma_launches;
    *mma_ops = it->second.mma_ops;
    return 1;
}

extern "C" CUDA_EMU_EXPORT void cvml_cuda_emu_memory(uint64_t* allocations, uint64_t* bytes,
                                                     uint64_t* peak_bytes, uint64_t* streams) {
    std::lock_guard<std::mutex> lock(g_mutex);
    *allocations = g_allocs.size();
    *bytes = g_live_bytes;
    *peak_bytes = g_peak_bytes;
    *streams = g_streams.size();
}

void cuda_emu::reset_fault() {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_sticky = cudaSuccess;
    g_fault.clear();
    t_last = cudaSuccess;
}

extern "C" CUDA_EMU_EXPORT const char* cvml_cuda_emu_fault(void) {
    std::lock_guard<std::mutex> lock(g_mutex);
    return g_fault.c_str();
}
