/**
 * @file cvml.h
 * @brief The public C API of cvm-lite: library, context, graph, tensor, run, gas, errors.
 *
 * Every function returns a status: ::CVML_OK, ::CVML_ERR_LOGIC (the model or the
 * caller's input is at fault) or ::CVML_ERR_RUNTIME (the system or the runtime is at
 * fault). The numbers are upstream CVM's SUCCEED / ERROR_LOGIC / ERROR_RUNTIME. On
 * failure, cvml_last_error() returns a message for the calling thread. NULL arguments
 * are errors, never crashes.
 *
 * Ownership: the library never frees or keeps a caller's buffer. Objects it returns
 * (contexts, graphs) are released with their matching release function. Tensor handles
 * belong to their graph and stay valid until the graph is released.
 *
 * Threads: different graphs may be used from different threads at once, freely. One
 * graph may be shared between threads for whole runs: cvml_graph_prerun(),
 * cvml_graph_run() and cvml_graph_run_bytes() (and upstream's CVMAPIInference) hold
 * the graph's own lock for their whole call, so concurrent calls on one handle run one
 * after the other and each gets its own correct outputs. A sequence of calls, such as
 * cvml_tensor_set_i8() then cvml_graph_run() then cvml_tensor_get_i8(), is not one
 * call: threads sharing a graph that way must hold a lock of their own around the
 * sequence (or use cvml_graph_run_bytes(), or one graph per thread). Building,
 * profiling switches and cvml_graph_release() must not overlap any other call on the
 * same graph. Contexts may be read from several threads; changing one while another
 * thread loads a graph with it is a race.
 *
 * This header compiles as C99 and as C++.
 */
#ifndef CVML_H
#define CVML_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* On Windows the library's own objects export the API (CVML_BUILDING_LIBRARY is set by
 * its build); a program using the DLL or the static library sees plain declarations,
 * which MinGW and MSVC both resolve against the import library or the archive. */
#if defined(_WIN32) && defined(CVML_BUILDING_LIBRARY)
#define CVML_API __declspec(dllexport)
#elif defined(_WIN32)
#define CVML_API
#else
#define CVML_API __attribute__((visibility("default")))
#endif

/** Status codes (upstream CVM's numbers). */
enum {
    CVML_OK = 0,         /**< success */
    CVML_ERR_LOGIC = 1,  /**< the model or the caller's input is invalid */
    CVML_ERR_RUNTIME = 2 /**< the runtime or the system failed */
};

/** Largest number of dimensions of a tensor. */
#define CVML_MAX_DIMS 6

/** Element types at the API boundary (upstream speaks int8 and int32). */
typedef enum cvml_dtype { CVML_DTYPE_INT8 = 1, CVML_DTYPE_INT32 = 4 } cvml_dtype;

typedef struct cvml_context cvml_context; /**< devices, their priority, thread count */
typedef struct cvml_graph cvml_graph;     /**< a loaded or built model */
typedef struct cvml_tensor cvml_tensor;   /**< a tensor of a graph (owned by the graph) */

/* ---- library ---------------------------------------------------------------------- */

/** Initialises the library (registries of serializers, operators, devices). Calls are
 * reference counted: each successful cvml_init() needs one cvml_release(). */
CVML_API int cvml_init(void);
/** Releases what cvml_init() set up once the last reference is gone. */
CVML_API int cvml_release(void);
/** The library version, "MAJOR.MINOR.PATCH"; a static string. */
CVML_API const char* cvml_version(void);
/** The calling thread's message for the last failure ("" if none). */
CVML_API const char* cvml_last_error(void);
/** Number of registered operators (definitions), serializers and devices. */
CVML_API int cvml_registry_counts(int* operators, int* serializers, int* devices);

/* ---- memory ----------------------------------------------------------------------- */

/** Where the library's heap memory comes from: functions like malloc, realloc and free
 * (alloc and resize return NULL when out of memory; memory must be aligned for any
 * object; release takes NULL or a pointer from alloc or resize). `user` is passed to
 * each. Set struct_size to sizeof(cvml_allocator). */
typedef struct cvml_allocator {
    size_t struct_size;
    void* (*alloc)(void* user, size_t size);
    void* (*resize)(void* user, void* p, size_t size);
    void (*release)(void* user, void* p);
    void* user;
} cvml_allocator;

/** Installs the allocator every later allocation of the library goes through (NULL: the
 * C library's malloc, the default). A caller without a heap hands in one over a static
 * pool; a test counts with one. Only while the library holds no memory: before the
 * first cvml_init() or after the last cvml_release(), with every context, graph and
 * buffer it returned released (a logic error otherwise). The allocator is copied. */
CVML_API int cvml_set_allocator(const cvml_allocator* allocator);

/* ---- plugins and devices ---------------------------------------------------------- */

/** Loads a device plugin (a shared library speaking api/cvml_plugin.h) by path; its
 * devices take priority over the CPU in contexts that do not name their devices.
 * cvml_init() already loads the plugins in CVML_PLUGIN_PATH (directories or files,
 * separated by ':' — ';' on Windows) and in the library's plugin directories
 * (lib/cvml/plugins next to the library, and the install directory). Loading a plugin
 * already loaded is a no-op. A missing file, a library that is not a plugin, a plugin
 * built for another ABI version, or a plugin that finds no usable hardware is a
 * runtime error whose message says why; nothing of such a plugin stays registered.
 * Plugins stay loaded until the last cvml_release(). Without plugin support
 * (CVML_WITH_PLUGINS=OFF) this is a runtime error. */
CVML_API int cvml_load_plugin(const char* path);
/** Plugins the library loaded or tried to load (and those its build expects but did
 * not find): count, then each one's name, version ("" when unknown), path ("" when
 * not found), whether it is loaded, and the reason it is not ("" when loaded). The
 * strings stay valid until the next cvml_load_plugin() or cvml_release(). */
CVML_API int cvml_plugin_count(int* count);
CVML_API int cvml_plugin_info(int index, const char** name, const char** version, const char** path,
                              int* loaded, const char** reason);
/** Registered devices in the default priority order (plugin devices, then the CPU):
 * their name and version (static strings of the device). */
CVML_API int cvml_device_info(int index, const char** name, const char** version);

/* ---- context ---------------------------------------------------------------------- */

/** Creates a context: by default every registered device in priority order (loaded
 * plugin devices first, the CPU last) and the thread count from CVML_NUM_THREADS or 1. */
CVML_API int cvml_context_create(cvml_context** out);
CVML_API int cvml_context_release(cvml_context* ctx);
/** Sets the number of CPU threads (>= 1). */
CVML_API int cvml_context_set_threads(cvml_context* ctx, int threads);
CVML_API int cvml_context_get_threads(const cvml_context* ctx, int* threads);
/** Names the devices a graph may use, in priority order ("cpu" is always appended as
 * the fallback if absent). Unknown names are a logic error. */
CVML_API int cvml_context_set_devices(cvml_context* ctx, const char* const* names, int count);

/* ---- loading ---------------------------------------------------------------------- */

/** Loads a graph with the serializer `serializer` ("cvm") from a graph file and a
 * params file (`params_path` may be NULL for serializers that do not need one). The
 * "cvm" serializer parses a seekable params file as it reads it, so peak memory while
 * loading is about the parameters once, not twice. */
CVML_API int cvml_graph_load_file(cvml_context* ctx, const char* serializer, const char* graph_path,
                                  const char* params_path, cvml_graph** out);
/** Same as cvml_graph_load_file() from memory; the buffers are only read during the
 * call. */
CVML_API int cvml_graph_load_memory(cvml_context* ctx, const char* serializer,
                                    const void* graph_data, size_t graph_size,
                                    const void* params_data, size_t params_size, cvml_graph** out);
CVML_API int cvml_graph_release(cvml_graph* graph);

/** Flag of cvml_load_options.flags: the params buffer outlives the graph (it is in
 * flash, or the caller keeps it until cvml_graph_release()) and is not changed
 * meanwhile, so constants are read from it in place instead of being copied. An int8
 * array is read in place when 64 bytes of the buffer follow it (vector kernels may read
 * that far); an int32 array when it is 4-byte aligned in memory on a little-endian
 * host; any other array is copied. Values are checked against their precision either
 * way. */
#define CVML_LOAD_PARAMS_IN_PLACE 1u
/** Flag of cvml_load_options.flags: keep no names of operator nodes and their output
 * tensors (all ""), which cost a microcontroller KB of heap (3 KB for
 * cifar_resnet20). Variables (the params and the input "data") keep theirs: they are
 * bound by name. The file's names are still checked (duplicates are refused as
 * without the flag). Messages then name operator nodes by index and operator only,
 * lookups by name find no operator output, and cvml_graph_save_memory()/_file() refuse
 * the graph (a CVM file needs its names). */
#define CVML_LOAD_NO_NAMES 2u

/** Options of cvml_graph_load_memory_ex(). Set struct_size to sizeof(cvml_load_options);
 * fields added later go at the end, so an older caller's smaller struct stays valid. */
typedef struct cvml_load_options {
    size_t struct_size;
    uint32_t flags; /**< CVML_LOAD_* */
    /** The caller's arena for the intermediate tensors and kernel scratch of the CPU
     * device, or NULL (the library allocates it). With an arena the load also prepares
     * the graph (cvml_graph_prerun()) and the input buffers, so that nothing is allocated
     * after the load returns: runs allocate nothing. It must hold the bytes that
     * cvml_graph_arena_bytes() reports for the same model, SIMD level and thread count
     * (a smaller one fails the load with a message naming that figure); it is used until
     * cvml_graph_release(). Any alignment. */
    void* arena;
    size_t arena_size;
} cvml_load_options;

/** cvml_graph_load_memory() with options (NULL: the defaults, as that function). */
CVML_API int cvml_graph_load_memory_ex(cvml_context* ctx, const char* serializer,
                                       const void* graph_data, size_t graph_size,
                                       const void* params_data, size_t params_size,
                                       const cvml_load_options* options, cvml_graph** out);

/* ---- building --------------------------------------------------------------------- */

/** Creates an empty graph to be filled with the builder calls below. */
CVML_API int cvml_graph_create(cvml_context* ctx, cvml_graph** out);
/** Adds the graph input (a variable; CVM models have one, named "data"). */
CVML_API int cvml_graph_add_input(cvml_graph* g, const char* name, int ndim, const int32_t* dims,
                                  int precision, cvml_tensor** out);
/** Adds a constant (parameter); `values` (prod(dims) int32) is copied. */
CVML_API int cvml_graph_add_const(cvml_graph* g, const char* name, int ndim, const int32_t* dims,
                                  int precision, const int32_t* values, cvml_tensor** out);
/** Adds an operator node. Attributes are given as upstream's strings, e.g.
 * keys {"channels","kernel_size"} values {"8","(3, 3)"}. `outputs` receives the
 * node's output tensors (capacity `output_capacity`, most operators have one). */
CVML_API int cvml_graph_add_node(cvml_graph* g, const char* op, const char* name,
                                 const char* const* attr_keys, const char* const* attr_values,
                                 int attr_count, cvml_tensor* const* inputs, int input_count,
                                 cvml_tensor** outputs, int output_capacity);
/** Declares the graph outputs, in order. */
CVML_API int cvml_graph_set_outputs(cvml_graph* g, cvml_tensor* const* outputs, int count);
/** Verifies a built graph: infers shapes and precisions, computes gas. A loaded graph
 * is already verified. */
CVML_API int cvml_graph_verify(cvml_graph* g);

/* ---- running ---------------------------------------------------------------------- */

/** Partitions the graph over the context's devices and plans memory. Implied by the
 * first cvml_graph_run(). */
CVML_API int cvml_graph_prerun(cvml_graph* g);
/** Runs the graph on the data previously set on its input tensors. Serialized per
 * graph (see Threads above). */
CVML_API int cvml_graph_run(cvml_graph* g);

/* ---- gas and model facts ---------------------------------------------------------- */

/** The gas of a verified graph (upstream's GetOps formula). */
CVML_API int cvml_graph_gas(const cvml_graph* g, uint64_t* gas);

/* ---- saving ----------------------------------------------------------------------- */

/** Writes a graph with a serializer ("cvm": graph JSON + params) to two files. */
CVML_API int cvml_graph_save_file(const cvml_graph* g, const char* serializer,
                                  const char* graph_path, const char* params_path);
/** Same into buffers the library allocates; release each with cvml_free(). */
CVML_API int cvml_graph_save_memory(const cvml_graph* g, const char* serializer, void** graph_data,
                                    size_t* graph_size, void** params_data, size_t* params_size);
/** Frees a buffer the library allocated for the caller. NULL is ignored. */
CVML_API void cvml_free(void* p);

/* ---- compiled plans (docs/compiled-plan.md) ---------------------------------------- */

/** Writes the graph as a compiled plan for `target` ("scalar"; the names of
 * docs/compiled-plan.md, "Targets"): the verified graph and the CPU device's plan for
 * that target and the context's thread count, in a buffer the library allocates
 * (release it with cvml_free()). The graph must not have been prepared before; this call
 * prepares it for the target, with the CPU device alone. */
CVML_API int cvml_graph_save_compiled(cvml_graph* g, const char* target, void** data, size_t* size);
/** The plan's own arena (activations, kernel scratch and inputs, in bytes) and its lower
 * bound: the most bytes one step reads and writes at once, which no plan that keeps a
 * step's inputs apart from its outputs can go below. */
CVML_API int cvml_compiled_plan_arena(const void* plan, size_t length, size_t* activations,
                                      size_t* lower_bound);
/** The bytes of arena cvml_graph_load_compiled() needs for this plan in this build. */
CVML_API int cvml_graph_compiled_arena_bytes(const void* plan, size_t length, size_t* bytes);
/** Loads a compiled plan from `plan` (8-byte aligned; it may be read-only memory, flash,
 * and must stay unchanged until cvml_graph_release()), checking it as any input. The
 * handle, the runtime state, the activations and the inputs go in `arena` (any
 * alignment, at least cvml_graph_compiled_arena_bytes()); nothing is allocated but the
 * threads of a plan for several. The graph runs with cvml_graph_run() or
 * cvml_graph_run_bytes() and exposes its inputs and outputs; it has no nodes, and
 * cannot be saved or changed. Gas and outputs are those of the CVM files it came from. */
CVML_API int cvml_graph_load_compiled(cvml_context* ctx, const void* plan, size_t length,
                                      void* arena, size_t arena_size, cvml_graph** out);

/* ---- upstream byte I/O (FORMAT.md 4.3) ---------------------------------------------- */

/** Input bytes of the model as upstream's CVMAPIInference takes them: the length in
 * bytes and the element size (1: int8 when the input precision <= 8, else 4). */
CVML_API int cvml_graph_input_bytes(const cvml_graph* g, size_t* length, int* type_size);
/** Output bytes as upstream's CVMAPIInference writes them (all outputs, interleaved
 * rows, argmax/detection post-processing). */
CVML_API int cvml_graph_output_bytes(const cvml_graph* g, size_t* length, int* type_size);
/** Sets the input from upstream's bytes, runs, and writes upstream's output bytes.
 * `output` must hold exactly the cvml_graph_output_bytes() length; it is zero-filled
 * first (upstream's argmax quirk leaves part of it unwritten). */
CVML_API int cvml_graph_run_bytes(cvml_graph* g, const void* input, size_t input_length,
                                  void* output, size_t output_length);

/* ---- model facts ------------------------------------------------------------------ */

/** The model's format version ("cvm_1.0.0", "cvm_1.1.0"; "" for the 2019 layout or a
 * built graph) and its post-processing ("", "argmax", "detection"). Static strings
 * owned by the graph. */
CVML_API int cvml_graph_version(const cvml_graph* g, const char** version);
CVML_API int cvml_graph_postprocess(const cvml_graph* g, const char** postprocess);
/** Gas split into its operations and memory parts (gas = ops + memory). */
CVML_API int cvml_graph_gas_split(const cvml_graph* g, uint64_t* ops, uint64_t* memory);
/** Nodes: count, and each node's name and operator ("null" for variables). */
CVML_API int cvml_graph_node_count(const cvml_graph* g, int* count);
CVML_API int cvml_graph_node_info(const cvml_graph* g, int index, const char** name,
                                  const char** op);
/** The edges into node `index`: how many inputs it reads, and for input `k` the node
 * that produces it (-1 for a tensor no node produces, such as a builder constant),
 * which of that node's outputs it is, and the tensor's name (owned by the graph). */
CVML_API int cvml_graph_node_input_count(const cvml_graph* g, int index, int* count);
CVML_API int cvml_graph_node_input(const cvml_graph* g, int index, int k, int* producer,
                                   int* output, const char** tensor_name);
/** After prerun: the device that runs node `index` ("" for variables). */
CVML_API int cvml_graph_node_device(const cvml_graph* g, int index, const char** device);
/** All tensors (inputs, parameters, intermediates), by index. */
CVML_API int cvml_graph_tensor_count(const cvml_graph* g, int* count);
CVML_API int cvml_graph_get_tensor(cvml_graph* g, int index, cvml_tensor** out);
/** 1 when the tensor is a parameter (constant). */
CVML_API int cvml_tensor_is_const(const cvml_tensor* t, int* is_const);

/* ---- profiling -------------------------------------------------------------------- */

/** Turns per-node timing on or off for later runs (off by default). */
CVML_API int cvml_graph_set_profiling(cvml_graph* g, int enabled);
/** Wall time of node `index` in the last profiled run, in nanoseconds (0 for
 * variables and for nodes not run on a profiled device). */
CVML_API int cvml_graph_node_time(const cvml_graph* g, int index, uint64_t* nanoseconds);
/** After prerun: how node `index` runs. `into` is -1 when the node runs as itself
 * (variables too), the index of the node that computes it when its device fused it
 * into that node's kernel (an element-wise step applied to the other node's results:
 * its own time is then 0 and counted in that node's), or CVML_NODE_VIEW when its
 * output shares its input's memory and it does no work (reshape-like operators). */
CVML_API int cvml_graph_node_fused_into(const cvml_graph* g, int index, int* into);
#define CVML_NODE_VIEW (-2)

/* ---- CPU device facts -------------------------------------------------------------- */

/** After prerun: bytes of the CPU device's arenas for this graph (intermediate tensors
 * and kernel scratch, placed by lifetime). */
CVML_API int cvml_graph_cpu_arena_bytes(const cvml_graph* g, size_t* bytes);
/** The bytes an arena handed to a load (cvml_load_options.arena) needs for this model:
 * the CPU plans with their slack and alignment. Prepares the graph first if it is not
 * (cvml_graph_prerun()). The figure depends on the SIMD level and the thread count
 * (CVML_SIMD=scalar and 1 thread give a microcontroller's figure on a host). */
CVML_API int cvml_graph_arena_bytes(cvml_graph* g, size_t* bytes);
/** The instruction set the CPU kernels use for graphs prepared now: "scalar", "avx2"
 * or "avx512" on x86-64, "scalar", "neon", "dotprod" or "i8mm" on aarch64 Linux (the
 * CPU's best, lowered by the CVML_SIMD environment variable). */
CVML_API const char* cvml_cpu_simd_level(void);

/* ---- tensors ---------------------------------------------------------------------- */

CVML_API int cvml_graph_input_count(const cvml_graph* g, int* count);
CVML_API int cvml_graph_output_count(const cvml_graph* g, int* count);
CVML_API int cvml_graph_get_input(cvml_graph* g, int index, cvml_tensor** out);
CVML_API int cvml_graph_get_output(cvml_graph* g, int index, cvml_tensor** out);
/** Looks a tensor up by name (a node's name names its first output). */
CVML_API int cvml_graph_find_tensor(cvml_graph* g, const char* name, cvml_tensor** out);

CVML_API int cvml_tensor_name(const cvml_tensor* t, const char** name);
/** Shape: `dims` must have room for CVML_MAX_DIMS entries. */
CVML_API int cvml_tensor_shape(const cvml_tensor* t, int* ndim, int32_t* dims);
CVML_API int cvml_tensor_element_count(const cvml_tensor* t, size_t* count);
/** The verified precision in bits (1..32). */
CVML_API int cvml_tensor_precision(const cvml_tensor* t, int* precision);
/** The upstream byte type of the tensor: int8 when precision <= 8, else int32. */
CVML_API int cvml_tensor_dtype(const cvml_tensor* t, cvml_dtype* dtype);
/** Copies `count` values (must equal the element count) into an input tensor. Values
 * are clipped to the tensor's precision, as upstream's SetInput does. */
CVML_API int cvml_tensor_set_i32(cvml_tensor* t, const int32_t* values, size_t count);
CVML_API int cvml_tensor_set_i8(cvml_tensor* t, const int8_t* values, size_t count);
/** Copies a tensor's values out after a run; int8 is upstream's truncating cast. */
CVML_API int cvml_tensor_get_i32(const cvml_tensor* t, int32_t* values, size_t count);
CVML_API int cvml_tensor_get_i8(const cvml_tensor* t, int8_t* values, size_t count);

#ifdef __cplusplus
}
#endif

#endif /* CVML_H */
