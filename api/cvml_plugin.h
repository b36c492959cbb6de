/**
 * @file cvml_plugin.h
 * @brief The plugin ABI of cvm-lite, in plain C: how a shared library adds devices to
 * the library at run time. The CPU device is written against the same `cvml_device`
 * struct, so built-in and plugin devices are one mechanism.
 *
 * Self-contained: it includes only cvml.h, cvml_ops.h and the C library, compiles as
 * C99 (`-std=c99 -pedantic`) and as C++, and is installed as include/cvml/cvml_plugin.h.
 * A plugin built against the installed package links no symbol of libcvml: everything
 * it needs comes through the tables below.
 *
 * A plugin is a shared library that
 *  1. defines its header with CVML_PLUGIN_DEFINE("name", "version"): the exported
 *     data symbol `cvml_plugin_declaration` the loader reads before calling the
 *     plugin's entry point, so a plugin built for another major ABI version is refused
 *     without being half-loaded. The loader opens only regular files and checks that
 *     the symbol is a data object of at least the declaration's size. On POSIX systems
 *     opening the library (dlopen) runs its static constructors before that check: a
 *     plugin must do nothing in them (no global objects with side effects, no
 *     __attribute__((constructor))); on Windows the DLL is read inert first;
 *  2. exports `int cvml_plugin_entry(const cvml_host_api* host)`, which registers its
 *     devices through the host table and returns CVML_OK, or returns an error (after
 *     host->fail(...)) when it cannot work here: no GPU, no driver. The loader then
 *     unregisters whatever the plugin registered, closes it and records the reason.
 *
 * What a plugin sees of a model. Graphs, nodes, tensors and subgraphs are opaque
 * handles (cvml_ir_graph, ...), read through the accessor table `host->ir`
 * (cvml_ir_api): shapes, precisions, the node's operator name, its parsed parameters
 * by attribute name (defaults applied, as the operator definition parsed them), the
 * element-wise step it is (cvml_ops.h), and the host data of tensors.
 *
 * ---- Versions --------------------------------------------------------------------
 * CVML_PLUGIN_ABI_VERSION is (major << 16) | minor. Every struct that crosses the
 * boundary starts with `uint32_t struct_size; uint32_t abi_version;` as its writer was
 * compiled. The rules:
 *  - A major version change may change anything: the loader refuses a plugin whose
 *    major version is not its own, with a message naming both versions, before calling
 *    any of its functions (see 1. above for static constructors).
 *  - A minor version only appends: fields at the end of a struct, functions at the end
 *    of a table, new enum values. Nothing is removed, moved or retyped, and a field's
 *    zero (or NULL) is always "absent, behave as before".
 *  - Newer library, older-minor plugin: accepted. The library reads a plugin's struct
 *    only up to its `struct_size`; the fields past it are absent (zero).
 *  - Older library, newer-minor plugin: accepted too. The library ignores the fields
 *    past its own struct size; the plugin must check that a host table is long enough
 *    before calling a function a later minor added:
 *    `if (CVML_PLUGIN_HAS(cvml_ir_api, host->ir, tensor_storage)) ...`.
 *  - A struct shorter than its minor 0 layout is refused (it was not written for this
 *    ABI).
 * History: 2.0 is the C ABI (1.x exposed the C++ IR). 2.1 appended
 * `cvml_device::island_work_per_element` and `cvml_ir_api::tensor_storage`. 2.2
 * appended `cvml_ir_api::graph_profiling` and `cvml_ir_api::node_set_time`. 2.3 appended
 * the planners every device shares: `cvml_host_api::plan_order`, `plan_fusion` and
 * `plan_arena`.
 */
#ifndef CVML_PLUGIN_H
#define CVML_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "cvml.h"
#include "cvml_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CVML_PLUGIN_ABI_MAJOR 2u
#define CVML_PLUGIN_ABI_MINOR 3u
#define CVML_PLUGIN_ABI_MAKE(major, minor) (((uint32_t)(major) << 16) | (uint32_t)(minor))
#define CVML_PLUGIN_ABI_VERSION CVML_PLUGIN_ABI_MAKE(CVML_PLUGIN_ABI_MAJOR, CVML_PLUGIN_ABI_MINOR)
#define CVML_PLUGIN_ABI_MAJOR_OF(version) ((uint32_t)(version) >> 16)
#define CVML_PLUGIN_ABI_MINOR_OF(version) ((uint32_t)(version)&0xffffu)

/** 1 when the struct `ptr` (of type `type`, written with its own struct_size) holds
 * `field`: a field or function a later minor version appended may be absent. */
#define CVML_PLUGIN_HAS(type, ptr, field) \
    ((ptr)->struct_size >= offsetof(type, field) + sizeof(((const type*)0)->field))

#if defined(_WIN32)
#define CVML_PLUGIN_EXPORT __declspec(dllexport)
#else
#define CVML_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* ---- opaque handles ------------------------------------------------------------------ */

/** A verified graph; read it through cvml_ir_api. */
typedef struct ir_graph cvml_ir_graph;
/** A node of a graph: an operator applied to tensors. */
typedef struct ir_node cvml_ir_node;
/** A tensor of a graph: shape, precision, host data. */
typedef struct ir_tensor cvml_ir_tensor;
/** A subgraph placed on one device: nodes in topological order and boundary tensors. */
typedef struct ir_subgraph cvml_ir_subgraph;

/* ---- what a device gets ------------------------------------------------------------ */

/** Options a device gets at prerun. */
typedef struct cvml_device_options {
    uint32_t struct_size;
    uint32_t abi_version;
    int32_t threads; /**< CPU threads the context allows */
} cvml_device_options;

typedef struct cvml_device cvml_device;

/**
 * A device runs subgraphs.
 *
 * Memory. A device with `mem_alloc == NULL` works on host memory: it reads its inputs'
 * host data (cvml_ir_api::tensor_data) and places its outputs' host data itself
 * (tensor_set_data; the CPU device puts them in its arena). A device with memory ops
 * gets its boundary tensors in its own memory: before prerun the scheduler allocates
 * one buffer per subgraph input and output (subgraph_input_buffer /
 * subgraph_output_buffer, in the order of the subgraph's inputs / outputs), uploads
 * constant inputs once after prerun, copies the other inputs before each run and
 * copies the outputs back to host buffers after it. Values on the boundary are int32,
 * one per element. Tensors inside the subgraph are the device's business.
 */
struct cvml_device {
    uint32_t struct_size; /**< sizeof(cvml_device) as the device was compiled */
    uint32_t abi_version; /**< CVML_PLUGIN_ABI_VERSION as the device was compiled */
    const char* name;     /**< unique, short: "cpu", "cuda" (< 32 bytes) */
    const char* version;

    /** 1 when the device runs this node (its operator, parameters, input and output
     * shapes and precisions), else 0. */
    int (*supports)(cvml_device* dev, const cvml_ir_graph* g, const cvml_ir_node* node);
    /** Plans memory and prepares constants for a subgraph (subgraph_set_state). */
    int (*prerun)(cvml_device* dev, cvml_ir_graph* g, cvml_ir_subgraph* sg,
                  const cvml_device_options* opt);
    /** Runs the subgraph. Host device: inputs' host data is valid on entry, outputs'
     * host data must be valid on return. Device with memory: the same of its buffers;
     * the device may leave work queued as long as copy_to_host waits for it. */
    int (*run)(cvml_device* dev, cvml_ir_graph* g, cvml_ir_subgraph* sg);
    /** Frees the subgraph's state (waiting for queued work first). */
    void (*postrun)(cvml_device* dev, cvml_ir_graph* g, cvml_ir_subgraph* sg);

    /** Optional memory ops (all four or none). mem_alloc returns CVML_OK and a buffer
     * of at least `bytes` bytes, or an error. */
    int (*mem_alloc)(cvml_device* dev, size_t bytes, void** out);
    void (*mem_free)(cvml_device* dev, void* ptr);
    /** Host -> device. `src` may be reused as soon as the call returns; the copy is
     * ordered before the next run of `sg` (NULL: complete on return). */
    int (*copy_to_device)(cvml_device* dev, cvml_ir_subgraph* sg, void* dst, const void* src,
                          size_t bytes);
    /** Device -> host, after all work queued for `sg`; `dst` is valid on return. */
    int (*copy_to_host)(cvml_device* dev, cvml_ir_subgraph* sg, void* dst, const void* src,
                        size_t bytes);

    /** Optional. Called when the device is unregistered (library release or plugin
     * unload). */
    void (*release)(cvml_device* dev);
    void* priv; /**< the device's own */

    /* ---- 2.1 ---- */
    /** Island policy (source/module/scheduler.cpp): a subgraph of a device with memory
     * ops stays on it only when its work (sum over its nodes of output elements times
     * the operator's gas base) is at least `island_work_per_element` times the elements
     * it copies per run. 0 (or a 2.0 device) keeps every island. */
    uint32_t island_work_per_element;
};

/* ---- what a plugin may read of a model --------------------------------------------- */

/** Accessors of the opaque handles. Indices are 0-based; an index out of range gives
 * NULL (handles) or 0. Handles stay valid while the graph does. */
typedef struct cvml_ir_api {
    uint32_t struct_size;
    uint32_t abi_version;

    int32_t (*graph_node_count)(const cvml_ir_graph* g);
    const cvml_ir_node* (*graph_node)(const cvml_ir_graph* g, int32_t index);
    int32_t (*graph_tensor_count)(const cvml_ir_graph* g);
    cvml_ir_tensor* (*graph_tensor)(const cvml_ir_graph* g, int32_t index);

    /** The subgraph's nodes, in topological order. */
    int32_t (*subgraph_node_count)(const cvml_ir_subgraph* sg);
    const cvml_ir_node* (*subgraph_node)(const cvml_ir_graph* g, const cvml_ir_subgraph* sg,
                                         int32_t index);
    /** Tensors read here but produced elsewhere (constants included), and tensors
     * produced here and read elsewhere (or graph outputs). */
    int32_t (*subgraph_input_count)(const cvml_ir_subgraph* sg);
    cvml_ir_tensor* (*subgraph_input)(const cvml_ir_graph* g, const cvml_ir_subgraph* sg,
                                      int32_t index);
    int32_t (*subgraph_output_count)(const cvml_ir_subgraph* sg);
    cvml_ir_tensor* (*subgraph_output)(const cvml_ir_graph* g, const cvml_ir_subgraph* sg,
                                       int32_t index);
    /** A device with memory ops: its buffer of boundary input / output `index`. */
    void* (*subgraph_input_buffer)(const cvml_ir_subgraph* sg, int32_t index);
    void* (*subgraph_output_buffer)(const cvml_ir_subgraph* sg, int32_t index);
    /** The device's own state of the subgraph, set at prerun, freed at postrun. */
    void* (*subgraph_state)(const cvml_ir_subgraph* sg);
    void (*subgraph_set_state)(cvml_ir_subgraph* sg, void* state);

    const char* (*node_name)(const cvml_ir_node* node);
    /** The operator's registered name ("conv2d"; an alias resolves to its own name),
     * NULL for a variable node. */
    const char* (*node_op)(const cvml_ir_node* node);
    int32_t (*node_index)(const cvml_ir_node* node);
    int32_t (*node_input_count)(const cvml_ir_node* node);
    cvml_ir_tensor* (*node_input)(const cvml_ir_graph* g, const cvml_ir_node* node, int32_t index);
    int32_t (*node_output_count)(const cvml_ir_node* node);
    cvml_ir_tensor* (*node_output)(const cvml_ir_graph* g, const cvml_ir_node* node, int32_t index);
    /** A parsed integer parameter by attribute name, defaults applied: an int or bool
     * gives 1 value, a tuple its values ("strides": 2), an optional int 1 value or 0 when
     * "None". Writes at most `capacity` values and returns how many the parameter has,
     * or -1 when the operator has no integer parameter of that name. */
    int32_t (*node_param_ints)(const cvml_ir_node* node, const char* name, int64_t* values,
                               int32_t capacity);
    /** A parsed string parameter ("layout"), or NULL when there is none of that name. */
    const char* (*node_param_string)(const cvml_ir_node* node, const char* name);
    /** 1 and *step when the node maps each value of input `input` on its own as one
     * element-wise step (cvml_ops.h: relu, clip, cvm_clip, cvm_right_shift, ...); 0
     * otherwise. */
    int (*node_step)(const cvml_ir_graph* g, const cvml_ir_node* node, int32_t input,
                     cvml_step* step);

    const char* (*tensor_name)(const cvml_ir_tensor* t);
    int32_t (*tensor_index)(const cvml_ir_tensor* t);
    int32_t (*tensor_ndim)(const cvml_ir_tensor* t);
    int64_t (*tensor_dim)(const cvml_ir_tensor* t, int32_t axis);
    int64_t (*tensor_element_count)(const cvml_ir_tensor* t);
    /** Bits of the values, 1..32 once the graph is verified. */
    int32_t (*tensor_precision)(const cvml_ir_tensor* t);
    /** 1 for a constant (the model's parameters). */
    int (*tensor_is_const)(const cvml_ir_tensor* t);
    /** The host data while the graph runs: int32 values, one per element, unless
     * tensor_storage says narrower (CPU device only). */
    void* (*tensor_data)(const cvml_ir_tensor* t);
    /** A host device places its outputs' data (valid until its postrun). */
    void (*tensor_set_data)(cvml_ir_tensor* t, void* data);
    /** A constant's value `index` as int32, whatever its storage. */
    int32_t (*tensor_const_value)(const cvml_ir_tensor* t, int64_t index);

    /* ---- 2.1 ---- */
    /** Bytes per element of the tensor's host data: 4, or 1 / 2 for tensors the CPU
     * device keeps narrow (a plugin's boundary buffers are always 4). */
    int32_t (*tensor_storage)(const cvml_ir_tensor* t);

    /* ---- 2.2 ---- */
    /** 1 while the graph is profiled (cvml_graph_set_profiling): a device then times each
     * node it runs and reports the time with node_set_time before its run returns (a
     * device with memory: before copy_to_host returns). */
    int (*graph_profiling)(const cvml_ir_graph* g);
    /** Records how long `node` took in this run, in nanoseconds (cvml_graph_node_time). */
    void (*node_set_time)(const cvml_ir_graph* g, const cvml_ir_node* node, uint64_t nanoseconds);
} cvml_ir_api;

/* ---- planning a subgraph (2.3) ---------------------------------------------------- */

/** One buffer of a device's arena: live from step `first` (written) to step `last` (last
 * read), both inclusive, in the order the device runs its subgraph's steps. */
typedef struct cvml_plan_buffer {
    size_t size;   /**< bytes; 0 takes no memory (offset 0) */
    int32_t first; /**< first step the buffer is live */
    int32_t last;  /**< last step it is read (less than `first` counts as `first`) */
    size_t offset; /**< the result: where it lies in the arena */
} cvml_plan_buffer;

/** What a device's kernels can absorb: the fusion walk (cvml_host_api::plan_fusion)
 * extends a head's tail while both bounds hold. */
typedef struct cvml_fusion_rules {
    uint32_t struct_size; /**< sizeof(cvml_fusion_rules) as the caller was compiled */
    uint32_t abi_version;
    /** The most steps the kernel of the subgraph's step `step` applies after its output
     * (its tail), 0 when it applies none. */
    int32_t (*tail_capacity)(void* user, int32_t step);
    void* user;
    /** A bound on a tail's cost, a step costing 1 and a right shift `shift_cost`; 0 for
     * no bound beyond tail_capacity (shift_cost then does not matter). */
    int32_t max_cost;
    int32_t shift_cost;
} cvml_fusion_rules;

/** The walk's answer for one step of the subgraph. */
typedef struct cvml_fused_step {
    /** The step whose kernel computes this node as a step of its tail, or -1: the node
     * runs itself. A head's tail is the steps naming it, in step order; the last one's
     * output is what the head writes. */
    int32_t head;
    /** CVML_STEP_ADD: the graph index of the tensor added (written before the head runs),
     * else -1. */
    int32_t operand;
    cvml_step step; /**< what the head applies for this node */
} cvml_fused_step;

/** What the library offers a plugin's entry point. Valid until the plugin is unloaded
 * (a device may keep the pointer and call `fail` while it runs). */
typedef struct cvml_host_api {
    uint32_t struct_size;
    uint32_t abi_version;
    const char* library_version; /**< cvml_version() */
    /** Registers a device (priority: registration order, before the CPU). The struct
     * must stay valid until its release() is called. */
    int (*register_device)(cvml_device* dev);
    /** Sets the calling thread's error message (cvml_last_error()) and returns
     * `status`: `return host->fail(CVML_ERR_RUNTIME, "no GPU: ...");`. */
    int (*fail)(int status, const char* message);
    /** The directory the plugin was loaded from (for data files next to it). */
    const char* plugin_dir;
    /** The model accessors. */
    const cvml_ir_api* ir;

    /* ---- 2.3: the CPU device's planners, for every device ---- */
    /** Puts the subgraph's steps in the order the CPU device runs them (source/module/
     * plan/order.cpp: of the ready nodes, the one adding the fewest live elements first),
     * before the device reads them (subgraph_node). Any topological order computes the
     * same bytes; with the CPU's, plan_fusion fuses the nodes the CPU fuses. Returns
     * CVML_OK or a runtime error (out of memory). */
    int (*plan_order)(cvml_ir_graph* g, cvml_ir_subgraph* sg);
    /** The fusion walk the CPU device uses (source/module/plan/fusion.cpp): each head
     * (tail_capacity > 0, one output) absorbs the chain of element-wise nodes that alone
     * read its output, here, later, while `rules` allow; an ADD's other operand must be
     * written before the head runs. Fills `fused` (one per step of `sg`) and records the
     * fused nodes in the graph (cvml_graph_node_fused_into). Returns CVML_OK or an
     * error. */
    int (*plan_fusion)(cvml_ir_graph* g, const cvml_ir_subgraph* sg, const cvml_fusion_rules* rules,
                       cvml_fused_step* fused);
    /** The arena planner the CPU device uses (source/module/plan/memory_plan.cpp):
     * places every buffer so that two live at once never share a byte, at offsets that
     * are multiples of `align` (a power of two), in time and memory bounded by the
     * buffers' count whatever their lifetimes. Returns CVML_OK and the arena's size, or a
     * runtime error (out of memory). */
    int (*plan_arena)(cvml_plan_buffer* buffers, int32_t count, size_t align, size_t* arena_size);
} cvml_host_api;

/** The data symbol a plugin exports so the loader can check it before the plugin's
 * entry point runs (its static constructors run at dlopen, before: see above). The
 * first two fields never move, whatever the ABI version. */
typedef struct cvml_plugin_header {
    uint32_t struct_size;
    uint32_t abi_version;
    const char* name;
    const char* version;
} cvml_plugin_header;

typedef int (*cvml_plugin_entry_fn)(const cvml_host_api* host);

#define CVML_PLUGIN_HEADER_SYMBOL "cvml_plugin_declaration"
#define CVML_PLUGIN_ENTRY_SYMBOL "cvml_plugin_entry"

#ifdef __cplusplus
#define CVML_PLUGIN_EXTERN_C extern "C"
#else
#define CVML_PLUGIN_EXTERN_C
#endif

/** Defines the plugin's header; use once, at file scope, in one source file. */
#define CVML_PLUGIN_DEFINE(NAME, VERSION)                                                        \
    CVML_PLUGIN_EXTERN_C CVML_PLUGIN_EXPORT const cvml_plugin_header cvml_plugin_declaration = { \
        sizeof(cvml_plugin_header), CVML_PLUGIN_ABI_VERSION, NAME, VERSION}

#ifdef __cplusplus
}
#endif

#endif /* CVML_PLUGIN_H */
