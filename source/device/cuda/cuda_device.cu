/* The CUDA device plugin: one GPU, one stream per graph, intermediate tensors in one
 * device arena per subgraph placed by lifetime, weights uploaded once at prerun (the
 * scheduler's constant upload), kernels enqueued without any per-operator sync. The
 * only host waits are the scheduler's copies back to the host (copy_to_host) and
 * postrun. Without a driver or a GPU the entry point says why and registers nothing,
 * and graphs run on the CPU. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mutex>

#include "cuda_kernel.h"
#include "cvml_plugin.h"
#include "gather.cuh"

CVML_PLUGIN_DEFINE("cuda", CVML_CUDA_PLUGIN_VERSION);

const cvml_ir_api* cuda_ir;

namespace {

const cvml_host_api* g_host;
char g_version[320];

constexpr size_t kAlign = 256;

/* ---- streams: one per graph -------------------------------------------------------- */

struct graph_stream {
    const cvml_ir_graph* graph;
    cudaStream_t stream;
    int32_t refs;
};
constexpr int32_t kMaxGraphs = 256;
graph_stream g_streams[kMaxGraphs];
// Graphs on different host threads prerun and release at the same time; without the
// lock two of them could take one free slot and a stream would be lost (or destroyed
// under the graph still using it).
std::mutex g_streams_lock;

int stream_acquire(const cvml_ir_graph* g, cudaStream_t* out) {
    std::lock_guard<std::mutex> lock(g_streams_lock);
    int32_t free_slot = -1;
    for (int32_t i = 0; i < kMaxGraphs; ++i) {
        if (g_streams[i].refs > 0 && g_streams[i].graph == g) {
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
    g_streams[free_slot] = {g, s, 1};
    *out = s;
    return CVML_OK;
}

void stream_release(const cvml_ir_graph* g) {
    std::lock_guard<std::mutex> lock(g_streams_lock);
    for (int32_t i = 0; i < kMaxGraphs; ++i)
        if (g_streams[i].refs > 0 && g_streams[i].graph == g && --g_streams[i].refs == 0)
            cudaStreamDestroy(g_streams[i].stream);
}

/* ---- subgraph state ------------------------------------------------------------------ */

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
    cudaStream_t stream;
    int has_stream;
    uint8_t* arena;
    int32_t** tensor_ptr; /* per tensor of the graph */
    node_exec* nodes;
    int32_t node_count;
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

void free_state(sg_state* st) {
    if (!st) return;
    if (st->has_stream) cudaStreamSynchronize(st->stream);
    for (int32_t i = 0; i < st->node_count; ++i) free_node(&st->nodes[i]);
    free(st->nodes);
    if (st->arena) cudaFree(st->arena);
    free(st->tensor_ptr);
    if (st->has_stream) stream_release(st->graph);
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
    for (int32_t i = 0; i < cuda_ir->subgraph_input_count(sg); ++i)
        st->tensor_ptr[cuda_ir->tensor_index(cuda_ir->subgraph_input(g, sg, i))] =
            static_cast<int32_t*>(cuda_ir->subgraph_input_buffer(sg, i));
    for (int32_t i = 0; i < cuda_ir->subgraph_output_count(sg); ++i)
        st->tensor_ptr[cuda_ir->tensor_index(cuda_ir->subgraph_output(g, sg, i))] =
            static_cast<int32_t*>(cuda_ir->subgraph_output_buffer(sg, i));
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

/* Device addresses into every node's context: a tail's head writes its last output. */
void bind_nodes(sg_state* st) {
    for (int32_t i = 0; i < st->node_count; ++i) {
        node_exec* ne = &st->nodes[i];
        const int32_t ins = ne->ctx.input_count, outs = ne->ctx.output_count;
        for (int32_t k = 0; k < ins + outs; ++k) ne->ptrs[k] = st->tensor_ptr[ne->tensors[k].index];
        if (outs == 1) ne->ptrs[ins] = st->tensor_ptr[ne->out_tensor];
        for (int32_t c = 0; c < ne->ctx.tail.count; ++c)
            ne->ctx.tail.operand[c] =
                ne->tail_operand[c] >= 0 ? st->tensor_ptr[ne->tail_operand[c]] : nullptr;
    }
}

/* ---- the device ---------------------------------------------------------------------- */

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

int cu_prerun(cvml_device*, cvml_ir_graph* g, cvml_ir_subgraph* sg, const cvml_device_options*) {
    sg_state* st = static_cast<sg_state*>(calloc(1, sizeof(sg_state)));
    if (!st) return cuda_fail(CVML_ERR_RUNTIME, "out of memory");
    const int32_t steps = cuda_ir->subgraph_node_count(sg);
    st->graph = g;
    st->tensor_ptr = static_cast<int32_t**>(
        calloc(static_cast<size_t>(cuda_ir->graph_tensor_count(g)) + 1, sizeof(int32_t*)));
    st->nodes = static_cast<node_exec*>(calloc(static_cast<size_t>(steps) + 1, sizeof(node_exec)));
    int rc = !st->tensor_ptr || !st->nodes ? cuda_fail(CVML_ERR_RUNTIME, "out of memory") : 0;
    if (!rc) st->node_count = steps;
    if (!rc) rc = stream_acquire(g, &st->stream);
    if (!rc) st->has_stream = 1;
    int32_t* write_step = static_cast<int32_t*>(
        calloc(static_cast<size_t>(cuda_ir->graph_tensor_count(g)) + 1, sizeof(int32_t)));
    if (!rc && !write_step) rc = cuda_fail(CVML_ERR_RUNTIME, "out of memory");
    if (!rc) rc = prepare_nodes(g, sg, st);
    if (!rc) rc = plan_fusion(g, sg, st, write_step);
    if (!rc) rc = plan_memory(g, sg, st, write_step);
    free(write_step);
    if (rc) {
        free_state(st);
        return rc;
    }
    bind_nodes(st);
    cuda_ir->subgraph_set_state(sg, st);
    return CVML_OK;
}

int cu_run(cvml_device*, cvml_ir_graph*, cvml_ir_subgraph* sg) {
    sg_state* st = static_cast<sg_state*>(cuda_ir->subgraph_state(sg));
    if (!st) return cuda_fail(CVML_ERR_RUNTIME, "a CUDA subgraph was not prepared");
    for (int32_t i = 0; i < st->node_count; ++i) {
        node_exec* ne = &st->nodes[i];
        if (ne->fused) continue;  // done by its head's kernel
        int rc = ne->kernel->run(&ne->ctx);
        if (rc) return rc;
    }
    // Launch errors only; faults during execution surface at the next copy back.
    return cuda_check(cudaGetLastError(), "kernel launch");
}

void cu_postrun(cvml_device*, cvml_ir_graph*, cvml_ir_subgraph* sg) {
    free_state(static_cast<sg_state*>(cuda_ir->subgraph_state(sg)));
    cuda_ir->subgraph_set_state(sg, nullptr);
}

int cu_alloc(cvml_device*, size_t bytes, void** out) {
    *out = nullptr;
    return cuda_check(cudaMalloc(out, bytes ? bytes : 1), "cudaMalloc");
}

void cu_free(cvml_device*, void* p) {
    cudaFree(p);
}

cudaStream_t stream_of(const cvml_ir_subgraph* sg) {
    const sg_state* st = sg ? static_cast<const sg_state*>(cuda_ir->subgraph_state(sg)) : nullptr;
    return st ? st->stream : nullptr;
}

int cu_to_device(cvml_device*, cvml_ir_subgraph* sg, void* dst, const void* src, size_t bytes) {
    cudaStream_t s = stream_of(sg);
    // From pageable memory the call returns once `src` has been staged, so the caller
    // may reuse it; the copy is ordered before the subgraph's kernels on its stream.
    int rc = cuda_check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s),
                        "cudaMemcpyAsync to device");
    if (!rc && !s) rc = cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    return rc;
}

int cu_to_host(cvml_device*, cvml_ir_subgraph* sg, void* dst, const void* src, size_t bytes) {
    cudaStream_t s = stream_of(sg);
    int rc = cuda_check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s),
                        "cudaMemcpyAsync to host");
    if (!rc) rc = cuda_check(s ? cudaStreamSynchronize(s) : cudaDeviceSynchronize(), "sync");
    return rc;
}

void cu_release(cvml_device*) {}

// A PCIe copy of one int32 costs about what a CPU core spends on a few dozen integer
// operations; an island must do more work than that to be worth the trip.
constexpr uint32_t kIslandWork = 32;

cvml_device g_device = {
    sizeof(cvml_device),
    CVML_PLUGIN_ABI_VERSION,
    "cuda",
    g_version,
    cu_supports,
    cu_prerun,
    cu_run,
    cu_postrun,
    cu_alloc,
    cu_free,
    cu_to_device,
    cu_to_host,
    cu_release,
    nullptr,
    kIslandWork,
};

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
    const char* env = getenv("CVML_CUDA_DEVICE");
    if (env) index = atoi(env);
    if (index < 0 || index >= count)
        return cuda_fail(CVML_ERR_RUNTIME, "CVML_CUDA_DEVICE=%s outside 0..%d", env, count - 1);
    cudaDeviceProp prop;
    int rc = cuda_check(cudaSetDevice(index), "cudaSetDevice");
    if (!rc) rc = cuda_check(cudaGetDeviceProperties(&prop, index), "cudaGetDeviceProperties");
    if (!rc) rc = cuda_check(cudaFree(nullptr), "creating the CUDA context");
    if (rc) return rc;
    snprintf(g_version, sizeof g_version, "%s (%s, sm_%d%d)", CVML_CUDA_PLUGIN_VERSION, prop.name,
             prop.major, prop.minor);
    // CVML_CUDA_ISLAND_WORK=N sets the island policy's threshold; 0 keeps every island
    // here, so the checks run every node this device supports on it. Set at every
    // entry: the library may stay loaded from one cvml_init to the next.
    g_device.island_work_per_element = kIslandWork;
    if (const char* w = getenv("CVML_CUDA_ISLAND_WORK")) {
        char* end = nullptr;
        const unsigned long v = strtoul(w, &end, 10);
        if (!w[0] || *end || v > UINT32_MAX)
            return cuda_fail(CVML_ERR_RUNTIME, "CVML_CUDA_ISLAND_WORK=%s is not a count", w);
        g_device.island_work_per_element = static_cast<uint32_t>(v);
    }
    return host->register_device(&g_device);
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
