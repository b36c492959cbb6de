/* Where a subgraph's tensors live: copies that share their input's buffer (views),
 * tensors stored as int8 or int16 where they are proven to fit and every kernel touching
 * them takes narrow storage, outputs that take over the buffer of a tensor read for the
 * last time, the storage of graph inputs, and then the arena: one request per buffer
 * owned here, placed by the core's planner (module/plan/memory_plan.h), in the caller's
 * arena or one of its own. */
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "cvml.h"
#include "device/cpu/cpu_state.h"
#include "module/plan/memory_plan.h"
#include "operator/op_def.h"
#include "utility/error.h"
#include "utility/memory.h"
#include "utility/platform.h"

namespace cpu_dev {
namespace {

/* The tensor whose buffer t shares (itself when none). */
int32_t alias_root(const cpu_subgraph_state* st, int32_t t) {
    while (st->alias[t] >= 0) t = st->alias[t];
    return t;
}

/* ---- views ---------------------------------------------------------------------------- */

/* Upstream's non_max_suppression writes into its input; a tensor it reads must own
 * its buffer. */
bool consumed_in_place(const ir_graph* g, const ir_tensor* t) {
    for (int32_t c = 0; c < t->consumer_count; ++c) {
        const ir_node* n = g->nodes[t->consumers[c]];
        if (n->op && n->op->writes_input) return true;
    }
    return false;
}

bool is_view_node(const ir_node* n) {
    return n->op && n->op->is_view;
}

/* flatten/reshape/squeeze/expand_dims copy their input unchanged: the output can share
 * the input's buffer when both live in this arena and nothing writes either in place. */
void make_views(ir_graph* g, ir_subgraph* sg, cpu_subgraph_state* st) {
    for (int32_t i = 0; i < sg->node_count; ++i) {
        cpu_node_exec* ne = &st->nodes[i];
        const ir_node* n = ne->ctx.node;
        if (ne->skip || !is_view_node(n) || n->input_count != 1 || n->output_count != 1) continue;
        const ir_tensor* x = g->tensors[n->inputs[0]];
        const ir_tensor* y = g->tensors[n->outputs[0]];
        if (x->kind != TENSOR_VAR || x->producer < 0 || st->step_of_node[x->producer] < 0 ||
            st->nodes[st->step_of_node[x->producer]].skip)
            continue;
        if (plan_is_graph_output(g, x->index) || plan_is_graph_output(g, y->index)) continue;
        if (consumed_in_place(g, x) || consumed_in_place(g, y)) continue;
        if (ir_tensor_element_count(x) != ir_tensor_element_count(y)) continue;
        ne->skip = 1;
        g->nodes[n->index]->fused_into = IR_RUNS_AS_VIEW;
        st->alias[y->index] = x->index;
    }
}

/* ---- narrow storage -------------------------------------------------------------------- */

/* A tensor is stored as int8 (int16) when its values are proven to fit, its producer
 * writes narrow outputs, and every reader here takes narrow inputs (int16 ones too,
 * CPU_CAP_INT16); it stays int32 when it leaves the arena (graph output, another
 * device), so the API never sees it. */
/* Whether step cs, a reader of v, takes v stored narrow (int16 too when `wide`). */
bool reader_takes_narrow(const cpu_subgraph_state* st, int32_t cs, const ir_tensor* v, bool wide) {
    const cpu_node_exec* ce = &st->nodes[cs];
    if (ce->skip) {
        // Fused away: either a view of v, or an elemwise_add whose other operand v is
        // read by the head's tail, which takes any storage.
        if (is_view_node(ce->ctx.node) && st->alias[ce->ctx.node->outputs[0]] == v->index)
            return true;
        for (int32_t h = 0; h < cs; ++h)
            for (int32_t k = 0; k < st->nodes[h].tail.count; ++k)
                if (st->nodes[h].tail.steps[k].operand == v) return true;
        return false;
    }
    for (int32_t k = 0; k < ce->ctx.input_count; ++k)
        if (ce->ctx.inputs[k] == v &&
            (!(ce->ctx.caps & CPU_CAP_NARROW_IN(k)) || (wide && !(ce->ctx.caps & CPU_CAP_INT16))))
            return false;
    return true;
}

/* Graph inputs of at most 8 bits are stored as int8 when every reader here takes
 * narrow input: the API clips values to the input's precision as it stores them
 * (upstream's SetInput), so they fit, and the buffer is a quarter of the bytes. The
 * choice is made before the buffer exists (a load with the caller's arena prepares the
 * graph first); a buffer keeps the storage it was made with. */
bool read_here(const cpu_subgraph_state* st, const ir_tensor* x) {
    for (int32_t c = 0; c < x->consumer_count; ++c)
        if (st->step_of_node[x->consumers[c]] >= 0) return true;
    return false;
}

/* Largest |value| each tensor produced here is proven to hold, -1 when unknown: every
 * node's bound from its inputs' (op_def.bound), in order. A fused chain needs nothing
 * more: each fused operator's output is bounded from the one before it, as when it ran
 * alone, and a view has its input's bound. Declared precision is not a bound by
 * itself: cvm_right_shift with p + b >= 32 does not clip. */
void compute_bounds(const ir_graph* g, const ir_subgraph* sg, cpu_subgraph_state* st) {
    int64_t in[CPU_MAX_BOUND_INPUTS];
    for (int32_t t = 0; t < g->tensor_count; ++t) st->bound[t] = -1;
    for (int32_t i = 0; i < sg->node_count; ++i) {
        const ir_node* n = g->nodes[sg->nodes[i]];
        if (n->output_count != 1 || n->input_count > CPU_MAX_BOUND_INPUTS) continue;
        for (int32_t k = 0; k < n->input_count; ++k) in[k] = st->bound[n->inputs[k]];
        st->bound[n->outputs[0]] = op_node_bound(g, n, in);
    }
}

void choose_storage(ir_graph* g, ir_subgraph* sg, cpu_subgraph_state* st) {
    for (int32_t i = 0; i < sg->node_count; ++i) {
        cpu_node_exec* ne = &st->nodes[i];
        if (ne->skip || ne->ctx.output_count != 1 || !(ne->ctx.caps & CPU_CAP_NARROW_OUT)) continue;
        ir_tensor* y = ne->ctx.outputs[0];
        if (y->kind != TENSOR_VAR || plan_is_graph_output(g, y->index)) continue;
        int64_t b = st->bound[y->index];
        if (b < 0 || b > 32767) continue;
        const bool wide = b > 127; /* int16 */
        bool ok = !wide || (ne->ctx.caps & CPU_CAP_INT16);
        for (int32_t t = 0; t < g->tensor_count && ok; ++t) {
            if (alias_root(st, t) != y->index) continue;
            const ir_tensor* v = g->tensors[t];
            if (plan_is_graph_output(g, t)) ok = false;
            for (int32_t c = 0; c < v->consumer_count && ok; ++c) {
                int32_t cs = st->step_of_node[v->consumers[c]];
                ok = cs >= 0 && reader_takes_narrow(st, cs, v, wide);
            }
        }
        if (!ok) continue;
        for (int32_t t = 0; t < g->tensor_count; ++t)
            if (alias_root(st, t) == y->index)
                g->tensors[t]->storage = wide ? STORAGE_INT16 : STORAGE_INT8;
    }
}

int narrow_storage(ir_graph* g, ir_subgraph* sg, cpu_subgraph_state* st) {
    // The bounds are taken last and given back first, so that the plan's scratch (in a
    // microcontroller's arena) does not have to go round them.
    st->bound = static_cast<int64_t*>(
        cvml_scratch_alloc(sizeof(int64_t) * (static_cast<size_t>(g->tensor_count) + 1)));
    if (!st->bound) return cvml_fail_out_of_memory();
    compute_bounds(g, sg, st);
    choose_storage(g, sg, st);
    cvml_scratch_free(st->bound);
    st->bound = nullptr;
    return CVML_OK;
}

int choose_input_storage(ir_graph* g, cpu_subgraph_state* st) {
    for (int32_t i = 0; i < g->input_count; ++i) {
        ir_tensor* x = g->tensors[g->inputs[i]];
        if (x->kind != TENSOR_INPUT || !read_here(st, x)) continue;
        bool narrow = st->rt.fusion && x->precision >= 1 && x->precision <= 8 &&
                      !plan_is_graph_output(g, x->index);
        for (int32_t c = 0; c < x->consumer_count && narrow; ++c) {
            int32_t cs = st->step_of_node[x->consumers[c]];
            narrow = cs >= 0 && reader_takes_narrow(st, cs, x, false);
        }
        if (!x->data) {
            x->storage = narrow ? STORAGE_INT8 : STORAGE_INT32;
            continue;
        }
        // Made int8 after a prerun that failed; this one's readers want int32.
        if (x->storage != STORAGE_INT32 && !narrow)
            return cvml_fail(CVML_ERR_RUNTIME,
                             "input '%s' is stored as int8 (chosen by an earlier, failed "
                             "prerun) but a reader here takes int32 only",
                             x->name);
    }
    return CVML_OK;
}

/* ---- buffers taken over ---------------------------------------------------------------- */

/* The step that computes node n here (the head it is fused into), -1 elsewhere. */
int32_t step_computing(const ir_graph* g, const cpu_subgraph_state* st, int32_t n) {
    const int32_t into = g->nodes[n]->fused_into;
    return st->step_of_node[into >= 0 ? into : n];
}

/* What share_buffers knows of each tensor, found once (O(tensors + edges)). */
enum : uint8_t {
    VIEWED = 1,  /* a view (make_views) shares its buffer */
    SHARING = 2, /* it took the buffer of a tensor read for the last time */
    PINNED = 4   /* a graph output, read in another subgraph or written in place */
};

struct share_state {
    uint8_t* marks;
    int32_t* last; /* the last step reading the tensor here, -1 for none */
};

/* Whether x is the sole holder of a buffer in this arena: the output of a step that runs
 * (a fused chain's last tensor), not a view nor a chain's intermediate, in a buffer of
 * its own or one it took over. */
bool holds_arena_buffer(const ir_graph* g, const cpu_subgraph_state* st, const ir_tensor* x,
                        const uint8_t* marks) {
    if (x->kind != TENSOR_VAR || x->producer < 0 || (marks[x->index] & (VIEWED | PINNED)) ||
        (st->alias[x->index] >= 0 && !(marks[x->index] & SHARING)))
        return false;
    const int32_t s = step_computing(g, st, x->producer);
    if (s < 0 || st->nodes[s].skip) return false;
    const cpu_node_exec* ne = &st->nodes[s];
    for (int32_t k = 0; k < ne->ctx.output_count; ++k)
        if (ne->ctx.outputs[k] == x) return true;
    return false;
}

/* Whether step i's output y can take x's buffer: step i is x's last reader (the step's
 * own node among them only when `by_node`), x is nothing else's (holds_arena_buffer),
 * and has y's storage and size, so that element k lies at the same bytes. */
bool can_take(const ir_graph* g, const cpu_subgraph_state* st, const share_state& sh, int32_t i,
              const ir_tensor* x, bool by_node) {
    const cpu_node_exec* ne = &st->nodes[i];
    const ir_tensor* y = ne->ctx.outputs[0];
    if (!x || x->storage != y->storage ||
        ir_tensor_element_count(x) != ir_tensor_element_count(y) || sh.last[x->index] != i ||
        !holds_arena_buffer(g, st, x, sh.marks))
        return false;
    for (int32_t k = 0; k < ne->ctx.node->input_count && !by_node; ++k)
        if (ne->ctx.node->inputs[k] == x->index) return false;
    return true;
}

/* The tensor whose buffer step i's output takes, or null: an input the kernel writes
 * over (cpu_kernel.writes_over_input), else a tail operand that the kernel reads element
 * by element before writing the same element (CPU_CAP_TAIL_IN_PLACE). */
const ir_tensor* buffer_to_take(const ir_graph* g, cpu_subgraph_state* st, const share_state& sh,
                                int32_t i, size_t* scratch) {
    cpu_node_exec* ne = &st->nodes[i];
    size_t more = scratch[i];
    const int32_t k =
        ne->kernel->writes_over_input ? ne->kernel->writes_over_input(&ne->ctx, &more) : -1;
    if (k >= 0 && k < ne->ctx.input_count && can_take(g, st, sh, i, ne->ctx.inputs[k], true)) {
        scratch[i] = more;
        return ne->ctx.inputs[k];
    }
    for (int32_t t = 0; t < ne->tail.count && (ne->ctx.caps & CPU_CAP_TAIL_IN_PLACE); ++t)
        if (can_take(g, st, sh, i, ne->tail.steps[t].operand, false))
            return ne->tail.steps[t].operand;
    return nullptr;
}

/* Each tensor's marks and last reading step. */
void find_last_readers(const ir_graph* g, const cpu_subgraph_state* st, share_state* sh) {
    for (int32_t i = 0; i < g->output_count; ++i) sh->marks[g->outputs[i]] |= PINNED;
    for (int32_t t = 0; t < g->tensor_count; ++t) {
        const ir_tensor* x = g->tensors[t];
        if (st->alias[t] >= 0) sh->marks[st->alias[t]] |= VIEWED;
        sh->last[t] = -1;
        for (int32_t c = 0; c < x->consumer_count; ++c) {
            const int32_t s = step_computing(g, st, x->consumers[c]);
            const ir_node* reader = g->nodes[x->consumers[c]];
            if (s < 0 || (reader->op && reader->op->writes_input)) sh->marks[t] |= PINNED;
            if (s > sh->last[t]) sh->last[t] = s;
        }
    }
}

/* An output takes the buffer of a tensor its step reads for the last time, so that the
 * arena holds one activation fewer there: a residual block's last conv2d adds the
 * block's input and writes over it, an element-wise node writes over its input, a
 * same-size conv2d on Cortex-M over its image a few rows behind (docs/memory.md). */
int share_buffers(ir_graph* g, ir_subgraph* sg, cpu_subgraph_state* st, size_t* scratch) {
    const size_t n = static_cast<size_t>(g->tensor_count) + 1;
    share_state sh = {static_cast<uint8_t*>(cvml_scratch_calloc(n, 1)),
                      static_cast<int32_t*>(cvml_scratch_alloc(sizeof(int32_t) * n))};
    int rc = sh.marks && sh.last ? CVML_OK : cvml_fail_out_of_memory();
    if (!rc) find_last_readers(g, st, &sh);
    for (int32_t i = 0; i < sg->node_count && !rc; ++i) {
        cpu_node_exec* ne = &st->nodes[i];
        if (ne->skip || ne->ctx.output_count != 1) continue;
        const ir_tensor* y = ne->ctx.outputs[0];
        if (y->kind != TENSOR_VAR || st->alias[y->index] >= 0 || (sh.marks[y->index] & PINNED))
            continue;
        const ir_tensor* x = buffer_to_take(g, st, sh, i, scratch);
        if (!x) continue;
        st->alias[y->index] = x->index;
        sh.marks[y->index] |= SHARING;
    }
    cvml_scratch_free(sh.last);
    cvml_scratch_free(sh.marks);
    return rc;
}

/* ---- the arena ----------------------------------------------------------------------- */

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
            bool escapes = plan_is_graph_output(g, t->index);
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
    int rc = memory_plan_ex(req, r, kArenaAlign, PLAN_EXACT_PAIRS, &st->arena_size);
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

}  // namespace

int lay_out_tensors(ir_graph* g, ir_subgraph* sg, cpu_subgraph_state* st, size_t* scratch) {
    int rc = CVML_OK;
    if (st->rt.fusion) {
        make_views(g, sg, st);
        rc = narrow_storage(g, sg, st);
        if (!rc) rc = share_buffers(g, sg, st, scratch);
    }
    if (!rc) rc = choose_input_storage(g, st);
    // Each kernel learns its tail and its tensors' storage, then the buffers are placed.
    for (int32_t i = 0; i < st->node_count && !rc; ++i) {
        cpu_node_exec* ne = &st->nodes[i];
        if (!ne->skip && ne->kernel->fused) rc = ne->kernel->fused(&ne->ctx);
    }
    return rc ? rc : plan_arena(g, sg, st, scratch);
}

}  // namespace cpu_dev
