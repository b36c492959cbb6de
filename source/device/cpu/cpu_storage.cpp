/* Narrow storage: tensors proven to fit int8 (int16) are stored so where every kernel
 * touching them reads and writes narrow storage (CPU_CAP_*). */
#include <stdint.h>

#include "cvml.h"
#include "device/cpu/cpu_state.h"
#include "operator/op_def.h"
#include "utility/error.h"

namespace cpu_dev {
namespace {

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

}  // namespace

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

}  // namespace cpu_dev
