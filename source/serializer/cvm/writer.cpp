/* The writer: graph JSON in the compiler's layout and the params blob.
 *
 * Every model is written in the compiler layout (FORMAT.md §4.1): variables get the
 * compiler's op_attrs string {"precision": "P", "shape": "(...)"} (upstream ignores
 * it; the 2019 layout wrote "" there, so a 2019 model is upgraded), op nodes get
 * their attributes in file order, op entries their inferred precision. The version
 * key is kept as read (absent stays absent, which readers take as cvm_1.0.0, whose
 * dltype, node_row_ptr and arg_nodes are always written). Params keep the blob order
 * and each array's element width (int8 arrays stay int8). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operator/op_def.h"
#include "serializer/cvm/cvm_format.h"
#include "utility/error.h"
#include "utility/memory.h"

namespace {

struct buffer {
    char* data;
    size_t size;
    size_t cap;
    bool failed;

    void put(const void* p, size_t n) {
        if (failed) return;
        if (cap - size < n) {
            size_t next = cap ? cap : 4096;
            while (next - size < n) {
                if (next > SIZE_MAX / 2) {
                    failed = true;
                    return;
                }
                next *= 2;
            }
            char* q = static_cast<char*>(cvml_mem_realloc(data, next));
            if (!q) {
                failed = true;
                return;
            }
            data = q;
            cap = next;
        }
        memcpy(data + size, p, n);
        size += n;
    }
    void str(const char* s) { put(s, strlen(s)); }
    void fmt_int(long long v) {
        char tmp[32];
        int n = snprintf(tmp, sizeof tmp, "%lld", v);
        put(tmp, static_cast<size_t>(n));
    }
};

/* A JSON string with dmlc's escapes; other control characters cannot be written in
 * a form upstream reads, so they make the save fail. */
bool quoted(buffer* b, const char* s) {
    b->put("\"", 1);
    for (const char* c = s; *c; ++c) {
        unsigned char u = static_cast<unsigned char>(*c);
        if (u == '"' || u == '\\') {
            b->put("\\", 1);
            b->put(c, 1);
        } else if (u == '\n') {
            b->str("\\n");
        } else if (u == '\r') {
            b->str("\\r");
        } else if (u == '\t') {
            b->str("\\t");
        } else if (u < 0x20) {
            return false;
        } else {
            b->put(c, 1);
        }
    }
    b->put("\"", 1);
    return true;
}

/* The op_attrs JSON object of a node, as a C string in `out`. */
bool op_attrs_text(const ir_graph* g, const ir_node* node, buffer* out) {
    out->str("{");
    if (!node->op) {
        const ir_tensor* t = g->tensors[node->outputs[0]];
        out->str("\"precision\": \"");
        out->fmt_int(t->precision);
        out->str("\", \"shape\": \"(");
        for (int32_t d = 0; d < t->ndim; ++d) {
            if (d) out->str(", ");
            out->fmt_int(t->dims[d]);
        }
        out->str(t->ndim == 1 ? ",)\"" : ")\"");
    } else {
        for (int32_t i = 0; i < node->attr_count; ++i) {
            if (i) out->str(", ");
            if (!quoted(out, node->attrs[i].key)) return false;
            out->str(": ");
            if (!quoted(out, node->attrs[i].value)) return false;
        }
    }
    out->str("}");
    out->put("", 1);
    return !out->failed;
}

}  // namespace

int cvm_write_graph(const ir_graph* g, char** out, size_t* size) {
    *out = nullptr;
    *size = 0;
    if (!g->verified) return cvml_fail(CVML_ERR_LOGIC, "save: the graph is not verified");
    int32_t* row_ptr = static_cast<int32_t*>(
        cvml_mem_alloc(sizeof(int32_t) * (static_cast<size_t>(g->node_count) + 1)));
    int32_t* eid = static_cast<int32_t*>(
        cvml_mem_alloc(sizeof(int32_t) * (static_cast<size_t>(g->tensor_count) + 1)));
    if (!row_ptr || !eid) {
        cvml_mem_free(row_ptr);
        cvml_mem_free(eid);
        return cvml_fail_out_of_memory();
    }
    int32_t entries = 0;
    for (int32_t n = 0; n < g->node_count; ++n) {
        row_ptr[n] = entries;
        for (int32_t o = 0; o < g->nodes[n]->output_count; ++o)
            eid[g->nodes[n]->outputs[o]] = entries++;
    }
    row_ptr[g->node_count] = entries;
    // A built graph has no storage plan: every entry gets its own slot.
    bool own_plan = false;
    for (int32_t i = 0; i < g->tensor_count; ++i)
        own_plan = own_plan || g->tensors[i]->storage_id < 0;

    // Entries in entry order (tensor of each entry).
    int32_t* entry_tensor =
        static_cast<int32_t*>(cvml_mem_alloc(sizeof(int32_t) * (static_cast<size_t>(entries) + 1)));
    if (!entry_tensor) {
        cvml_mem_free(row_ptr);
        cvml_mem_free(eid);
        return cvml_fail_out_of_memory();
    }
    for (int32_t i = 0; i < g->tensor_count; ++i) entry_tensor[eid[i]] = i;

    buffer b = {nullptr, 0, 0, false};
    buffer tmp = {nullptr, 0, 0, false};
    bool ok = true;
    b.str("{\n  \"nodes\": [");
    for (int32_t n = 0; n < g->node_count && ok; ++n) {
        const ir_node* node = g->nodes[n];
        b.str(n ? ",\n    {" : "\n    {");
        b.str("\"op\": ");
        b.str(node->op ? "\"cvm_op\"" : "\"null\"");
        b.str(", \"name\": ");
        ok = quoted(&b, node->name);
        if (node->op) {
            b.str(", \"attrs\": {\"flatten_data\": \"0\", \"func_name\": ");
            ok = ok && quoted(&b, node->op_name ? node->op_name : node->op->name);
            b.str(", \"num_inputs\": \"");
            b.fmt_int(node->input_count);
            b.str("\", \"num_outputs\": \"");
            b.fmt_int(node->output_count);
            b.str("\"}");
        }
        b.str(", \"inputs\": [");
        for (int32_t k = 0; k < node->input_count; ++k) {
            const ir_tensor* t = g->tensors[node->inputs[k]];
            b.str(k ? ", [" : "[");
            b.fmt_int(t->producer);
            b.str(", ");
            b.fmt_int(t->producer_output);
            b.str(", 0]");
        }
        b.str("]}");
    }
    b.str("\n  ],\n  \"arg_nodes\": [");
    for (int32_t n = 0, k = 0; n < g->node_count; ++n) {
        if (g->nodes[n]->op) continue;
        if (k++) b.str(", ");
        b.fmt_int(n);
    }
    b.str("],\n  \"node_row_ptr\": [");
    for (int32_t n = 0; n <= g->node_count; ++n) {
        if (n) b.str(", ");
        b.fmt_int(row_ptr[n]);
    }
    b.str("],\n  \"heads\": [");
    for (int32_t i = 0; i < g->output_count; ++i) {
        const ir_tensor* t = g->tensors[g->outputs[i]];
        b.str(i ? ", [" : "[");
        b.fmt_int(t->producer);
        b.str(", ");
        b.fmt_int(t->producer_output);
        b.str(", 0]");
    }
    b.str("],\n  \"attrs\": {\n    \"op_attrs\": [\"list_str\", [");
    for (int32_t n = 0; n < g->node_count && ok; ++n) {
        tmp.size = 0;
        ok = op_attrs_text(g, g->nodes[n], &tmp);
        b.str(n ? ",\n      " : "\n      ");
        ok = ok && quoted(&b, tmp.data);
    }
    b.str("]],\n    \"dltype\": [\"list_str\", [");
    for (int32_t e = 0; e < entries; ++e) b.str(e ? ", \"int32\"" : "\"int32\"");
    b.str("]],\n    \"precision\": [\"list_int\", [");
    for (int32_t e = 0; e < entries; ++e) {
        if (e) b.str(", ");
        b.fmt_int(g->tensors[entry_tensor[e]]->precision);
    }
    b.str("]],\n    \"storage_id\": [\"list_int\", [");
    for (int32_t e = 0; e < entries; ++e) {
        if (e) b.str(", ");
        b.fmt_int(own_plan ? e : g->tensors[entry_tensor[e]]->storage_id);
    }
    b.str("]],\n    \"shape\": [\"list_shape\", [");
    for (int32_t e = 0; e < entries; ++e) {
        const ir_tensor* t = g->tensors[entry_tensor[e]];
        b.str(e ? ", [" : "[");
        for (int32_t d = 0; d < t->ndim; ++d) {
            if (d) b.str(", ");
            b.fmt_int(t->dims[d]);
        }
        b.str("]");
    }
    b.str("]]\n  }");
    if (g->version) {
        b.str(",\n  \"version\": ");
        ok = ok && quoted(&b, g->version);
    }
    if (g->postprocess && g->postprocess[0]) {
        b.str(",\n  \"postprocess\": ");
        ok = ok && quoted(&b, g->postprocess);
    }
    b.str("\n}\n");
    cvml_mem_free(tmp.data);
    cvml_mem_free(row_ptr);
    cvml_mem_free(eid);
    cvml_mem_free(entry_tensor);
    if (!ok || b.failed) {
        cvml_mem_free(b.data);
        return b.failed ? cvml_fail_out_of_memory()
                        : cvml_fail(CVML_ERR_LOGIC,
                                    "save: a name or attribute holds a control character that "
                                    "the CVM JSON reader cannot read");
    }
    *out = b.data;
    *size = b.size;
    return CVML_OK;
}

namespace {

void put_u64(buffer* b, uint64_t v) {
    uint8_t x[8];
    for (int i = 0; i < 8; ++i) x[i] = static_cast<uint8_t>(v >> (8 * i));
    b->put(x, 8);
}

void put_i32(buffer* b, int32_t v) {
    uint32_t u = static_cast<uint32_t>(v);
    uint8_t x[4] = {static_cast<uint8_t>(u), static_cast<uint8_t>(u >> 8),
                    static_cast<uint8_t>(u >> 16), static_cast<uint8_t>(u >> 24)};
    b->put(x, 4);
}

}  // namespace

int cvm_write_params(const ir_graph* g, uint8_t** out, size_t* size) {
    *out = nullptr;
    *size = 0;
    buffer b = {nullptr, 0, 0, false};
    put_u64(&b, 0xF7E58D4F05049CB7ull);
    put_u64(&b, 0);
    put_u64(&b, static_cast<uint64_t>(g->param_order_count));
    for (int32_t i = 0; i < g->param_order_count; ++i) {
        const ir_tensor* t = g->tensors[g->param_order[i]];
        const char* name = g->nodes[t->producer]->name;
        put_u64(&b, strlen(name));
        b.str(name);
    }
    put_u64(&b, static_cast<uint64_t>(g->param_order_count));
    for (int32_t i = 0; i < g->param_order_count; ++i) {
        const ir_tensor* t = g->tensors[g->param_order[i]];
        if (!t->const_data) {
            cvml_mem_free(b.data);
            return cvml_fail(CVML_ERR_LOGIC, "save: parameter '%s' has no values", t->name);
        }
        int bits = t->file_bits == 8 ? 8 : 32;
        int64_t n = ir_tensor_element_count(t);
        put_u64(&b, 0xDD5E40F096B4A13Full);
        put_u64(&b, 0);
        put_i32(&b, 1);  // kDLCPU
        put_i32(&b, 0);
        put_i32(&b, t->ndim);
        uint8_t dtype[4] = {0, static_cast<uint8_t>(bits), 1, 0};
        b.put(dtype, 4);
        for (int32_t d = 0; d < t->ndim; ++d) put_u64(&b, static_cast<uint64_t>(t->dims[d]));
        put_u64(&b, static_cast<uint64_t>(n * (bits / 8)));
        for (int64_t k = 0; k < n; ++k) {
            if (bits == 8) {
                uint8_t v = static_cast<uint8_t>(static_cast<int8_t>(ir_const_value(t, k)));
                b.put(&v, 1);
            } else {
                put_i32(&b, ir_const_value(t, k));
            }
        }
    }
    if (b.failed) {
        cvml_mem_free(b.data);
        return cvml_fail_out_of_memory();
    }
    *out = reinterpret_cast<uint8_t*>(b.data);
    *size = b.size;
    return CVML_OK;
}
