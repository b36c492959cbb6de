/* The CPU device: runs a subgraph's nodes in order with the registered kernels, its
 * intermediate tensors placed in one arena by the lifetime planner at prerun. Before
 * planning, element-wise tails are fused into the kernels that apply them, copies
 * become views, and tensors proven to fit int8 are stored as int8 where every kernel
 * touching them reads and writes narrow storage (CPU_CAP_*). CVML_NO_FUSION=1 turns
 * the three off (tests compare both). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "device/cpu/cpu_kernel.h"
#include "device/cpu/cpu_runtime.h"
#include "device/cpu/memory_plan.h"
#include "device/cpu/simd/epilogue.h"
#include "device/cpu/simd/simd.h"
#include "graph/verify.h"
#include "module/device.h"
#include "operator/op_def.h"
#include "utility/error.h"
#include "utility/platform.h"
#include "utility/memory.h"

namespace {

constexpr size_t kArenaAlign = 64;
/* Nodes with more inputs (concatenate) have no bound. */
constexpr int32_t CPU_MAX_BOUND_INPUTS = 8;

struct cpu_node_exec {
    const cpu_kernel* kernel;
    cpu_node_ctx ctx;
    ir_tensor** tensors; /* inputs then outputs */
    uint8_t skip;        /* fused into an earlier node's tail, or a copy turned into a view */
    cpu_tail tail;
};

/* While prerun works, `nodes` has a step for every node of the subgraph, and it and the
 * per-tensor tables are the load's scratch (utility/memory.h: the caller's arena, idle
 * until the plan is placed in it, else the heap). Once prepared (`packed`), one heap
 * block holds what a run needs: the steps that run (fused and view nodes dropped),
 * their tensor lists and tails, and the int32 stand-ins to free; the tables are gone. */
struct cpu_subgraph_state {
    cpu_runtime rt;
    cpu_node_exec* nodes;
    int32_t node_count;
    bool packed;
    uint8_t* arena;
    size_t arena_size;
    bool arena_borrowed; /* in the caller's arena (ir_graph.arena), not allocated here */
    int32_t tensor_count;
    int32_t* step_of_node; /* graph node index -> step here, -1 elsewhere */
    int32_t* alias;        /* graph tensor index -> tensor whose buffer it shares, or -1 */
    ir_tensor** wide;      /* graph tensor index -> int32 stand-in of a narrow constant */
    int64_t* bound;        /* graph tensor index -> proven largest |value|, -1 unknown */
    ir_tensor** stand_ins; /* packed: the stand-ins `wide` held */
    int32_t stand_in_count;
};

int cpu_supports(cvml_device*, const ir_graph*, const ir_node* node) {
    return node->op && !node->op->alias && cpu_kernel_find(node->op->name) != nullptr;
}

void free_stand_in(ir_tensor* w) {
    if (!w) return;
    cvml_mem_free(w->data);
    cvml_mem_free(w);
}

void postrun_node(cpu_node_exec* ne) {
    if (ne->kernel && ne->kernel->postrun && ne->ctx.state) ne->kernel->postrun(&ne->ctx);
}

/* The tables only prerun reads (scratch). */
void free_tables(cpu_subgraph_state* st) {
    cvml_scratch_free(st->step_of_node);
    cvml_scratch_free(st->alias);
    cvml_scratch_free(st->bound);
    cvml_scratch_free(st->wide);
    st->step_of_node = st->alias = nullptr;
    st->bound = nullptr;
    st->wide = nullptr;
}

void release_state(cpu_subgraph_state* st) {
    if (!st) return;
    for (int32_t i = 0; i < st->node_count; ++i) {
        cpu_node_exec* ne = &st->nodes[i];
        postrun_node(ne);
        if (st->packed) continue;
        cvml_scratch_free(ne->tensors);
        cvml_scratch_free(ne->tail.steps);
    }
    if (!st->arena_borrowed) cvml_aligned_free(st->arena);
    ir_tensor** stand_ins = st->packed ? st->stand_ins : st->wide;
    const int32_t count = st->packed ? st->stand_in_count : st->wide ? st->tensor_count : 0;
    for (int32_t k = 0; k < count; ++k) free_stand_in(stand_ins[k]);
    // Packed: the heap block with the tensor lists, tails and stand-ins (scratch_free
    // takes a heap block too).
    cvml_scratch_free(st->nodes);
    free_tables(st);
    if (st->rt.pool) thread_pool_release(st->rt.pool);
    cvml_mem_free(st);
}

bool is_graph_output(const ir_graph* g, int32_t tensor) {
    for (int32_t i = 0; i < g->output_count; ++i)
        if (g->outputs[i] == tensor) return true;
    return false;
}

/* Kernels that read this narrow constant input themselves (the others see int32). */
bool takes_narrow_const(const cpu_kernel* k, int32_t input) {
    return (k->narrow_consts & CPU_CAP_NARROW_IN(input)) != 0;
}

/* A constant kept as int8 gets an int32 stand-in (a copy of the tensor with widened
 * values, owned by the device) for kernels that read int32 only. */
ir_tensor* const_input(cpu_subgraph_state* st, const cpu_kernel* kernel, int32_t k, ir_tensor* t) {
    if (t->kind != TENSOR_CONST || t->storage == STORAGE_INT32 || takes_narrow_const(kernel, k))
        return t;
    if (st->wide[t->index]) return st->wide[t->index];
    ir_tensor* w = static_cast<ir_tensor*>(cvml_mem_alloc(sizeof(ir_tensor)));
    int64_t n = ir_tensor_element_count(t);
    int32_t* v =
        static_cast<int32_t*>(cvml_mem_alloc(sizeof(int32_t) * static_cast<size_t>(n ? n : 1)));
    if (!w || !v) {
        cvml_mem_free(w);
        cvml_mem_free(v);
        return nullptr;
    }
    for (int64_t i = 0; i < n; ++i) v[i] = ir_const_value(t, i);
    *w = *t;
    w->data = v;
    w->storage = STORAGE_INT32;
    st->wide[t->index] = w;
    return w;
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
        ne->tensors = static_cast<ir_tensor**>(
            cvml_scratch_alloc(sizeof(ir_tensor*) * static_cast<size_t>(total)));
        if (!ne->tensors) return cvml_fail_out_of_memory();
        for (int32_t k = 0; k < node->input_count; ++k) {
            ne->tensors[k] = const_input(st, ne->kernel, k, g->tensors[node->inputs[k]]);
            if (!ne->tensors[k]) return cvml_fail_out_of_memory();
        }
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

/* ---- fusion, views and storage (prerun) ------------------------------------------ */

/* Upstream's non_max_suppression writes into its input; a tensor it reads must own
 * its buffer. */
bool consumed_in_place(const ir_graph* g, const ir_tensor* t) {
    for (int32_t c = 0; c < t->consumer_count; ++c) {
        const ir_node* n = g->nodes[t->consumers[c]];
        if (n->op && n->op->writes_input) return true;
    }
    return false;
}

int32_t count_in(const ir_node* n, int32_t tensor) {
    int32_t k = 0;
    for (int32_t i = 0; i < n->input_count; ++i) k += n->inputs[i] == tensor;
    return k;
}

bool is_view_node(const ir_node* n) {
    return n->op && n->op->is_view;
}

/* Chain slots a step takes once lowered (epilogue_add_step): a right shift is a round
 * and a clip. */
int32_t tail_slots(const cvml_step& s) {
    return s.kind == CVML_STEP_RIGHT_SHIFT ? 2 : 1;
}

/* The tail step `c` applies to tensor t (its only use of t), false when it is none. An
 * added operand must be ready before the head (step `head`) runs, and produced here or
 * a constant or input, so the fused node computes exactly what the chain did. */
bool fusable_step(const ir_graph* g, const cpu_subgraph_state* st, int32_t head, const ir_node* c,
                  const ir_tensor* t, cpu_tail_step* out) {
    int32_t input = 0;
    while (input < c->input_count && c->inputs[input] != t->index) ++input;
    if (!op_node_step(g, c, input, &out->step)) return false;
    out->operand = nullptr;
    if (out->step.kind != CVML_STEP_ADD) return true;
    const ir_tensor* other = g->tensors[c->inputs[out->step.operand]];
    if (other->producer >= 0) {
        int32_t ps = st->step_of_node[other->producer];
        if (ps >= head) return false;
        if (ps < 0 && other->kind == TENSOR_VAR) return false;  // another device's
    }
    if (ir_tensor_element_count(other) != ir_tensor_element_count(t)) return false;
    out->operand = other;
    return true;
}

/* The longest tail fused at the vector levels, in chain slots and steps: their tile
 * and row code is tuned for chains this long. The scalar level takes all the chain
 * has room for, so that MRT's requantize-add-requantize runs reach an int8 tensor
 * instead of leaving an int32 one between (a quarter of the arena at that level). */
constexpr int32_t kVectorTailSlots = 6;
constexpr int32_t kVectorTailSteps = 6;

/* Absorbs the chain of element-wise operators that follows a node whose kernel applies
 * tails. A link is taken only when the intermediate tensor is read by that operator
 * alone (not a graph output, not read twice), and an elemwise_add's other operand is
 * ready before the head runs, so the fused node computes exactly what the chain did. */
int fuse_tails(ir_graph* g, ir_subgraph* sg, cpu_subgraph_state* st) {
    const bool scalar = st->rt.simd_level == CPU_SIMD_SCALAR;
    const int32_t max_slots = scalar ? EP_MAX_STEPS - 2 : kVectorTailSlots;
    const int32_t max_steps = scalar ? CPU_TAIL_MAX : kVectorTailSteps;
    for (int32_t i = 0; i < sg->node_count; ++i) {
        cpu_node_exec* head = &st->nodes[i];
        if (head->skip || !(head->ctx.caps & CPU_CAP_TAIL) || head->ctx.output_count != 1) continue;
        cpu_tail_step steps[CPU_TAIL_MAX];
        int32_t count = 0, slots = 0;
        for (;;) {
            const ir_tensor* t = head->ctx.outputs[0];
            if (is_graph_output(g, t->index) || t->consumer_count != 1) break;
            int32_t cs = st->step_of_node[t->consumers[0]];
            if (cs <= i) break;
            const ir_node* c = g->nodes[t->consumers[0]];
            if (c->output_count != 1 || count_in(c, t->index) != 1) break;
            cpu_tail_step step;
            if (!fusable_step(g, st, i, c, t, &step)) break;
            if (slots + tail_slots(step.step) > max_slots || count == max_steps) break;
            slots += tail_slots(step.step);
            steps[count++] = step;
            st->nodes[cs].skip = 1;
            g->nodes[c->index]->fused_into = head->ctx.node->index;
            head->tensors[head->ctx.input_count] = g->tensors[c->outputs[0]];
        }
        if (!count) continue;
        head->tail.steps = static_cast<cpu_tail_step*>(
            cvml_scratch_alloc(sizeof(cpu_tail_step) * static_cast<size_t>(count)));
        if (!head->tail.steps) return cvml_fail_out_of_memory();
        memcpy(head->tail.steps, steps, sizeof(cpu_tail_step) * static_cast<size_t>(count));
        head->tail.count = count;
        head->ctx.tail = &head->tail;
    }
    return CVML_OK;
}

int32_t alias_root(const cpu_subgraph_state* st, int32_t t) {
    while (st->alias[t] >= 0) t = st->alias[t];
    return t;
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
        if (is_graph_output(g, x->index) || is_graph_output(g, y->index)) continue;
        if (consumed_in_place(g, x) || consumed_in_place(g, y)) continue;
        if (ir_tensor_element_count(x) != ir_tensor_element_count(y)) continue;
        ne->skip = 1;
        g->nodes[n->index]->fused_into = IR_RUNS_AS_VIEW;
        st->alias[y->index] = x->index;
    }
}

/* ---- buffers shared by a step's output and a tensor it reads last (prerun) ---------- */

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

void choose_storage(ir_graph* g, ir_subgraph* sg, cpu_subgraph_state* st) {
    for (int32_t i = 0; i < sg->node_count; ++i) {
        cpu_node_exec* ne = &st->nodes[i];
        if (ne->skip || ne->ctx.output_count != 1 || !(ne->ctx.caps & CPU_CAP_NARROW_OUT)) continue;
        ir_tensor* y = ne->ctx.outputs[0];
        if (y->kind != TENSOR_VAR || is_graph_output(g, y->index)) continue;
        int64_t b = st->bound[y->index];
        if (b < 0 || b > 32767) continue;
        const bool wide = b > 127; /* int16 */
        bool ok = !wide || (ne->ctx.caps & CPU_CAP_INT16);
        for (int32_t t = 0; t < g->tensor_count && ok; ++t) {
            if (alias_root(st, t) != y->index) continue;
            const ir_tensor* v = g->tensors[t];
            if (is_graph_output(g, t)) ok = false;
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

int choose_input_storage(ir_graph* g, cpu_subgraph_state* st) {
    for (int32_t i = 0; i < g->input_count; ++i) {
        ir_tensor* x = g->tensors[g->inputs[i]];
        if (x->kind != TENSOR_INPUT || !read_here(st, x)) continue;
        bool narrow = st->rt.fusion && x->precision >= 1 && x->precision <= 8 &&
                      !is_graph_output(g, x->index);
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

/* Bytes a caller's arena needs for a plan of `size` bytes: the plan, 64 bytes of slack
 * (vector kernels may read, never use, up to a vector past a buffer) and the most that
 * aligning its start to kArenaAlign can skip. */
size_t arena_need(size_t size) {
    return size ? size + kArenaAlign + (kArenaAlign - 1) : 0;
}

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

size_t round_to_word(size_t n) {
    return (n + alignof(max_align_t) - 1) & ~(alignof(max_align_t) - 1);
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

/* ---- the order of the steps (prerun) ---------------------------------------------- */

/* A binary min-heap of (key, position) pairs, ties by position. */
struct step_heap {
    int64_t* key;
    int32_t* pos;
    int32_t size;
};

bool heap_less(const step_heap& h, int32_t a, int32_t b) {
    return h.key[a] != h.key[b] ? h.key[a] < h.key[b] : h.pos[a] < h.pos[b];
}

void heap_swap(step_heap* h, int32_t a, int32_t b) {
    const int64_t k = h->key[a];
    const int32_t p = h->pos[a];
    h->key[a] = h->key[b], h->pos[a] = h->pos[b];
    h->key[b] = k, h->pos[b] = p;
}

void heap_push(step_heap* h, int64_t key, int32_t pos) {
    int32_t i = h->size++;
    h->key[i] = key, h->pos[i] = pos;
    for (; i > 0 && heap_less(*h, i, (i - 1) / 2); i = (i - 1) / 2) heap_swap(h, i, (i - 1) / 2);
}

int32_t heap_pop(step_heap* h) {
    const int32_t top = h->pos[0];
    heap_swap(h, 0, --h->size);
    for (int32_t i = 0;;) {
        int32_t m = i;
        const int32_t l = 2 * i + 1, r = 2 * i + 2;
        if (l < h->size && heap_less(*h, l, m)) m = l;
        if (r < h->size && heap_less(*h, r, m)) m = r;
        if (m == i) break;
        heap_swap(h, i, m);
        i = m;
    }
    return top;
}

/* What list scheduling needs per node (by position) and per tensor. */
struct order_state {
    int32_t* waiting;  /* per position: inputs whose producer here has not run */
    int32_t* readers;  /* per tensor: distinct nodes here that have not read it yet */
    uint32_t* stamp;   /* per tensor: net_elements' last visit (generation) */
    uint32_t* seen;    /* per tensor: after_step's last visit (the step's position + 1) */
    uint8_t* freeable; /* per tensor: its buffer is this arena's and dies here */
    uint8_t* done;     /* per position */
    int64_t* net;      /* per position, once ready: net_elements, kept up to date */
    uint32_t generation;
};

/* Elements a step adds to what is live, less those it frees as the last reader. */
int64_t net_elements(const ir_graph* g, const order_state& o, const ir_node* n) {
    int64_t net = 0;
    for (int32_t k = 0; k < n->output_count; ++k)
        net += ir_tensor_element_count(g->tensors[n->outputs[k]]);
    for (int32_t k = 0; k < n->input_count; ++k) {
        const int32_t t = n->inputs[k];
        if (o.freeable[t] && o.readers[t] == 1 && o.stamp[t] != o.generation)
            net -= ir_tensor_element_count(g->tensors[t]);
        o.stamp[t] = o.generation;
    }
    return net;
}

/* The only node here that has not read tensor t yet (t has one left), or -1. */
int32_t last_reader(const cpu_subgraph_state* st, const order_state& o, const ir_tensor* t) {
    for (int32_t c = 0; c < t->consumer_count; ++c) {
        const int32_t p = st->step_of_node[t->consumers[c]];
        if (p >= 0 && !o.done[p]) return p;
    }
    return -1;
}

/* Node q's inputs are all ready: its net, then a place in the heap. */
void ready(const ir_graph* g, const ir_subgraph* sg, order_state* o, step_heap* h, int32_t q) {
    ++o->generation;
    o->net[q] = net_elements(g, *o, g->nodes[sg->nodes[q]]);
    heap_push(h, o->net[q], q);
}

/* Node p has run: its readers may become ready, and the last reader of each of its
 * inputs frees that input when it runs (its net falls by it, in O(1): a node of many
 * inputs is not counted again each time). */
void after_step(const ir_graph* g, const ir_subgraph* sg, const cpu_subgraph_state* st,
                order_state* o, step_heap* h, int32_t p) {
    const ir_node* n = g->nodes[sg->nodes[p]];
    o->done[p] = 1;
    const uint32_t visit = static_cast<uint32_t>(p) + 1;
    for (int32_t k = 0; k < n->input_count; ++k) {
        const ir_tensor* t = g->tensors[n->inputs[k]];
        if (o->seen[t->index] == visit) continue;
        o->seen[t->index] = visit;
        if (--o->readers[t->index] != 1 || !o->freeable[t->index]) continue;
        const int32_t q = last_reader(st, *o, t);   // once per tensor: its count only falls
        if (q < 0 || o->waiting[q] != 0) continue;  // not ready: counted when it is
        o->net[q] -= ir_tensor_element_count(t);
        heap_push(h, o->net[q], q);
    }
    for (int32_t k = 0; k < n->output_count; ++k) {
        const ir_tensor* t = g->tensors[n->outputs[k]];
        for (int32_t c = 0; c < t->consumer_count; ++c) {
            const int32_t q = st->step_of_node[t->consumers[c]];
            if (q >= 0 && --o->waiting[q] == 0) ready(g, sg, o, h, q);
        }
    }
}

/* The steps in an order that keeps fewer activations alive at once: of the nodes whose
 * inputs are ready, the one that adds the fewest elements to what is live (its outputs
 * less the inputs it reads last) runs first, ties in file order. A residual network's
 * projection shortcut then runs before the main branch, which can then write over the
 * block's input (28% of cifar_resnet20's arena on Cortex-M). Any topological order
 * computes the same bytes; O((N + E) log N). */
int order_for_memory(const ir_graph* g, const ir_subgraph* sg, const cpu_subgraph_state* st,
                     int32_t* order) {
    const size_t n = static_cast<size_t>(sg->node_count), nt = static_cast<size_t>(g->tensor_count);
    order_state o;
    o.generation = 1;
    o.waiting = static_cast<int32_t*>(cvml_scratch_calloc(n + 1, sizeof(int32_t)));
    o.readers = static_cast<int32_t*>(cvml_scratch_calloc(nt + 1, sizeof(int32_t)));
    o.stamp = static_cast<uint32_t*>(cvml_scratch_calloc(nt + 1, sizeof(uint32_t)));
    o.seen = static_cast<uint32_t*>(cvml_scratch_calloc(nt + 1, sizeof(uint32_t)));
    o.freeable = static_cast<uint8_t*>(cvml_scratch_calloc(nt + 1, 1));
    o.done = static_cast<uint8_t*>(cvml_scratch_calloc(n + 1, 1));
    o.net = static_cast<int64_t*>(cvml_scratch_alloc(sizeof(int64_t) * (n + 1)));
    step_heap h = {static_cast<int64_t*>(cvml_scratch_alloc(sizeof(int64_t) * (n + nt + 1))),
                   static_cast<int32_t*>(cvml_scratch_alloc(sizeof(int32_t) * (n + nt + 1))), 0};
    int rc = CVML_OK;
    if (!o.waiting || !o.readers || !o.stamp || !o.seen || !o.freeable || !o.done || !o.net ||
        !h.key || !h.pos)
        rc = cvml_fail_out_of_memory();
    // Graph outputs never die here (marked first: a graph may have many).
    for (int32_t i = 0; i < g->output_count && !rc; ++i) o.freeable[g->outputs[i]] = 2;
    for (int32_t t = 0; t < g->tensor_count && !rc; ++t) {
        const ir_tensor* x = g->tensors[t];
        bool here = x->kind == TENSOR_VAR && x->producer >= 0 &&
                    st->step_of_node[x->producer] >= 0 && o.freeable[t] != 2;
        for (int32_t c = 0; c < x->consumer_count; ++c) {
            const int32_t q = st->step_of_node[x->consumers[c]];
            here = here && q >= 0;
            if (q >= 0 && (c == 0 || x->consumers[c - 1] != x->consumers[c])) ++o.readers[t];
            if (q >= 0 && x->producer >= 0 && st->step_of_node[x->producer] >= 0) ++o.waiting[q];
        }
        o.freeable[t] = here;
    }
    for (int32_t p = 0; p < sg->node_count && !rc; ++p)
        if (o.waiting[p] == 0) ready(g, sg, &o, &h, p);
    int32_t count = 0;
    while (!rc && h.size > 0) {
        const int32_t p = heap_pop(&h);
        if (o.done[p]) continue;
        order[count++] = p;
        after_step(g, sg, st, &o, &h, p);
    }
    if (!rc && count != sg->node_count)
        rc = cvml_fail(CVML_ERR_LOGIC, "CPU subgraph is not in topological order (a bug)");
    cvml_scratch_free(h.pos);
    cvml_scratch_free(h.key);
    cvml_scratch_free(o.net);
    cvml_scratch_free(o.done);
    cvml_scratch_free(o.freeable);
    cvml_scratch_free(o.seen);
    cvml_scratch_free(o.stamp);
    cvml_scratch_free(o.readers);
    cvml_scratch_free(o.waiting);
    return rc;
}

/* Puts the subgraph's nodes in the order order_for_memory chose, before their kernels
 * prepare (no step exists yet). */
int reorder_nodes(const ir_graph* g, ir_subgraph* sg, cpu_subgraph_state* st) {
    const size_t n = static_cast<size_t>(sg->node_count);
    int32_t* order = static_cast<int32_t*>(cvml_scratch_alloc(sizeof(int32_t) * (n + 1)));
    if (!order) return cvml_fail_out_of_memory();
    int rc = order_for_memory(g, sg, st, order);
    if (!rc) {
        for (size_t i = 0; i < n; ++i) order[i] = sg->nodes[order[i]];
        memcpy(sg->nodes, order, sizeof(int32_t) * n);
        for (int32_t i = 0; i < sg->node_count; ++i) st->step_of_node[sg->nodes[i]] = i;
    }
    cvml_scratch_free(order);
    return rc;
}

/* Fusion, views, storage and the plan, in the state's scratch form. */
int prepare_state(ir_graph* g, ir_subgraph* sg, cpu_subgraph_state* st, size_t* scratch) {
    // Kernels prepare first so that their scratch joins the arena plan; constants'
    // data is in place by then, intermediate tensors get their addresses after.
    st->step_of_node = static_cast<int32_t*>(
        cvml_scratch_alloc(sizeof(int32_t) * (static_cast<size_t>(g->node_count) + 1)));
    st->alias = static_cast<int32_t*>(
        cvml_scratch_alloc(sizeof(int32_t) * (static_cast<size_t>(g->tensor_count) + 1)));
    st->wide = static_cast<ir_tensor**>(
        cvml_scratch_calloc(static_cast<size_t>(g->tensor_count) + 1, sizeof(ir_tensor*)));
    st->tensor_count = g->tensor_count;
    if (!st->step_of_node || !st->alias || !st->wide) return cvml_fail_out_of_memory();
    for (int32_t n = 0; n < g->node_count; ++n) st->step_of_node[n] = -1;
    for (int32_t i = 0; i < sg->node_count; ++i) {
        st->step_of_node[sg->nodes[i]] = i;
        g->nodes[sg->nodes[i]]->fused_into = IR_RUNS_ITSELF;
    }
    for (int32_t t = 0; t < g->tensor_count; ++t) {
        st->alias[t] = -1;
        // A previous prerun's choice never carries over.
        if (g->tensors[t]->kind == TENSOR_VAR && g->tensors[t]->producer >= 0 &&
            st->step_of_node[g->tensors[t]->producer] >= 0) {
            g->tensors[t]->storage = STORAGE_INT32;
            g->tensors[t]->data = nullptr;
        }
    }
    int rc = st->rt.fusion ? reorder_nodes(g, sg, st) : CVML_OK;
    if (!rc) rc = prepare_nodes(g, sg, st, scratch);
    if (!rc && st->rt.fusion) rc = fuse_tails(g, sg, st);
    if (!rc && st->rt.fusion) {
        make_views(g, sg, st);
        // The bounds are taken last and given back first, so that the plan's scratch
        // (in a microcontroller's arena) does not have to go round them.
        st->bound = static_cast<int64_t*>(
            cvml_scratch_alloc(sizeof(int64_t) * (static_cast<size_t>(g->tensor_count) + 1)));
        if (!st->bound) rc = cvml_fail_out_of_memory();
    }
    if (!rc && st->rt.fusion) {
        compute_bounds(g, sg, st);
        choose_storage(g, sg, st);
        cvml_scratch_free(st->bound);
        st->bound = nullptr;
        rc = share_buffers(g, sg, st, scratch);
    }
    if (!rc) rc = choose_input_storage(g, st);
    for (int32_t i = 0; i < st->node_count && !rc; ++i) {
        cpu_node_exec* ne = &st->nodes[i];
        if (!ne->skip && ne->kernel->fused) rc = ne->kernel->fused(&ne->ctx);
    }
    if (!rc) rc = plan_arena(g, sg, st, scratch);
    return rc;
}

/* With the caller's arena, prerun's transient memory (the steps before packing, the
 * tables, the plan's) is taken from the part of the arena this subgraph's plan is about
 * to occupy, so that the heap holds only what a run needs (no peak, no holes). */
bool lend_arena_as_scratch(const ir_graph* g) {
    if (!g->arena || cvml_scratch_active() || g->arena_used >= g->arena_size) return false;
    cvml_scratch_begin(g->arena + g->arena_used, g->arena_size - g->arena_used);
    return true;
}

int cpu_prerun(cvml_device*, ir_graph* g, ir_subgraph* sg, const device_run_options* opt) {
    cpu_subgraph_state* st =
        static_cast<cpu_subgraph_state*>(cvml_mem_calloc(1, sizeof(cpu_subgraph_state)));
    if (!st) return cvml_fail_out_of_memory();
    st->rt.pool = thread_pool_create(opt && opt->threads > 0 ? opt->threads : 1);
    st->rt.simd_level = cpu_simd_level();
    st->rt.fusion = CVML_BARE_METAL || !getenv("CVML_NO_FUSION");
    if (!st->rt.pool) {
        cvml_mem_free(st);
        return cvml_fail(CVML_ERR_RUNTIME, "cannot start %" PRId32 " CPU threads", opt->threads);
    }
    const bool lent = lend_arena_as_scratch(g);
    st->nodes = static_cast<cpu_node_exec*>(
        cvml_scratch_calloc(static_cast<size_t>(sg->node_count) + 1, sizeof(cpu_node_exec)));
    size_t* scratch = static_cast<size_t*>(
        cvml_scratch_calloc(static_cast<size_t>(sg->node_count) + 1, sizeof(size_t)));
    int rc = CVML_OK;
    if (!st->nodes || !scratch) rc = cvml_fail_out_of_memory();
    if (!rc) {
        st->node_count = sg->node_count;
        rc = prepare_state(g, sg, st, scratch);
    }
    cvml_scratch_free(scratch);
    if (!rc) rc = pack_state(st);
    if (rc) release_state(st);
    if (lent && !cvml_scratch_end() && !rc) {
        release_state(st);
        rc = cvml_fail(CVML_ERR_LOGIC, "CPU prerun kept scratch memory (a bug)");
    }
    if (rc) return rc;
    // The scratch is given back: the plan's bytes start zeroed.
    if (st->arena) memset(st->arena, 0, st->arena_size + kArenaAlign);
    sg->device_state = st;
    return CVML_OK;
}

int cpu_run(cvml_device*, ir_graph* g, ir_subgraph* sg) {
    cpu_subgraph_state* st = static_cast<cpu_subgraph_state*>(sg->device_state);
    if (!st)
        return cvml_fail(CVML_ERR_RUNTIME, "CPU subgraph %" PRId32 " was not prepared", sg->index);
    // One wake-up of the workers per run, not one per parallel region.
    thread_pool_begin(st->rt.pool);
    int rc = CVML_OK;
    for (int32_t i = 0; i < st->node_count; ++i) {
        cpu_node_exec* ne = &st->nodes[i];
        if (ne->skip) continue;
        uint64_t start = g->profiling ? cvml_monotonic_ns() : 0;
        rc = ne->kernel->run(&ne->ctx);
        if (rc) {
            rc = graph_node_error(ne->ctx.node, rc);
            break;
        }
        if (g->profiling) g->node_time_ns[ne->ctx.node->index] = cvml_monotonic_ns() - start;
    }
    thread_pool_end(st->rt.pool);
    return rc;
}

void cpu_postrun(cvml_device*, ir_graph*, ir_subgraph* sg) {
    release_state(static_cast<cpu_subgraph_state*>(sg->device_state));
    sg->device_state = nullptr;
}

// Host memory: no memory ops, so the scheduler hands it host tensors directly.
cvml_device cpu_device = {
    .struct_size = sizeof(cvml_device),
    .abi_version = CVML_PLUGIN_ABI_VERSION,
    .name = "cpu",
    .version = CVML_VERSION_STRING,
    .supports = cpu_supports,
    .prerun = cpu_prerun,
    .run = cpu_run,
    .postrun = cpu_postrun,
    .mem_alloc = nullptr,
    .mem_free = nullptr,
    .copy_to_device = nullptr,
    .copy_to_host = nullptr,
    .release = nullptr,
    .priv = nullptr,
    .island_work_per_element = 0,
};

}  // namespace

size_t cpu_subgraph_arena_bytes(const ir_subgraph* sg) {
    if (!sg || sg->device != device_registry_index(&cpu_device) || !sg->device_state) return 0;
    return static_cast<const cpu_subgraph_state*>(sg->device_state)->arena_size;
}

size_t cpu_subgraph_arena_need(const ir_subgraph* sg) {
    return arena_need(cpu_subgraph_arena_bytes(sg));
}

int register_device_cpu(void) {
    return device_registry_add(&cpu_device);
}
int unregister_device_cpu(void) {
    return device_registry_remove(&cpu_device);
}
