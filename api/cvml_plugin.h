/**
 * @file cvml_plugin.h
 * @brief The plugin ABI of cvm-lite: how a shared library adds devices (and operators
 * or serializers) to the library at run time. The CPU device is written against the
 * same `cvml_device` struct, so built-in and plugin devices are one mechanism.
 *
 * A plugin is a shared library that
 *  1. defines its header with CVML_PLUGIN_DEFINE("name", "version") — the exported
 *     data symbol `cvml_plugin_declaration` the loader reads *before* running any plugin code, so a
 * plugin built for another ABI version is refused without being half-loaded;
 *  2. exports `int cvml_plugin_entry(const cvml_host_api* host)`, which registers its
 *     devices through the host table and returns CVML_OK, or returns an error (after
 *     host->fail(...)) when it cannot work here — no GPU, no driver. The loader then
 *     unregisters whatever the plugin registered, closes it and records the reason.
 *
 * Every struct that crosses the boundary starts with its size and the ABI version it
 * was compiled with; the host refuses a struct whose version is not its own. The
 * ABI exposes the IR (graph/graph.h) and the operators' param structs
 * (operator/NAME.h): plugins are built from this source tree, with `source/` on the
 * include path, against the same ABI version. Everything a plugin needs from the
 * library comes through `cvml_host_api`; a plugin links no symbol of libcvml.
 */
#ifndef CVML_PLUGIN_H
#define CVML_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "cvml.h"
#include "graph/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Bumped whenever a struct below or the IR or a param struct changes layout. */
#define CVML_PLUGIN_ABI_VERSION 1u

#if defined(_WIN32)
#define CVML_PLUGIN_EXPORT __declspec(dllexport)
#else
#define CVML_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

struct op_def;
struct cvml_serializer;

/** Options a device gets at prerun. */
typedef struct cvml_device_options {
    int32_t threads; /**< CPU threads the context allows */
} cvml_device_options;

typedef struct cvml_device cvml_device;

/**
 * A device runs subgraphs (ir_subgraph: a topologically ordered list of nodes of
 * one graph, with its boundary tensors).
 *
 * Memory. A device with `mem_alloc == NULL` works on host memory: it reads its
 * inputs' `ir_tensor::data` and places its outputs' host data itself (the CPU
 * device puts them in its arena). A device with memory ops gets its boundary tensors
 * in its own memory: before prerun the scheduler allocates one buffer per subgraph
 * input and output (`ir_subgraph::input_buffers` / `output_buffers`, in the order of
 * `inputs` / `outputs`), uploads constant inputs once after prerun, copies the other
 * inputs before each run and copies the outputs back to host buffers after it.
 * Tensors inside the subgraph are the device's business.
 */
struct cvml_device {
    uint32_t struct_size; /**< sizeof(cvml_device) as the device was compiled */
    uint32_t abi_version; /**< CVML_PLUGIN_ABI_VERSION as the device was compiled */
    const char* name;     /**< unique, short: "cpu", "cuda" (< 32 bytes) */
    const char* version;

    /** 1 when the device runs this node (its operator, attributes in node->param,
     * input and output shapes and precisions), else 0. */
    int (*supports)(cvml_device* dev, const ir_graph* g, const ir_node* node);
    /** Plans memory and prepares constants for a subgraph; sets sg->device_state. */
    int (*prerun)(cvml_device* dev, ir_graph* g, ir_subgraph* sg, const cvml_device_options* opt);
    /** Runs the subgraph. Host device: inputs' host data is valid on entry, outputs'
     * host data must be valid on return. Device with memory: the same of its buffers;
     * the device may leave work queued as long as copy_to_host waits for it. */
    int (*run)(cvml_device* dev, ir_graph* g, ir_subgraph* sg);
    /** Frees sg->device_state (waiting for queued work first). */
    void (*postrun)(cvml_device* dev, ir_graph* g, ir_subgraph* sg);

    /** Optional memory ops (all four or none). mem_alloc returns CVML_OK and a buffer
     * of at least `bytes` bytes, or an error. */
    int (*mem_alloc)(cvml_device* dev, size_t bytes, void** out);
    void (*mem_free)(cvml_device* dev, void* ptr);
    /** Host → device. `src` may be reused as soon as the call returns; the copy is
     * ordered before the next run of `sg` (NULL: complete on return). */
    int (*copy_to_device)(cvml_device* dev, ir_subgraph* sg, void* dst, const void* src,
                          size_t bytes);
    /** Device → host, after all work queued for `sg`; `dst` is valid on return. */
    int (*copy_to_host)(cvml_device* dev, ir_subgraph* sg, void* dst, const void* src,
                        size_t bytes);

    /** Island policy (see source/module/scheduler.cpp): a subgraph of a device with
     * memory ops stays on it only when its work (sum over its nodes of output elements
     * times the operator's gas base) is at least `island_work_per_element` times the
     * elements it copies per run. 0 keeps every island. */
    uint32_t island_work_per_element;

    /** Called when the device is unregistered (library release or plugin unload). */
    void (*release)(cvml_device* dev);
    void* priv; /**< the device's own */
};

/** What the library offers a plugin's entry point. */
typedef struct cvml_host_api {
    uint32_t struct_size;
    uint32_t abi_version;
    const char* library_version; /**< cvml_version() */
    /** Registers a device (priority: registration order, before the CPU). The struct
     * must stay valid until its release() is called. */
    int (*register_device)(cvml_device* dev);
    /** Registers an operator definition (operator/op_def.h) or a serializer
     * (module/serializer.h); they stay registered until the library is released. */
    int (*register_operator)(const struct op_def* op);
    int (*register_serializer)(const struct cvml_serializer* s);
    /** Sets the calling thread's error message (cvml_last_error()) and returns
     * `status`: `return host->fail(CVML_ERR_RUNTIME, "no GPU: ...");`. */
    int (*fail)(int status, const char* message);
    /** The directory the plugin was loaded from (for data files next to it). */
    const char* plugin_dir;
} cvml_host_api;

/** The data symbol a plugin exports so the loader can check it before any plugin
 * code runs. The first two fields never move, whatever the ABI version. */
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
