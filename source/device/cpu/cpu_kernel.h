/* The CPU device's kernel interface. One file per operator in op/ defines
 * `extern const cpu_kernel cpu_kernel_<file>`, naming only the fields that are not zero;
 * cmake/registry.cmake tables them, sorted by operator name. A kernel's prerun
 * does every check and precomputation once (weight packing, scratch sizing); its run
 * only computes, never allocates, and reads only memory that was written. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "cvml_ops.h"
#include "graph/graph.h"

struct cpu_runtime;

/* Capabilities a kernel's prerun may declare in ctx->caps. Without them a kernel only
 * ever sees int32 tensors and its own node's outputs. */
#define CPU_CAP_TAIL 1u                        /* applies ctx->tail (a fused element-wise tail) */
#define CPU_CAP_NARROW_OUT 2u                  /* writes outputs[0] in its tensor's storage */
#define CPU_CAP_NARROW_IN(i) (1u << (8 + (i))) /* reads input i in any storage */
#define CPU_CAP_INT16 4u /* its narrow inputs and output may be int16 as well as int8 */
/* Its tail reads element i of an added operand before it writes output element i, and
 * no other element of either in between: the output may then take the buffer of an
 * operand this node reads last (cpu.cpp, share_tail_operands). */
#define CPU_CAP_TAIL_IN_PLACE 8u

/* One fused step (cvml_ops.h, from the fused operator's op_def.step) with its
 * CVML_STEP_ADD operand resolved to the tensor it reads (any storage). */
typedef struct cpu_tail_step {
    cvml_step step;
    const ir_tensor* operand;
} cpu_tail_step;

#define CPU_TAIL_MAX 12

/* Element-wise operators that followed the node and were fused into it at prerun: the
 * kernel applies them in order to each int32 result and writes outputs[0], which the
 * device has re-pointed to the last fused operator's output. `steps` holds exactly
 * `count` steps (at most CPU_TAIL_MAX), owned by the device. */
typedef struct cpu_tail {
    int32_t count;
    cpu_tail_step* steps;
} cpu_tail;

typedef struct cpu_node_ctx {
    const ir_graph* graph;
    const ir_node* node;
    const void* param; /* node->param, the op definition's parsed struct */
    int32_t input_count;
    ir_tensor* const* inputs; /* ->data holds int32 values unless the kernel declared
                                 CPU_CAP_NARROW_IN (then ->storage says) */
    int32_t output_count;
    ir_tensor* const* outputs;
    void* state;   /* owned by the kernel: set in prerun, freed in postrun */
    void* scratch; /* `scratch_size` bytes of the arena, valid during run */
    size_t scratch_size;
    struct cpu_runtime* rt; /* thread pool and SIMD level */
    uint32_t caps;          /* CPU_CAP_*, declared by the kernel's prerun */
    const cpu_tail* tail;   /* set by the device when a tail was fused (needs CPU_CAP_TAIL) */
} cpu_node_ctx;

/* The value of ctx->state that means "the fast form applies" for the kernels whose
 * fast form needs nothing prepared (the element-wise epilogue form, broadcast_mul's
 * scaling form): one address, so that a compiled plan stores it as a kind, not bytes. */
extern const int cpu_fast_marker;

typedef struct cpu_kernel {
    const char* op; /* the operator's name, as in its op_def */
    /* Optional. May set ctx->state and ask for per-run scratch bytes. */
    int (*prerun)(cpu_node_ctx* ctx, size_t* scratch_bytes);
    int (*run)(cpu_node_ctx* ctx);
    /* Optional. Frees ctx->state. */
    void (*postrun)(cpu_node_ctx* ctx);
    /* Optional. Called after prerun once the node's fused tail (ctx->tail) and the
     * storage of its tensors are known, so the kernel may fold the tail's constants into
     * what prerun prepared (conv2d: the rounding addend into the GEMM's start). */
    int (*fused)(cpu_node_ctx* ctx);
    /* CPU_CAP_NARROW_IN bits of constant inputs that prerun reads in their stored form
     * (int8 weights it packs) above the scalar level; the device gives the kernel an
     * int32 copy of any other constant kept narrow. */
    uint32_t narrow_consts;
    /* Optional. Called once storage and tail are known: the index of an input whose
     * buffer the output may take if nothing reads that input later (the device checks;
     * the run then finds outputs[0]->data == inputs[i]->data), or -1. The kernel may
     * grow its scratch, in *scratch_bytes, for the run's in-place form. */
    int32_t (*writes_over_input)(const cpu_node_ctx* ctx, size_t* scratch_bytes);
    /* Nonzero when a state other than cpu_fast_marker is a struct of this many bytes
     * without pointers, which a compiled plan stores as it is (docs/compiled-plan.md);
     * then state_matches says whether `state` is exactly what prerun makes for ctx's
     * tensors and parameters, which is how a loader trusts a stored one. */
    uint32_t plain_state_size;
    bool (*state_matches)(const cpu_node_ctx* ctx, const void* state);
} cpu_kernel;

/* The kernel of operator `op`: a binary search of the generated table. */
const cpu_kernel* cpu_kernel_find(const char* op);
int32_t cpu_kernel_count(void);
/* Written by cmake/registry.cmake (cpu_kernel_table_gen.cpp), sorted by `op`. */
extern const cpu_kernel* const cvml_cpu_kernel_table[];
extern const int32_t cvml_cpu_kernel_table_count;

/* Runs fn over [0, n) split into as many contiguous chunks as the runtime has threads.
 * The split depends only on n and the thread count, and each index is handled by
 * exactly one call, so a kernel whose chunks write disjoint outputs gives the same
 * bytes whatever the scheduling. */
typedef void (*cpu_range_fn)(void* arg, int64_t begin, int64_t end);
void cpu_parallel_for(const cpu_node_ctx* ctx, int64_t n, cpu_range_fn fn, void* arg);
/* The same split, fn told which runtime thread (0 .. threads-1) runs the chunk, so that
 * a kernel with per-thread scratch can still be split finer than one chunk a thread
 * (and so be balanced by the pool). The thread picks only the scratch: what a chunk
 * computes depends on its range alone. */
typedef void (*cpu_range_at_fn)(void* arg, int64_t begin, int64_t end, int thread);
void cpu_parallel_for_at(const cpu_node_ctx* ctx, int64_t n, cpu_range_at_fn fn, void* arg);

/* Convenience accessors. */
static inline int32_t* cpu_in(const cpu_node_ctx* ctx, int i) {
    return static_cast<int32_t*>(ctx->inputs[i]->data);
}
static inline int32_t* cpu_out(const cpu_node_ctx* ctx, int i) {
    return static_cast<int32_t*>(ctx->outputs[i]->data);
}
