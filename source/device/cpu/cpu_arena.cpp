/* The arena: one request per buffer owned here, placed by the core's planner
 * (module/plan/memory_plan.h), then the run's packed form of the steps. */
#include <inttypes.h>
#include <string.h>

#include "cvml.h"
#include "device/cpu/cpu_state.h"
#include "module/plan/memory_plan.h"
#include "utility/error.h"
#include "utility/memory.h"
#include "utility/platform.h"

namespace cpu_dev {
namespace {

/* The plan's bytes: from the caller's arena when the graph has one (after the
 * subgraphs placed before this one), else allocated here. Zeroed by cpu_prerun once the
 * scratch it may lend from there is given back. */
int place_arena(ir_graph* g, cpu_subgraph_state* st) {
    if (!g->arena) {
        st->arena =
            static_cast<uint8_t*>(cvml_aligned_alloc(kArenaAlign, st->arena_size + kArenaAlign));
        if (!st->arena)
            return cvml_fail(CVML_ERR_RUNTIME, "out of memory: arena of %" CVML_PRIuSIZE " bytes",
                             st->arena_size);
        return CVML_OK;
    }
    const size_t need = arena_need(st->arena_size);
    if (g->arena_used > g->arena_size || g->arena_size - g->arena_used < need)
        return cvml_fail(CVML_ERR_LOGIC,
                         "the caller's arena of %" CVML_PRIuSIZE
                         " bytes is too small: this graph's plan needs %" CVML_PRIuSIZE
                         " bytes (cvml_graph_arena_bytes)",
                         g->arena_size, g->arena_used + need);
    uint8_t* start = g->arena + g->arena_used;
    const size_t skip =
        (kArenaAlign - reinterpret_cast<uintptr_t>(start) % kArenaAlign) % kArenaAlign;
    st->arena = start + skip;
    st->arena_borrowed = true;
    g->arena_used += need;
    return CVML_OK;
}

/* One request per buffer owned here (views share their root's), one per scratch. */
/* Whether step i's output k gets a buffer of its own (not fused away, not sharing one). */
bool owns_output(const cpu_subgraph_state* st, int32_t i, int32_t k) {
    const cpu_node_exec* ne = &st->nodes[i];
    return !ne->skip && st->alias[ne->ctx.outputs[k]->index] < 0;
}

/* Whether step i runs with scratch of its own. */
bool owns_scratch(const cpu_subgraph_state* st, int32_t i, const size_t* scratch) {
    return !st->nodes[i].skip && scratch[i] > 0;
}

size_t round_to_word(size_t n) {
    return (n + alignof(max_align_t) - 1) & ~(alignof(max_align_t) - 1);
}

}  // namespace

/* Bytes a caller's arena needs for a plan of `size` bytes: the plan, 64 bytes of slack
 * (vector kernels may read, never use, up to a vector past a buffer) and the most that
 * aligning its start to kArenaAlign can skip. */
size_t arena_need(size_t size) {
    return size ? size + kArenaAlign + (kArenaAlign - 1) : 0;
}

int plan_arena(ir_graph* g, ir_subgraph* sg, cpu_subgraph_state* st, const size_t* scratch) {
    // Requests only for the buffers placed (a microcontroller's arena lends the prerun
    // its scratch: a request per node would be 7 KB for cifar_resnet20).
    int32_t count = 0;
    for (int32_t i = 0; i < sg->node_count; ++i) {
        for (int32_t k = 0; k < st->nodes[i].ctx.output_count; ++k) count += owns_output(st, i, k);
        count += owns_scratch(st, i, scratch);
    }
    plan_request* req = static_cast<plan_request*>(
        cvml_scratch_calloc(static_cast<size_t>(count) + 1, sizeof(plan_request)));
    int32_t* last = static_cast<int32_t*>(
        cvml_scratch_alloc(sizeof(int32_t) * (static_cast<size_t>(g->tensor_count) + 1)));
    if (!req || !last) {
        cvml_scratch_free(req);
        cvml_scratch_free(last);
        return cvml_fail_out_of_memory();
    }
    for (int32_t t = 0; t < g->tensor_count; ++t) last[t] = -1;
    for (int32_t i = 0; i < sg->node_count; ++i) {
        const ir_node* node = g->nodes[sg->nodes[i]];
        for (int32_t k = 0; k < node->input_count; ++k) {
            int32_t r = alias_root(st, node->inputs[k]);
            if (last[r] < i) last[r] = i;
        }
        for (int32_t k = 0; k < node->output_count; ++k) {
            const ir_tensor* t = g->tensors[node->outputs[k]];
            int32_t r = alias_root(st, t->index);
            if (last[r] < i) last[r] = i;
            bool escapes = is_graph_output(g, t->index);
            for (int32_t c = 0; c < t->consumer_count && !escapes; ++c)
                escapes = st->step_of_node[t->consumers[c]] < 0;
            if (escapes) last[r] = sg->node_count;
        }
    }
    int32_t r = 0;
    for (int32_t i = 0; i < sg->node_count; ++i) {
        const cpu_node_exec* ne = &st->nodes[i];
        for (int32_t k = 0; k < ne->ctx.output_count; ++k) {
            if (!owns_output(st, i, k)) continue;
            const ir_tensor* t = ne->ctx.outputs[k];
            req[r].size = static_cast<size_t>(ir_tensor_element_count(t)) * t->storage;
            req[r].first = i;
            req[r].last = last[t->index] < i ? i : last[t->index];
            ++r;
        }
        if (!owns_scratch(st, i, scratch)) continue;
        req[r].size = scratch[i];
        req[r].first = i;
        req[r].last = i;
        ++r;
    }
    int rc = memory_plan(req, r, kArenaAlign, &st->arena_size);
    if (!rc && st->arena_size > 0) rc = place_arena(g, st);
    if (!rc) {
        r = 0;
        for (int32_t i = 0; i < sg->node_count; ++i) {
            cpu_node_exec* ne = &st->nodes[i];
            for (int32_t k = 0; k < ne->ctx.output_count; ++k)
                if (owns_output(st, i, k)) ne->ctx.outputs[k]->data = st->arena + req[r++].offset;
            const bool own = owns_scratch(st, i, scratch);
            ne->ctx.scratch = own ? st->arena + req[r++].offset : nullptr;
            ne->ctx.scratch_size = own ? scratch[i] : 0;
        }
        for (int32_t t = 0; t < g->tensor_count; ++t)
            if (st->alias[t] >= 0) g->tensors[t]->data = g->tensors[alias_root(st, t)]->data;
    }
    cvml_scratch_free(last);
    cvml_scratch_free(req);
    return rc;
}

/* Moves what a run needs into one heap block (cpu_subgraph_state): the steps that run,
 * in order, each with its tensor list and tail; the steps fused away or made views give
 * back their kernel state. Frees the scratch form and the prerun tables. */
int pack_state(cpu_subgraph_state* st) {
    int32_t running = 0, stand_ins = 0;
    size_t slots = 0, steps = 0;
    for (int32_t i = 0; i < st->node_count; ++i) {
        const cpu_node_exec* ne = &st->nodes[i];
        if (ne->skip) continue;
        ++running;
        slots += static_cast<size_t>(ne->ctx.input_count + ne->ctx.output_count);
        steps += static_cast<size_t>(ne->tail.count);
    }
    for (int32_t t = 0; t < st->tensor_count; ++t) stand_ins += st->wide[t] != nullptr;
    const size_t exec_bytes = round_to_word(sizeof(cpu_node_exec) * static_cast<size_t>(running));
    const size_t step_bytes = round_to_word(sizeof(cpu_tail_step) * steps);
    const size_t slot_bytes = sizeof(ir_tensor*) * slots;
    uint8_t* block = static_cast<uint8_t*>(
        cvml_mem_alloc(exec_bytes + step_bytes + slot_bytes +
                       sizeof(ir_tensor*) * static_cast<size_t>(stand_ins) + 1));
    if (!block) return cvml_fail_out_of_memory();
    cpu_node_exec* packed = reinterpret_cast<cpu_node_exec*>(block);
    cpu_tail_step* step = reinterpret_cast<cpu_tail_step*>(block + exec_bytes);
    ir_tensor** slot = reinterpret_cast<ir_tensor**>(block + exec_bytes + step_bytes);
    ir_tensor** stand_in =
        reinterpret_cast<ir_tensor**>(block + exec_bytes + step_bytes + slot_bytes);
    int32_t k = 0;
    for (int32_t i = 0; i < st->node_count; ++i) {
        cpu_node_exec* ne = &st->nodes[i];
        if (ne->skip) {
            postrun_node(ne);
        } else {
            cpu_node_exec* p = &packed[k++];
            *p = *ne;
            const int32_t total = ne->ctx.input_count + ne->ctx.output_count;
            memcpy(slot, ne->tensors, sizeof(ir_tensor*) * static_cast<size_t>(total));
            p->tensors = slot;
            p->ctx.inputs = slot;
            p->ctx.outputs = slot + ne->ctx.input_count;
            slot += total;
            if (ne->tail.count) {
                memcpy(step, ne->tail.steps,
                       sizeof(cpu_tail_step) * static_cast<size_t>(ne->tail.count));
                p->tail.steps = step;
                step += ne->tail.count;
            }
            p->ctx.tail = ne->ctx.tail ? &p->tail : nullptr;
        }
        cvml_scratch_free(ne->tensors);
        cvml_scratch_free(ne->tail.steps);
    }
    for (int32_t t = 0, n = 0; t < st->tensor_count; ++t)
        if (st->wide[t]) stand_in[n++] = st->wide[t];
    cvml_scratch_free(st->nodes);
    free_tables(st);
    st->nodes = packed;
    st->node_count = running;
    st->stand_ins = stand_in;
    st->stand_in_count = stand_ins;
    st->packed = true;
    return CVML_OK;
}

}  // namespace cpu_dev
