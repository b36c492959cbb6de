/* Saving (through a serializer) and upstream's byte I/O (FORMAT.md §4.3). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cvml.h"
#include "graph/graph.h"
#include "module/graph_handle.h"
#include "module/serializer.h"
#include "utility/error.h"
#include "utility/platform.h"
#include "utility/memory.h"

#define REQUIRE(cond, what)                                                      \
    do {                                                                         \
        if (!(cond)) return cvml_fail(CVML_ERR_LOGIC, "%s: %s", __func__, what); \
    } while (0)

/* ---- saving ------------------------------------------------------------------------ */

int cvml_graph_save_memory(const cvml_graph* g, const char* serializer, void** graph_data,
                           size_t* graph_size, void** params_data, size_t* params_size) {
    REQUIRE(graph_data && graph_size && params_data && params_size, "NULL output");
    *graph_data = nullptr;
    *params_data = nullptr;
    *graph_size = 0;
    *params_size = 0;
    REQUIRE(g && serializer, "NULL argument");
    if (g->plan) return graph_compiled_refusal(__func__);
    const cvml_serializer* s = serializer_registry_find(serializer);
    if (!s) return cvml_fail(CVML_ERR_LOGIC, "serializer '%s' is not registered", serializer);
    if (!s->save) return cvml_fail(CVML_ERR_LOGIC, "serializer '%s' cannot write", serializer);
    if (!g->ir->verified) return cvml_fail(CVML_ERR_LOGIC, "save: verify the graph first");
    if (g->ir->no_names)
        return cvml_fail(CVML_ERR_LOGIC,
                         "save: the graph was loaded without names "
                         "(CVML_LOAD_NO_NAMES), which a CVM file needs");
    char* gd = nullptr;
    uint8_t* pd = nullptr;
    int rc = s->save(g->ir, &gd, graph_size, &pd, params_size);
    if (rc) {
        cvml_mem_free(gd);
        cvml_mem_free(pd);
        *graph_size = 0;
        *params_size = 0;
        return rc;
    }
    *graph_data = gd;
    *params_data = pd;
    return CVML_OK;
}

static int write_file(const char* path, const void* data, size_t size) {
    FILE* f = fopen(path, "wb");
    if (!f) return cvml_fail(CVML_ERR_RUNTIME, "cannot create '%s'", path);
    bool ok = fwrite(data, 1, size, f) == size;
    ok = fclose(f) == 0 && ok;
    if (!ok) return cvml_fail(CVML_ERR_RUNTIME, "cannot write '%s'", path);
    return CVML_OK;
}

int cvml_graph_save_file(const cvml_graph* g, const char* serializer, const char* graph_path,
                         const char* params_path) {
    REQUIRE(g && serializer && graph_path && params_path, "NULL argument");
    void* gd = nullptr;
    void* pd = nullptr;
    size_t gs = 0, ps = 0;
    int rc = cvml_graph_save_memory(g, serializer, &gd, &gs, &pd, &ps);
    if (!rc) rc = write_file(graph_path, gd, gs);
    if (!rc) rc = write_file(params_path, pd, ps);
    cvml_mem_free(gd);
    cvml_mem_free(pd);
    return rc;
}

void cvml_free(void* p) {
    cvml_mem_free(p);
}

/* ---- upstream byte I/O ------------------------------------------------------------- */

static bool postprocess_is(const ir_graph* g, const char* what) {
    return g->postprocess && strcmp(g->postprocess, what) == 0;
}

static int input_facts(const ir_graph* g, const ir_tensor** data, int* type_size) {
    if (!g->verified) return cvml_fail(CVML_ERR_LOGIC, "the graph is not verified");
    if (g->input_count != 1)
        return cvml_fail(CVML_ERR_LOGIC,
                         "upstream byte I/O needs exactly one input, the graph has %" PRId32,
                         g->input_count);
    *data = g->tensors[g->inputs[0]];
    *type_size = (*data)->precision <= 8 ? 1 : 4;
    return CVML_OK;
}

/* CVMModel's output_bytes_: from the largest inferred head precision, forced to 4 by
 * the post-processing methods. */
static int output_type(const ir_graph* g) {
    if (postprocess_is(g, "argmax") || postprocess_is(g, "detection")) return 4;
    int32_t p = 0;
    for (int32_t i = 0; i < g->output_count; ++i)
        if (g->tensors[g->outputs[i]]->precision > p) p = g->tensors[g->outputs[i]]->precision;
    return p <= 8 ? 1 : 4;
}

static uint64_t output_length(const ir_graph* g) {
    int type = output_type(g);
    uint64_t len = 0;
    if (postprocess_is(g, "argmax")) {
        for (int32_t k = 0; k < g->output_count; ++k) {
            const ir_tensor* t = g->tensors[g->outputs[k]];
            len += static_cast<uint64_t>(ir_tensor_element_count(t) / t->dims[t->ndim - 1]);
        }
    } else if (postprocess_is(g, "detection")) {
        const ir_tensor* t0 = g->tensors[g->outputs[0]];
        uint64_t rows = t0->ndim >= 2 ? static_cast<uint64_t>(t0->dims[t0->ndim - 2]) : 0;
        for (int32_t k = 0; k < g->output_count; ++k) {
            const ir_tensor* t = g->tensors[g->outputs[k]];
            len += static_cast<uint64_t>(t->dims[t->ndim - 1]);
        }
        len *= rows;
    } else {
        for (int32_t k = 0; k < g->output_count; ++k)
            len += static_cast<uint64_t>(ir_tensor_element_count(g->tensors[g->outputs[k]]));
    }
    return len * static_cast<uint64_t>(type);
}

int cvml_graph_input_bytes(const cvml_graph* g, size_t* length, int* type_size) {
    REQUIRE(g && length && type_size, "NULL argument");
    const ir_tensor* data = nullptr;
    int rc = input_facts(g->ir, &data, type_size);
    if (rc) return rc;
    *length = static_cast<size_t>(ir_tensor_element_count(data)) * static_cast<size_t>(*type_size);
    return CVML_OK;
}

int cvml_graph_output_bytes(const cvml_graph* g, size_t* length, int* type_size) {
    REQUIRE(g && length && type_size, "NULL argument");
    if (!g->ir->verified) return cvml_fail(CVML_ERR_LOGIC, "the graph is not verified");
    if (g->ir->output_count < 1) return cvml_fail(CVML_ERR_LOGIC, "the graph has no outputs");
    *type_size = output_type(g->ir);
    *length = static_cast<size_t>(output_length(g->ir));
    return CVML_OK;
}

static void put_value(uint8_t* out, size_t index, int type, int32_t v) {
    if (type == 1) {
        out[index] = static_cast<uint8_t>(static_cast<int8_t>(v));
    } else {
        uint32_t u = static_cast<uint32_t>(v);
        uint8_t* p = out + 4 * index;
        p[0] = static_cast<uint8_t>(u);
        p[1] = static_cast<uint8_t>(u >> 8);
        p[2] = static_cast<uint8_t>(u >> 16);
        p[3] = static_cast<uint8_t>(u >> 24);
    }
}

/* Value i of an output tensor. Outputs computed on the CPU are int32, but a graph
 * output may be a parameter itself, kept in its own (int8 for <= 8 bits) storage. */
static int32_t output_value(const ir_tensor* t, uint64_t i) {
    return ir_storage_load(t->data, t->storage, static_cast<int64_t>(i));
}

/* CVMModel::SaveTensor. */
static int serialize_outputs(const ir_graph* g, uint8_t* out, size_t length) {
    int type = output_type(g);
    size_t capacity = length / static_cast<size_t>(type);
    size_t w = 0;
    if (postprocess_is(g, "argmax")) {
        // Upstream steps a flat offset i over [0, rows) by last_dim, so it writes the
        // argmax of only the first ceil(rows / last_dim) rows (net_dense_argmax_b2);
        // the comparison is on int8-truncated values, the first maximum wins.
        for (int32_t k = 0; k < g->output_count; ++k) {
            const ir_tensor* t = g->tensors[g->outputs[k]];
            uint64_t last = static_cast<uint64_t>(t->dims[t->ndim - 1]);
            uint64_t rows = static_cast<uint64_t>(ir_tensor_element_count(t)) / last;
            for (uint64_t i = 0; i < rows; i += last) {
                uint64_t best = 0;
                for (uint64_t j = i; j < i + last; ++j)
                    if (static_cast<int8_t>(output_value(t, j)) >
                        static_cast<int8_t>(output_value(t, i + best)))
                        best = j - i;
                put_value(out, w++, 4, static_cast<int32_t>(best));
            }
        }
        return CVML_OK;
    }
    if (postprocess_is(g, "detection") || g->output_count > 1) {
        bool can_concat = g->output_count > 1;
        uint64_t x0 = 0;
        for (int32_t k = 0; k < g->output_count && can_concat; ++k) {
            const ir_tensor* t = g->tensors[g->outputs[k]];
            uint64_t x = static_cast<uint64_t>(ir_tensor_element_count(t) / t->dims[t->ndim - 1]);
            if (k == 0) x0 = x;
            can_concat = x == x0;
        }
        if (!can_concat) return cvml_fail(CVML_ERR_LOGIC, "detection model output cannot concat");
        uint64_t row_total = 0;
        for (int32_t k = 0; k < g->output_count; ++k) {
            const ir_tensor* t = g->tensors[g->outputs[k]];
            row_total += static_cast<uint64_t>(t->dims[t->ndim - 1]);
        }
        if (x0 * row_total > capacity)
            // Upstream sizes a detection buffer from shape[-2] but writes every row of
            // every batch: past the caller's buffer. Refused.
            return cvml_fail(CVML_ERR_LOGIC,
                             "detection output has %llu rows but the output length holds fewer",
                             static_cast<unsigned long long>(x0));
        for (uint64_t x = 0; x < x0; ++x) {
            for (int32_t k = 0; k < g->output_count; ++k) {
                const ir_tensor* t = g->tensors[g->outputs[k]];
                uint64_t y = static_cast<uint64_t>(t->dims[t->ndim - 1]);
                for (uint64_t i = 0; i < y; ++i)
                    put_value(out, w++, type, output_value(t, x * y + i));
            }
        }
        return CVML_OK;
    }
    const ir_tensor* t = g->tensors[g->outputs[0]];
    int64_t n = ir_tensor_element_count(t);
    for (int64_t i = 0; i < n; ++i)
        put_value(out, w++, type, output_value(t, static_cast<uint64_t>(i)));
    return CVML_OK;
}

/* The whole of a bytes run (input in, run, outputs out) under the graph's lock. */
static int run_bytes_locked(cvml_graph* g, const void* input, size_t input_length, void* output,
                            size_t output_length_given) {
    int in_type = 1, out_type = 1;
    size_t in_len = 0, out_len = 0;
    int rc = cvml_graph_input_bytes(g, &in_len, &in_type);
    if (!rc) rc = cvml_graph_output_bytes(g, &out_len, &out_type);
    if (rc) return rc;
    if (input_length != in_len)
        return cvml_fail(CVML_ERR_LOGIC,
                         "input length %" CVML_PRIuSIZE
                         " does not match the model's %" CVML_PRIuSIZE,
                         input_length, in_len);
    if (output_length_given != out_len)
        return cvml_fail(CVML_ERR_LOGIC,
                         "output length %" CVML_PRIuSIZE
                         " does not match the model's %" CVML_PRIuSIZE,
                         output_length_given, out_len);
    memset(output, 0, out_len);
    size_t count = in_len / static_cast<size_t>(in_type);
    cvml_tensor* t = reinterpret_cast<cvml_tensor*>(g->ir->tensors[g->ir->inputs[0]]);
    // int32 input values are little-endian bytes, read in place (no copy, no allocation).
    rc = graph_set_input(t, input, in_type == 1 ? INPUT_INT8 : INPUT_INT32_LE, count);
    if (!rc) rc = graph_run_locked(g);
    if (!rc) rc = serialize_outputs(g->ir, static_cast<uint8_t*>(output), out_len);
    return rc;
}

int cvml_graph_run_bytes(cvml_graph* g, const void* input, size_t input_length, void* output,
                         size_t output_length_given) {
    REQUIRE(g && input && output, "NULL argument");
    graph_lock_acquire(&g->lock);
    int rc = run_bytes_locked(g, input, input_length, output, output_length_given);
    graph_lock_release(&g->lock);
    return rc;
}
