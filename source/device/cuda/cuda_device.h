/* What the files of the CUDA plugin share: a subgraph's state and the functions of each
 * job, in namespace cuda_dev. cuda_device.cu: the device's entry points and the plugin's;
 * cuda_plan.cu: the nodes, the fusion and the arena, planned by the library's planners
 * (cvml_host_api 2.3); cuda_boundary.cu: streams, boundary buffers, their pinned staging
 * and host mirrors; cuda_narrow.cu: narrowing inputs on several threads; cuda_run.cu:
 * a run enqueued, captured into a CUDA graph or profiled. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "cuda_kernel.h"
#include "cvml_plugin.h"

namespace cuda_dev {

/* The library's table (cvml_plugin_entry). */
extern const cvml_host_api* g_host;

/* The device memory the arenas hold now, for the emulated build's tests. */
void note_arena(size_t bytes, bool made);

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
    /* Its staging entry (prepare_staging): st->in or st->out[stage] of `owner`, so that a
     * copy finds it in O(1) however many boundary tensors the subgraph has. */
    const void* owner;
    int32_t stage;
};

inline boundary_buffer* as_buffer(const void* handle) {
    return static_cast<boundary_buffer*>(const_cast<void*>(handle));
}

/* The buffer's device memory, made at its first use (its GPU current). */
int materialize(boundary_buffer* b);

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

/* An input of more than this many values is narrowed on several threads. */
constexpr size_t kNarrowPool = size_t{2} << 17;

/* ---- cuda_plan.cu ---- */
const cuda_kernel* find_kernel(const char* op);
int read_node(const cvml_ir_graph* g, const cvml_ir_node* node, node_exec* ne);
int prepare_nodes(const cvml_ir_graph* g, const cvml_ir_subgraph* sg, sg_state* st);
int plan_fusion(cvml_ir_graph* g, const cvml_ir_subgraph* sg, sg_state* st, int32_t* write_step);
int plan_memory(const cvml_ir_graph* g, const cvml_ir_subgraph* sg, sg_state* st,
                const int32_t* write_step);
void bind_nodes(sg_state* st);
int link_packed_inputs(sg_state* st);

/* ---- cuda_boundary.cu ---- */
int stream_acquire(const cvml_ir_graph* g, int device, cudaStream_t* out);
void stream_release(const cvml_ir_graph* g, int device);
int bind_boundary(const cvml_ir_graph* g, const cvml_ir_subgraph* sg, sg_state* st);
int prepare_staging(const cvml_ir_graph* g, const cvml_ir_subgraph* sg, sg_state* st);
void free_staging(staged* b, int32_t count);
staged* find_staged(staged* b, int32_t count, const sg_state* st, const boundary_buffer* buffer);
void remember_mirror(const sg_state* owner, const void* host, const void* dev, size_t bytes);
const void* mirrored(const void* host, size_t bytes, int device);
void forget_mirrors_of(const sg_state* st);

/* ---- cuda_narrow.cu ---- */
narrow_pool* narrow_pool_create();
void narrow_pool_destroy(narrow_pool* pool);
int narrow_and_send(narrow_pool* pool, void* host, void* dev, const int32_t* src, size_t n,
                    int width, cudaStream_t stream, bool* fits);

/* ---- cuda_run.cu ---- */
int enqueue_run(sg_state* st, cudaEvent_t* events = nullptr);
int capture_run(sg_state* st, int* fallback);
void drop_graph_if_stale(sg_state* st);
bool profiling(const sg_state* st);
void free_events(sg_state* st);
int run_profiled(sg_state* st);
int wait_run(sg_state* st);

}  // namespace cuda_dev
