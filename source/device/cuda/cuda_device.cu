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

#include "cuda_kernel.h"
#include "cvml_plugin.h"
#include "gather.cuh"

#ifndef __CUDACC__
#include "cuda_emu.h"
#endif

CVML_PLUGIN_DEFINE("cuda", CVML_CUDA_PLUGIN_VERSION);

const cvml_ir_api* cuda_ir;

namespace {

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

constexpr size_t kAlign = 256;

/* ---- streams: one per graph -------------------------------------------------------- */

struct graph_stream {
    const cvml_ir_graph* graph;
    int device;
    cudaStream_t stream;
    int32_t refs;
};
constexpr int32_t kMaxGraphs = 256;
graph_stream g_streams[kMaxGraphs];
// Graphs on different host threads prerun and release at the same time; without the
// lock two of them could take one free slot and a stream would be lost (or destroyed
// under the graph still using it).
std::mutex g_streams_lock;

/* The graph's stream on `device` (the current device). */
int stream_acquire(const cvml_ir_graph* g, int device, cudaStream_t* out) {
    std::lock_guard<std::mutex> lock(g_streams_lock);
    int32_t free_slot = -1;
    for (int32_t i = 0; i < kMaxGraphs; ++i) {
        if (g_streams[i].refs > 0 && g_streams[i].graph == g && g_streams[i].device == device) {
            ++g_streams[i].refs;
            *out = g_streams[i].stream;
            return CVML_OK;
        }
        if (g_streams[i].refs == 0 && free_slot < 0) free_slot = i;
    }
    if (free_slot < 0)
        return cuda_fail(CVML_ERR_RUNTIME, "more than %d graphs on CUDA", kMaxGraphs);
    cudaStream_t s;
    int rc = cuda_check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    if (rc) return rc;
    g_streams[free_slot] = {g, device, s, 1};
    *out = s;
    return CVML_OK;
}

void stream_release(const cvml_ir_graph* g, int device) {
    std::lock_guard<std::mutex> lock(g_streams_lock);
    for (int32_t i = 0; i < kMaxGraphs; ++i)
        if (g_streams[i].refs > 0 && g_streams[i].graph == g && g_streams[i].device == device &&
            --g_streams[i].refs == 0)
            cudaStreamDestroy(g_streams[i].stream);
}

/* ---- boundary buffers ------------------------------------------------------------------
 * What mem_alloc hands the scheduler is a handle, not device memory: the memory is made
 * at the prerun of the subgraph that uses the buffer, and never for a constant that no
 * kernel reads (each reader packed it at prerun from the host's copy), so the int32
 * copies of packed weights are never on the GPU (ResNet-18: 46.7 MB against 11.7 MB
 * packed). Only this plugin's own entry points see the handles. */
struct boundary_buffer {
    void* dev; /* device memory; null: not made yet, or unused */
    size_t bytes;
    int gpu;
    int unused; /* a constant no kernel reads: uploads to it are dropped */
};

boundary_buffer* as_buffer(const void* handle) {
    return static_cast<boundary_buffer*>(const_cast<void*>(handle));
}

/* The buffer's device memory, made at its first use (its GPU current). */
int materialize(boundary_buffer* b) {
    if (b->dev || b->unused) return CVML_OK;
    return cuda_check(cudaMalloc(&b->dev, b->bytes ? b->bytes : 1), "cudaMalloc (boundary)");
}

/* ---- subgraph state ------------------------------------------------------------------ */

/* A boundary tensor of a subgraph: its device buffer (the scheduler's) and the pinned
 * host buffer it is staged in (none for constants, uploaded once). */
struct staged {
    void* dev;
    void* host;
    size_t bytes;
    /* An input that another subgraph on this GPU produced: that subgraph's device buffer,
     * copied device to device (null: staged from the host). */
    const void* link;
    /* An input whose precision is at most 16 bits travels narrow: staged as int8 or
     * int16 (`width` bytes a value) into `narrow` on the device and widened there to
     * the int32 buffer, a quarter (half) of the copy. A run whose values do not fit
     * (nothing the library writes: inputs are clipped to their precision) is staged
     * whole and runs outside the graph (`whole`). */
    int width;
    void* narrow;
    int whole;
    int in_flight; /* its copy to `narrow` was enqueued at staging and not waited for */
};

struct narrow_pool;

struct node_exec {
    const cuda_kernel* kernel;
    cuda_node_ctx ctx;
    cuda_tensor* tensors;                /* inputs then outputs, read through the accessors */
    const cuda_tensor** tensor_ptrs;     /* pointers to them, same order */
    int32_t** ptrs;                      /* their device data, same order */
    int fused;                           /* runs as a step of an earlier node's tail */
    int32_t out_tensor;                  /* a tail's head: what its out[0] writes (graph index) */
    int32_t tail_operand[CUDA_MAX_TAIL]; /* its steps' ADD operands (graph index, or -1) */
};

struct sg_state {
    const cvml_ir_graph* graph;
    int device; /* the GPU, made current on the calling thread at every entry */
    cudaStream_t stream;
    int has_stream;
    uint8_t* arena;
    int32_t** tensor_ptr; /* per tensor of the graph */
    size_t arena_bytes;
    node_exec* nodes;
    int32_t node_count;
    staged* in; /* per subgraph input, in the scheduler's order */
    int32_t in_count;
    staged* out; /* per subgraph output */
    int32_t out_count;
    cudaGraphExec_t exec;    /* the captured run, replayed */
    const void** exec_links; /* the inputs' links when it was captured */
    int64_t runs;
    int direct_only;     /* capture failed once: runs enqueue their work directly */
    cudaEvent_t* events; /* profiled runs: one per node and one at the end */
    int pending;         /* a run was enqueued and nobody has waited for it yet */
    narrow_pool* pool;   /* an input past kNarrowPool values: workers that narrow it */
};

const cuda_kernel* find_kernel(const char* op) {
    for (int32_t i = 0; op && cuda_kernels[i]; ++i)
        if (strcmp(cuda_kernels[i]->op, op) == 0) return cuda_kernels[i];
    return nullptr;
}

void free_node(node_exec* ne) {
    if (ne->kernel && ne->kernel->postrun && ne->ctx.state) ne->kernel->postrun(&ne->ctx);
    free(ne->tensors);
    free(ne->tensor_ptrs);
    free(ne->ptrs);
}

void free_staging(staged* b, int32_t count) {
    for (int32_t i = 0; b && i < count; ++i) {
        if (b[i].host) cudaFreeHost(b[i].host);
        if (b[i].narrow) cudaFree(b[i].narrow);
    }
    free(b);
}

/* Values [begin, end) of the host's int32 `src` into `width`-byte staging; false when
 * one does not fit. Written so that the compiler vectorizes it (no early exit). */
template <class Narrow>
bool narrow_range(Narrow* dst, const int32_t* src, size_t begin, size_t end) {
    constexpr uint32_t kHalf = 1u << (8 * sizeof(Narrow) - 1);
    uint32_t outside = 0;
    for (size_t i = begin; i < end; ++i) {
        dst[i] = static_cast<Narrow>(src[i]);
        outside |= static_cast<uint32_t>(src[i]) + kHalf > 2 * kHalf - 1;
    }
    return outside == 0;
}

bool narrow_part(void* host, const int32_t* src, size_t begin, size_t end, int width) {
    return width == 1 ? narrow_range(static_cast<int8_t*>(host), src, begin, end)
                      : narrow_range(static_cast<int16_t*>(host), src, begin, end);
}

/* ---- narrowing large inputs on several threads ---------------------------------------
 * One thread reads host memory at a fraction of what the machine can (ResNet-18 at batch
 * 64: 9.6 M values, several ms on one thread). A subgraph with an input of more than
 * kNarrowPool values gets workers, started at prerun and parked between runs; at each
 * run they and the calling thread narrow the input in parts, and the calling thread
 * copies each finished part to the GPU, so that the copy of one part overlaps the
 * narrowing of the next. */
constexpr size_t kNarrowChunk = size_t{1} << 17; /* values per part, at least */
constexpr size_t kNarrowPool = 2 * kNarrowChunk;
constexpr int kMaxNarrowParts = 64;
constexpr unsigned kMaxNarrowThreads = 16; /* the calling thread included */

struct narrow_job {
    void* host;
    const int32_t* src;
    size_t n;
    int width;
    int parts;
};

struct narrow_pool {
    std::thread workers[kMaxNarrowThreads - 1];
    unsigned count = 0;
    std::mutex lock;
    std::condition_variable wake, idle;
    uint64_t generation = 0; /* one per job */
    int active = 0;          /* workers inside a job */
    bool stop = false;
    narrow_job job = {};
    std::atomic<int> next{0};               /* the next part to take */
    std::atomic<int> done[kMaxNarrowParts]; /* part k narrowed */
    bool fits[kMaxNarrowParts];
};

size_t part_begin(const narrow_job& job, int k) {
    return job.n * static_cast<size_t>(k) / static_cast<size_t>(job.parts);
}

void narrow_one(narrow_pool* pool, const narrow_job& job, int k) {
    pool->fits[k] =
        narrow_part(job.host, job.src, part_begin(job, k), part_begin(job, k + 1), job.width);
    pool->done[k].store(1, std::memory_order_release);
}

void narrow_worker(narrow_pool* pool) {
    uint64_t seen = 0;
    for (;;) {
        narrow_job job;
        {
            std::unique_lock<std::mutex> l(pool->lock);
            pool->wake.wait(l, [&] { return pool->stop || pool->generation != seen; });
            if (pool->stop) return;
            seen = pool->generation;
            job = pool->job;
            ++pool->active;  // the job's state stays until this worker leaves it
        }
        for (int k; (k = pool->next.fetch_add(1)) < job.parts;) narrow_one(pool, job, k);
        std::lock_guard<std::mutex> l(pool->lock);
        if (--pool->active == 0) pool->idle.notify_all();
    }
}

/* Workers for a subgraph (null when none could be started: one thread narrows). */
narrow_pool* narrow_pool_create() {
    narrow_pool* pool = new (std::nothrow) narrow_pool;
    if (!pool) return nullptr;
    unsigned threads = std::thread::hardware_concurrency();
    threads = threads < 2 ? 2 : threads > kMaxNarrowThreads ? kMaxNarrowThreads : threads;
    for (unsigned k = 0; k + 1 < threads; ++k) {
        try {
            pool->workers[k] = std::thread(narrow_worker, pool);
        } catch (...) {
            break;
        }
        ++pool->count;
    }
    if (pool->count == 0) {
        delete pool;
        return nullptr;
    }
    return pool;
}

void narrow_pool_destroy(narrow_pool* pool) {
    if (!pool) return;
    {
        std::lock_guard<std::mutex> l(pool->lock);
        pool->stop = true;
    }
    pool->wake.notify_all();
    for (unsigned k = 0; k < pool->count; ++k) pool->workers[k].join();
    delete pool;
}

/* Narrows the n int32 values of src into `host` (width bytes each) and copies the
 * result to `dev` on `stream`, part by part as parts finish: with a pool, on its workers
 * and this thread. *fits: every value fitted. Returns CVML_OK or the copy's error. */
int narrow_and_send(narrow_pool* pool, void* host, void* dev, const int32_t* src, size_t n,
                    int width, cudaStream_t stream, bool* fits) {
    const char* what = "cudaMemcpyAsync (narrow input)";
    if (!pool || n <= kNarrowPool) {
        *fits = narrow_part(host, src, 0, n, width);
        return cuda_check(cudaMemcpyAsync(dev, host, n * width, cudaMemcpyHostToDevice, stream),
                          what);
    }
    CUDA_PATH("staging: an input narrowed on several threads");
    narrow_job job = {host, src, n, width, static_cast<int>(n / kNarrowChunk)};
    if (job.parts > kMaxNarrowParts) job.parts = kMaxNarrowParts;
    {
        std::unique_lock<std::mutex> l(pool->lock);
        pool->idle.wait(l, [&] { return pool->active == 0; });  // workers left the last job
        pool->job = job;
        pool->next.store(0);
        for (int k = 0; k < job.parts; ++k) pool->done[k].store(0);
        ++pool->generation;
    }
    pool->wake.notify_all();
    int rc = CVML_OK;
    bool all_fit = true;
    for (int sent = 0; sent < job.parts;) {
        const int k = pool->next.fetch_add(1);
        if (k < job.parts) narrow_one(pool, job, k);
        for (; sent < job.parts && pool->done[sent].load(std::memory_order_acquire); ++sent) {
            const size_t begin = part_begin(job, sent), end = part_begin(job, sent + 1);
            all_fit &= pool->fits[sent];
            if (!rc)
                rc = cuda_check(
                    cudaMemcpyAsync(static_cast<int8_t*>(dev) + begin * width,
                                    static_cast<int8_t*>(host) + begin * width,
                                    (end - begin) * width, cudaMemcpyHostToDevice, stream),
                    what);
        }
        if (k >= job.parts && sent < job.parts) std::this_thread::yield();  // a worker's part
    }
    *fits = all_fit;
    return rc;
}

/* y = the sign-extended int8 (width 1) or int16 (width 2) values of x. */
__global__ void widen_kernel(const void* x, int32_t* y, int64_t n, int width) {
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x)
        y[i] = width == 1 ? static_cast<const int8_t*>(x)[i] : static_cast<const int16_t*>(x)[i];
}

void forget_mirrors_of(const sg_state* st);
void free_events(sg_state* st);

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

/* What kernels read of a tensor, from the accessors. */
void read_tensor(const cvml_ir_tensor* t, cuda_tensor* out) {
    memset(out, 0, sizeof *out);
    out->index = cuda_ir->tensor_index(t);
    out->ndim = cuda_ir->tensor_ndim(t);
    if (out->ndim > CVML_MAX_DIMS) out->ndim = CVML_MAX_DIMS;
    for (int32_t d = 0; d < out->ndim; ++d) out->dims[d] = cuda_ir->tensor_dim(t, d);
    out->precision = cuda_ir->tensor_precision(t);
    out->is_const = cuda_ir->tensor_is_const(t) ? 1 : 0;
}

/* The node's inputs then outputs as cuda_tensors, and its context without device data.
 * Returns CVML_OK or a runtime error (out of memory). */
int read_node(const cvml_ir_graph* g, const cvml_ir_node* node, node_exec* ne) {
    const int32_t ins = cuda_ir->node_input_count(node);
    const int32_t outs = cuda_ir->node_output_count(node);
    const size_t total = static_cast<size_t>(ins + outs) + 1;
    ne->tensors = static_cast<cuda_tensor*>(calloc(total, sizeof(cuda_tensor)));
    ne->tensor_ptrs = static_cast<const cuda_tensor**>(calloc(total, sizeof(cuda_tensor*)));
    ne->ptrs = static_cast<int32_t**>(calloc(total, sizeof(int32_t*)));
    if (!ne->tensors || !ne->tensor_ptrs || !ne->ptrs)
        return cuda_fail(CVML_ERR_RUNTIME, "out of memory");
    for (int32_t k = 0; k < ins + outs; ++k) {
        const cvml_ir_tensor* t =
            k < ins ? cuda_ir->node_input(g, node, k) : cuda_ir->node_output(g, node, k - ins);
        if (!t) return cuda_fail(CVML_ERR_RUNTIME, "a node lacks tensor %d", k);
        read_tensor(t, &ne->tensors[k]);
        ne->tensor_ptrs[k] = &ne->tensors[k];
    }
    cuda_node_ctx* c = &ne->ctx;
    c->graph = g;
    c->node = node;
    c->input_count = ins;
    c->inputs = ne->tensor_ptrs;
    c->in = ne->ptrs;
    c->output_count = outs;
    c->outputs = ne->tensor_ptrs + ins;
    c->out = ne->ptrs + ins;
    return CVML_OK;
}

struct slot {
    size_t size;
    int32_t first, last;
    size_t offset;
    int32_t tensor;
};

/* Greedy by decreasing size, each at the lowest offset free over its lifetime: the
 * same placement idea as the CPU arena (device/cpu/memory_plan.cpp). */
size_t place(slot* s, int32_t n) {
    for (int32_t i = 1; i < n; ++i)
        for (int32_t j = i; j > 0 && s[j].size > s[j - 1].size; --j) {
            slot t = s[j];
            s[j] = s[j - 1];
            s[j - 1] = t;
        }
    size_t total = 0;
    for (int32_t i = 0; i < n; ++i) {
        size_t offset = 0;
        for (bool moved = true; moved;) {
            moved = false;
            for (int32_t k = 0; k < i; ++k) {
                bool live = s[k].first <= s[i].last && s[i].first <= s[k].last;
                bool overlap = offset < s[k].offset + s[k].size && s[k].offset < offset + s[i].size;
                if (live && overlap) {
                    offset = (s[k].offset + s[k].size + kAlign - 1) / kAlign * kAlign;
                    moved = true;
                }
            }
        }
        s[i].offset = offset;
        if (offset + s[i].size > total) total = offset + s[i].size;
    }
    return total;
}

/* write_step's mark for a tensor inside a fused tail (no memory, never written). */
constexpr int32_t kNeverWritten = -2;

/* Device addresses of every tensor the subgraph touches: boundary tensors in the
 * scheduler's buffers, the others in the arena, placed by their lifetime in the
 * subgraph (from the step that writes them to the last step that reads them; tensors
 * read elsewhere are boundary outputs). */
int plan_memory(const cvml_ir_graph* g, const cvml_ir_subgraph* sg, sg_state* st,
                const int32_t* write_step) {
    // Boundary outputs are in the scheduler's buffers (bind_boundary): not placed here.
    const int32_t steps = cuda_ir->subgraph_node_count(sg);
    const int32_t tensors = cuda_ir->graph_tensor_count(g);
    int32_t* last_read = static_cast<int32_t*>(malloc(sizeof(int32_t) * (tensors + 1)));
    int32_t count = 0;
    for (int32_t i = 0; i < steps; ++i)
        count += cuda_ir->node_output_count(cuda_ir->subgraph_node(g, sg, i));
    slot* s = static_cast<slot*>(calloc(static_cast<size_t>(count) + 1, sizeof(slot)));
    if (!s || !last_read) {
        free(s);
        free(last_read);
        return cuda_fail(CVML_ERR_RUNTIME, "out of memory");
    }
    for (int32_t t = 0; t < tensors; ++t) last_read[t] = -1;
    for (int32_t i = 0; i < steps; ++i) {
        const cvml_ir_node* node = cuda_ir->subgraph_node(g, sg, i);
        for (int32_t k = 0; k < cuda_ir->node_input_count(node); ++k)
            last_read[cuda_ir->tensor_index(cuda_ir->node_input(g, node, k))] = i;
    }
    int32_t n = 0;
    for (int32_t i = 0; i < steps; ++i) {
        const cvml_ir_node* node = cuda_ir->subgraph_node(g, sg, i);
        for (int32_t k = 0; k < cuda_ir->node_output_count(node); ++k) {
            const cvml_ir_tensor* t = cuda_ir->node_output(g, node, k);
            const int32_t index = cuda_ir->tensor_index(t);
            if (st->tensor_ptr[index]) continue;
            // A fused tail's output is written by its head's step; its intermediates never.
            const int32_t first = write_step[index];
            if (first == kNeverWritten) continue;
            const int32_t last = last_read[index] > first ? last_read[index] : first;
            const size_t bytes =
                static_cast<size_t>(cuda_ir->tensor_element_count(t)) * sizeof(int32_t);
            s[n++] = {bytes, first, last, 0, index};
        }
    }
    free(last_read);
    size_t total = place(s, n);
    int rc = CVML_OK;
    if (total > 0) {
        void* p = nullptr;
        rc = cuda_check(cudaMalloc(&p, total), "cudaMalloc (arena)");
        st->arena = static_cast<uint8_t*>(p);
        if (!rc) st->arena_bytes = total;
        if (!rc) note_arena(total, true);
    }
    for (int32_t i = 0; i < n && !rc; ++i)
        st->tensor_ptr[s[i].tensor] = reinterpret_cast<int32_t*>(st->arena + s[i].offset);
    free(s);
    return rc;
}

/* Each node's tensors and context, then its kernel's prerun (which needs shapes and
 * parameters only: device addresses are bound later, by bind_nodes). */
int prepare_nodes(const cvml_ir_graph* g, const cvml_ir_subgraph* sg, sg_state* st) {
    for (int32_t i = 0; i < st->node_count; ++i) {
        const cvml_ir_node* node = cuda_ir->subgraph_node(g, sg, i);
        node_exec* ne = &st->nodes[i];
        const char* op = cuda_ir->node_op(node);
        ne->kernel = find_kernel(op);
        if (!ne->kernel)
            return cuda_fail(CVML_ERR_RUNTIME, "no CUDA kernel for operator %s", op ? op : "null");
        int rc = read_node(g, node, ne);
        if (rc) return rc;
        ne->ctx.stream = st->stream;
        ne->out_tensor = ne->ctx.output_count > 0 ? ne->tensors[ne->ctx.input_count].index : -1;
        if (ne->kernel->prerun) {
            rc = ne->kernel->prerun(&ne->ctx);
            if (rc) return rc;
        }
    }
    return CVML_OK;
}

/* ---- boundary buffers ---------------------------------------------------------------- */

/* 1 when a node that runs reads graph tensor `t` from the device: a kernel node's input
 * it did not mark unread, or an operand of a fused tail. */
bool read_on_device(const sg_state* st, int32_t t) {
    for (int32_t i = 0; i < st->node_count; ++i) {
        const node_exec* ne = &st->nodes[i];
        for (int32_t k = 0; k < ne->ctx.input_count; ++k)
            if (ne->tensors[k].index == t &&
                (ne->fused || k >= 32 || !((ne->ctx.unread_inputs >> k) & 1u)))
                return true;
        for (int32_t c = 0; c < ne->ctx.tail.count; ++c)
            if (ne->tail_operand[c] == t) return true;
    }
    return false;
}

/* Device memory for the subgraph's boundary buffers, but for constants no kernel reads;
 * their addresses into tensor_ptr. */
int bind_boundary(const cvml_ir_graph* g, const cvml_ir_subgraph* sg, sg_state* st) {
    const int32_t ins = cuda_ir->subgraph_input_count(sg);
    const int32_t outs = cuda_ir->subgraph_output_count(sg);
    for (int32_t i = 0; i < ins + outs; ++i) {
        const bool is_in = i < ins;
        const cvml_ir_tensor* t =
            is_in ? cuda_ir->subgraph_input(g, sg, i) : cuda_ir->subgraph_output(g, sg, i - ins);
        boundary_buffer* b = as_buffer(is_in ? cuda_ir->subgraph_input_buffer(sg, i)
                                             : cuda_ir->subgraph_output_buffer(sg, i - ins));
        const int32_t index = cuda_ir->tensor_index(t);
        if (is_in && cuda_ir->tensor_is_const(t) && !read_on_device(st, index)) b->unused = 1;
        int rc = materialize(b);
        if (rc) return rc;
        st->tensor_ptr[index] = static_cast<int32_t*>(b->dev);
    }
    return CVML_OK;
}

/* ---- boundary staging ------------------------------------------------------------------ */

/* Pinned host buffers for the subgraph's inputs (constants excepted) and outputs. */
int prepare_staging(const cvml_ir_graph* g, const cvml_ir_subgraph* sg, sg_state* st) {
    st->in_count = cuda_ir->subgraph_input_count(sg);
    st->out_count = cuda_ir->subgraph_output_count(sg);
    st->in = static_cast<staged*>(calloc(static_cast<size_t>(st->in_count) + 1, sizeof(staged)));
    st->out = static_cast<staged*>(calloc(static_cast<size_t>(st->out_count) + 1, sizeof(staged)));
    st->exec_links =
        static_cast<const void**>(calloc(static_cast<size_t>(st->in_count) + 1, sizeof(void*)));
    if (!st->in || !st->out || !st->exec_links) return cuda_fail(CVML_ERR_RUNTIME, "out of memory");
    for (int32_t i = 0; i < st->in_count + st->out_count; ++i) {
        const bool is_in = i < st->in_count;
        const int32_t k = is_in ? i : i - st->in_count;
        const cvml_ir_tensor* t =
            is_in ? cuda_ir->subgraph_input(g, sg, k) : cuda_ir->subgraph_output(g, sg, k);
        staged* b = is_in ? &st->in[k] : &st->out[k];
        b->dev = as_buffer(is_in ? cuda_ir->subgraph_input_buffer(sg, k)
                                 : cuda_ir->subgraph_output_buffer(sg, k))
                     ->dev;
        b->bytes = static_cast<size_t>(cuda_ir->tensor_element_count(t)) * sizeof(int32_t);
        if (is_in && cuda_ir->tensor_is_const(t)) continue;
        int rc = cuda_check(cudaHostAlloc(&b->host, b->bytes ? b->bytes : 1, cudaHostAllocDefault),
                            "cudaHostAlloc (staging)");
        if (rc) return rc;
        const int32_t precision = cuda_ir->tensor_precision(t);
        b->width = !is_in || precision > 16 ? 4 : precision > 8 ? 2 : 1;
        if (b->width < 4 && b->bytes)
            rc = cuda_check(cudaMalloc(&b->narrow, b->bytes / 4 * b->width), "cudaMalloc (narrow)");
        if (rc) return rc;
        if (b->width < 4 && b->bytes / 4 > kNarrowPool && !st->pool)
            st->pool = narrow_pool_create();
    }
    return CVML_OK;
}

/* The staged boundary buffer whose device buffer is `dev`, or null. */
staged* find_staged(staged* b, int32_t count, const void* dev) {
    for (int32_t i = 0; i < count; ++i)
        if (b[i].dev == dev && b[i].host) return &b[i];
    return nullptr;
}

/* ---- host mirrors of device outputs ---------------------------------------------------
 * An output copied back to the host lands in a host buffer of the scheduler that a later
 * subgraph on the same GPU may take as its input: that copy in can then be made device
 * to device, from the buffer the host copy came from. Entries live from the copy back to
 * the producer's postrun. */
struct mirror {
    const void* host;
    const void* dev;
    size_t bytes;
    int device;
    const sg_state* owner;
};
constexpr int32_t kMaxMirrors = 1024;
mirror g_mirrors[kMaxMirrors];
std::mutex g_mirrors_lock;

void remember_mirror(const sg_state* owner, const void* host, const void* dev, size_t bytes) {
    std::lock_guard<std::mutex> lock(g_mirrors_lock);
    int32_t free_slot = -1;
    for (int32_t i = 0; i < kMaxMirrors; ++i) {
        if (g_mirrors[i].host == host) {
            g_mirrors[i] = {host, dev, bytes, owner->device, owner};
            return;
        }
        if (!g_mirrors[i].host && free_slot < 0) free_slot = i;
    }
    // Without a slot the input is staged from the host as usual: only slower.
    if (free_slot >= 0) g_mirrors[free_slot] = {host, dev, bytes, owner->device, owner};
}

/* The device buffer on `device` that `host` mirrors with `bytes` bytes, or null. */
const void* mirrored(const void* host, size_t bytes, int device) {
    std::lock_guard<std::mutex> lock(g_mirrors_lock);
    for (int32_t i = 0; i < kMaxMirrors; ++i)
        if (g_mirrors[i].host == host)
            return g_mirrors[i].bytes == bytes && g_mirrors[i].device == device ? g_mirrors[i].dev
                                                                                : nullptr;
    return nullptr;
}

void forget_mirrors_of(const sg_state* st) {
    std::lock_guard<std::mutex> lock(g_mirrors_lock);
    for (int32_t i = 0; i < kMaxMirrors; ++i)
        if (g_mirrors[i].owner == st) g_mirrors[i] = {};
}

/* ---- runs -------------------------------------------------------------------------------- */

/* Everything one run does on the stream: inputs in, every kernel, outputs out. With
 * `events` (node_count + 1 of them), each kernel node's start and the end are recorded. */
int enqueue_run(sg_state* st, cudaEvent_t* events = nullptr) {
    for (int32_t i = 0; i < st->in_count; ++i) {
        const staged* b = &st->in[i];
        if (!b->host || !b->bytes) continue;
        const int64_t n = static_cast<int64_t>(b->bytes / 4);
        int rc = CVML_OK;
        if (b->link)
            rc = cuda_check(
                cudaMemcpyAsync(b->dev, b->link, b->bytes, cudaMemcpyDeviceToDevice, st->stream),
                "cudaMemcpyAsync (input from the GPU)");
        else if (b->width < 4 && !b->whole)
            rc = CVML_OK;  // copied as it was staged (cu_to_device), outside the graph
        else
            rc = cuda_check(
                cudaMemcpyAsync(b->dev, b->host, b->bytes, cudaMemcpyHostToDevice, st->stream),
                "cudaMemcpyAsync (input)");
        if (rc) return rc;
        if (!b->link && b->width < 4 && !b->whole)
            CUDA_LAUNCH(widen_kernel, cuda_blocks(n), 256, st->stream, b->narrow,
                        static_cast<int32_t*>(b->dev), n, b->width);
    }
    for (int32_t i = 0; i < st->node_count; ++i) {
        node_exec* ne = &st->nodes[i];
        if (ne->fused) continue;  // done by its head's kernel
        int rc = events ? cuda_check(cudaEventRecord(events[i], st->stream), "cudaEventRecord")
                        : CVML_OK;
        if (!rc) rc = ne->kernel->run(&ne->ctx);
        if (rc) return rc;
    }
    if (events) {
        int rc = cuda_check(cudaEventRecord(events[st->node_count], st->stream), "cudaEventRecord");
        if (rc) return rc;
    }
    for (int32_t i = 0; i < st->out_count; ++i) {
        const staged* b = &st->out[i];
        if (!b->bytes) continue;
        int rc = cuda_check(
            cudaMemcpyAsync(b->host, b->dev, b->bytes, cudaMemcpyDeviceToHost, st->stream),
            "cudaMemcpyAsync (output)");
        if (rc) return rc;
    }
    return CVML_OK;
}

/* Records enqueue_run into a graph and instantiates it. A launch error inside is the
 * run's error; any other failure leaves the subgraph to direct runs (*fallback). */
int capture_run(sg_state* st, int* fallback) {
    *fallback = 0;
    if (cudaStreamBeginCapture(st->stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
        cudaGetLastError();
        *fallback = 1;
        return CVML_OK;
    }
    int rc = enqueue_run(st);
    cudaGraph_t graph = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(st->stream, &graph);
    if (!rc) rc = cuda_check(cudaGetLastError(), "kernel launch");
    if (!rc && ended == cudaSuccess)
        rc = cuda_check(cudaGraphInstantiate(&st->exec, graph, 0), "cudaGraphInstantiate");
    else if (!rc)
        *fallback = 1;
    if (graph) cudaGraphDestroy(graph);
    for (int32_t i = 0; i < st->in_count; ++i) st->exec_links[i] = st->in[i].link;
    return rc;
}

/* The captured graph no longer matches the inputs' sources: capture again. */
void drop_graph_if_stale(sg_state* st) {
    if (!st->exec) return;
    for (int32_t i = 0; i < st->in_count; ++i)
        if (st->exec_links[i] != st->in[i].link) {
            cudaGraphExecDestroy(st->exec);
            st->exec = nullptr;
            return;
        }
}

/* ---- profiling ------------------------------------------------------------------------ */

bool profiling(const sg_state* st) {
    return CVML_PLUGIN_HAS(cvml_ir_api, cuda_ir, node_set_time) &&
           cuda_ir->graph_profiling(st->graph);
}

void free_events(sg_state* st) {
    for (int32_t i = 0; st->events && i <= st->node_count; ++i)
        if (st->events[i]) cudaEventDestroy(st->events[i]);
    free(st->events);
    st->events = nullptr;
}

/* A profiled run: the work enqueued directly with an event before each kernel node and
 * one at the end, waited for here, and each node's GPU time (from its event to the
 * next) reported to the library. A fused node's time is in its head's. */
int run_profiled(sg_state* st) {
    if (!st->events) {
        st->events = static_cast<cudaEvent_t*>(
            calloc(static_cast<size_t>(st->node_count) + 1, sizeof(cudaEvent_t)));
        if (!st->events) return cuda_fail(CVML_ERR_RUNTIME, "out of memory");
        for (int32_t i = 0; i <= st->node_count; ++i) {
            int rc = cuda_check(cudaEventCreate(&st->events[i]), "cudaEventCreate");
            if (rc) return rc;
        }
    }
    int rc = enqueue_run(st, st->events);
    if (!rc) rc = cuda_check(cudaGetLastError(), "kernel launch");
    if (!rc)
        rc = cuda_check(cudaEventSynchronize(st->events[st->node_count]), "cudaEventSynchronize");
    if (rc) return rc;
    // The inputs' copies came before the last event on the stream: done too.
    for (int32_t i = 0; i < st->in_count; ++i) st->in[i].in_flight = 0;
    for (int32_t i = 0; i < st->node_count; ++i) {
        const node_exec* ne = &st->nodes[i];
        int32_t next = i + 1;
        while (next < st->node_count && st->nodes[next].fused) ++next;
        float ms = 0;
        if (!ne->fused)
            rc = cuda_check(cudaEventElapsedTime(&ms, st->events[i], st->events[next]),
                            "cudaEventElapsedTime");
        if (rc) return rc;
        cuda_ir->node_set_time(st->graph, ne->ctx.node,
                               ms > 0 ? static_cast<uint64_t>(static_cast<double>(ms) * 1e6) : 0);
    }
    return CVML_OK;
}

/* Waits for the enqueued run, once. */
int wait_run(sg_state* st) {
    bool copying = false;
    for (int32_t i = 0; i < st->in_count; ++i) copying |= st->in[i].in_flight != 0;
    if (!st->pending && !copying) return CVML_OK;
    st->pending = 0;
    for (int32_t i = 0; i < st->in_count; ++i) st->in[i].in_flight = 0;
    return cuda_check(cudaStreamSynchronize(st->stream), "cudaStreamSynchronize");
}

/* The tensor facts fusion needs, indexed by graph tensor. */
struct tensor_facts {
    int32_t* readers;    /* nodes of the whole graph reading it (an input slot each) */
    int32_t* read_at;    /* a step here that reads it */
    int32_t* write_step; /* the step here whose kernel writes it, -1 none, kNeverWritten */
    uint8_t* leaves;     /* read outside this subgraph (a boundary output) */
};

/* Extends head h's tail by the node reading `cur`, when that is an element-wise step of
 * `cur` alone (its only reader, here, later), whose other operand (an ADD) is already
 * written when h runs. Returns the step's output tensor, or -1. */
int32_t extend_tail(const cvml_ir_graph* g, sg_state* st, const tensor_facts& f, int32_t h,
                    int32_t cur) {
    node_exec* head = &st->nodes[h];
    if (f.leaves[cur] || f.readers[cur] != 1 || f.read_at[cur] <= h) return -1;
    node_exec* tn = &st->nodes[f.read_at[cur]];
    if (tn->fused || tn->ctx.output_count != 1) return -1;
    int32_t input = -1;
    for (int32_t k = 0; k < tn->ctx.input_count; ++k)
        if (tn->tensors[k].index == cur) input = k;
    cvml_step step;
    if (input < 0 || !cuda_ir->node_step(g, tn->ctx.node, input, &step)) return -1;
    const cuda_tensor* out = &tn->tensors[tn->ctx.input_count];
    if (cuda_count(out) != cuda_count(&tn->tensors[input])) return -1;
    int32_t operand = -1;
    if (step.kind == CVML_STEP_ADD) {
        if (step.operand < 0 || step.operand >= tn->ctx.input_count) return -1;
        operand = tn->tensors[step.operand].index;
        if (f.write_step[operand] >= h || cuda_count(&tn->tensors[step.operand]) != cuda_count(out))
            return -1;
    }
    const int32_t c = head->ctx.tail.count++;
    head->ctx.tail.step[c] = step;
    head->tail_operand[c] = operand;
    tn->fused = 1;
    return out->index;
}

/* Fusion: each node whose kernel takes a tail absorbs the chain of element-wise nodes
 * that only consume its output, as the CPU device fuses (docs/architecture.md); the
 * chain's intermediates get no memory and its last output is written at the head's
 * step. Fills write_step for plan_memory. */
int plan_fusion(const cvml_ir_graph* g, const cvml_ir_subgraph* sg, sg_state* st,
                int32_t* write_step) {
    const int32_t tensors = cuda_ir->graph_tensor_count(g);
    tensor_facts f = {};
    f.readers = static_cast<int32_t*>(calloc(static_cast<size_t>(tensors) + 1, sizeof(int32_t)));
    f.read_at = static_cast<int32_t*>(calloc(static_cast<size_t>(tensors) + 1, sizeof(int32_t)));
    f.leaves = static_cast<uint8_t*>(calloc(static_cast<size_t>(tensors) + 1, 1));
    f.write_step = write_step;
    if (!f.readers || !f.read_at || !f.leaves) {
        free(f.readers);
        free(f.read_at);
        free(f.leaves);
        return cuda_fail(CVML_ERR_RUNTIME, "out of memory");
    }
    for (int32_t t = 0; t < tensors; ++t) f.read_at[t] = write_step[t] = -1;
    for (int32_t n = 0; n < cuda_ir->graph_node_count(g); ++n) {
        const cvml_ir_node* node = cuda_ir->graph_node(g, n);
        for (int32_t k = 0; k < cuda_ir->node_input_count(node); ++k)
            ++f.readers[cuda_ir->tensor_index(cuda_ir->node_input(g, node, k))];
    }
    for (int32_t i = 0; i < cuda_ir->subgraph_output_count(sg); ++i)
        f.leaves[cuda_ir->tensor_index(cuda_ir->subgraph_output(g, sg, i))] = 1;
    for (int32_t i = 0; i < st->node_count; ++i) {
        const node_exec* ne = &st->nodes[i];
        for (int32_t k = 0; k < ne->ctx.input_count; ++k) f.read_at[ne->tensors[k].index] = i;
        for (int32_t k = 0; k < ne->ctx.output_count; ++k)
            write_step[ne->tensors[ne->ctx.input_count + k].index] = i;
    }
    for (int32_t h = 0; h < st->node_count; ++h) {
        node_exec* head = &st->nodes[h];
        if (head->fused || head->ctx.output_count != 1) continue;
        const int32_t cap =
            head->ctx.tail_capacity < CUDA_MAX_TAIL ? head->ctx.tail_capacity : CUDA_MAX_TAIL;
        int32_t cur = head->out_tensor;
        while (head->ctx.tail.count < cap) {
            const int32_t next = extend_tail(g, st, f, h, cur);
            if (next < 0) break;
            write_step[cur] = kNeverWritten;
            write_step[next] = h;
            cur = next;
        }
        head->out_tensor = cur;
    }
    free(f.readers);
    free(f.read_at);
    free(f.leaves);
    return CVML_OK;
}

/* Device addresses into every node's context: a tail's head writes its last output;
 * inputs the kernel said it never reads (unread_inputs) get none. */
void bind_nodes(sg_state* st) {
    for (int32_t i = 0; i < st->node_count; ++i) {
        node_exec* ne = &st->nodes[i];
        const int32_t ins = ne->ctx.input_count, outs = ne->ctx.output_count;
        for (int32_t k = 0; k < ins + outs; ++k) ne->ptrs[k] = st->tensor_ptr[ne->tensors[k].index];
        if (outs == 1) ne->ptrs[ins] = st->tensor_ptr[ne->out_tensor];
        // An input its kernel never reads at run gets no address: a read would fault.
        for (int32_t k = 0; k < ins && k < 32; ++k)
            if ((ne->ctx.unread_inputs >> k) & 1u) ne->ptrs[k] = nullptr;
        for (int32_t c = 0; c < ne->ctx.tail.count; ++c)
            ne->ctx.tail.operand[c] =
                ne->tail_operand[c] >= 0 ? st->tensor_ptr[ne->tail_operand[c]] : nullptr;
    }
}

/* Links each convolution that reads its input packed (packed_input) to the node of this
 * subgraph that writes that tensor, when its kernel can store it packed (packs_output):
 * the first reader's buffer becomes the writer's packed_out, and every reader reads it
 * (input_prepacked) instead of packing the tensor itself. */
void link_packed_inputs(sg_state* st) {
    for (int32_t i = 0; i < st->node_count; ++i) {
        cuda_node_ctx* reader = &st->nodes[i].ctx;
        if (st->nodes[i].fused || !reader->packed_input || reader->input_count < 1) continue;
        const int32_t t = st->nodes[i].tensors[0].index;
        for (int32_t h = 0; h < i; ++h) {
            node_exec* w = &st->nodes[h];
            // A GEMM without a tail may split K, and then no block sees its whole sums to
            // pack (a verified graph never feeds a convolution that raw output anyway:
            // its precision is past 8 bits).
            if (w->fused || !w->ctx.packs_output || w->ctx.output_count != 1 ||
                w->out_tensor != t || w->ctx.tail.count == 0)
                continue;
            if (!w->ctx.packed_out) w->ctx.packed_out = reader->packed_input;
            reader->packed_input = w->ctx.packed_out;
            reader->input_prepacked = 1;
            break;
        }
    }
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
    if (rc) {
        free_state(st);
        return rc;
    }
    bind_nodes(st);
    link_packed_inputs(st);
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
    staged* b = st ? find_staged(st->in, st->in_count, dst) : nullptr;
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
    staged* b = st ? find_staged(st->out, st->out_count, src) : nullptr;
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
    return g_emu_arena_bytes.load();
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
