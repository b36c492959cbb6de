/* The CUDA device's kernel interface. One file per operator in op/ defines
 * `const cuda_kernel cuda_kernel_<file>`; the table is generated from the folder by
 * cmake/registry.cmake. A kernel's prerun checks and prepares once (it may allocate
 * device memory for its own state); its run only enqueues work on ctx->stream: no
 * allocation, no sync. run is called at a subgraph's first run, and again when the
 * device captures the run into a CUDA graph (or runs it profiled), not at every run:
 * later runs replay what it enqueued, so it must enqueue the same work each time and
 * keep no per-run host state (cuda_device.cu).
 *
 * The plugin sees the model through the C plugin ABI only (cvml_plugin.h: opaque
 * handles and the host's accessor table, cuda_ir): the device copies each tensor's
 * shape and precision into a cuda_tensor, and kernels read their parameters by
 * attribute name (cuda_params). */
#pragma once

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "cvml_plugin.h"

/* The host's model accessors, set by the plugin's entry point. */
extern const cvml_ir_api* cuda_ir;

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

/* Unrolls the loop that follows (nvcc); the host emulation leaves it as written. */
#ifdef __CUDACC__
#define CUDA_UNROLL _Pragma("unroll")
#else
#define CUDA_UNROLL
#endif

/* At most this many element-wise steps fuse into one kernel's stores. */
#define CUDA_MAX_TAIL 8

/* A fused tail as a kernel receives it (by value): the element-wise nodes that
 * followed it (relu, clip, cvm_clip, cvm_right_shift, elemwise_add, ...), as steps
 * applied in order to each output value before it is stored (cuda_tail_apply). */
struct cuda_tail {
    int32_t count;
    cvml_step step[CUDA_MAX_TAIL];
    const int32_t* operand[CUDA_MAX_TAIL]; /* CVML_STEP_ADD: the other input, same shape */
};

/* Marks a code path inside a kernel (or its host side) that the emulated tests must
 * reach: the host emulation counts it by name (cvml_cuda_emu_path_stat), and the test
 * CudaEmu.EveryMarkedPathRuns requires every mark in the sources passed.
 * No code at all on a GPU. Mark once per tile or launch, not per element. */
#ifdef __CUDACC__
#define CUDA_PATH(name) ((void)0)
#else
#define CUDA_PATH(name) ::cuda_emu::count_path(name)
#endif

/* What a kernel reads of a tensor: its shape and precision. */
typedef struct cuda_tensor {
    int32_t index; /* in the graph */
    int32_t ndim;
    int64_t dims[CVML_MAX_DIMS];
    int32_t precision;
    uint8_t is_const; /* the model's parameters */
} cuda_tensor;

typedef struct cuda_node_ctx {
    const cvml_ir_graph* graph;
    const cvml_ir_node* node; /* its parameters: cuda_params */
    int32_t input_count;
    const cuda_tensor* const* inputs; /* shapes and precisions */
    int32_t* const* in;               /* device int32 data of each input (run only) */
    int32_t output_count;
    const cuda_tensor* const* outputs;
    int32_t* const* out;
    cudaStream_t stream;
    void* state; /* the kernel's own, set in prerun, freed in postrun */
    /* Fusion. A kernel that applies a tail to its single output sets tail_capacity (at
     * most CUDA_MAX_TAIL) in its prerun; the device may then fuse the element-wise nodes
     * after it: tail holds their steps at run, and out[0] is the last one's output. */
    int32_t tail_capacity;
    cuda_tail tail;
    /* Set by a prerun: bit k when input k is never read at run (a constant the kernel
     * packed for itself, e.g. an int8 weight), so the device need not keep its int32
     * copy on the GPU. in[k] may then be null. */
    uint32_t unread_inputs;
    /* Packed handover between convolutions (conv2d's pack_input layout: int8 casts,
     * [n][h][w][C / 4 words], bytes past C zero). A reader sets packed_input in its
     * prerun (the zeroed buffer it packs input 0 into at each run); a writer sets
     * packs_output (it can also store its output so). The device then links a writer to
     * the readers of its output in the same subgraph: the writer gets packed_out (the
     * first reader's buffer), and each reader gets input_prepacked, with packed_input
     * the buffer to read, and skips its own packing. */
    int32_t* packed_input;
    int32_t input_prepacked;
    int32_t packs_output;
    int32_t* packed_out;
} cuda_node_ctx;

typedef struct cuda_kernel {
    const char* op;
    /* Optional: 1 when this kernel handles the node (parameters, shapes); NULL: all. It
     * gets the node's context without device data or stream. */
    int (*supports)(const cuda_node_ctx* ctx);
    int (*prerun)(cuda_node_ctx* ctx);
    int (*run)(cuda_node_ctx* ctx);
    void (*postrun)(cuda_node_ctx* ctx);
} cuda_kernel;

extern const cuda_kernel* const cuda_kernels[]; /* NULL-terminated */

/* A tuple parameter as parsed. */
struct cuda_tuple {
    int32_t count;
    int64_t values[16];
};

/* A node's parsed parameters by attribute name, defaults applied (cvml_ir_api). */
struct cuda_params {
    static constexpr int32_t kMax = 16;
    const cvml_ir_node* node;
    /* An int or bool parameter (0 when absent). */
    int64_t get(const char* name) const {
        int64_t v = 0;
        cuda_ir->node_param_ints(node, name, &v, 1);
        return v;
    }
    /* 1 when an optional int parameter is set ("None" or absent: 0). */
    bool present(const char* name) const {
        int64_t v = 0;
        return cuda_ir->node_param_ints(node, name, &v, 1) == 1;
    }
    /* A tuple parameter ("strides"): its length and values (at most 16, as parsed). */
    cuda_tuple tuple(const char* name) const {
        cuda_tuple t = {};
        const int32_t n = cuda_ir->node_param_ints(node, name, t.values, kMax);
        t.count = n < 0 ? 0 : n > kMax ? kMax : n;
        return t;
    }
};

static inline cuda_params params_of(const cuda_node_ctx* ctx) {
    return cuda_params{ctx->node};
}

/* Sets the library's error message (through the host table) and returns status. */
int cuda_fail(int status, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
/* CVML_OK, or a runtime error naming `what` and the CUDA error. */
int cuda_check(cudaError_t e, const char* what);

static inline int64_t cuda_count(const cuda_tensor* t) {
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

/* Output value v at flat index i after the tail's steps (cvml_ops.h, bit-exact with
 * the operators they stand for). */
__device__ __forceinline__ int32_t cuda_tail_apply(const cuda_tail& t, int32_t v, int64_t i) {
    for (int32_t k = 0; k < t.count; ++k)
        v = cvml_step_value(&t.step[k], v, t.step[k].kind == CVML_STEP_ADD ? t.operand[k][i] : 0);
    return v;
}

/* A tail step decoded once for many values, so that each value costs a few
 * instructions rather than cvml_step_value's tests of the step's constants. kind is the
 * step's, or one of the two right-shift cases that ignore the value's bits below. */
enum { CUDA_STEP_ZERO = -1, CUDA_STEP_SIGN = -2 };
struct cuda_step_op {
    int32_t kind;
    int32_t shift;  /* RIGHT_SHIFT: x >> shift, then (+ 1) >> 1 */
    int32_t lo, hi; /* CLIP, RIGHT_SHIFT: the clip (INT32_MIN, INT32_MAX: none) */
    int32_t mul;    /* MUL */
};

/* cvml_step_value's cases, decided once: a right shift with precision <= 1 gives 0, with
 * shift_bit >= 31 the sign (x >> 31), else the rounded shift, clipped to the precision's
 * bound only when precision + shift_bit < 32. */
__device__ __forceinline__ cuda_step_op cuda_step_decode(const cvml_step& s) {
    cuda_step_op op = {s.kind, 0, INT32_MIN, INT32_MAX, 0};
    if (s.kind == CVML_STEP_CLIP) {
        op.lo = s.a;
        op.hi = s.b;
    } else if (s.kind == CVML_STEP_RIGHT_SHIFT) {
        if (s.a <= 1) {
            op.kind = CUDA_STEP_ZERO;
        } else if (s.b >= 31) {
            op.kind = CUDA_STEP_SIGN;
        } else {
            op.shift = s.b - 1;
            if (s.a + s.b < 32) {
                op.hi = cvml_precision_bound(s.a);
                op.lo = -op.hi;
            }
        }
    } else if (s.kind == CVML_STEP_MUL) {
        op.mul = s.a;
    }
    return op;
}

/* The tail's steps on N outputs at once: v[j] is the value at flat index
 * first + j * stride, for j < valid. Each step is decoded once and applied to all N
 * (cuda_step_decode), and its ADD operands are loaded for all N before any is used, so
 * their memory latencies overlap: applying the tail one output at a time (load, add,
 * store, next) waits a full round trip per output, which a layer with few blocks
 * (batch 1) cannot hide. Bit-exact with cuda_tail_apply. */
template <int N>
__device__ __forceinline__ void cuda_tail_apply_n(const cuda_tail& t, int32_t (&v)[N],
                                                  int64_t first, int64_t stride, int valid) {
    for (int32_t k = 0; k < t.count; ++k) {
        const cuda_step_op op = cuda_step_decode(t.step[k]);
        switch (op.kind) {
            case CVML_STEP_CLIP:
                CUDA_UNROLL
                for (int j = 0; j < N; ++j) v[j] = cvml_clip(v[j], op.lo, op.hi);
                break;
            case CVML_STEP_RIGHT_SHIFT:
                CUDA_UNROLL
                for (int j = 0; j < N; ++j)
                    v[j] = cvml_clip(cvml_wrap_add(v[j] >> op.shift, 1) >> 1, op.lo, op.hi);
                break;
            case CUDA_STEP_ZERO:
                CUDA_UNROLL
                for (int j = 0; j < N; ++j) v[j] = 0;
                break;
            case CUDA_STEP_SIGN:
                CUDA_UNROLL
                for (int j = 0; j < N; ++j) v[j] >>= 31;
                break;
            case CVML_STEP_MUL:
                CUDA_UNROLL
                for (int j = 0; j < N; ++j) v[j] = cvml_wrap_mul(v[j], op.mul);
                break;
            case CVML_STEP_ADD: {
                const int32_t* y = t.operand[k] + first;
                int32_t operand[N];
                CUDA_UNROLL
                for (int j = 0; j < N; ++j) operand[j] = j < valid ? y[j * stride] : 0;
                CUDA_UNROLL
                for (int j = 0; j < N; ++j) v[j] = cvml_wrap_add(v[j], operand[j]);
                break;
            }
            default:
                break;
        }
    }
}

/* An output that is a byte copy of input 0 (reshape-like operators). */
int cuda_copy_input0(cuda_node_ctx* ctx);
