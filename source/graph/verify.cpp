#include "graph/verify.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "operator/format_limits.h"
#include "operator/op_def.h"
#include "utility/error.h"
#include "utility/memory.h"

namespace {

op_infer_ctx make_ctx(const ir_graph* g, const ir_node* node) {
    op_infer_ctx ctx;
    ctx.graph = g;
    ctx.node = node;
    ctx.param = node->param;
    ctx.input_count = node->input_count;
    ctx.output_count = node->output_count;
    // The node's index arrays are turned into tensor pointers on the fly by the
    // caller; see with_tensors().
    ctx.inputs = nullptr;
    ctx.outputs = nullptr;
    return ctx;
}

/* Gathers a node's tensors into caller-provided pointer arrays (no allocation for the
 * common case; large fan-in such as concatenate falls back to malloc). */
struct node_tensors {
    ir_tensor* small_in[8];
    ir_tensor* small_out[4];
    ir_tensor** in;
    ir_tensor** out;
    bool ok;

    node_tensors(const ir_graph* g, const ir_node* n) : in(small_in), out(small_out), ok(true) {
        if (n->input_count > 8)
            in = static_cast<ir_tensor**>(
                cvml_mem_alloc(sizeof(ir_tensor*) * static_cast<size_t>(n->input_count)));
        if (n->output_count > 4)
            out = static_cast<ir_tensor**>(
                cvml_mem_alloc(sizeof(ir_tensor*) * static_cast<size_t>(n->output_count)));
        if (!in || !out) {
            ok = false;
            return;
        }
        for (int32_t i = 0; i < n->input_count; ++i) in[i] = g->tensors[n->inputs[i]];
        for (int32_t i = 0; i < n->output_count; ++i) out[i] = g->tensors[n->outputs[i]];
    }
    ~node_tensors() {
        if (in != small_in) cvml_mem_free(in);
        if (out != small_out) cvml_mem_free(out);
    }
};

int check_shape_limits(const ir_tensor* t) {
    if (t->ndim < 1 || t->ndim > CVML_MAX_DIMS)
        return cvml_fail(CVML_ERR_LOGIC, "tensor '%s': ndim %" PRId32 " outside 1..6", t->name,
                         t->ndim);
    int64_t size = 1;
    for (int32_t i = 0; i < t->ndim; ++i) {
        if (t->dims[i] < 1 || t->dims[i] > kFormatMaxDim)
            return cvml_fail(CVML_ERR_LOGIC,
                             "tensor '%s': dim %" PRId32 " is %lld, outside 1..2^24", t->name, i,
                             static_cast<long long>(t->dims[i]));
        size *= t->dims[i];
        if (size > kFormatMaxElements)
            return cvml_fail(CVML_ERR_LOGIC, "tensor '%s': more than 2^30 elements", t->name);
    }
    return CVML_OK;
}

}  // namespace

int graph_node_error(const ir_node* node, int status) {
    return cvml_fail_context(status, "node %" PRId32 " '%s' (%s): ", node->index, node->name,
                             node->op        ? node->op->name
                             : node->op_name ? node->op_name
                                             : "null");
}

int graph_prepare_node(ir_graph* g, ir_node* node) {
    (void)g;
    char name[128];
    op_strip_suffix(node->op_name ? node->op_name : "", name, sizeof name);
    const op_def* op = op_registry_find(name);
    if (!op) return graph_node_error(node, op_registry_missing(name));
    node->op = op;
    int rc = op_parse_attrs(op, node);
    if (rc) return graph_node_error(node, rc);
    int32_t expected = op->num_inputs ? op->num_inputs(node->param) : op->fixed_inputs;
    if (expected >= 0 ? node->input_count != expected : node->input_count < 1)
        return graph_node_error(
            node, cvml_fail(CVML_ERR_LOGIC, "expects %" PRId32 " inputs but has %" PRId32, expected,
                            node->input_count));
    return CVML_OK;
}

int graph_infer_shapes(ir_graph* g, int check_declared) {
    for (int32_t n = 0; n < g->node_count; ++n) {
        ir_node* node = g->nodes[n];
        if (!node->op) continue;
        node_tensors nt(g, node);
        if (!nt.ok) return cvml_fail_out_of_memory();
        int64_t declared[4][CVML_MAX_DIMS + 1];
        int32_t keep = node->output_count < 4 ? node->output_count : 4;
        for (int32_t i = 0; i < keep; ++i) {
            declared[i][0] = nt.out[i]->ndim;
            for (int32_t d = 0; d < CVML_MAX_DIMS; ++d) declared[i][d + 1] = nt.out[i]->dims[d];
        }
        op_infer_ctx ctx = make_ctx(g, node);
        ctx.inputs = nt.in;
        ctx.outputs = nt.out;
        int rc = node->op->infer_shape(&ctx);
        if (rc) return graph_node_error(node, rc);
        for (int32_t i = 0; i < node->output_count; ++i) {
            ir_tensor* t = nt.out[i];
            if (!check_declared || i >= keep) {
                rc = check_shape_limits(t);
                if (rc) return graph_node_error(node, rc);
                continue;
            }
            bool same = declared[i][0] == t->ndim;
            for (int32_t d = 0; same && d < t->ndim; ++d) same = declared[i][d + 1] == t->dims[d];
            if (!same) {
                char inferred[128];
                op_shape_str(t, inferred, sizeof inferred);
                t->ndim = static_cast<int32_t>(declared[i][0]);
                for (int32_t d = 0; d < CVML_MAX_DIMS; ++d) t->dims[d] = declared[i][d + 1];
                char file[128];
                op_shape_str(t, file, sizeof file);
                return graph_node_error(
                    node,
                    cvml_fail(CVML_ERR_LOGIC,
                              "output %" PRId32 ": inferred shape %s but the file declares %s", i,
                              inferred, file));
            }
        }
    }
    return CVML_OK;
}

int graph_infer_precisions(ir_graph* g) {
    for (int32_t n = 0; n < g->node_count; ++n) {
        ir_node* node = g->nodes[n];
        if (!node->op) {
            for (int32_t i = 0; i < node->output_count; ++i) {
                const ir_tensor* t = g->tensors[node->outputs[i]];
                if (t->precision < 1 || t->precision > 32)
                    return graph_node_error(
                        node,
                        cvml_fail(CVML_ERR_LOGIC, "variable precision %" PRId32 " outside 1..32",
                                  t->precision));
            }
            continue;
        }
        node_tensors nt(g, node);
        if (!nt.ok) return cvml_fail_out_of_memory();
        op_infer_ctx ctx = make_ctx(g, node);
        ctx.inputs = nt.in;
        ctx.outputs = nt.out;
        int rc = node->op->infer_precision(&ctx);
        if (rc) return graph_node_error(node, rc);
        for (int32_t i = 0; i < node->output_count; ++i) {
            int32_t p = nt.out[i]->precision;
            if (p < 1 || p > 32)
                return graph_node_error(
                    node, cvml_fail(CVML_ERR_LOGIC,
                                    "inferred output precision %" PRId32 " outside 1..32", p));
        }
    }
    return CVML_OK;
}

int graph_verify_load_rules(ir_graph* g) {
    for (int32_t n = 0; n < g->node_count; ++n) {
        ir_node* node = g->nodes[n];
        if (!node->op || !node->op->verify_load) continue;
        node_tensors nt(g, node);
        if (!nt.ok) return cvml_fail_out_of_memory();
        op_infer_ctx ctx = make_ctx(g, node);
        ctx.inputs = nt.in;
        ctx.outputs = nt.out;
        int rc = node->op->verify_load(&ctx);
        if (rc) return graph_node_error(node, rc);
    }
    return CVML_OK;
}

int graph_compute_gas(ir_graph* g) {
    uint64_t ops = 0;
    uint64_t mem = 0;
    for (int32_t n = 0; n < g->node_count; ++n) {
        ir_node* node = g->nodes[n];
        if (!node->op) {
            mem += 5 * static_cast<uint64_t>(ir_tensor_element_count(g->tensors[node->outputs[0]]));
            continue;
        }
        int64_t base = 1;
        if (node->op->gas_base) {
            node_tensors nt(g, node);
            if (!nt.ok) return cvml_fail_out_of_memory();
            op_infer_ctx ctx = make_ctx(g, node);
            ctx.inputs = nt.in;
            ctx.outputs = nt.out;
            int rc = node->op->gas_base(&ctx, &base);
            if (rc) return graph_node_error(node, rc);
        }
        if (base > kFormatMaxGasBase || base < 0)
            return graph_node_error(node, cvml_fail(CVML_ERR_LOGIC, "gas base %lld exceeds 2^30",
                                                    static_cast<long long>(base)));
        // Upstream charges entry 0 for every operator (get_valid_counts included, see
        // FORMAT.md §8: its special case compares against a misspelt name).
        uint64_t out_size =
            static_cast<uint64_t>(ir_tensor_element_count(g->tensors[node->outputs[0]]));
        ops += static_cast<uint64_t>(base) * out_size;
        if (ops > kFormatMaxGasOps)
            return graph_node_error(node, cvml_fail(CVML_ERR_LOGIC, "gas ops exceed 2^40"));
        for (int32_t i = 0; i < node->output_count; ++i)
            mem += 5 * static_cast<uint64_t>(ir_tensor_element_count(g->tensors[node->outputs[i]]));
    }
    if (mem > kFormatMaxGasMemory) return cvml_fail(CVML_ERR_LOGIC, "gas memory exceeds 2^40");
    g->gas_ops = ops;
    g->gas_mem = mem;
    g->gas = ops + mem;
    return CVML_OK;
}

int graph_verify_built(ir_graph* g) {
    if (g->output_count == 0) return cvml_fail(CVML_ERR_LOGIC, "the graph has no outputs");
    int rc = ir_graph_link(g);
    if (!rc) rc = ir_graph_check_topological(g);
    if (!rc) rc = graph_infer_shapes(g, 0);
    if (!rc) rc = graph_infer_precisions(g);
    if (!rc) rc = graph_verify_load_rules(g);
    if (!rc) rc = graph_compute_gas(g);
    if (!rc) g->verified = 1;
    return rc;
}
