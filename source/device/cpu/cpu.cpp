/* The CPU device: runs a subgraph's nodes in order with the registered kernels, its
 * intermediate tensors placed in one arena by the lifetime planner at prerun. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "device/cpu/cpu_kernel.h"
#include "device/cpu/cpu_runtime.h"
#include "device/cpu/memory_plan.h"
#include "device/cpu/simd/simd.h"
#include "graph/verify.h"
#include "module/device.h"
#include "operator/op_def.h"
#include "utility/error.h"

namespace {

constexpr size_t kArenaAlign = 64;

struct cpu_node_exec {
    const cpu_kernel* kernel;
    cpu_node_ctx ctx;
    ir_tensor** tensors; /* inputs then outputs */
    size_t scratch_offset;
};

struct cpu_subgraph_state {
    cpu_runtime rt;
    cpu_node_exec* nodes;
    int32_t node_count;
    uint8_t* arena;
    size_t arena_size;
};

int cpu_supports(cvml_device*, const ir_graph*, const ir_node* node) {
    return node->op && node->op->runnable && cpu_kernel_find(node->op->name) != nullptr;
}

void release_state(cpu_subgraph_state* st) {
    if (!st) return;
    for (int32_t i = 0; i < st->node_count; ++i) {
        cpu_node_exec* ne = &st->nodes[i];
        if (ne->kernel && ne->kernel->postrun && ne->ctx.state) ne->kernel->postrun(&ne->ctx);
        free(ne->tensors);
    }
    free(st->nodes);
    free(st->arena);
    if (st->rt.pool) thread_pool_release(st->rt.pool);
    free(st);
}

/* Position of each node of the subgraph, so lifetimes are measured in steps. */
int32_t step_of(const ir_subgraph* sg, int32_t node) {
    for (int32_t i = 0; i < sg->node_count; ++i)
        if (sg->nodes[i] == node) return i;
    return -1;
}

bool is_graph_output(const ir_graph* g, int32_t tensor) {
    for (int32_t i = 0; i < g->output_count; ++i)
        if (g->outputs[i] == tensor) return true;
    return false;
}

int prepare_nodes(ir_graph* g, ir_subgraph* sg, cpu_subgraph_state* st, size_t* scratch) {
    for (int32_t i = 0; i < sg->node_count; ++i) {
        ir_node* node = g->nodes[sg->nodes[i]];
        cpu_node_exec* ne = &st->nodes[i];
        ne->kernel = cpu_kernel_find(node->op->name);
        if (!ne->kernel)
            return graph_node_error(
                node, cvml_fail(CVML_ERR_LOGIC, "no CPU kernel for operator %s", node->op->name));
        int32_t total = node->input_count + node->output_count;
        ne->tensors =
            static_cast<ir_tensor**>(malloc(sizeof(ir_tensor*) * static_cast<size_t>(total)));
        if (!ne->tensors) return cvml_fail(CVML_ERR_RUNTIME, "out of memory");
        for (int32_t k = 0; k < node->input_count; ++k)
            ne->tensors[k] = g->tensors[node->inputs[k]];
        for (int32_t k = 0; k < node->output_count; ++k)
            ne->tensors[node->input_count + k] = g->tensors[node->outputs[k]];
        cpu_node_ctx* c = &ne->ctx;
        c->graph = g;
        c->node = node;
        c->param = node->param;
        c->input_count = node->input_count;
        c->inputs = ne->tensors;
        c->output_count = node->output_count;
        c->outputs = ne->tensors + node->input_count;
        c->rt = &st->rt;
        scratch[i] = 0;
        if (ne->kernel->prerun) {
            int rc = ne->kernel->prerun(c, &scratch[i]);
            if (rc) return graph_node_error(node, rc);
        }
    }
    return CVML_OK;
}

/* One request per tensor produced here, then one per node's scratch. */
int plan_arena(ir_graph* g, ir_subgraph* sg, cpu_subgraph_state* st, const size_t* scratch) {
    int32_t count = 0;
    for (int32_t i = 0; i < sg->node_count; ++i) count += g->nodes[sg->nodes[i]]->output_count + 1;
    plan_request* req =
        static_cast<plan_request*>(calloc(static_cast<size_t>(count) + 1, sizeof(plan_request)));
    if (!req) return cvml_fail(CVML_ERR_RUNTIME, "out of memory");
    int32_t r = 0;
    for (int32_t i = 0; i < sg->node_count; ++i) {
        const ir_node* node = g->nodes[sg->nodes[i]];
        for (int32_t k = 0; k < node->output_count; ++k) {
            const ir_tensor* t = g->tensors[node->outputs[k]];
            int32_t last = i;
            bool escapes = is_graph_output(g, t->index);
            for (int32_t c = 0; c < t->consumer_count && !escapes; ++c) {
                int32_t s = step_of(sg, t->consumers[c]);
                if (s < 0)
                    escapes = true;
                else if (s > last)
                    last = s;
            }
            req[r].size = static_cast<size_t>(ir_tensor_element_count(t)) * sizeof(int32_t);
            req[r].first = i;
            req[r].last = escapes ? sg->node_count : last;
            ++r;
        }
        req[r].size = scratch[i];
        req[r].first = i;
        req[r].last = i;
        ++r;
    }
    int rc = memory_plan(req, r, kArenaAlign, &st->arena_size);
    if (!rc && st->arena_size > 0) {
        st->arena = static_cast<uint8_t*>(aligned_alloc(kArenaAlign, st->arena_size));
        if (!st->arena)
            rc = cvml_fail(CVML_ERR_RUNTIME, "out of memory: arena of %zu bytes", st->arena_size);
        else
            memset(st->arena, 0, st->arena_size);
    }
    if (!rc) {
        r = 0;
        for (int32_t i = 0; i < sg->node_count; ++i) {
            const ir_node* node = g->nodes[sg->nodes[i]];
            for (int32_t k = 0; k < node->output_count; ++k)
                g->tensors[node->outputs[k]]->data = st->arena + req[r++].offset;
            st->nodes[i].ctx.scratch = scratch[i] ? st->arena + req[r].offset : nullptr;
            st->nodes[i].ctx.scratch_size = scratch[i];
            ++r;
        }
    }
    free(req);
    return rc;
}

int cpu_prerun(cvml_device*, ir_graph* g, ir_subgraph* sg, const device_run_options* opt) {
    cpu_subgraph_state* st =
        static_cast<cpu_subgraph_state*>(calloc(1, sizeof(cpu_subgraph_state)));
    if (!st) return cvml_fail(CVML_ERR_RUNTIME, "out of memory");
    st->nodes = static_cast<cpu_node_exec*>(
        calloc(static_cast<size_t>(sg->node_count) + 1, sizeof(cpu_node_exec)));
    size_t* scratch =
        static_cast<size_t*>(calloc(static_cast<size_t>(sg->node_count) + 1, sizeof(size_t)));
    int rc = CVML_OK;
    if (!st->nodes || !scratch) rc = cvml_fail(CVML_ERR_RUNTIME, "out of memory");
    if (!rc) {
        st->node_count = sg->node_count;
        st->rt.pool = thread_pool_create(opt && opt->threads > 0 ? opt->threads : 1);
        st->rt.simd_level = cpu_simd_level();
        if (!st->rt.pool)
            rc = cvml_fail(CVML_ERR_RUNTIME, "cannot start %d CPU threads", opt->threads);
    }
    // Kernels prepare first so that their scratch joins the arena plan; constants'
    // data is in place by then, intermediate tensors get their addresses after.
    if (!rc) rc = prepare_nodes(g, sg, st, scratch);
    if (!rc) rc = plan_arena(g, sg, st, scratch);
    free(scratch);
    if (rc) {
        release_state(st);
        return rc;
    }
    sg->device_state = st;
    return CVML_OK;
}

uint64_t monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

int cpu_run(cvml_device*, ir_graph* g, ir_subgraph* sg) {
    cpu_subgraph_state* st = static_cast<cpu_subgraph_state*>(sg->device_state);
    if (!st) return cvml_fail(CVML_ERR_RUNTIME, "CPU subgraph %d was not prepared", sg->index);
    for (int32_t i = 0; i < st->node_count; ++i) {
        cpu_node_exec* ne = &st->nodes[i];
        uint64_t start = g->profiling ? monotonic_ns() : 0;
        int rc = ne->kernel->run(&ne->ctx);
        if (rc) return graph_node_error(ne->ctx.node, rc);
        if (g->profiling) g->node_time_ns[ne->ctx.node->index] = monotonic_ns() - start;
    }
    return CVML_OK;
}

void cpu_postrun(cvml_device*, ir_graph*, ir_subgraph* sg) {
    release_state(static_cast<cpu_subgraph_state*>(sg->device_state));
    sg->device_state = nullptr;
}

cvml_device cpu_device = {
    "cpu", CVML_VERSION_STRING, cpu_supports, cpu_prerun, cpu_run, cpu_postrun, nullptr, nullptr,
};

}  // namespace

int register_device_cpu(void) {
    return device_registry_add(&cpu_device);
}
int unregister_device_cpu(void) {
    return device_registry_remove(&cpu_device);
}
