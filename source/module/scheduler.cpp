/* The scheduler: which device runs each node, the subgraphs, and the copies at their
 * boundaries.
 *
 * 1. Assignment. The context's devices in priority order (named ones in the order
 *    named, else every registered device in registration order; the CPU always last):
 *    a node goes to the first device whose supports() takes it, so a node that a
 *    device cannot run falls back to the CPU.
 * 2. Order and cut. Nodes are listed in a topological order that stays on one device
 *    as long as a node of that device is ready (lowest node index first, so a
 *    CPU-only graph keeps the file's order), and consecutive nodes of one device form
 *    one subgraph. Neighbouring work of one device is thereby merged even when the
 *    file interleaves independent branches of different devices.
 * 3. Island policy. A subgraph on a device with its own memory costs a copy of every
 *    non-constant boundary tensor per run. Its work is estimated as upstream's gas
 *    (output elements times the operator's gas base); when the work is less than
 *    `island_work_per_element` times the elements copied, the island goes back to
 *    the CPU (if the CPU runs all of its nodes) and the graph is cut again. Moving an
 *    island only ever moves nodes to the CPU, so this settles in at most one pass per
 *    island.
 * 4. Boundaries. For a device with memory ops the scheduler allocates device buffers
 *    for the subgraph's inputs and outputs and host buffers for its outputs, uploads
 *    constant inputs once at prerun, and copies the other inputs in and the outputs
 *    out around each run. A device that fails at prerun with a runtime error (out of
 *    device memory) leaves its subgraph to the CPU when the CPU can run it. */
#include "module/scheduler.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "graph/verify.h"
#include "module/context.h"
#include "module/device.h"
#include "operator/op_def.h"
#include "utility/error.h"
#include "utility/memory.h"

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

/* Only a plugin's device can have memory of its own: without the plugin loader the
 * boundary code (copies in and out, islands moved back to the CPU) leaves the build,
 * 1.5 KB of a microcontroller's code. */
bool has_memory(const cvml_device* dev) {
    return CVML_WITH_PLUGINS && device_has_memory(dev);
}

/* Appends to a list whose capacity is the next power of two of its count, so a list
 * of n grows in O(n) (a subgraph may hold every node of a 100,000-node graph). Callers
 * keep lists free of duplicates themselves. */
int append_index(int32_t** arr, int32_t* count, int32_t value) {
    int32_t n = *count;
    if ((n & (n - 1)) == 0) {  // 0, 1, 2, 4, ...: full
        size_t capacity = n ? 2 * static_cast<size_t>(n) : 1;
        int32_t* p = static_cast<int32_t*>(cvml_scratch_realloc(*arr, sizeof(int32_t) * capacity));
        if (!p) return cvml_fail_out_of_memory();
        *arr = p;
    }
    (*arr)[(*count)++] = value;
    return CVML_OK;
}

int new_subgraph(ir_graph* g, int32_t device) {
    ir_subgraph** p = static_cast<ir_subgraph**>(cvml_mem_realloc(
        g->subgraphs, sizeof(ir_subgraph*) * static_cast<size_t>(g->subgraph_count + 1)));
    if (!p) return cvml_fail_out_of_memory();
    g->subgraphs = p;
    ir_subgraph* sg = static_cast<ir_subgraph*>(cvml_mem_calloc(1, sizeof(ir_subgraph)));
    if (!sg) return cvml_fail_out_of_memory();
    sg->index = g->subgraph_count;
    sg->device = device;
    g->subgraphs[g->subgraph_count++] = sg;
    return CVML_OK;
}

/* Frees the subgraphs' lists (not device state: nothing has been prerun yet). */
void drop_subgraphs(ir_graph* g) {
    for (int32_t s = 0; s < g->subgraph_count; ++s) {
        ir_subgraph* sg = g->subgraphs[s];
        cvml_scratch_free(sg->nodes);  // in the partition's scratch, or the heap
        cvml_scratch_free(sg->inputs);
        cvml_scratch_free(sg->outputs);
        cvml_mem_free(sg->input_buffers);
        cvml_mem_free(sg->output_buffers);
        cvml_mem_free(sg->output_host);
        cvml_mem_free(sg);
    }
    cvml_mem_free(g->subgraphs);
    g->subgraphs = nullptr;
    g->subgraph_count = 0;
    for (int32_t n = 0; n < g->node_count; ++n) {
        g->nodes[n]->subgraph = -1;
        g->nodes[n]->fused_into = IR_RUNS_ITSELF; /* its device says otherwise at prerun */
    }
}

/* Each operator node goes to the first device of the context that supports it;
 * cpu_ok[n] records whether the CPU could take it instead (island policy). */
int assign_devices(ir_graph* g, cvml_device* const* devices, int32_t device_count,
                   int32_t* assigned, uint8_t* cpu_ok) {
    cvml_device* cpu = device_registry_find("cpu");
    for (int32_t n = 0; n < g->node_count; ++n) {
        const ir_node* node = g->nodes[n];
        assigned[n] = -1;
        cpu_ok[n] = 0;
        if (!node->op) continue;
        for (int32_t d = 0; d < device_count && assigned[n] < 0; ++d)
            if (devices[d]->supports(devices[d], g, node) == 1) {
                assigned[n] = device_registry_index(devices[d]);
                if (devices[d] == cpu) cpu_ok[n] = 1;
            }
        if (assigned[n] < 0)
            return graph_node_error(
                node, cvml_fail(CVML_ERR_LOGIC, "no device can run operator %s", node->op->name));
        if (!cpu_ok[n] && cpu) cpu_ok[n] = cpu->supports(cpu, g, node) == 1;
    }
    return CVML_OK;
}

bool ready(const ir_graph* g, const ir_node* node, const uint8_t* done) {
    for (int32_t k = 0; k < node->input_count; ++k) {
        int32_t p = g->tensors[node->inputs[k]]->producer;
        if (p >= 0 && g->nodes[p]->op && !done[p]) return false;
    }
    return true;
}

/* The topological order that stays on one device while it can (see the top). */
int order_nodes(const ir_graph* g, const int32_t* assigned, int32_t* order, int32_t* count) {
    uint8_t* done =
        static_cast<uint8_t*>(cvml_scratch_calloc(static_cast<size_t>(g->node_count) + 1, 1));
    if (!done) return cvml_fail_out_of_memory();
    int32_t total = 0;
    for (int32_t n = 0; n < g->node_count; ++n) total += g->nodes[n]->op ? 1 : 0;
    int32_t m = 0;
    int32_t current = -1;
    int32_t first_open = 0; /* every op node below it is done */
    while (m < total) {
        while (first_open < g->node_count && (!g->nodes[first_open]->op || done[first_open]))
            ++first_open;
        // Without the plugin loader the CPU is the only device: the pick is first_open.
        int32_t pick = -1;
        for (int32_t n = first_open;
             CVML_WITH_PLUGINS && n < g->node_count && pick < 0 && current >= 0; ++n)
            if (g->nodes[n]->op && !done[n] && assigned[n] == current &&
                ready(g, g->nodes[n], done))
                pick = n;
        // The lowest unscheduled node is always ready: the node list is topological.
        if (pick < 0) pick = first_open;
        if (pick >= g->node_count) break;
        current = assigned[pick];
        done[pick] = 1;
        order[m++] = pick;
    }
    cvml_scratch_free(done);
    *count = m;
    if (m != total) return cvml_fail(CVML_ERR_RUNTIME, "scheduler: graph is not topological");
    return CVML_OK;
}

int cut_subgraphs(ir_graph* g, const int32_t* order, int32_t count, const int32_t* assigned) {
    for (int32_t i = 0; i < count; ++i) {
        int32_t n = order[i];
        ir_subgraph* last = g->subgraph_count ? g->subgraphs[g->subgraph_count - 1] : nullptr;
        if (!last || last->device != assigned[n]) {
            int rc = new_subgraph(g, assigned[n]);
            if (rc) return rc;
            last = g->subgraphs[g->subgraph_count - 1];
        }
        int rc = append_index(&last->nodes, &last->node_count, n);
        if (rc) return rc;
        g->nodes[n]->subgraph = last->index;
    }
    return CVML_OK;
}

/* A subgraph's inputs are tensors it reads that it does not produce; its outputs are
 * tensors it produces that another subgraph reads or that are graph outputs. Marks per
 * tensor keep it O(nodes + edges): `listed[t]` is the last subgraph that took t as an
 * input, plus one. */
int find_boundaries(ir_graph* g) {
    size_t tensors = static_cast<size_t>(g->tensor_count) + 1;
    uint8_t* is_output = static_cast<uint8_t*>(cvml_scratch_calloc(tensors, 1));
    int32_t* listed = static_cast<int32_t*>(cvml_scratch_calloc(tensors, sizeof(int32_t)));
    int rc = is_output && listed ? CVML_OK : cvml_fail_out_of_memory();
    for (int32_t i = 0; !rc && i < g->output_count; ++i) is_output[g->outputs[i]] = 1;
    for (int32_t s = 0; !rc && s < g->subgraph_count; ++s) {
        ir_subgraph* sg = g->subgraphs[s];
        for (int32_t i = 0; !rc && i < sg->node_count; ++i) {
            const ir_node* node = g->nodes[sg->nodes[i]];
            for (int32_t k = 0; !rc && k < node->input_count; ++k) {
                const ir_tensor* t = g->tensors[node->inputs[k]];
                int32_t producer_sg = t->producer >= 0 ? g->nodes[t->producer]->subgraph : -1;
                if (producer_sg != s && listed[t->index] != s + 1) {
                    listed[t->index] = s + 1;
                    rc = append_index(&sg->inputs, &sg->input_count, t->index);
                }
            }
            for (int32_t k = 0; !rc && k < node->output_count; ++k) {
                const ir_tensor* t = g->tensors[node->outputs[k]];
                bool escapes = is_output[t->index];
                for (int32_t c = 0; c < t->consumer_count && !escapes; ++c)
                    escapes = g->nodes[t->consumers[c]]->subgraph != s;
                if (escapes) rc = append_index(&sg->outputs, &sg->output_count, t->index);
            }
        }
    }
    cvml_scratch_free(listed);
    cvml_scratch_free(is_output);
    return rc;
}

/* Upstream's gas for one node: output elements times the operator's base cost. */
uint64_t node_work(ir_graph* g, const ir_node* node) {
    uint64_t out = static_cast<uint64_t>(ir_tensor_element_count(g->tensors[node->outputs[0]]));
    int64_t base = 1;
    if (node->op->gas_base) {
        ir_tensor* in[64];
        ir_tensor* outs[16];
        if (node->input_count > 64 || node->output_count > 16) return out;
        for (int32_t k = 0; k < node->input_count; ++k) in[k] = g->tensors[node->inputs[k]];
        for (int32_t k = 0; k < node->output_count; ++k) outs[k] = g->tensors[node->outputs[k]];
        op_infer_ctx ctx = {g, node, node->param, node->input_count, in, node->output_count, outs};
        if (node->op->gas_base(&ctx, &base) != CVML_OK || base < 1) base = 1;
    }
    return out * static_cast<uint64_t>(base);
}

/* Moves islands that cost more to copy than they are worth to the CPU; sets *moved. */
int apply_island_policy(ir_graph* g, int32_t* assigned, const uint8_t* cpu_ok, bool* moved) {
    *moved = false;
    cvml_device* cpu = device_registry_find("cpu");
    if (!cpu) return CVML_OK;
    int32_t cpu_index = device_registry_index(cpu);
    for (int32_t s = 0; s < g->subgraph_count; ++s) {
        ir_subgraph* sg = g->subgraphs[s];
        cvml_device* dev = device_registry_at(sg->device);
        if (!dev || !has_memory(dev) || device_island_work(dev) == 0) continue;
        bool movable = true;
        uint64_t work = 0;
        for (int32_t i = 0; i < sg->node_count && movable; ++i) {
            movable = cpu_ok[sg->nodes[i]] != 0;
            work += node_work(g, g->nodes[sg->nodes[i]]);
        }
        if (!movable) continue;
        uint64_t copied = 0;
        for (int32_t i = 0; i < sg->input_count; ++i) {
            const ir_tensor* t = g->tensors[sg->inputs[i]];
            if (t->kind != TENSOR_CONST)
                copied += static_cast<uint64_t>(ir_tensor_element_count(t));
        }
        for (int32_t i = 0; i < sg->output_count; ++i)
            copied += static_cast<uint64_t>(ir_tensor_element_count(g->tensors[sg->outputs[i]]));
        if (work >= copied * device_island_work(dev)) continue;
        for (int32_t i = 0; i < sg->node_count; ++i) assigned[sg->nodes[i]] = cpu_index;
        *moved = true;
    }
    return CVML_OK;
}

size_t tensor_bytes(const ir_tensor* t) {
    return static_cast<size_t>(ir_tensor_element_count(t)) * sizeof(int32_t);
}

void release_boundary(cvml_device* dev, ir_graph* g, ir_subgraph* sg) {
    for (int32_t i = 0; i < sg->input_count && sg->input_buffers; ++i)
        if (sg->input_buffers[i]) dev->mem_free(dev, sg->input_buffers[i]);
    for (int32_t i = 0; i < sg->output_count && sg->output_buffers; ++i)
        if (sg->output_buffers[i]) dev->mem_free(dev, sg->output_buffers[i]);
    for (int32_t i = 0; i < sg->output_count && sg->output_host; ++i) {
        ir_tensor* t = g->tensors[sg->outputs[i]];
        if (t->data == sg->output_host[i]) t->data = nullptr;
        cvml_mem_free(sg->output_host[i]);
    }
    cvml_mem_free(sg->input_buffers);
    cvml_mem_free(sg->output_buffers);
    cvml_mem_free(sg->output_host);
    sg->input_buffers = sg->output_buffers = sg->output_host = nullptr;
}

/* Device and host buffers of a subgraph on a device with its own memory. */
int prepare_boundary(cvml_device* dev, ir_graph* g, ir_subgraph* sg) {
    size_t in_n = static_cast<size_t>(sg->input_count) + 1;
    size_t out_n = static_cast<size_t>(sg->output_count) + 1;
    sg->input_buffers = static_cast<void**>(cvml_mem_calloc(in_n, sizeof(void*)));
    sg->output_buffers = static_cast<void**>(cvml_mem_calloc(out_n, sizeof(void*)));
    sg->output_host = static_cast<void**>(cvml_mem_calloc(out_n, sizeof(void*)));
    if (!sg->input_buffers || !sg->output_buffers || !sg->output_host)
        return cvml_fail_out_of_memory();
    for (int32_t i = 0; i < sg->input_count; ++i) {
        const ir_tensor* t = g->tensors[sg->inputs[i]];
        int rc = dev->mem_alloc(dev, tensor_bytes(t), &sg->input_buffers[i]);
        if (rc) return cvml_fail_context(rc, "buffer for '%s': ", t->name);
    }
    for (int32_t i = 0; i < sg->output_count; ++i) {
        ir_tensor* t = g->tensors[sg->outputs[i]];
        int rc = dev->mem_alloc(dev, tensor_bytes(t), &sg->output_buffers[i]);
        if (rc) return cvml_fail_context(rc, "buffer for '%s': ", t->name);
        sg->output_host[i] = cvml_mem_calloc(tensor_bytes(t) + 1, 1);
        if (!sg->output_host[i]) return cvml_fail_out_of_memory();
        t->data = sg->output_host[i];
    }
    return CVML_OK;
}

int upload_constants(cvml_device* dev, ir_graph* g, ir_subgraph* sg) {
    for (int32_t i = 0; i < sg->input_count; ++i) {
        const ir_tensor* t = g->tensors[sg->inputs[i]];
        if (t->kind != TENSOR_CONST) continue;
        // Devices take int32 values; the host may keep a constant narrower.
        int32_t* wide = nullptr;
        if (t->storage != STORAGE_INT32) {
            int64_t n = ir_tensor_element_count(t);
            wide = static_cast<int32_t*>(
                cvml_mem_alloc(sizeof(int32_t) * static_cast<size_t>(n ? n : 1)));
            if (!wide) return cvml_fail(CVML_ERR_RUNTIME, "out of memory uploading '%s'", t->name);
            for (int64_t k = 0; k < n; ++k) wide[k] = ir_const_value(t, k);
        }
        int rc = dev->copy_to_device(dev, sg, sg->input_buffers[i], wide ? wide : t->data,
                                     tensor_bytes(t));
        cvml_mem_free(wide);
        if (rc) return cvml_fail_context(rc, "uploading '%s': ", t->name);
    }
    return CVML_OK;
}

/* Boundary copies move int32 values (tensor_bytes): the CPU keeps every tensor that
 * leaves its subgraph in int32 storage, and what a device with its own memory hands
 * back is int32, whatever an earlier prerun of the CPU chose for that tensor. */
int require_int32(const ir_tensor* t, const cvml_device* dev) {
    if (t->storage == STORAGE_INT32) return CVML_OK;
    return cvml_fail(CVML_ERR_RUNTIME, "tensor '%s' crosses to device %s in %d-byte storage",
                     t->name, dev->name, t->storage);
}

int prerun_subgraph(ir_graph* g, ir_subgraph* sg, const device_run_options* opt) {
    cvml_device* dev = device_registry_at(sg->device);
    if (has_memory(dev))
        for (int32_t i = 0; i < sg->output_count; ++i)
            g->tensors[sg->outputs[i]]->storage = STORAGE_INT32;
    int rc = has_memory(dev) ? prepare_boundary(dev, g, sg) : CVML_OK;
    if (!rc) rc = dev->prerun(dev, g, sg, opt);
    if (!rc && has_memory(dev)) rc = upload_constants(dev, g, sg);
    return rc;
}

void postrun_subgraph(ir_graph* g, ir_subgraph* sg) {
    cvml_device* dev = device_registry_at(sg->device);
    if (!dev) return;
    if (sg->device_state) dev->postrun(dev, g, sg);
    sg->device_state = nullptr;
    if (has_memory(dev)) release_boundary(dev, g, sg);
}

/* A list grown in the partition's scratch goes to the heap, its exact size. */
int settle_list(int32_t** arr, int32_t count) {
    if (!*arr) return CVML_OK;
    int32_t* p = static_cast<int32_t*>(
        cvml_mem_alloc(sizeof(int32_t) * static_cast<size_t>(count ? count : 1)));
    if (!p) return cvml_fail_out_of_memory();
    memcpy(p, *arr, sizeof(int32_t) * static_cast<size_t>(count));
    cvml_scratch_free(*arr);
    *arr = p;
    return CVML_OK;
}

int settle_lists(ir_graph* g) {
    int rc = CVML_OK;
    for (int32_t s = 0; s < g->subgraph_count && !rc; ++s) {
        ir_subgraph* sg = g->subgraphs[s];
        rc = settle_list(&sg->nodes, sg->node_count);
        if (!rc) rc = settle_list(&sg->inputs, sg->input_count);
        if (!rc) rc = settle_list(&sg->outputs, sg->output_count);
    }
    return rc;
}

/* Partitions the graph; on return g->subgraphs holds the final cut. The subgraphs'
 * lists grow (by doubling) in the load's scratch where the caller lent an arena, and
 * only their final form goes to the heap. */
int partition(ir_graph* g, const cvml_context* ctx) {
    cvml_device* devices[CVML_CONTEXT_MAX_DEVICES + 1];
    int32_t device_count = 0;
    int rc = context_devices(ctx, devices, CVML_CONTEXT_MAX_DEVICES + 1, &device_count);
    if (rc) return rc;
    size_t n = static_cast<size_t>(g->node_count) + 1;
    int32_t* assigned = static_cast<int32_t*>(cvml_scratch_alloc(sizeof(int32_t) * n));
    int32_t* order = static_cast<int32_t*>(cvml_scratch_alloc(sizeof(int32_t) * n));
    uint8_t* cpu_ok = static_cast<uint8_t*>(cvml_scratch_alloc(n));
    if (!assigned || !order || !cpu_ok) rc = cvml_fail_out_of_memory();
    if (!rc) rc = assign_devices(g, devices, device_count, assigned, cpu_ok);
    for (int32_t pass = 0; !rc; ++pass) {
        int32_t count = 0;
        rc = order_nodes(g, assigned, order, &count);
        if (!rc) rc = cut_subgraphs(g, order, count, assigned);
        if (!rc) rc = find_boundaries(g);
        bool moved = false;
        if (!rc) rc = apply_island_policy(g, assigned, cpu_ok, &moved);
        if (rc || !moved || pass > g->node_count) break;
        drop_subgraphs(g);
    }
    if (!rc) rc = settle_lists(g);
    cvml_scratch_free(cpu_ok);
    cvml_scratch_free(order);
    cvml_scratch_free(assigned);
    return rc;
}

}  // namespace

int scheduler_prerun(ir_graph* g, const cvml_context* ctx) {
    if (g->subgraph_count > 0) return CVML_OK;
    if (!g->verified) return cvml_fail(CVML_ERR_LOGIC, "the graph is not verified");
    g->arena_used = 0;  // no subgraph holds any of the caller's arena now
    // The partition's tables are taken from the caller's arena, idle until a plan is
    // placed there: on a microcontroller's heap they would leave holes between the
    // graph's own blocks.
    const bool lent = g->arena && !cvml_scratch_active();
    if (lent) cvml_scratch_begin(g->arena, g->arena_size);
    int rc = partition(g, ctx);
    if (rc) drop_subgraphs(g);  // while lists it left may still be in the scratch
    if (lent && !cvml_scratch_end() && !rc) {
        drop_subgraphs(g);
        rc = cvml_fail(CVML_ERR_LOGIC, "the partition kept scratch memory (a bug)");
    }
    if (rc) return rc;
    for (int32_t i = 0; i < g->tensor_count; ++i) {
        ir_tensor* t = g->tensors[i];
        if (t->kind == TENSOR_CONST) t->data = t->const_data;
    }
    device_run_options opt = {sizeof(device_run_options), CVML_PLUGIN_ABI_VERSION, ctx->threads};
    cvml_device* cpu = device_registry_find("cpu");
    for (int32_t s = 0; s < g->subgraph_count && !rc; ++s) {
        ir_subgraph* sg = g->subgraphs[s];
        cvml_device* dev = device_registry_at(sg->device);
        rc = prerun_subgraph(g, sg, &opt);
        if (CVML_WITH_PLUGINS && rc == CVML_ERR_RUNTIME && cpu && dev != cpu) {
            bool cpu_runs_all = true;
            for (int32_t i = 0; i < sg->node_count && cpu_runs_all; ++i)
                cpu_runs_all = cpu->supports(cpu, g, g->nodes[sg->nodes[i]]) == 1;
            if (cpu_runs_all) {
                postrun_subgraph(g, sg);
                sg->device = device_registry_index(cpu);
                rc = prerun_subgraph(g, sg, &opt);
            }
        }
        if (rc) cvml_fail_context(rc, "device %s, subgraph %" PRId32 ": ", dev->name, s);
    }
    if (rc) scheduler_postrun(g);
    return rc;
}

int scheduler_run(ir_graph* g) {
    for (int32_t s = 0; s < g->subgraph_count; ++s) {
        ir_subgraph* sg = g->subgraphs[s];
        cvml_device* dev = device_registry_at(sg->device);
        bool mem = has_memory(dev);
        for (int32_t i = 0; i < sg->input_count && mem; ++i) {
            const ir_tensor* t = g->tensors[sg->inputs[i]];
            if (t->kind == TENSOR_CONST) continue;
            if (!t->data) return cvml_fail(CVML_ERR_RUNTIME, "tensor '%s' has no data", t->name);
            int rc = require_int32(t, dev);
            if (rc) return rc;
            rc = dev->copy_to_device(dev, sg, sg->input_buffers[i], t->data, tensor_bytes(t));
            if (rc)
                return cvml_fail_context(rc, "device %s, copying '%s' in: ", dev->name, t->name);
        }
        int rc = dev->run(dev, g, sg);
        if (rc) return cvml_fail_context(rc, "device %s, subgraph %" PRId32 ": ", dev->name, s);
        for (int32_t i = 0; i < sg->output_count && mem; ++i) {
            const ir_tensor* t = g->tensors[sg->outputs[i]];
            rc = dev->copy_to_host(dev, sg, sg->output_host[i], sg->output_buffers[i],
                                   tensor_bytes(t));
            if (rc)
                return cvml_fail_context(rc, "device %s, copying '%s' out: ", dev->name, t->name);
        }
    }
    return CVML_OK;
}

void scheduler_postrun(ir_graph* g) {
    for (int32_t s = 0; s < g->subgraph_count; ++s) postrun_subgraph(g, g->subgraphs[s]);
    drop_subgraphs(g);
}
