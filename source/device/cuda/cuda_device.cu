/* The CUDA device plugin: one stream per graph, intermediate tensors in one device
 * arena per subgraph placed by lifetime, weights uploaded once at prerun (the
 * scheduler's constant upload), kernels enqueued without any per-operator sync.
 *
 * A run of a subgraph is one CUDA graph launch: the subgraph's inputs are staged in
 * pinned host buffers as the scheduler hands them over (copy_to_device), and the graph
 * copies them in, runs every kernel and copies every output to pinned buffers; the first
 * copy back to the host (copy_to_host) waits for it, once, and the others only read the
 * pinned buffers. An input that is the output of another subgraph on the same GPU is
 * copied device to device instead. The first run of a subgraph enqueues its work
 * directly (kernels may prepare things once, at their first run); the second captures
 * the same work into a graph that every later run replays. Inputs of at most 8 (16) bits
 * travel as int8 (int16) and are widened on the GPU: they are narrowed as the scheduler
 * hands them over (a large one on several threads) and copied then, part by part,
 * ahead of the graph on its stream. A profiled run is enqueued directly
 * with an event between nodes and reports each node's time.
 *
 * Devices: "cuda" is the GPU CVML_CUDA_DEVICE names; with several GPUs each is also
 * "cuda:K". Every entry point makes the subgraph's GPU current on the calling thread.
 * Boundary buffers are handles whose device memory is made at prerun, never for a
 * constant no kernel reads (weights the kernels packed at prerun). Without a driver or
 * a GPU the entry point says why and registers nothing, and graphs run on the CPU. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <new>
#include <thread>

#include "cuda_device.h"
#include "cuda_kernel.h"
#include "cvml_plugin.h"
#include "gather.cuh"

#ifndef __CUDACC__
#include "cuda_emu.h"
#endif

CVML_PLUGIN_DEFINE("cuda", CVML_CUDA_PLUGIN_VERSION);

const cvml_ir_api* cuda_ir;

namespace cuda_dev {

const cvml_host_api* g_host;

#ifndef __CUDACC__
/* The emulated build tells the tests how much device memory the arenas hold. */
std::atomic<uint64_t> g_emu_arena_bytes{0};
#endif
void note_arena(size_t bytes, bool made) {
#ifndef __CUDACC__
    if (made)
        g_emu_arena_bytes += bytes;
    else
        g_emu_arena_bytes -= bytes;
#else
    (void)bytes, (void)made;
#endif
}

}  // namespace cuda_dev

namespace {

using namespace cuda_dev;

void free_node(node_exec* ne) {
    if (ne->kernel && ne->kernel->postrun && ne->ctx.state) ne->kernel->postrun(&ne->ctx);
    free(ne->tensors);
    free(ne->tensor_ptrs);
    free(ne->ptrs);
}

void free_state(sg_state* st) {
    if (!st) return;
    cudaSetDevice(st->device);
    if (st->has_stream) cudaStreamSynchronize(st->stream);
    forget_mirrors_of(st);
    if (st->exec) cudaGraphExecDestroy(st->exec);
    free_events(st);
    free(st->exec_links);
    narrow_pool_destroy(st->pool);
    for (int32_t i = 0; i < st->node_count; ++i) free_node(&st->nodes[i]);
    free(st->nodes);
    if (st->arena) cudaFree(st->arena);
    note_arena(st->arena_bytes, false);
    free(st->tensor_ptr);
    free_staging(st->in, st->in_count);
    free_staging(st->out, st->out_count);
    if (st->has_stream) stream_release(st->graph, st->device);
    free(st);
}

/* ---- the device ---------------------------------------------------------------------- */

int device_of(const cvml_device* dev) {
    return static_cast<int>(reinterpret_cast<intptr_t>(dev->priv));
}

sg_state* state_of(const cvml_ir_subgraph* sg) {
    return sg ? static_cast<sg_state*>(cuda_ir->subgraph_state(sg)) : nullptr;
}

int cu_supports(cvml_device*, const cvml_ir_graph* g, const cvml_ir_node* node) {
    const cuda_kernel* k = find_kernel(cuda_ir->node_op(node));
    if (!k) return 0;
    if (!k->supports) return 1;
    node_exec view = {};
    const int ok = read_node(g, node, &view) == CVML_OK && k->supports(&view.ctx);
    free(view.tensors);
    free(view.tensor_ptrs);
    free(view.ptrs);
    return ok;
}

int cu_prerun(cvml_device* dev, cvml_ir_graph* g, cvml_ir_subgraph* sg,
              const cvml_device_options*) {
    sg_state* st = static_cast<sg_state*>(calloc(1, sizeof(sg_state)));
    if (!st) return cuda_fail(CVML_ERR_RUNTIME, "out of memory");
    const int32_t steps = cuda_ir->subgraph_node_count(sg);
    st->graph = g;
    st->device = device_of(dev);
    st->tensor_ptr = static_cast<int32_t**>(
        calloc(static_cast<size_t>(cuda_ir->graph_tensor_count(g)) + 1, sizeof(int32_t*)));
    st->nodes = static_cast<node_exec*>(calloc(static_cast<size_t>(steps) + 1, sizeof(node_exec)));
    int rc = !st->tensor_ptr || !st->nodes ? cuda_fail(CVML_ERR_RUNTIME, "out of memory") : 0;
    if (!rc) st->node_count = steps;
    if (!rc) rc = cuda_check(cudaSetDevice(st->device), "cudaSetDevice");
    // The CPU's order of the steps, so that the fusion walk fuses what the CPU fuses.
    if (!rc) rc = g_host->plan_order(g, sg);
    if (!rc) rc = stream_acquire(g, st->device, &st->stream);
    if (!rc) st->has_stream = 1;
    int32_t* write_step = static_cast<int32_t*>(
        calloc(static_cast<size_t>(cuda_ir->graph_tensor_count(g)) + 1, sizeof(int32_t)));
    if (!rc && !write_step) rc = cuda_fail(CVML_ERR_RUNTIME, "out of memory");
    if (!rc) rc = prepare_nodes(g, sg, st);
    if (!rc) rc = plan_fusion(g, sg, st, write_step);
    if (!rc) rc = bind_boundary(g, sg, st);
    if (!rc) rc = plan_memory(g, sg, st, write_step);
    free(write_step);
    if (!rc) rc = prepare_staging(g, sg, st);
    if (!rc) bind_nodes(st);
    if (!rc) rc = link_packed_inputs(st);
    if (rc) {
        free_state(st);
        return rc;
    }
    cuda_ir->subgraph_set_state(sg, st);
    return CVML_OK;
}

int cu_run(cvml_device*, cvml_ir_graph*, cvml_ir_subgraph* sg) {
    sg_state* st = state_of(sg);
    if (!st) return cuda_fail(CVML_ERR_RUNTIME, "a CUDA subgraph was not prepared");
    int rc = cuda_check(cudaSetDevice(st->device), "cudaSetDevice");
    // A run nobody copied out of still reads its staging (inputs' copies in flight are
    // ordered before this run on the stream: no wait for them).
    if (!rc && st->pending) rc = wait_run(st);
    if (rc) return rc;
    if (profiling(st)) {
        rc = run_profiled(st);  // waited for: nothing pending
        st->runs += rc == CVML_OK;
        return rc;
    }
    drop_graph_if_stale(st);
    bool direct = st->runs == 0 || st->direct_only;
    for (int32_t i = 0; i < st->in_count; ++i) direct |= st->in[i].whole != 0;
    if (!direct && !st->exec) {
        int failed = 0;
        rc = capture_run(st, &failed);
        if (failed) st->direct_only = 1;
        direct = failed != 0;
    }
    if (!rc)
        rc = direct ? enqueue_run(st)
                    : cuda_check(cudaGraphLaunch(st->exec, st->stream), "cudaGraphLaunch");
    if (rc) return rc;
    ++st->runs;
    st->pending = 1;
    // Launch errors only; faults during execution surface at the copy back.
    return cuda_check(cudaGetLastError(), "kernel launch");
}

void cu_postrun(cvml_device*, cvml_ir_graph*, cvml_ir_subgraph* sg) {
    free_state(state_of(sg));
    cuda_ir->subgraph_set_state(sg, nullptr);
}

/* A handle (boundary_buffer); its device memory comes at the subgraph's prerun. */
int cu_alloc(cvml_device* dev, size_t bytes, void** out) {
    boundary_buffer* b = static_cast<boundary_buffer*>(calloc(1, sizeof(boundary_buffer)));
    *out = b;
    if (!b) return cuda_fail(CVML_ERR_RUNTIME, "out of memory");
    b->bytes = bytes;
    b->gpu = device_of(dev);
    return CVML_OK;
}

void cu_free(cvml_device*, void* p) {
    boundary_buffer* b = as_buffer(p);
    if (!b) return;
    if (b->dev) {
        cudaSetDevice(b->gpu);
        cudaFree(b->dev);
    }
    free(b);
}

int cu_to_device(cvml_device*, cvml_ir_subgraph* sg, void* handle, const void* src, size_t bytes) {
    sg_state* st = state_of(sg);
    boundary_buffer* buffer = as_buffer(handle);
    if (buffer->unused) return CVML_OK;  // a constant no kernel reads
    int rc = cuda_check(cudaSetDevice(buffer->gpu), "cudaSetDevice");
    if (!rc) rc = materialize(buffer);
    if (rc) return rc;
    void* dst = buffer->dev;
    staged* b = st ? find_staged(st->in, st->in_count, st, buffer) : nullptr;
    if (!b || b->bytes != bytes) {
        // A constant, uploaded once: from pageable memory the call returns once `src`
        // has been staged, so the caller may reuse it; the copy is ordered before the
        // subgraph's kernels on its stream.
        cudaStream_t s = st ? st->stream : nullptr;
        rc = cuda_check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s),
                        "cudaMemcpyAsync to device");
        if (!rc && !s) rc = cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        return rc;
    }
    // The last run, or this input's last copy, may still be reading the staging buffer.
    if (st->pending || b->in_flight) rc = wait_run(st);
    if (rc) return rc;
    b->link = mirrored(src, bytes, st->device);
    b->whole = 0;
    if (!b->link && b->width < 4) {
        // Sent now, part by part as it is narrowed; the run's graph widens it.
        bool fits = true;
        rc = narrow_and_send(st->pool, b->host, b->narrow, static_cast<const int32_t*>(src),
                             bytes / 4, b->width, st->stream, &fits);
        b->in_flight = 1;                     // the copies read b->host until they are done
        if (!rc && !fits) rc = wait_run(st);  // before b->host is overwritten whole
        if (rc) return rc;
        b->whole = !fits;
    }
    if (!b->link && (b->width == 4 || b->whole)) memcpy(b->host, src, bytes);
    return CVML_OK;
}

int cu_to_host(cvml_device*, cvml_ir_subgraph* sg, void* dst, const void* handle, size_t bytes) {
    sg_state* st = state_of(sg);
    boundary_buffer* buffer = as_buffer(handle);
    int rc = cuda_check(cudaSetDevice(buffer->gpu), "cudaSetDevice");
    if (!rc) rc = materialize(buffer);
    if (rc) return rc;
    const void* src = buffer->dev;
    staged* b = st ? find_staged(st->out, st->out_count, st, buffer) : nullptr;
    if (!b || b->bytes != bytes) {
        cudaStream_t s = st ? st->stream : nullptr;
        rc = cuda_check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s),
                        "cudaMemcpyAsync to host");
        if (!rc) rc = cuda_check(s ? cudaStreamSynchronize(s) : cudaDeviceSynchronize(), "sync");
        return rc;
    }
    rc = wait_run(st);
    if (rc) return rc;
    memcpy(dst, b->host, bytes);
    remember_mirror(st, dst, src, bytes);
    return CVML_OK;
}

void cu_release(cvml_device*) {}

// A PCIe copy of one int32 costs about what a CPU core spends on a few dozen integer
// operations; an island must do more work than that to be worth the trip.
constexpr uint32_t kIslandWork = 32;

/* The devices this plugin registers: "cuda", the GPU that CVML_CUDA_DEVICE names (0 by
 * default), and with several GPUs also "cuda:K" for each, so that a context naming
 * "cuda:1" places its graphs on GPU 1. */
constexpr int kMaxGpus = 8;
struct gpu_device {
    cvml_device dev;
    char name[16];
    char version[320];
};
gpu_device g_gpus[kMaxGpus + 1];

/* Fills `slot` as the device `name` on GPU `gpu`. */
int make_device(gpu_device* slot, const char* name, int gpu, uint32_t island_work) {
    cudaDeviceProp prop;
    int rc = cuda_check(cudaGetDeviceProperties(&prop, gpu), "cudaGetDeviceProperties");
    if (rc) return rc;
    snprintf(slot->name, sizeof slot->name, "%s", name);
    snprintf(slot->version, sizeof slot->version, "%s (%s, sm_%d%d, GPU %d)",
             CVML_CUDA_PLUGIN_VERSION, prop.name, prop.major, prop.minor, gpu);
    slot->dev = {
        sizeof(cvml_device),
        CVML_PLUGIN_ABI_VERSION,
        slot->name,
        slot->version,
        cu_supports,
        cu_prerun,
        cu_run,
        cu_postrun,
        cu_alloc,
        cu_free,
        cu_to_device,
        cu_to_host,
        cu_release,
        reinterpret_cast<void*>(static_cast<intptr_t>(gpu)), /* device_of */
        island_work,
    };
    return CVML_OK;
}

/* A whole decimal number in [0, max], or -1. */
long parse_count(const char* text, unsigned long max) {
    char* end = nullptr;
    const unsigned long v = strtoul(text, &end, 10);
    if (!text[0] || *end || text[0] == '-' || v > max) return -1;
    return static_cast<long>(v);
}

}  // namespace

int cuda_fail(int status, const char* fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return g_host ? g_host->fail(status, msg) : status;
}

int cuda_check(cudaError_t e, const char* what) {
    if (e == cudaSuccess) return CVML_OK;
    return cuda_fail(CVML_ERR_RUNTIME, "cuda: %s: %s (%s)", what, cudaGetErrorName(e),
                     cudaGetErrorString(e));
}

namespace {
__global__ void copy_kernel(const int32_t* x, int32_t* y, int64_t n) {
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x)
        y[i] = x[i];
}
}  // namespace

#ifndef __CUDACC__
extern "C" CUDA_EMU_EXPORT uint64_t cvml_cuda_emu_arena_bytes(void) {
    return cuda_dev::g_emu_arena_bytes.load();
}
#endif

int cuda_copy_input0(cuda_node_ctx* ctx) {
    int64_t n = cuda_count(ctx->outputs[0]);
    if (ctx->in[0] == ctx->out[0]) return CVML_OK;
    CUDA_LAUNCH(copy_kernel, cuda_blocks(n), 256, ctx->stream, ctx->in[0], ctx->out[0], n);
    return CVML_OK;
}

extern "C" CVML_PLUGIN_EXPORT int cvml_plugin_entry(const cvml_host_api* host) {
    if (!host || CVML_PLUGIN_ABI_MAJOR_OF(host->abi_version) != CVML_PLUGIN_ABI_MAJOR)
        return CVML_ERR_RUNTIME;
    g_host = host;
    // The planners are the library's (2.3): an older library has none to lend.
    if (!CVML_PLUGIN_HAS(cvml_host_api, host, plan_arena))
        return cuda_fail(CVML_ERR_RUNTIME, "this library (%s) is older than the plugin's ABI 2.3",
                         host->library_version);
    cuda_ir = host->ir;
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess)
        return cuda_fail(CVML_ERR_RUNTIME,
                         "no usable CUDA device: cudaGetDeviceCount failed: %s (%s)",
                         cudaGetErrorName(e), cudaGetErrorString(e));
    if (count < 1) return cuda_fail(CVML_ERR_RUNTIME, "no CUDA device present");
    int index = 0;
    if (const char* env = getenv("CVML_CUDA_DEVICE")) {
        index = static_cast<int>(parse_count(env, static_cast<unsigned long>(count - 1)));
        if (index < 0)
            return cuda_fail(CVML_ERR_RUNTIME, "CVML_CUDA_DEVICE=%s is not a GPU in 0..%d", env,
                             count - 1);
    }
    // CVML_CUDA_ISLAND_WORK=N sets the island policy's threshold; 0 keeps every island
    // here, so the checks run every node this device supports on it. Read at every
    // entry: the library may stay loaded from one cvml_init to the next.
    uint32_t island_work = kIslandWork;
    if (const char* w = getenv("CVML_CUDA_ISLAND_WORK")) {
        const long v = parse_count(w, UINT32_MAX);
        if (v < 0) return cuda_fail(CVML_ERR_RUNTIME, "CVML_CUDA_ISLAND_WORK=%s is not a count", w);
        island_work = static_cast<uint32_t>(v);
    }
    // The default GPU's context now, so that a missing driver or a broken GPU is found at
    // load; the other GPUs' contexts are made when a graph is first placed on them.
    int rc = cuda_check(cudaSetDevice(index), "cudaSetDevice");
    if (!rc) rc = cuda_check(cudaFree(nullptr), "creating the CUDA context");
    if (!rc) rc = make_device(&g_gpus[0], "cuda", index, island_work);
    if (!rc) rc = host->register_device(&g_gpus[0].dev);
    for (int k = 0; count > 1 && k < count && k < kMaxGpus && !rc; ++k) {
        char name[16];
        snprintf(name, sizeof name, "cuda:%d", k);
        rc = make_device(&g_gpus[1 + k], name, k, island_work);
        if (!rc) rc = host->register_device(&g_gpus[1 + k].dev);
    }
    return rc;
}

__global__ void gather_kernel(const int32_t* x, int32_t* y, gather_map m, int64_t n) {
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        int64_t rem = i, off = m.base;
        for (int32_t d = m.ndim - 1; d >= 0; --d) {
            int64_t idx = rem % m.dims[d];
            rem /= m.dims[d];
            off += ((idx / m.div[d]) % m.mod[d]) * m.stride[d];
        }
        y[i] = x[off];
    }
}

int gather_launch(cuda_node_ctx* ctx, const gather_map& m) {
    int64_t n = cuda_count(ctx->outputs[0]);
    CUDA_LAUNCH(gather_kernel, cuda_blocks(n), 256, ctx->stream, ctx->in[0], ctx->out[0], m, n);
    return CVML_OK;
}
