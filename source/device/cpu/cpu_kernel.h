/* The CPU device's kernel interface. One file per operator in op/ defines a
 * `cpu_kernel` and registers it from `register_cpu_op_<file>()`. A kernel's prerun
 * does every check and precomputation once (weight packing, scratch sizing); its run
 * only computes, never allocates, and reads only memory that was written. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "graph/graph.h"

struct cpu_runtime;

typedef struct cpu_node_ctx {
    const ir_graph* graph;
    const ir_node* node;
    const void* param; /* node->param, the op definition's parsed struct */
    int32_t input_count;
    ir_tensor* const* inputs; /* ->data holds int32 values (storage STORAGE_INT32) */
    int32_t output_count;
    ir_tensor* const* outputs;
    void* state;   /* owned by the kernel: set in prerun, freed in postrun */
    void* scratch; /* `scratch_size` bytes of the arena, valid during run */
    size_t scratch_size;
    struct cpu_runtime* rt; /* thread pool and SIMD level */
} cpu_node_ctx;

typedef struct cpu_kernel {
    const char* op; /* the operator's name, as in its op_def */
    /* Optional. May set ctx->state and ask for per-run scratch bytes. */
    int (*prerun)(cpu_node_ctx* ctx, size_t* scratch_bytes);
    int (*run)(cpu_node_ctx* ctx);
    /* Optional. Frees ctx->state. */
    void (*postrun)(cpu_node_ctx* ctx);
} cpu_kernel;

int cpu_kernel_registry_add(const cpu_kernel* k);
int cpu_kernel_registry_remove(const cpu_kernel* k);
const cpu_kernel* cpu_kernel_find(const char* op);
int32_t cpu_kernel_count(void);

/* Runs fn over [0, n) split into as many contiguous chunks as the runtime has threads.
 * The split depends only on n and the thread count, and each index is handled by
 * exactly one call, so a kernel whose chunks write disjoint outputs gives the same
 * bytes whatever the scheduling. */
typedef void (*cpu_range_fn)(void* arg, int64_t begin, int64_t end);
void cpu_parallel_for(const cpu_node_ctx* ctx, int64_t n, cpu_range_fn fn, void* arg);

/* Convenience accessors. */
static inline int32_t* cpu_in(const cpu_node_ctx* ctx, int i) {
    return static_cast<int32_t*>(ctx->inputs[i]->data);
}
static inline int32_t* cpu_out(const cpu_node_ctx* ctx, int i) {
    return static_cast<int32_t*>(ctx->outputs[i]->data);
}

/* Two's-complement wrap-around arithmetic, defined in C++ (unlike signed overflow):
 * upstream's g++ -O3 build wraps, and consensus depends on it. */
static inline int32_t wrap_add(int32_t a, int32_t b) {
    return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}
static inline int32_t wrap_sub(int32_t a, int32_t b) {
    return static_cast<int32_t>(static_cast<uint32_t>(a) - static_cast<uint32_t>(b));
}
static inline int32_t wrap_mul(int32_t a, int32_t b) {
    return static_cast<int32_t>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b));
}
static inline int32_t wrap_neg(int32_t a) {
    return static_cast<int32_t>(0u - static_cast<uint32_t>(a));
}
