#include "module/plan/order.h"

#include <string.h>

#include "cvml.h"
#include "utility/error.h"
#include "utility/memory.h"

namespace {

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
int32_t last_reader(const int32_t* step_of_node, const order_state& o, const ir_tensor* t) {
    for (int32_t c = 0; c < t->consumer_count; ++c) {
        const int32_t p = step_of_node[t->consumers[c]];
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
void after_step(const ir_graph* g, const ir_subgraph* sg, const int32_t* step_of_node,
                order_state* o, step_heap* h, int32_t p) {
    const ir_node* n = g->nodes[sg->nodes[p]];
    o->done[p] = 1;
    const uint32_t visit = static_cast<uint32_t>(p) + 1;
    for (int32_t k = 0; k < n->input_count; ++k) {
        const ir_tensor* t = g->tensors[n->inputs[k]];
        if (o->seen[t->index] == visit) continue;
        o->seen[t->index] = visit;
        if (--o->readers[t->index] != 1 || !o->freeable[t->index]) continue;
        const int32_t q =
            last_reader(step_of_node, *o, t);       // once per tensor: its count only falls
        if (q < 0 || o->waiting[q] != 0) continue;  // not ready: counted when it is
        o->net[q] -= ir_tensor_element_count(t);
        heap_push(h, o->net[q], q);
    }
    for (int32_t k = 0; k < n->output_count; ++k) {
        const ir_tensor* t = g->tensors[n->outputs[k]];
        for (int32_t c = 0; c < t->consumer_count; ++c) {
            const int32_t q = step_of_node[t->consumers[c]];
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
int order_for_memory(const ir_graph* g, const ir_subgraph* sg, const int32_t* step_of_node,
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
        bool here = x->kind == TENSOR_VAR && x->producer >= 0 && step_of_node[x->producer] >= 0 &&
                    o.freeable[t] != 2;
        for (int32_t c = 0; c < x->consumer_count; ++c) {
            const int32_t q = step_of_node[x->consumers[c]];
            here = here && q >= 0;
            if (q >= 0 && (c == 0 || x->consumers[c - 1] != x->consumers[c])) ++o.readers[t];
            if (q >= 0 && x->producer >= 0 && step_of_node[x->producer] >= 0) ++o.waiting[q];
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
        after_step(g, sg, step_of_node, &o, &h, p);
    }
    if (!rc && count != sg->node_count)
        rc = cvml_fail(CVML_ERR_LOGIC, "a subgraph is not in topological order (a bug)");
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

}  // namespace

int32_t* plan_step_of_node(const ir_graph* g, const ir_subgraph* sg) {
    int32_t* step = static_cast<int32_t*>(
        cvml_scratch_alloc(sizeof(int32_t) * (static_cast<size_t>(g->node_count) + 1)));
    if (!step) return nullptr;
    for (int32_t n = 0; n < g->node_count; ++n) step[n] = -1;
    for (int32_t i = 0; i < sg->node_count; ++i) step[sg->nodes[i]] = i;
    return step;
}

int plan_order(ir_graph* g, ir_subgraph* sg, int32_t* step_of_node) {
    const size_t n = static_cast<size_t>(sg->node_count);
    int32_t* order = static_cast<int32_t*>(cvml_scratch_alloc(sizeof(int32_t) * (n + 1)));
    int rc = order ? order_for_memory(g, sg, step_of_node, order) : cvml_fail_out_of_memory();
    if (!rc) {
        for (size_t i = 0; i < n; ++i) order[i] = sg->nodes[order[i]];
        memcpy(sg->nodes, order, sizeof(int32_t) * n);
        for (int32_t i = 0; i < sg->node_count; ++i) step_of_node[sg->nodes[i]] = i;
    }
    cvml_scratch_free(order);
    return rc;
}
