/* A small device for the plugin tests, built as its own shared library through the
 * plugin ABI. It keeps its own copies of every tensor (malloc'd "device" memory), so
 * the scheduler's boundary copies are really exercised, and counts what it does.
 *
 * Test hooks, read when the device is asked (so a test can change them between
 * graphs): CVML_TESTPLUGIN_OPS, a comma-separated list of the operators it claims
 * (default below); CVML_TESTPLUGIN_REFUSE, node names it refuses.
 *
 * Build variants: TEST_PLUGIN_WRONG_ABI declares the next ABI version (the loader must
 * refuse it unread); TEST_PLUGIN_FAIL_ENTRY registers its device then fails (nothing
 * may stay registered). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cvml_plugin.h"
#include "test_plugin.h"

#ifdef TEST_PLUGIN_FAIL_ENTRY
#define TP_NAME "testplugin_fail"
#else
#define TP_NAME "testplugin"
#endif

#ifdef TEST_PLUGIN_WRONG_ABI
extern "C" CVML_PLUGIN_EXPORT const cvml_plugin_header cvml_plugin_declaration = {
    sizeof(cvml_plugin_header), CVML_PLUGIN_ABI_MAKE(CVML_PLUGIN_ABI_MAJOR + 1, 0), TP_NAME,
    "0.0.1"};
#else
CVML_PLUGIN_DEFINE(TP_NAME, "0.0.1");
#endif

namespace {

const char* kDefaultOps =
    "relu,elemwise_add,elemwise_sub,broadcast_add,broadcast_sub,broadcast_mul,broadcast_max";

test_plugin_stats g_stats;
const cvml_ir_api* g_ir; /* the host's model accessors, set by the entry point */

bool in_list(const char* list, const char* name) {
    size_t n = strlen(name);
    for (const char* p = list; *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, name, n) == 0) return true;
        p += len + (p[len] ? 1 : 0);
    }
    return false;
}

int tp_supports(cvml_device*, const cvml_ir_graph*, const cvml_ir_node* node) {
    const char* ops = getenv("CVML_TESTPLUGIN_OPS");
    const char* refuse = getenv("CVML_TESTPLUGIN_REFUSE");
    const char* op = g_ir->node_op(node);
    if (!op || !in_list(ops ? ops : kDefaultOps, op)) return 0;
    if (refuse && in_list(refuse, g_ir->node_name(node))) return 0;
    return 1;
}

struct tp_state {
    int32_t** buf; /* per tensor of the graph: the plugin's copy, or NULL */
    uint8_t* own;  /* 1 where the plugin allocated buf (internal tensors) */
    int32_t tensor_count;
};

int64_t count_of(const cvml_ir_tensor* t) {
    return g_ir->tensor_element_count(t);
}

void free_state(tp_state* st) {
    if (!st) return;
    for (int32_t i = 0; i < st->tensor_count; ++i)
        if (st->own[i]) free(st->buf[i]);
    free(st->buf);
    free(st->own);
    free(st);
}

int tp_prerun(cvml_device*, cvml_ir_graph* g, cvml_ir_subgraph* sg, const cvml_device_options*) {
    tp_state* st = static_cast<tp_state*>(calloc(1, sizeof(tp_state)));
    if (!st) return CVML_ERR_RUNTIME;
    const int32_t tensors = g_ir->graph_tensor_count(g);
    st->tensor_count = tensors;
    st->buf = static_cast<int32_t**>(calloc(static_cast<size_t>(tensors) + 1, sizeof(int32_t*)));
    st->own = static_cast<uint8_t*>(calloc(static_cast<size_t>(tensors) + 1, 1));
    if (!st->buf || !st->own) {
        free_state(st);
        return CVML_ERR_RUNTIME;
    }
    for (int32_t i = 0; i < g_ir->subgraph_input_count(sg); ++i)
        st->buf[g_ir->tensor_index(g_ir->subgraph_input(g, sg, i))] =
            static_cast<int32_t*>(g_ir->subgraph_input_buffer(sg, i));
    for (int32_t i = 0; i < g_ir->subgraph_output_count(sg); ++i)
        st->buf[g_ir->tensor_index(g_ir->subgraph_output(g, sg, i))] =
            static_cast<int32_t*>(g_ir->subgraph_output_buffer(sg, i));
    for (int32_t i = 0; i < g_ir->subgraph_node_count(sg); ++i) {
        const cvml_ir_node* node = g_ir->subgraph_node(g, sg, i);
        for (int32_t k = 0; k < g_ir->node_output_count(node); ++k) {
            const cvml_ir_tensor* out = g_ir->node_output(g, node, k);
            const int32_t t = g_ir->tensor_index(out);
            if (st->buf[t]) continue;
            st->buf[t] =
                static_cast<int32_t*>(malloc(sizeof(int32_t) * static_cast<size_t>(count_of(out))));
            if (!st->buf[t]) {
                free_state(st);
                return CVML_ERR_RUNTIME;
            }
            st->own[t] = 1;
        }
    }
    g_ir->subgraph_set_state(sg, st);
    ++g_stats.preruns;
    return CVML_OK;
}

int32_t apply(const char* op, int32_t a, int32_t b) {
    uint32_t ua = static_cast<uint32_t>(a), ub = static_cast<uint32_t>(b);
    if (strstr(op, "_add")) return static_cast<int32_t>(ua + ub);
    if (strstr(op, "_sub")) return static_cast<int32_t>(ua - ub);
    if (strstr(op, "_mul")) return static_cast<int32_t>(ua * ub);
    return a > b ? a : b; /* broadcast_max */
}

/* numpy broadcasting of two inputs into the output's shape (right-aligned). */
void binary(const char* op, const cvml_ir_tensor* ta, const int32_t* a, const cvml_ir_tensor* tb,
            const int32_t* b, const cvml_ir_tensor* to, int32_t* out) {
    const int32_t nd = g_ir->tensor_ndim(to), na = g_ir->tensor_ndim(ta),
                  nb = g_ir->tensor_ndim(tb);
    int64_t total = count_of(to);
    for (int64_t i = 0; i < total; ++i) {
        int64_t rem = i, ia = 0, ib = 0, sa = 1, sb = 1;
        for (int32_t d = nd - 1; d >= 0; --d) {
            const int64_t extent = g_ir->tensor_dim(to, d);
            int64_t idx = rem % extent;
            rem /= extent;
            int32_t da = d - (nd - na), db = d - (nd - nb);
            if (da >= 0) {
                if (g_ir->tensor_dim(ta, da) != 1) ia += idx * sa;
                sa *= g_ir->tensor_dim(ta, da);
            }
            if (db >= 0) {
                if (g_ir->tensor_dim(tb, db) != 1) ib += idx * sb;
                sb *= g_ir->tensor_dim(tb, db);
            }
        }
        out[i] = apply(op, a[ia], b[ib]);
    }
}

int tp_run(cvml_device*, cvml_ir_graph* g, cvml_ir_subgraph* sg) {
    tp_state* st = static_cast<tp_state*>(g_ir->subgraph_state(sg));
    if (!st) return CVML_ERR_RUNTIME;
    for (int32_t i = 0; i < g_ir->subgraph_node_count(sg); ++i) {
        const cvml_ir_node* node = g_ir->subgraph_node(g, sg, i);
        const char* op = g_ir->node_op(node);
        const cvml_ir_tensor* to = g_ir->node_output(g, node, 0);
        int32_t* out = st->buf[g_ir->tensor_index(to)];
        const cvml_ir_tensor* ta = g_ir->node_input(g, node, 0);
        const int32_t* a = st->buf[g_ir->tensor_index(ta)];
        if (strcmp(op, "relu") == 0) {
            for (int64_t k = 0; k < count_of(to); ++k) out[k] = a[k] > 0 ? a[k] : 0;
            ++g_stats.relu_run;
        } else {
            const cvml_ir_tensor* tb = g_ir->node_input(g, node, 1);
            binary(op, ta, a, tb, st->buf[g_ir->tensor_index(tb)], to, out);
        }
        ++g_stats.nodes_run;
    }
    ++g_stats.subgraphs_run;
    return CVML_OK;
}

void tp_postrun(cvml_device*, cvml_ir_graph*, cvml_ir_subgraph* sg) {
    free_state(static_cast<tp_state*>(g_ir->subgraph_state(sg)));
    g_ir->subgraph_set_state(sg, nullptr);
    ++g_stats.postruns;
}

int tp_alloc(cvml_device*, size_t bytes, void** out) {
    *out = malloc(bytes ? bytes : 1);
    if (!*out) return CVML_ERR_RUNTIME;
    // Poison: a tensor read before the scheduler copied it in shows up as garbage.
    memset(*out, 0xA5, bytes);
    ++g_stats.live_buffers;
    return CVML_OK;
}

void tp_free(cvml_device*, void* p) {
    free(p);
    --g_stats.live_buffers;
}

int tp_to_device(cvml_device*, cvml_ir_subgraph*, void* dst, const void* src, size_t bytes) {
    memcpy(dst, src, bytes);
    ++g_stats.copies_in;
    g_stats.bytes_in += static_cast<int64_t>(bytes);
    return CVML_OK;
}

int tp_to_host(cvml_device*, cvml_ir_subgraph*, void* dst, const void* src, size_t bytes) {
    memcpy(dst, src, bytes);
    ++g_stats.copies_out;
    g_stats.bytes_out += static_cast<int64_t>(bytes);
    return CVML_OK;
}

void tp_release(cvml_device*) {}

cvml_device g_device = {
    sizeof(cvml_device),
    CVML_PLUGIN_ABI_VERSION,
    TP_NAME,
    "0.0.1",
    tp_supports,
    tp_prerun,
    tp_run,
    tp_postrun,
    tp_alloc,
    tp_free,
    tp_to_device,
    tp_to_host,
    tp_release,
    &g_stats,
    0,
};

}  // namespace

extern "C" CVML_PLUGIN_EXPORT int cvml_plugin_entry(const cvml_host_api* host) {
    if (CVML_PLUGIN_ABI_MAJOR_OF(host->abi_version) != CVML_PLUGIN_ABI_MAJOR)
        return CVML_ERR_RUNTIME;
    g_ir = host->ir;
    memset(&g_stats, 0, sizeof g_stats);
    int rc = host->register_device(&g_device);
    if (rc) return rc;
#ifdef TEST_PLUGIN_FAIL_ENTRY
    return host->fail(CVML_ERR_RUNTIME, "testplugin: no test hardware here (planned failure)");
#else
    return CVML_OK;
#endif
}
