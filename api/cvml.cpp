/* The public C API (cvml.h): argument checks and ownership around the core. */
#include "cvml.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/cpu/cpu_runtime.h"
#include "device/cpu/simd/simd.h"
#include "graph/graph.h"
#include "graph/verify.h"
#include "module/context.h"
#include "module/device.h"
#include "module/graph_handle.h"
#if CVML_WITH_PLUGINS
#include "module/plugin_loader.h"
#endif
#include "module/registry.h"
#include "module/scheduler.h"
#include "module/serializer.h"
#include "operator/format_limits.h"
#include "operator/op_def.h"
#include "utility/error.h"
#include "utility/memory.h"
#include "utility/platform.h"

#if CVML_WITH_THREADS
#include <pthread.h>
static pthread_mutex_t g_init_lock = PTHREAD_MUTEX_INITIALIZER;
#define INIT_LOCK() pthread_mutex_lock(&g_init_lock)
#define INIT_UNLOCK() pthread_mutex_unlock(&g_init_lock)
#else
#define INIT_LOCK() ((void)0)
#define INIT_UNLOCK() ((void)0)
#endif

#define REQUIRE(cond, what)                                                      \
    do {                                                                         \
        if (!(cond)) return cvml_fail(CVML_ERR_LOGIC, "%s: %s", __func__, what); \
    } while (0)

static int g_init_count;

static int require_init(const char* fn) {
    if (g_init_count > 0) return CVML_OK;
    return cvml_fail(CVML_ERR_RUNTIME, "%s: cvml_init() has not been called", fn);
}

/* ---- library ------------------------------------------------------------------------ */

int cvml_init(void) {
    INIT_LOCK();
    int rc = CVML_OK;
    if (g_init_count == 0) {
        rc = registry_register_all();
#if CVML_WITH_PLUGINS
        if (rc == CVML_OK) plugin_loader_init();
#endif
    }
    if (rc == CVML_OK) {
        ++g_init_count;
        cvml_clear_error();
    }
    INIT_UNLOCK();
    return rc;
}

int cvml_release(void) {
    INIT_LOCK();
    int rc = CVML_OK;
    if (g_init_count == 0) {
        rc = cvml_fail(CVML_ERR_LOGIC, "cvml_release: the library is not initialised");
    } else if (--g_init_count == 0) {
#if CVML_WITH_PLUGINS
        plugin_loader_release();
#endif
        registry_unregister_all();
    }
    INIT_UNLOCK();
    return rc;
}

const char* cvml_version(void) {
    return CVML_VERSION_STRING;
}

const char* cvml_last_error(void) {
    return cvml_error_message();
}

int cvml_registry_counts(int* operators, int* serializers, int* devices) {
    REQUIRE(operators && serializers && devices, "NULL argument");
    *operators = op_registry_count();
    *serializers = serializer_registry_count();
    *devices = device_registry_count();
    return CVML_OK;
}

/* ---- memory ------------------------------------------------------------------------- */

int cvml_set_allocator(const cvml_allocator* allocator) {
    INIT_LOCK();
    int rc = g_init_count > 0
                 ? cvml_fail(CVML_ERR_LOGIC,
                             "cvml_set_allocator: the library is initialised; set the allocator "
                             "before cvml_init() or after the last cvml_release()")
                 : cvml_mem_set_allocator(allocator);
    INIT_UNLOCK();
    return rc;
}

/* ---- plugins and devices ------------------------------------------------------------ */

int cvml_load_plugin(const char* path) {
    REQUIRE(path, "NULL path");
#if CVML_WITH_PLUGINS
    INIT_LOCK();
    int rc = g_init_count > 0 ? plugin_load(path) : require_init(__func__);
    INIT_UNLOCK();
    return rc;
#else
    return cvml_fail(CVML_ERR_RUNTIME,
                     "cvml_load_plugin('%s'): this library was built without plugin support "
                     "(CVML_WITH_PLUGINS=OFF)",
                     path);
#endif
}

int cvml_plugin_count(int* count) {
    REQUIRE(count, "NULL argument");
#if CVML_WITH_PLUGINS
    *count = plugin_count();
#else
    *count = 0;
#endif
    return CVML_OK;
}

int cvml_plugin_info(int index, const char** name, const char** version, const char** path,
                     int* loaded, const char** reason) {
    REQUIRE(name && version && path && loaded && reason, "NULL argument");
#if CVML_WITH_PLUGINS
    plugin_record r;
    int rc = plugin_at(index, &r);
    if (rc) return rc;
    *name = r.name;
    *version = r.version;
    *path = r.path;
    *loaded = r.loaded;
    *reason = r.reason;
    return CVML_OK;
#else
    return cvml_fail(CVML_ERR_LOGIC, "plugin index %d: no plugins (CVML_WITH_PLUGINS=OFF)", index);
#endif
}

int cvml_device_info(int index, const char** name, const char** version) {
    REQUIRE(name && version, "NULL argument");
    cvml_context all = {};
    cvml_device* devices[CVML_CONTEXT_MAX_DEVICES + 1];
    int32_t count = 0;
    int rc = context_devices(&all, devices, CVML_CONTEXT_MAX_DEVICES + 1, &count);
    if (rc) return rc;
    if (index < 0 || index >= count)
        return cvml_fail(CVML_ERR_LOGIC, "device index %d outside 0..%" PRId32, index, count - 1);
    *name = devices[index]->name;
    *version = devices[index]->version ? devices[index]->version : "";
    return CVML_OK;
}

/* ---- context ------------------------------------------------------------------------ */

static int32_t threads_from_environment(void) {
    const char* env = getenv("CVML_NUM_THREADS");
    if (!env) return 1;
    long v = strtol(env, nullptr, 10);
    return v >= 1 && v <= 256 ? static_cast<int32_t>(v) : 1;
}

int cvml_context_create(cvml_context** out) {
    REQUIRE(out, "NULL output");
    *out = nullptr;
    cvml_context* ctx = static_cast<cvml_context*>(cvml_mem_calloc(1, sizeof(cvml_context)));
    if (!ctx) return cvml_fail_out_of_memory();
    ctx->threads = threads_from_environment();
    *out = ctx;
    return CVML_OK;
}

int cvml_context_release(cvml_context* ctx) {
    REQUIRE(ctx, "NULL context");
    cvml_mem_free(ctx);
    return CVML_OK;
}

int cvml_context_set_threads(cvml_context* ctx, int threads) {
    REQUIRE(ctx, "NULL context");
    REQUIRE(threads >= 1 && threads <= 256, "threads must be in 1..256");
    ctx->threads = threads;
    return CVML_OK;
}

int cvml_context_get_threads(const cvml_context* ctx, int* threads) {
    REQUIRE(ctx && threads, "NULL argument");
    *threads = ctx->threads;
    return CVML_OK;
}

int cvml_context_set_devices(cvml_context* ctx, const char* const* names, int count) {
    REQUIRE(ctx, "NULL context");
    REQUIRE(count >= 0 && count <= CVML_CONTEXT_MAX_DEVICES, "device count out of range");
    REQUIRE(count == 0 || names, "NULL names");
    int rc = require_init(__func__);
    if (rc) return rc;
    for (int i = 0; i < count; ++i) {
        REQUIRE(names[i], "NULL device name");
        if (!device_registry_find(names[i]))
            return cvml_fail(CVML_ERR_LOGIC, "device '%s' is not registered", names[i]);
        if (strlen(names[i]) >= sizeof ctx->device_names[0])
            return cvml_fail(CVML_ERR_LOGIC, "device name '%s' too long", names[i]);
    }
    for (int i = 0; i < count; ++i)
        cvml_strlcpy(ctx->device_names[i], names[i], sizeof ctx->device_names[i]);
    ctx->device_name_count = count;
    return CVML_OK;
}

/* ---- graphs ------------------------------------------------------------------------- */

static int prerun_locked(cvml_graph* g);
static int execute_scheduled(cvml_graph* g) {
    return scheduler_run(g->ir);
}

static int new_handle(cvml_context* ctx, ir_graph* ir, cvml_graph** out) {
    cvml_graph* g = static_cast<cvml_graph*>(cvml_mem_calloc(1, sizeof(cvml_graph)));
    if (!g) return cvml_fail_out_of_memory();
    const int rc = graph_handle_init(g, ctx, ir, prerun_locked, execute_scheduled);
    if (rc) {
        cvml_mem_free(g);
        return rc;
    }
    *out = g;
    return CVML_OK;
}

namespace {

/* The params of a load: in memory, or an open file of known size read as it is parsed. */
struct params_source {
    const void* data;
    size_t size;
    FILE* file;
};

/* Whether [a, a + an) and [b, b + bn) share a byte. */
bool overlap(const void* a, size_t an, const void* b, size_t bn) {
    uintptr_t x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
    return a && b && x < y + bn && y < x + an;
}

/* The caller's arena, idle until the graph is prepared in it, is the load's scratch
 * (utility/memory.h) unless it shares bytes with what the load reads. */
struct load_scratch {
    void* region;
    size_t size;
};

int load_graph(const char* fn, cvml_context* ctx, const char* serializer, const void* graph_data,
               size_t graph_size, const params_source& params, uint32_t flags, cvml_graph** out,
               load_scratch scratch = {nullptr, 0}) {
    int rc = require_init(fn);
    if (rc) return rc;
    const cvml_serializer* s = serializer_registry_find(serializer);
    if (!s) return cvml_fail(CVML_ERR_LOGIC, "serializer '%s' is not registered", serializer);
    ir_graph* ir = ir_graph_create();
    if (!ir) return cvml_fail_out_of_memory();
    ir->params_in_place = (flags & CVML_LOAD_PARAMS_IN_PLACE) && params.data && !params.file;
    ir->no_names = (flags & CVML_LOAD_NO_NAMES) != 0;
    const cvml_params_file_loader from_file = serializer_params_file_loader(s);
    if (overlap(scratch.region, scratch.size, graph_data, graph_size) ||
        overlap(scratch.region, scratch.size, params.data, params.size))
        scratch = {nullptr, 0};
    cvml_scratch_begin(scratch.region, scratch.size);
    rc = params.file && from_file ? from_file(graph_data, graph_size, params.file, params.size, ir)
                                  : s->load(graph_data, graph_size, params.data, params.size, ir);
    if (!cvml_scratch_end() && !rc)
        rc = cvml_fail(CVML_ERR_LOGIC, "%s: the load kept scratch memory (a bug)", fn);
    if (!rc) rc = new_handle(ctx, ir, out);
    if (rc) ir_graph_release(ir);
    return rc;
}

/* All of an open stream (path names it in messages); closes f. */
int read_stream(FILE* f, const char* path, uint8_t** data, size_t* size) {
    *data = nullptr;
    *size = 0;
    size_t cap = 0;
    int rc = CVML_OK;
    for (;;) {
        if (*size == cap) {
            size_t next = cap ? cap * 2 : 65536;
            uint8_t* p = static_cast<uint8_t*>(cvml_mem_realloc(*data, next));
            if (!p) {
                rc = cvml_fail(CVML_ERR_RUNTIME, "out of memory reading '%s'", path);
                break;
            }
            *data = p;
            cap = next;
        }
        size_t got = fread(*data + *size, 1, cap - *size, f);
        *size += got;
        if (got == 0) {
            if (ferror(f)) rc = cvml_fail(CVML_ERR_RUNTIME, "cannot read '%s'", path);
            break;
        }
    }
    fclose(f);
    if (rc) {
        cvml_mem_free(*data);
        *data = nullptr;
        *size = 0;
    }
    return rc;
}

/* Opens a params file. A regular file is left open for the serializer to read as it
 * parses (*size: its length); anything else (a pipe, a directory) is read whole here,
 * from the same open, as it always was: a pipe cannot be opened twice. */
int open_params(const char* path, FILE** file, size_t* size, uint8_t** data) {
    *file = nullptr;
    *data = nullptr;
    *size = 0;
    FILE* f = fopen(path, "rb");
    if (!f) return cvml_fail(CVML_ERR_LOGIC, "cannot open '%s'", path);
    if (cvml_regular_file_size(f, size)) {
        *file = f;
        return CVML_OK;
    }
    return read_stream(f, path, data, size);
}

}  // namespace

/* The buffer of an input tensor, allocated on first use: count values of its storage
 * (int32, or int8 where the CPU device chose it at prerun; int8 arrays carry 64
 * readable bytes past the end, as the arena's do). */
static int input_buffer(ir_tensor* t, void** dst) {
    if (!t->data) {
        size_t n = static_cast<size_t>(ir_tensor_element_count(t));
        size_t slack = t->storage == STORAGE_INT32 ? 0 : 64;
        t->data = cvml_mem_alloc(t->storage * (n ? n : 1) + slack);
        if (!t->data) return cvml_fail_out_of_memory();
    }
    *dst = t->data;
    return CVML_OK;
}

/* A load with the caller's arena: the graph is prepared in it and its inputs get their
 * buffers now, so that nothing is allocated after the load. */
static int prepare_in_arena(cvml_graph* g, void* arena, size_t arena_size) {
    g->ir->arena = static_cast<uint8_t*>(arena);
    g->ir->arena_size = arena_size;
    int rc = cvml_graph_prerun(g);
    for (int32_t i = 0; i < g->ir->input_count && !rc; ++i) {
        void* values = nullptr;
        rc = input_buffer(g->ir->tensors[g->ir->inputs[i]], &values);
    }
    return rc;
}

int cvml_graph_load_memory(cvml_context* ctx, const char* serializer, const void* graph_data,
                           size_t graph_size, const void* params_data, size_t params_size,
                           cvml_graph** out) {
    return cvml_graph_load_memory_ex(ctx, serializer, graph_data, graph_size, params_data,
                                     params_size, nullptr, out);
}

int cvml_graph_load_memory_ex(cvml_context* ctx, const char* serializer, const void* graph_data,
                              size_t graph_size, const void* params_data, size_t params_size,
                              const cvml_load_options* options, cvml_graph** out) {
    REQUIRE(out, "NULL output");
    *out = nullptr;
    REQUIRE(ctx && serializer && graph_data, "NULL argument");
    REQUIRE(!options ||
                options->struct_size >= offsetof(cvml_load_options, flags) + sizeof options->flags,
            "options->struct_size is smaller than the first version of cvml_load_options");
    const uint32_t flags = options ? options->flags : 0;
    REQUIRE((flags & ~uint32_t{CVML_LOAD_PARAMS_IN_PLACE | CVML_LOAD_NO_NAMES}) == 0,
            "unknown flag in options->flags");
    const bool has_arena = options && options->struct_size >= offsetof(cvml_load_options, arena) +
                                                                  sizeof options->arena +
                                                                  sizeof options->arena_size;
    void* arena = has_arena ? options->arena : nullptr;
    int rc = load_graph("cvml_graph_load_memory", ctx, serializer, graph_data, graph_size,
                        params_source{params_data, params_size, nullptr}, flags, out,
                        load_scratch{arena, arena ? options->arena_size : 0});
    if (!rc && arena) rc = prepare_in_arena(*out, arena, options->arena_size);
    if (rc && *out) {
        cvml_graph_release(*out);
        *out = nullptr;
    }
    return rc;
}

int graph_read_file(const char* path, uint8_t** data, size_t* size) {
    *data = nullptr;
    *size = 0;
    FILE* f = fopen(path, "rb");
    if (!f) return cvml_fail(CVML_ERR_LOGIC, "cannot open '%s'", path);
    return read_stream(f, path, data, size);
}

int cvml_graph_load_file(cvml_context* ctx, const char* serializer, const char* graph_path,
                         const char* params_path, cvml_graph** out) {
    REQUIRE(out, "NULL output");
    *out = nullptr;
    REQUIRE(ctx && serializer && graph_path, "NULL argument");
    uint8_t* graph_data = nullptr;
    uint8_t* params_data = nullptr;
    size_t graph_size = 0, params_size = 0;
    int rc = graph_read_file(graph_path, &graph_data, &graph_size);
    // A serializer that can parses the params straight from a regular file, so a large
    // blob is never in memory next to the constants made from it (load peak: the params
    // once, not twice); otherwise, or for anything but a regular file, it is read whole.
    FILE* params_file = nullptr;
    const cvml_serializer* s = serializer_registry_find(serializer);
    if (!rc && params_path && s && serializer_params_file_loader(s))
        rc = open_params(params_path, &params_file, &params_size, &params_data);
    else if (!rc && params_path)
        rc = graph_read_file(params_path, &params_data, &params_size);
    // An empty file is still a buffer: the serializer decides what an empty blob means.
    static const uint8_t empty = 0;
    if (!rc) {
        const params_source params = {params_path ? (params_data ? params_data : &empty) : nullptr,
                                      params_size, params_file};
        rc = load_graph(__func__, ctx, serializer, graph_data ? graph_data : &empty, graph_size,
                        params, 0, out);
    }
    if (params_file) fclose(params_file);
    cvml_mem_free(graph_data);
    cvml_mem_free(params_data);
    return rc;
}

int cvml_graph_release(cvml_graph* g) {
    REQUIRE(g, "NULL graph");
    if (g->plan) return g->release_compiled(g);
    scheduler_postrun(g->ir);
    ir_graph_release(g->ir);
    graph_lock_destroy(&g->lock);
    cvml_mem_free(g);
    return CVML_OK;
}

/* ---- builder ------------------------------------------------------------------------ */

int cvml_graph_create(cvml_context* ctx, cvml_graph** out) {
    REQUIRE(out, "NULL output");
    *out = nullptr;
    REQUIRE(ctx, "NULL context");
    int rc = require_init(__func__);
    if (rc) return rc;
    ir_graph* ir = ir_graph_create();
    if (!ir) return cvml_fail_out_of_memory();
    rc = new_handle(ctx, ir, out);
    if (rc) ir_graph_release(ir);
    return rc;
}

static int require_building(const cvml_graph* g) {
    if (g->ir->verified || g->ir->subgraph_count)
        return cvml_fail(CVML_ERR_LOGIC, "the graph is verified and can no longer change");
    return CVML_OK;
}

static int check_name(const ir_graph* ir, const char* name) {
    if (!name[0]) return cvml_fail(CVML_ERR_LOGIC, "empty name");
    if (ir_graph_find_node(ir, name))
        return cvml_fail(CVML_ERR_LOGIC, "the name '%s' is taken", name);
    return CVML_OK;
}

/* Adds a variable node with one output tensor of the given shape and precision. */
static int add_variable(cvml_graph* g, const char* name, int ndim, const int32_t* dims,
                        int precision, uint8_t kind, ir_tensor** out) {
    ir_graph* ir = g->ir;
    int rc = require_building(g);
    if (!rc) rc = check_name(ir, name);
    if (rc) return rc;
    if (ndim < 1 || ndim > CVML_MAX_DIMS)
        return cvml_fail(CVML_ERR_LOGIC, "'%s': ndim %d outside 1..6", name, ndim);
    if (precision < 1 || precision > 32)
        return cvml_fail(CVML_ERR_LOGIC, "'%s': precision %d outside 1..32", name, precision);
    int64_t size = 1;
    for (int i = 0; i < ndim; ++i) {
        if (dims[i] < 1 || dims[i] > kFormatMaxDim)
            return cvml_fail(CVML_ERR_LOGIC, "'%s': dim %d is %" PRId32 ", outside 1..2^24", name,
                             i, dims[i]);
        size *= dims[i];
        if (size > kFormatMaxElements)
            return cvml_fail(CVML_ERR_LOGIC, "'%s': more than 2^30 elements", name);
    }
    int32_t ni = ir_graph_add_node(ir, name);
    if (ni < 0) return CVML_ERR_RUNTIME;
    int32_t ti = ir_graph_add_tensor_sharing_name(ir, ir->nodes[ni]->name);
    if (ti < 0) return CVML_ERR_RUNTIME;
    ir_tensor* t = ir->tensors[ti];
    t->ndim = ndim;
    for (int i = 0; i < ndim; ++i) t->dims[i] = dims[i];
    t->precision = precision;
    t->kind = kind;
    rc = ir_node_add_output(ir, ir->nodes[ni], ti);
    if (rc) return rc;
    *out = t;
    return CVML_OK;
}

int cvml_graph_add_input(cvml_graph* g, const char* name, int ndim, const int32_t* dims,
                         int precision, cvml_tensor** out) {
    REQUIRE(g && name && dims && out, "NULL argument");
    ir_tensor* t = nullptr;
    int rc = add_variable(g, name, ndim, dims, precision, TENSOR_INPUT, &t);
    if (rc) return rc;
    int32_t* p = static_cast<int32_t*>(cvml_mem_realloc(
        g->ir->inputs, sizeof(int32_t) * static_cast<size_t>(g->ir->input_count + 1)));
    if (!p) return cvml_fail_out_of_memory();
    g->ir->inputs = p;
    p[g->ir->input_count++] = t->index;
    *out = reinterpret_cast<cvml_tensor*>(t);
    return CVML_OK;
}

int cvml_graph_add_const(cvml_graph* g, const char* name, int ndim, const int32_t* dims,
                         int precision, const int32_t* values, cvml_tensor** out) {
    REQUIRE(g && name && dims && values && out, "NULL argument");
    ir_tensor* t = nullptr;
    int rc = add_variable(g, name, ndim, dims, precision, TENSOR_CONST, &t);
    if (rc) return rc;
    int64_t n = ir_tensor_element_count(t);
    int32_t bound = ir_precision_bound(precision);
    for (int64_t i = 0; i < n; ++i)
        if (values[i] < -bound || values[i] > bound)
            return cvml_fail(CVML_ERR_LOGIC,
                             "'%s': value %" PRId32 " at index %lld exceeds precision %d", name,
                             values[i], static_cast<long long>(i), precision);
    rc = ir_const_store(t, values);
    if (rc) return rc;
    t->file_bits = precision <= 8 ? 8 : 32;
    int32_t* p = static_cast<int32_t*>(cvml_mem_realloc(
        g->ir->param_order, sizeof(int32_t) * static_cast<size_t>(g->ir->param_order_count + 1)));
    if (!p) return cvml_fail_out_of_memory();
    g->ir->param_order = p;
    p[g->ir->param_order_count++] = t->index;
    *out = reinterpret_cast<cvml_tensor*>(t);
    return CVML_OK;
}

static bool belongs_to(const ir_graph* ir, const cvml_tensor* t) {
    const ir_tensor* it = reinterpret_cast<const ir_tensor*>(t);
    for (int32_t i = 0; i < ir->tensor_count; ++i)
        if (ir->tensors[i] == it) return true;
    return false;
}

int cvml_graph_add_node(cvml_graph* g, const char* op, const char* name,
                        const char* const* attr_keys, const char* const* attr_values,
                        int attr_count, cvml_tensor* const* inputs, int input_count,
                        cvml_tensor** outputs, int output_capacity) {
    REQUIRE(g && op && name, "NULL argument");
    REQUIRE(attr_count >= 0 && (attr_count == 0 || (attr_keys && attr_values)), "bad attributes");
    REQUIRE(input_count >= 0 && (input_count == 0 || inputs), "bad inputs");
    REQUIRE(output_capacity >= 0 && (output_capacity == 0 || outputs), "bad outputs");
    ir_graph* ir = g->ir;
    int rc = require_building(g);
    if (!rc) rc = check_name(ir, name);
    if (rc) return rc;
    for (int i = 0; i < input_count; ++i)
        if (!inputs[i] || !belongs_to(ir, inputs[i]))
            return cvml_fail(CVML_ERR_LOGIC, "node '%s': input %d is not a tensor of this graph",
                             name, i);
    for (int i = 0; i < attr_count; ++i)
        if (!attr_keys[i] || !attr_values[i])
            return cvml_fail(CVML_ERR_LOGIC, "node '%s': attribute %d is NULL", name, i);

    int32_t ni = ir_graph_add_node(ir, name);
    if (ni < 0) return CVML_ERR_RUNTIME;
    ir_node* node = ir->nodes[ni];
    node->op_name = ir_graph_strdup(ir, op);
    if (!node->op_name) return cvml_fail_out_of_memory();
    for (int i = 0; i < attr_count && !rc; ++i)
        rc = ir_node_add_attr(ir, node, attr_keys[i], attr_values[i]);
    int32_t in_idx[64];
    int32_t* in = input_count <= 64 ? in_idx
                                    : static_cast<int32_t*>(cvml_mem_alloc(
                                          sizeof(int32_t) * static_cast<size_t>(input_count)));
    if (!in) rc = cvml_fail_out_of_memory();
    for (int i = 0; i < input_count && !rc; ++i)
        in[i] = reinterpret_cast<ir_tensor*>(inputs[i])->index;
    if (!rc) rc = ir_node_set_inputs(node, in, input_count);
    if (in != in_idx) cvml_mem_free(in);
    if (!rc) rc = graph_prepare_node(ir, node);
    if (!rc && node->op->num_outputs > output_capacity)
        rc =
            cvml_fail(CVML_ERR_LOGIC, "node '%s': operator %s has %" PRId32 " outputs, room for %d",
                      name, node->op->name, node->op->num_outputs, output_capacity);
    for (int32_t k = 0; k < (rc ? 0 : node->op->num_outputs); ++k) {
        char tname[160];
        if (k == 0)
            cvml_strlcpy(tname, name, sizeof tname);
        else
            snprintf(tname, sizeof tname, "%s:%" PRId32, name, k);
        int32_t ti = ir_graph_add_tensor(ir, tname);
        if (ti < 0) rc = CVML_ERR_RUNTIME;
        if (!rc) rc = ir_node_add_output(ir, node, ti);
        if (!rc) outputs[k] = reinterpret_cast<cvml_tensor*>(ir->tensors[ti]);
    }
    if (rc) {
        // Leave the graph as it was: drop the half-made node (it is the last one) and
        // the tensors it created, and give back their strings newest first.
        while (ir->tensor_count > 0 && ir->tensors[ir->tensor_count - 1]->producer == ni) {
            ir_tensor* t = ir->tensors[--ir->tensor_count];
            ir_graph_unstrdup(ir, t->name);
            ir_graph_free_tensor_struct(ir, t);
        }
        if (node->op && node->op->release_param && node->param)
            node->op->release_param(node->param);
        cvml_mem_free(node->param);
        for (int32_t i = node->attr_count - 1; i >= 0; --i) {
            ir_graph_unstrdup(ir, node->attrs[i].value);
            ir_graph_unstrdup(ir, node->attrs[i].key);
        }
        cvml_mem_free(node->attrs);
        cvml_mem_free(node->inputs);
        ir_node_free_outputs(node);
        ir_graph_unstrdup(ir, node->op_name);
        ir_graph_unstrdup(ir, node->name);
        ir_graph_free_node_struct(ir, node);
        --ir->node_count;
    }
    return rc;
}

int cvml_graph_set_outputs(cvml_graph* g, cvml_tensor* const* outputs, int count) {
    REQUIRE(g && outputs, "NULL argument");
    REQUIRE(count >= 1, "a graph needs at least one output");
    int rc = require_building(g);
    if (rc) return rc;
    for (int i = 0; i < count; ++i)
        if (!outputs[i] || !belongs_to(g->ir, outputs[i]))
            return cvml_fail(CVML_ERR_LOGIC, "output %d is not a tensor of this graph", i);
    int32_t* p =
        static_cast<int32_t*>(cvml_mem_alloc(sizeof(int32_t) * static_cast<size_t>(count)));
    if (!p) return cvml_fail_out_of_memory();
    for (int i = 0; i < count; ++i) p[i] = reinterpret_cast<ir_tensor*>(outputs[i])->index;
    cvml_mem_free(g->ir->outputs);
    g->ir->outputs = p;
    g->ir->output_count = count;
    return CVML_OK;
}

int cvml_graph_verify(cvml_graph* g) {
    REQUIRE(g, "NULL graph");
    if (g->ir->verified) return CVML_OK;
    return graph_verify_built(g->ir);
}

/* ---- running ------------------------------------------------------------------------ */

static int prerun_locked(cvml_graph* g) {
    int rc = require_init("cvml_graph_prerun");
    if (!rc && !g->ir->verified) rc = graph_verify_built(g->ir);
    if (!rc) rc = scheduler_prerun(g->ir, &g->context);
    return rc;
}

int cvml_graph_prerun(cvml_graph* g) {
    REQUIRE(g, "NULL graph");
    graph_lock_acquire(&g->lock);
    int rc = g->prepare(g);
    graph_lock_release(&g->lock);
    return rc;
}

int graph_run_locked(cvml_graph* g) {
    int rc = g->prepare(g);
    if (rc) return rc;
    for (int32_t i = 0; i < g->ir->input_count; ++i) {
        const ir_tensor* t = g->ir->tensors[g->ir->inputs[i]];
        if (!t->data) return cvml_fail(CVML_ERR_LOGIC, "input '%s' has no data", t->name);
    }
    rc = g->execute(g);
    if (!rc) g->ir->ran = 1;
    return rc;
}

int cvml_graph_run(cvml_graph* g) {
    REQUIRE(g, "NULL graph");
    graph_lock_acquire(&g->lock);
    int rc = graph_run_locked(g);
    graph_lock_release(&g->lock);
    return rc;
}

int cvml_graph_gas(const cvml_graph* g, uint64_t* gas) {
    REQUIRE(g && gas, "NULL argument");
    if (!g->ir->verified) return cvml_fail(CVML_ERR_LOGIC, "the graph is not verified");
    *gas = g->ir->gas;
    return CVML_OK;
}

/* ---- tensors ------------------------------------------------------------------------ */

int cvml_graph_input_count(const cvml_graph* g, int* count) {
    REQUIRE(g && count, "NULL argument");
    *count = g->ir->input_count;
    return CVML_OK;
}

int cvml_graph_output_count(const cvml_graph* g, int* count) {
    REQUIRE(g && count, "NULL argument");
    *count = g->ir->output_count;
    return CVML_OK;
}

/* *out = the tensor at `index` of a list of `count` tensor ids (`ids`), or of all the
 * graph's tensors when ids is NULL; `what` names the list in the error. */
static int tensor_at(cvml_graph* g, const int32_t* ids, int32_t count, int index, const char* what,
                     cvml_tensor** out) {
    if (index < 0 || index >= count)
        return cvml_fail(CVML_ERR_LOGIC, "%s index %d outside 0..%" PRId32, what, index, count - 1);
    *out = reinterpret_cast<cvml_tensor*>(g->ir->tensors[ids ? ids[index] : index]);
    return CVML_OK;
}

int cvml_graph_get_input(cvml_graph* g, int index, cvml_tensor** out) {
    REQUIRE(g && out, "NULL argument");
    return tensor_at(g, g->ir->inputs, g->ir->input_count, index, "input", out);
}

int cvml_graph_get_output(cvml_graph* g, int index, cvml_tensor** out) {
    REQUIRE(g && out, "NULL argument");
    return tensor_at(g, g->ir->outputs, g->ir->output_count, index, "output", out);
}

int cvml_graph_find_tensor(cvml_graph* g, const char* name, cvml_tensor** out) {
    REQUIRE(g && name && out, "NULL argument");
    ir_tensor* t = ir_graph_find_tensor(g->ir, name);
    if (!t) return cvml_fail(CVML_ERR_LOGIC, "no tensor named '%s'", name);
    *out = reinterpret_cast<cvml_tensor*>(t);
    return CVML_OK;
}

static const ir_tensor* as_ir(const cvml_tensor* t) {
    return reinterpret_cast<const ir_tensor*>(t);
}

int cvml_tensor_name(const cvml_tensor* t, const char** name) {
    REQUIRE(t && name, "NULL argument");
    *name = as_ir(t)->name;
    return CVML_OK;
}

int cvml_tensor_shape(const cvml_tensor* t, int* ndim, int32_t* dims) {
    REQUIRE(t && ndim && dims, "NULL argument");
    const ir_tensor* it = as_ir(t);
    *ndim = it->ndim;
    for (int32_t i = 0; i < it->ndim; ++i) dims[i] = static_cast<int32_t>(it->dims[i]);
    return CVML_OK;
}

int cvml_tensor_element_count(const cvml_tensor* t, size_t* count) {
    REQUIRE(t && count, "NULL argument");
    *count = static_cast<size_t>(ir_tensor_element_count(as_ir(t)));
    return CVML_OK;
}

int cvml_tensor_precision(const cvml_tensor* t, int* precision) {
    REQUIRE(t && precision, "NULL argument");
    if (as_ir(t)->precision < 1)
        return cvml_fail(CVML_ERR_LOGIC, "tensor '%s' is not verified", as_ir(t)->name);
    *precision = as_ir(t)->precision;
    return CVML_OK;
}

int cvml_tensor_dtype(const cvml_tensor* t, cvml_dtype* dtype) {
    REQUIRE(t && dtype, "NULL argument");
    if (as_ir(t)->precision < 1)
        return cvml_fail(CVML_ERR_LOGIC, "tensor '%s' is not verified", as_ir(t)->name);
    *dtype = as_ir(t)->precision <= 8 ? CVML_DTYPE_INT8 : CVML_DTYPE_INT32;
    return CVML_OK;
}

static int writable_input(cvml_tensor* t, size_t count, void** dst) {
    ir_tensor* it = reinterpret_cast<ir_tensor*>(t);
    if (it->kind != TENSOR_INPUT)
        return cvml_fail(CVML_ERR_LOGIC, "tensor '%s' is not a graph input", it->name);
    size_t n = static_cast<size_t>(ir_tensor_element_count(it));
    if (count != n)
        return cvml_fail(CVML_ERR_LOGIC,
                         "input '%s' has %" CVML_PRIuSIZE " elements, %" CVML_PRIuSIZE " given",
                         it->name, n, count);
    return input_buffer(it, dst);
}

/* Upstream's SetInput clips to the input's precision without complaint. */
static int32_t clip_to(int32_t v, int32_t bound) {
    return v < -bound ? -bound : v > bound ? bound : v;
}

/* Value i of an input handed over in `layout` (enum input_layout). */
static int32_t given_value(const void* values, int layout, size_t i) {
    if (layout == INPUT_INT8) return static_cast<const int8_t*>(values)[i];
    if (layout == INPUT_INT32) return static_cast<const int32_t*>(values)[i];
    const uint8_t* b = static_cast<const uint8_t*>(values) + 4 * i;
    return static_cast<int32_t>(static_cast<uint32_t>(b[0]) | static_cast<uint32_t>(b[1]) << 8 |
                                static_cast<uint32_t>(b[2]) << 16 |
                                static_cast<uint32_t>(b[3]) << 24);
}

/* Clipped values go in the input's storage: clipping to a precision of at most 8 bits
 * leaves values that fit the int8 storage the CPU device may have chosen for it. */
int graph_set_input(cvml_tensor* t, const void* values, int layout, size_t count) {
    void* dst = nullptr;
    int rc = writable_input(t, count, &dst);
    if (rc) return rc;
    const int storage = as_ir(t)->storage;
    int32_t bound = ir_precision_bound(as_ir(t)->precision);
    for (size_t i = 0; i < count; ++i)
        ir_storage_store(dst, storage, static_cast<int64_t>(i),
                         clip_to(given_value(values, layout, i), bound));
    return CVML_OK;
}

int cvml_tensor_set_i32(cvml_tensor* t, const int32_t* values, size_t count) {
    REQUIRE(t && values, "NULL argument");
    return graph_set_input(t, values, INPUT_INT32, count);
}

int cvml_tensor_set_i8(cvml_tensor* t, const int8_t* values, size_t count) {
    REQUIRE(t && values, "NULL argument");
    return graph_set_input(t, values, INPUT_INT8, count);
}

/* The CPU device may keep a tensor proven to fit in int8/int16 in that width
 * (ir_tensor.storage); the API always speaks int32 values. */
static int32_t stored_value(const ir_tensor* t, size_t i) {
    return ir_storage_load(t->data, t->storage, static_cast<int64_t>(i));
}

static int readable(const cvml_tensor* t, size_t count, const int32_t** src) {
    const ir_tensor* it = as_ir(t);
    size_t n = static_cast<size_t>(ir_tensor_element_count(it));
    if (count != n)
        return cvml_fail(CVML_ERR_LOGIC,
                         "tensor '%s' has %" CVML_PRIuSIZE " elements, %" CVML_PRIuSIZE " asked",
                         it->name, n, count);
    if (!it->data)
        return cvml_fail(CVML_ERR_LOGIC, "tensor '%s' holds no data (run the graph first)",
                         it->name);
    *src = static_cast<const int32_t*>(it->data);
    return CVML_OK;
}

int cvml_tensor_get_i32(const cvml_tensor* t, int32_t* values, size_t count) {
    REQUIRE(t && values, "NULL argument");
    const int32_t* src = nullptr;
    int rc = readable(t, count, &src);
    if (rc) return rc;
    for (size_t i = 0; i < count; ++i) values[i] = stored_value(as_ir(t), i);
    return CVML_OK;
}

int cvml_tensor_get_i8(const cvml_tensor* t, int8_t* values, size_t count) {
    REQUIRE(t && values, "NULL argument");
    const int32_t* src = nullptr;
    int rc = readable(t, count, &src);
    if (rc) return rc;
    for (size_t i = 0; i < count; ++i) values[i] = static_cast<int8_t>(stored_value(as_ir(t), i));
    return CVML_OK;
}

/* ---- CPU device facts ----------------------------------------------------------------- */

int cvml_graph_cpu_arena_bytes(const cvml_graph* g, size_t* bytes) {
    REQUIRE(g && bytes, "NULL argument");
    if (g->plan) return graph_compiled_refusal(__func__);
    *bytes = 0;
    for (int32_t i = 0; i < g->ir->subgraph_count; ++i)
        *bytes += cpu_subgraph_arena_bytes(g->ir->subgraphs[i]);
    return CVML_OK;
}

int cvml_graph_arena_bytes(cvml_graph* g, size_t* bytes) {
    REQUIRE(g && bytes, "NULL argument");
    if (g->plan) return graph_compiled_refusal(__func__);
    *bytes = 0;
    int rc = cvml_graph_prerun(g);
    for (int32_t i = 0; i < g->ir->subgraph_count && !rc; ++i)
        *bytes += cpu_subgraph_arena_need(g->ir->subgraphs[i]);
    return rc;
}

const char* cvml_cpu_simd_level(void) {
    return cpu_simd_name(cpu_simd_level());
}

/* ---- model facts -------------------------------------------------------------------- */

int cvml_graph_version(const cvml_graph* g, const char** version) {
    REQUIRE(g && version, "NULL argument");
    *version = g->ir->version ? g->ir->version : "";
    return CVML_OK;
}

int cvml_graph_postprocess(const cvml_graph* g, const char** postprocess) {
    REQUIRE(g && postprocess, "NULL argument");
    *postprocess = g->ir->postprocess ? g->ir->postprocess : "";
    return CVML_OK;
}

int cvml_graph_gas_split(const cvml_graph* g, uint64_t* ops, uint64_t* memory) {
    REQUIRE(g && ops && memory, "NULL argument");
    if (!g->ir->verified) return cvml_fail(CVML_ERR_LOGIC, "the graph is not verified");
    *ops = g->ir->gas_ops;
    *memory = g->ir->gas_mem;
    return CVML_OK;
}

int cvml_graph_node_count(const cvml_graph* g, int* count) {
    REQUIRE(g && count, "NULL argument");
    *count = g->ir->node_count;
    return CVML_OK;
}

static int check_node_index(const cvml_graph* g, int index) {
    if (index < 0 || index >= g->ir->node_count)
        return cvml_fail(CVML_ERR_LOGIC, "node index %d outside 0..%" PRId32, index,
                         g->ir->node_count - 1);
    return CVML_OK;
}

int cvml_graph_node_info(const cvml_graph* g, int index, const char** name, const char** op) {
    REQUIRE(g && name && op, "NULL argument");
    int rc = check_node_index(g, index);
    if (rc) return rc;
    const ir_node* n = g->ir->nodes[index];
    *name = n->name;
    *op = n->op ? n->op->name : "null";
    return CVML_OK;
}

int cvml_graph_node_input_count(const cvml_graph* g, int index, int* count) {
    REQUIRE(g && count, "NULL argument");
    int rc = check_node_index(g, index);
    if (rc) return rc;
    *count = g->ir->nodes[index]->input_count;
    return CVML_OK;
}

int cvml_graph_node_input(const cvml_graph* g, int index, int k, int* producer, int* output,
                          const char** tensor_name) {
    REQUIRE(g && producer && output && tensor_name, "NULL argument");
    int rc = check_node_index(g, index);
    if (rc) return rc;
    const ir_node* n = g->ir->nodes[index];
    if (k < 0 || k >= n->input_count)
        return cvml_fail(CVML_ERR_LOGIC, "node '%s' has %" PRId32 " inputs, not %d", n->name,
                         n->input_count, k + 1);
    const ir_tensor* t = g->ir->tensors[n->inputs[k]];
    *producer = t->producer;
    *output = t->producer >= 0 ? t->producer_output : 0;
    *tensor_name = t->name;
    return CVML_OK;
}

int cvml_graph_node_device(const cvml_graph* g, int index, const char** device) {
    REQUIRE(g && device, "NULL argument");
    int rc = check_node_index(g, index);
    if (rc) return rc;
    const ir_node* n = g->ir->nodes[index];
    *device = "";
    if (!n->op) return CVML_OK;
    if (n->subgraph < 0) return cvml_fail(CVML_ERR_LOGIC, "the graph has not been prerun");
    const cvml_device* d = device_registry_at(g->ir->subgraphs[n->subgraph]->device);
    *device = d ? d->name : "";
    return CVML_OK;
}

int cvml_graph_tensor_count(const cvml_graph* g, int* count) {
    REQUIRE(g && count, "NULL argument");
    *count = g->ir->tensor_count;
    return CVML_OK;
}

int cvml_graph_get_tensor(cvml_graph* g, int index, cvml_tensor** out) {
    REQUIRE(g && out, "NULL argument");
    return tensor_at(g, nullptr, g->ir->tensor_count, index, "tensor", out);
}

int cvml_tensor_is_const(const cvml_tensor* t, int* is_const) {
    REQUIRE(t && is_const, "NULL argument");
    *is_const = as_ir(t)->kind == TENSOR_CONST;
    return CVML_OK;
}

/* ---- profiling ---------------------------------------------------------------------- */

int cvml_graph_set_profiling(cvml_graph* g, int enabled) {
    REQUIRE(g, "NULL graph");
    if (enabled && !g->ir->node_time_ns) {
        g->ir->node_time_ns = static_cast<uint64_t*>(
            cvml_mem_calloc(static_cast<size_t>(g->ir->node_count) + 1, sizeof(uint64_t)));
        if (!g->ir->node_time_ns) return cvml_fail_out_of_memory();
    }
    g->ir->profiling = enabled ? 1 : 0;
    return CVML_OK;
}

int cvml_graph_node_time(const cvml_graph* g, int index, uint64_t* nanoseconds) {
    REQUIRE(g && nanoseconds, "NULL argument");
    int rc = check_node_index(g, index);
    if (rc) return rc;
    *nanoseconds = g->ir->node_time_ns ? g->ir->node_time_ns[index] : 0;
    return CVML_OK;
}

int cvml_graph_node_fused_into(const cvml_graph* g, int index, int* into) {
    REQUIRE(g && into, "NULL argument");
    int rc = check_node_index(g, index);
    if (rc) return rc;
    static_assert(IR_RUNS_AS_VIEW == CVML_NODE_VIEW, "one encoding in the IR and the API");
    *into = g->ir->nodes[index]->fused_into;
    return CVML_OK;
}
