/* A device plugin written in C99 against the installed cvml_plugin.h alone: what a
 * third party would write. It is built in the tree (tests/plugin.cmake) and out of the
 * tree against the installed package (tests/install/plugin/), and must run the
 * conformance cases of the operators it takes bit-exact with the CPU.
 *
 * The device keeps its own int32 copy of every tensor (malloc'd "device" memory), so
 * the library's boundary copies are exercised both ways. It takes:
 *  - every node that is one element-wise step on its input 0 (the step's exact
 *    semantics are cvml_ops.h's): relu, clip, cvm_clip, cvm_right_shift,
 *    broadcast_mul by a one-element constant, elemwise_add;
 *  - elemwise_sub, negative and abs;
 *  - the views flatten, reshape, squeeze, expand_dims (a copy of the values).
 * Only the C library: no POSIX call, so it builds as a Windows DLL as well.
 *
 * Build variants, for the ABI's version rules (api/cvml_plugin.h):
 *  CPLUGIN_OLDER_MINOR  declares minor 0 and the 2.0 layout of cvml_device (without
 *                       island_work_per_element): a newer library must accept it;
 *  CPLUGIN_NEWER_MINOR  declares the next minor, with a longer cvml_device: the library
 *                       must accept it and ignore what it does not know;
 *  CPLUGIN_NEXT_MAJOR   declares the next major: refused before any of its code runs. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cvml_plugin.h"

#if defined(CPLUGIN_OLDER_MINOR)
#define CP_NAME "cplugin_old"
#define CP_ABI CVML_PLUGIN_ABI_MAKE(CVML_PLUGIN_ABI_MAJOR, 0)
#elif defined(CPLUGIN_NEWER_MINOR)
#define CP_NAME "cplugin_new"
#define CP_ABI CVML_PLUGIN_ABI_MAKE(CVML_PLUGIN_ABI_MAJOR, CVML_PLUGIN_ABI_MINOR + 1)
#elif defined(CPLUGIN_NEXT_MAJOR)
#define CP_NAME "cplugin_next"
#define CP_ABI CVML_PLUGIN_ABI_MAKE(CVML_PLUGIN_ABI_MAJOR + 1, 0)
#else
#define CP_NAME "cplugin"
#define CP_ABI CVML_PLUGIN_ABI_VERSION
#endif

CVML_PLUGIN_EXTERN_C CVML_PLUGIN_EXPORT const cvml_plugin_header cvml_plugin_declaration = {
    sizeof(cvml_plugin_header), CP_ABI, CP_NAME, "1.0.0"};

static const cvml_host_api* g_host;
static const cvml_ir_api* g_ir;

/* ---- what it takes ----------------------------------------------------------------- */

static int is_one_of(const char* name, const char* const* list) {
    for (; *list; ++list)
        if (strcmp(name, *list) == 0) return 1;
    return 0;
}

static const char* const kViews[] = {"flatten", "reshape", "squeeze", "expand_dims", NULL};
static const char* const kOwn[] = {"elemwise_sub", "negative", "abs", NULL};

/* The node's step on input 0 when it is one this device applies. */
static int node_step(const cvml_ir_graph* g, const cvml_ir_node* node, cvml_step* step) {
    if (!g_ir->node_step(g, node, 0, step)) return 0;
    return step->kind == CVML_STEP_CLIP || step->kind == CVML_STEP_RIGHT_SHIFT ||
           step->kind == CVML_STEP_MUL || step->kind == CVML_STEP_ADD;
}

static int cp_supports(cvml_device* dev, const cvml_ir_graph* g, const cvml_ir_node* node) {
    const char* op = g_ir->node_op(node);
    cvml_step step;
    (void)dev;
    if (!op || g_ir->node_output_count(node) != 1) return 0;
    return node_step(g, node, &step) || is_one_of(op, kViews) || is_one_of(op, kOwn);
}

/* ---- memory: a buffer per tensor of the graph ------------------------------------- */

typedef struct cp_state {
    int32_t tensor_count;
    int32_t** buf;  /* the device copy of each tensor, or NULL */
    uint8_t* owned; /* 1 where this device allocated buf (tensors inside the subgraph) */
} cp_state;

static void free_state(cp_state* st) {
    int32_t i;
    if (!st) return;
    for (i = 0; i < st->tensor_count; ++i)
        if (st->owned && st->owned[i]) free(st->buf[i]);
    free(st->buf);
    free(st->owned);
    free(st);
}

static int out_of_memory(cp_state* st) {
    free_state(st);
    return g_host->fail(CVML_ERR_RUNTIME, CP_NAME ": out of memory");
}

static int cp_prerun(cvml_device* dev, cvml_ir_graph* g, cvml_ir_subgraph* sg,
                     const cvml_device_options* opt) {
    const int32_t tensors = g_ir->graph_tensor_count(g);
    int32_t i;
    cp_state* st = (cp_state*)calloc(1, sizeof(cp_state));
    (void)dev;
    (void)opt;
    if (!st) return out_of_memory(NULL);
    st->tensor_count = tensors;
    st->buf = (int32_t**)calloc((size_t)tensors + 1, sizeof(int32_t*));
    st->owned = (uint8_t*)calloc((size_t)tensors + 1, 1);
    if (!st->buf || !st->owned) return out_of_memory(st);
    for (i = 0; i < g_ir->subgraph_input_count(sg); ++i)
        st->buf[g_ir->tensor_index(g_ir->subgraph_input(g, sg, i))] =
            (int32_t*)g_ir->subgraph_input_buffer(sg, i);
    for (i = 0; i < g_ir->subgraph_output_count(sg); ++i)
        st->buf[g_ir->tensor_index(g_ir->subgraph_output(g, sg, i))] =
            (int32_t*)g_ir->subgraph_output_buffer(sg, i);
    for (i = 0; i < g_ir->subgraph_node_count(sg); ++i) {
        const cvml_ir_tensor* out = g_ir->node_output(g, g_ir->subgraph_node(g, sg, i), 0);
        const int32_t t = g_ir->tensor_index(out);
        if (st->buf[t]) continue;
        st->buf[t] = (int32_t*)malloc(sizeof(int32_t) * (size_t)g_ir->tensor_element_count(out));
        if (!st->buf[t]) return out_of_memory(st);
        st->owned[t] = 1;
    }
    g_ir->subgraph_set_state(sg, st);
    return CVML_OK;
}

/* ---- running ----------------------------------------------------------------------- */

static int run_node(const cvml_ir_graph* g, const cvml_ir_node* node, cp_state* st) {
    const char* op = g_ir->node_op(node);
    const cvml_ir_tensor* out = g_ir->node_output(g, node, 0);
    const int64_t n = g_ir->tensor_element_count(out);
    const int32_t* x = st->buf[g_ir->tensor_index(g_ir->node_input(g, node, 0))];
    int32_t* y = st->buf[g_ir->tensor_index(out)];
    const int32_t* other = NULL;
    cvml_step step;
    int64_t i;
    if (g_ir->node_input_count(node) > 1)
        other = st->buf[g_ir->tensor_index(g_ir->node_input(g, node, 1))];
    if (!x || !y) return g_host->fail(CVML_ERR_RUNTIME, CP_NAME ": a tensor has no buffer");
    if (node_step(g, node, &step)) {
        const int32_t* operand = NULL;
        if (step.kind == CVML_STEP_ADD)
            operand = st->buf[g_ir->tensor_index(g_ir->node_input(g, node, step.operand))];
        for (i = 0; i < n; ++i) y[i] = cvml_step_value(&step, x[i], operand ? operand[i] : 0);
    } else if (strcmp(op, "elemwise_sub") == 0) {
        if (!other) return g_host->fail(CVML_ERR_RUNTIME, CP_NAME ": elemwise_sub lacks input 1");
        for (i = 0; i < n; ++i) y[i] = cvml_wrap_sub(x[i], other[i]);
    } else if (strcmp(op, "negative") == 0) {
        for (i = 0; i < n; ++i) y[i] = cvml_wrap_neg(x[i]);
    } else if (strcmp(op, "abs") == 0) {
        for (i = 0; i < n; ++i) y[i] = x[i] < 0 ? cvml_wrap_neg(x[i]) : x[i];
    } else if (y != x) { /* a view: the same values in the same order */
        memcpy(y, x, sizeof(int32_t) * (size_t)n);
    }
    return CVML_OK;
}

static int cp_run(cvml_device* dev, cvml_ir_graph* g, cvml_ir_subgraph* sg) {
    cp_state* st = (cp_state*)g_ir->subgraph_state(sg);
    int32_t i;
    (void)dev;
    for (i = 0; i < g_ir->subgraph_node_count(sg); ++i) {
        const int rc = run_node(g, g_ir->subgraph_node(g, sg, i), st);
        if (rc != CVML_OK) return rc;
    }
    return CVML_OK;
}

static void cp_postrun(cvml_device* dev, cvml_ir_graph* g, cvml_ir_subgraph* sg) {
    (void)dev;
    (void)g;
    free_state((cp_state*)g_ir->subgraph_state(sg));
    g_ir->subgraph_set_state(sg, NULL);
}

static int cp_alloc(cvml_device* dev, size_t bytes, void** out) {
    (void)dev;
    *out = malloc(bytes ? bytes : 1);
    return *out ? CVML_OK : g_host->fail(CVML_ERR_RUNTIME, CP_NAME ": out of memory");
}

static void cp_free(cvml_device* dev, void* ptr) {
    (void)dev;
    free(ptr);
}

static int cp_copy(cvml_device* dev, cvml_ir_subgraph* sg, void* dst, const void* src,
                   size_t bytes) {
    (void)dev;
    (void)sg;
    memcpy(dst, src, bytes);
    return CVML_OK;
}

/* ---- the device and the entry point ------------------------------------------------ */

#if defined(CPLUGIN_NEWER_MINOR)
/* A later minor appended a field this library does not know. */
typedef struct cp_device_next_minor {
    cvml_device base;
    uint64_t appended_by_next_minor;
} cp_device_next_minor;
static cp_device_next_minor g_next = {{0}, 42};
#define CP_DEVICE (g_next.base)
#define CP_DEVICE_SIZE sizeof(cp_device_next_minor)
#elif defined(CPLUGIN_OLDER_MINOR)
static cvml_device g_device;
#define CP_DEVICE g_device
/* The 2.0 layout ended before island_work_per_element. */
#define CP_DEVICE_SIZE offsetof(cvml_device, island_work_per_element)
#else
static cvml_device g_device;
#define CP_DEVICE g_device
#define CP_DEVICE_SIZE sizeof(cvml_device)
#endif

CVML_PLUGIN_EXTERN_C CVML_PLUGIN_EXPORT int cvml_plugin_entry(const cvml_host_api* host) {
    cvml_device* dev = &CP_DEVICE;
    if (!host || CVML_PLUGIN_ABI_MAJOR_OF(host->abi_version) != CVML_PLUGIN_ABI_MAJOR)
        return CVML_ERR_RUNTIME;
    g_host = host;
    g_ir = host->ir;
    memset(dev, 0, sizeof *dev);
    dev->struct_size = (uint32_t)CP_DEVICE_SIZE;
    dev->abi_version = CP_ABI;
    dev->name = CP_NAME;
    dev->version = "1.0.0";
    dev->supports = cp_supports;
    dev->prerun = cp_prerun;
    dev->run = cp_run;
    dev->postrun = cp_postrun;
    dev->mem_alloc = cp_alloc;
    dev->mem_free = cp_free;
    dev->copy_to_device = cp_copy;
    dev->copy_to_host = cp_copy;
#if !defined(CPLUGIN_OLDER_MINOR)
    dev->island_work_per_element = 0; /* keep every island: the copies are the point */
#endif
    return host->register_device(dev);
}
