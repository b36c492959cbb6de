/* The CUDA device's kernel interface. One file per operator in op/ defines
 * `const cuda_kernel cuda_kernel_<file>`; the table is generated from the file list.
 * A kernel's prerun checks and prepares once (it may allocate device memory for its
 * own state); its run only enqueues work on ctx->stream: no allocation, no sync. */
#pragma once

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "graph/graph.h"

/* Every kernel launch goes through this macro: nvcc gets the `<<<>>>` form, and the host
 * emulation (emu/cuda_runtime.h, which g++ compiles) runs the kernel on the CPU and
 * checks the launch as CUDA would. No dynamic shared memory: no kernel needs it. */
#ifdef __CUDACC__
#define CUDA_LAUNCH(kernel, grid, block, stream, ...) \
    kernel<<<(grid), (block), 0, (stream)>>>(__VA_ARGS__)
#else
#define CUDA_LAUNCH(kernel, grid, block, stream, ...) \
    CUDA_EMU_LAUNCH(kernel, grid, block, stream, __VA_ARGS__)
#endif

typedef struct cuda_node_ctx {
    const ir_graph* graph;
    const ir_node* node;
    const void* param; /* node->param, the op definition's parsed struct */
    int32_t input_count;
    const ir_tensor* const* inputs; /* shapes and precisions */
    int32_t* const* in;             /* device int32 data of each input */
    int32_t output_count;
    const ir_tensor* const* outputs;
    int32_t* const* out;
    cudaStream_t stream;
    void* state; /* the kernel's own, set in prerun, freed in postrun */
} cuda_node_ctx;

typedef struct cuda_kernel {
    const char* op;
    /* Optional: 1 when this kernel handles the node (attributes, shapes); NULL: all. */
    int (*supports)(const ir_graph* g, const ir_node* node);
    int (*prerun)(cuda_node_ctx* ctx);
    int (*run)(cuda_node_ctx* ctx);
    void (*postrun)(cuda_node_ctx* ctx);
} cuda_kernel;

extern const cuda_kernel* const cuda_kernels[]; /* NULL-terminated */

/* Sets the library's error message (through the host table) and returns status. */
int cuda_fail(int status, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
/* CVML_OK, or a runtime error naming `what` and the CUDA error. */
int cuda_check(cudaError_t e, const char* what);

static inline int64_t cuda_count(const ir_tensor* t) {
    int64_t n = 1;
    for (int32_t i = 0; i < t->ndim; ++i) n *= t->dims[i];
    return n;
}

/* The most blocks a launch uses; every kernel loops over the rest (grid-stride). A
 * build may lower it: the emulated tests do, so that each loop goes round many times
 * on small tensors. */
#ifndef CVML_CUDA_MAX_BLOCKS
#define CVML_CUDA_MAX_BLOCKS 65535
#endif

/* Grid for n elements with a grid-stride loop: bounded, so huge tensors still launch. */
static inline unsigned cuda_blocks(int64_t n, unsigned threads = 256) {
    int64_t b = (n + threads - 1) / threads;
    if (b < 1) b = 1;
    if (b > CVML_CUDA_MAX_BLOCKS) b = CVML_CUDA_MAX_BLOCKS;
    return static_cast<unsigned>(b);
}

/* Two's-complement wrap-around, as upstream's -O3 build computes. */
__device__ __forceinline__ int32_t dwrap_add(int32_t a, int32_t b) {
    return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}
__device__ __forceinline__ int32_t dwrap_sub(int32_t a, int32_t b) {
    return static_cast<int32_t>(static_cast<uint32_t>(a) - static_cast<uint32_t>(b));
}
__device__ __forceinline__ int32_t dwrap_mul(int32_t a, int32_t b) {
    return static_cast<int32_t>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b));
}

/* An output that is a byte copy of input 0 (reshape-like operators). */
int cuda_copy_input0(cuda_node_ctx* ctx);
