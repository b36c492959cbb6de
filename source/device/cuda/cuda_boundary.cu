/* What crosses a subgraph's boundary: its graph's stream, the scheduler's buffers,
 * their pinned host staging, and host mirrors of device outputs. */
#include <stdlib.h>
#include <string.h>

#include <mutex>

#include "cuda_device.h"

namespace cuda_dev {
namespace {

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

/* Per graph tensor, 1 when a node that runs reads it from the device: a kernel node's
 * input it did not mark unread, or an operand of a fused tail. One pass over the nodes. */
uint8_t* read_on_device(const cvml_ir_graph* g, const sg_state* st) {
    uint8_t* read =
        static_cast<uint8_t*>(calloc(static_cast<size_t>(cuda_ir->graph_tensor_count(g)) + 1, 1));
    for (int32_t i = 0; read && i < st->node_count; ++i) {
        const node_exec* ne = &st->nodes[i];
        for (int32_t k = 0; k < ne->ctx.input_count; ++k)
            if (ne->fused || k >= 32 || !((ne->ctx.unread_inputs >> k) & 1u))
                read[ne->tensors[k].index] = 1;
        for (int32_t c = 0; c < ne->ctx.tail.count; ++c)
            if (ne->tail_operand[c] >= 0) read[ne->tail_operand[c]] = 1;
    }
    return read;
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

}  // namespace

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

/* The buffer's device memory, made at its first use (its GPU current). */
int materialize(boundary_buffer* b) {
    if (b->dev || b->unused) return CVML_OK;
    return cuda_check(cudaMalloc(&b->dev, b->bytes ? b->bytes : 1), "cudaMalloc (boundary)");
}

void free_staging(staged* b, int32_t count) {
    for (int32_t i = 0; b && i < count; ++i) {
        if (b[i].host) cudaFreeHost(b[i].host);
        if (b[i].narrow) cudaFree(b[i].narrow);
    }
    free(b);
}

/* Device memory for the subgraph's boundary buffers, but for constants no kernel reads;
 * their addresses into tensor_ptr. */
int bind_boundary(const cvml_ir_graph* g, const cvml_ir_subgraph* sg, sg_state* st) {
    const int32_t ins = cuda_ir->subgraph_input_count(sg);
    const int32_t outs = cuda_ir->subgraph_output_count(sg);
    uint8_t* read = read_on_device(g, st);
    int rc = read ? CVML_OK : cuda_fail(CVML_ERR_RUNTIME, "out of memory");
    for (int32_t i = 0; i < ins + outs && !rc; ++i) {
        const bool is_in = i < ins;
        const cvml_ir_tensor* t =
            is_in ? cuda_ir->subgraph_input(g, sg, i) : cuda_ir->subgraph_output(g, sg, i - ins);
        boundary_buffer* b = as_buffer(is_in ? cuda_ir->subgraph_input_buffer(sg, i)
                                             : cuda_ir->subgraph_output_buffer(sg, i - ins));
        const int32_t index = cuda_ir->tensor_index(t);
        if (is_in && cuda_ir->tensor_is_const(t) && !read[index]) b->unused = 1;
        rc = materialize(b);
        if (!rc) st->tensor_ptr[index] = static_cast<int32_t*>(b->dev);
    }
    free(read);
    return rc;
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
        boundary_buffer* buffer = as_buffer(is_in ? cuda_ir->subgraph_input_buffer(sg, k)
                                                  : cuda_ir->subgraph_output_buffer(sg, k));
        b->dev = buffer->dev;
        buffer->owner = st;
        buffer->stage = k;
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

/* The staging entry of `buffer` among st's `b` (its inputs or its outputs), or null: a
 * constant, or a buffer of another subgraph. */
staged* find_staged(staged* b, int32_t count, const sg_state* st, const boundary_buffer* buffer) {
    if (buffer->owner != st || buffer->stage < 0 || buffer->stage >= count) return nullptr;
    staged* s = &b[buffer->stage];
    return s->dev == buffer->dev && s->host ? s : nullptr;
}

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

}  // namespace cuda_dev
