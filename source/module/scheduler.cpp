#include "module/scheduler.h"

#include <stdlib.h>
#include <string.h>

#include "graph/verify.h"
#include "module/context.h"
#include "module/device.h"
#include "operator/op_def.h"
#include "utility/error.h"

int context_devices(const cvml_context* ctx, cvml_device** out, int32_t cap, int32_t* count) {
    int32_t n = 0;
    cvml_device* cpu = device_registry_find("cpu");
    if (ctx->device_name_count > 0) {
        for (int32_t i = 0; i < ctx->device_name_count && n < cap; ++i) {
            cvml_device* d = device_registry_find(ctx->device_names[i]);
            if (!d)
                return cvml_fail(CVML_ERR_LOGIC, "device '%s' is not registered",
                                 ctx->device_names[i]);
            if (d != cpu) out[n++] = d;
        }
    } else {
        for (int32_t i = 0; i < device_registry_count() && n < cap; ++i) {
            cvml_device* d = device_registry_at(i);
            if (d != cpu) out[n++] = d;
        }
    }
    // The CPU is always the last resort: a node no other device runs falls back to it.
    if (cpu && n < cap) out[n++] = cpu;
    *count = n;
    return CVML_OK;
}

namespace {

int add_index(int32_t** arr, int32_t* count, int32_t value) {
    for (int32_t i = 0; i < *count; ++i)
        if ((*arr)[i] == value) return CVML_OK;
    int32_t* p =
        static_cast<int32_t*>(realloc(*arr, sizeof(int32_t) * static_cast<size_t>(*count + 1)));
    if (!p) return cvml_fail(CVML_ERR_RUNTIME, "out of memory");
    *arr = p;
    p[(*count)++] = value;
    return CVML_OK;
}

int new_subgraph(ir_graph* g, int32_t device) {
    ir_subgraph** p = static_cast<ir_subgraph**>(
        realloc(g->subgraphs, sizeof(ir_subgraph*) * static_cast<size_t>(g->subgraph_count + 1)));
    if (!p) return cvml_fail(CVML_ERR_RUNTIME, "out of memory");
    g->subgraphs = p;
    ir_subgraph* sg = static_cast<ir_subgraph*>(calloc(1, sizeof(ir_subgraph)));
    if (!sg) return cvml_fail(CVML_ERR_RUNTIME, "out of memory");
    sg->index = g->subgraph_count;
    sg->device = device;
    g->subgraphs[g->subgraph_count++] = sg;
    return CVML_OK;
}

/* Each operator node goes to the first device of the context that supports it. */
int assign_devices(ir_graph* g, cvml_device* const* devices, int32_t device_count,
                   int32_t* assigned) {
    for (int32_t n = 0; n < g->node_count; ++n) {
        const ir_node* node = g->nodes[n];
        assigned[n] = -1;
        if (!node->op) continue;
        for (int32_t d = 0; d < device_count && assigned[n] < 0; ++d)
            if (devices[d]->supports(devices[d], g, node))
                assigned[n] = device_registry_index(devices[d]);
        if (assigned[n] < 0)
            return graph_node_error(
                node, cvml_fail(CVML_ERR_LOGIC, "no device can run operator %s", node->op->name));
    }
    return CVML_OK;
}

/* Consecutive nodes on one device form one subgraph. */
int cut_subgraphs(ir_graph* g, const int32_t* assigned) {
    for (int32_t n = 0; n < g->node_count; ++n) {
        if (assigned[n] < 0) continue;
        ir_subgraph* last = g->subgraph_count ? g->subgraphs[g->subgraph_count - 1] : nullptr;
        if (!last || last->device != assigned[n]) {
            int rc = new_subgraph(g, assigned[n]);
            if (rc) return rc;
            last = g->subgraphs[g->subgraph_count - 1];
        }
        int rc = add_index(&last->nodes, &last->node_count, n);
        if (rc) return rc;
        g->nodes[n]->subgraph = last->index;
    }
    return CVML_OK;
}

bool is_output(const ir_graph* g, int32_t t) {
    for (int32_t i = 0; i < g->output_count; ++i)
        if (g->outputs[i] == t) return true;
    return false;
}

/* A subgraph's inputs are tensors it reads that it does not produce; its outputs are
 * tensors it produces that another subgraph reads or that are graph outputs. */
int find_boundaries(ir_graph* g) {
    for (int32_t s = 0; s < g->subgraph_count; ++s) {
        ir_subgraph* sg = g->subgraphs[s];
        for (int32_t i = 0; i < sg->node_count; ++i) {
            const ir_node* node = g->nodes[sg->nodes[i]];
            for (int32_t k = 0; k < node->input_count; ++k) {
                const ir_tensor* t = g->tensors[node->inputs[k]];
                int32_t producer_sg = t->producer >= 0 ? g->nodes[t->producer]->subgraph : -1;
                if (producer_sg != s) {
                    int rc = add_index(&sg->inputs, &sg->input_count, t->index);
                    if (rc) return rc;
                }
            }
            for (int32_t k = 0; k < node->output_count; ++k) {
                const ir_tensor* t = g->tensors[node->outputs[k]];
                bool escapes = is_output(g, t->index);
                for (int32_t c = 0; c < t->consumer_count && !escapes; ++c)
                    escapes = g->nodes[t->consumers[c]]->subgraph != s;
                if (escapes) {
                    int rc = add_index(&sg->outputs, &sg->output_count, t->index);
                    if (rc) return rc;
                }
            }
        }
    }
    return CVML_OK;
}

}  // namespace

int scheduler_prerun(ir_graph* g, const cvml_context* ctx) {
    if (g->subgraph_count > 0) return CVML_OK;
    if (!g->verified) return cvml_fail(CVML_ERR_LOGIC, "the graph is not verified");
    cvml_device* devices[CVML_CONTEXT_MAX_DEVICES + 1];
    int32_t device_count = 0;
    int rc = context_devices(ctx, devices, CVML_CONTEXT_MAX_DEVICES + 1, &device_count);
    if (rc) return rc;
    int32_t* assigned =
        static_cast<int32_t*>(malloc(sizeof(int32_t) * (static_cast<size_t>(g->node_count) + 1)));
    if (!assigned) return cvml_fail(CVML_ERR_RUNTIME, "out of memory");
    rc = assign_devices(g, devices, device_count, assigned);
    if (!rc) rc = cut_subgraphs(g, assigned);
    free(assigned);
    if (!rc) rc = find_boundaries(g);
    for (int32_t i = 0; i < g->tensor_count && !rc; ++i) {
        ir_tensor* t = g->tensors[i];
        if (t->kind == TENSOR_CONST) t->data = t->const_data;
    }
    device_run_options opt = {ctx->threads};
    for (int32_t s = 0; s < g->subgraph_count && !rc; ++s) {
        ir_subgraph* sg = g->subgraphs[s];
        cvml_device* dev = device_registry_at(sg->device);
        rc = dev->prerun(dev, g, sg, &opt);
        if (rc) cvml_fail_context(rc, "device %s, subgraph %d: ", dev->name, s);
    }
    if (rc) scheduler_postrun(g);
    return rc;
}

int scheduler_run(ir_graph* g) {
    for (int32_t s = 0; s < g->subgraph_count; ++s) {
        ir_subgraph* sg = g->subgraphs[s];
        cvml_device* dev = device_registry_at(sg->device);
        int rc = dev->run(dev, g, sg);
        if (rc) return rc;
    }
    return CVML_OK;
}

void scheduler_postrun(ir_graph* g) {
    for (int32_t s = 0; s < g->subgraph_count; ++s) {
        ir_subgraph* sg = g->subgraphs[s];
        cvml_device* dev = device_registry_at(sg->device);
        if (sg->device_state && dev) dev->postrun(dev, g, sg);
        free(sg->nodes);
        free(sg->inputs);
        free(sg->outputs);
        free(sg);
    }
    free(g->subgraphs);
    g->subgraphs = nullptr;
    g->subgraph_count = 0;
    for (int32_t n = 0; n < g->node_count; ++n) g->nodes[n]->subgraph = -1;
}
