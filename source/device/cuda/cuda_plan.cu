/* A subgraph's nodes read through the accessors, their tails fused and their tensors
 * placed in one arena, by the library's planners (the CPU device's: cvml_host_api 2.3). */
#include <stdlib.h>
#include <string.h>

#include "cuda_device.h"

namespace cuda_dev {
namespace {

constexpr size_t kAlign = 256;

/* What kernels read of a tensor, from the accessors. */
void read_tensor(const cvml_ir_tensor* t, cuda_tensor* out) {
    memset(out, 0, sizeof *out);
    out->index = cuda_ir->tensor_index(t);
    out->ndim = cuda_ir->tensor_ndim(t);
    if (out->ndim > CVML_MAX_DIMS) out->ndim = CVML_MAX_DIMS;
    for (int32_t d = 0; d < out->ndim; ++d) out->dims[d] = cuda_ir->tensor_dim(t, d);
    out->precision = cuda_ir->tensor_precision(t);
    out->is_const = cuda_ir->tensor_is_const(t) ? 1 : 0;
}

/* write_step's mark for a tensor inside a fused tail (no memory, never written). */
constexpr int32_t kNeverWritten = -2;

}  // namespace

const cuda_kernel* find_kernel(const char* op) {
    for (int32_t i = 0; op && cuda_kernels[i]; ++i)
        if (strcmp(cuda_kernels[i]->op, op) == 0) return cuda_kernels[i];
    return nullptr;
}

/* The node's inputs then outputs as cuda_tensors, and its context without device data.
 * Returns CVML_OK or a runtime error (out of memory). */
int read_node(const cvml_ir_graph* g, const cvml_ir_node* node, node_exec* ne) {
    const int32_t ins = cuda_ir->node_input_count(node);
    const int32_t outs = cuda_ir->node_output_count(node);
    const size_t total = static_cast<size_t>(ins + outs) + 1;
    ne->tensors = static_cast<cuda_tensor*>(calloc(total, sizeof(cuda_tensor)));
    ne->tensor_ptrs = static_cast<const cuda_tensor**>(calloc(total, sizeof(cuda_tensor*)));
    ne->ptrs = static_cast<int32_t**>(calloc(total, sizeof(int32_t*)));
    if (!ne->tensors || !ne->tensor_ptrs || !ne->ptrs)
        return cuda_fail(CVML_ERR_RUNTIME, "out of memory");
    for (int32_t k = 0; k < ins + outs; ++k) {
        const cvml_ir_tensor* t =
            k < ins ? cuda_ir->node_input(g, node, k) : cuda_ir->node_output(g, node, k - ins);
        if (!t) return cuda_fail(CVML_ERR_RUNTIME, "a node lacks tensor %d", k);
        read_tensor(t, &ne->tensors[k]);
        ne->tensor_ptrs[k] = &ne->tensors[k];
    }
    cuda_node_ctx* c = &ne->ctx;
    c->graph = g;
    c->node = node;
    c->input_count = ins;
    c->inputs = ne->tensor_ptrs;
    c->in = ne->ptrs;
    c->output_count = outs;
    c->outputs = ne->tensor_ptrs + ins;
    c->out = ne->ptrs + ins;
    return CVML_OK;
}

/* Device addresses of every tensor the subgraph touches: boundary tensors in the
 * scheduler's buffers, the others in the arena, placed by their lifetime in the
 * subgraph (from the step that writes them to the last step that reads them; tensors
 * read elsewhere are boundary outputs). */
int plan_memory(const cvml_ir_graph* g, const cvml_ir_subgraph* sg, sg_state* st,
                const int32_t* write_step) {
    // Boundary outputs are in the scheduler's buffers (bind_boundary): not placed here.
    const int32_t steps = cuda_ir->subgraph_node_count(sg);
    const int32_t tensors = cuda_ir->graph_tensor_count(g);
    int32_t* last_read = static_cast<int32_t*>(malloc(sizeof(int32_t) * (tensors + 1)));
    int32_t count = 0;
    for (int32_t i = 0; i < steps; ++i)
        count += cuda_ir->node_output_count(cuda_ir->subgraph_node(g, sg, i));
    cvml_plan_buffer* s = static_cast<cvml_plan_buffer*>(
        calloc(static_cast<size_t>(count) + 1, sizeof(cvml_plan_buffer)));
    int32_t* tensor_of =
        static_cast<int32_t*>(malloc(sizeof(int32_t) * (static_cast<size_t>(count) + 1)));
    if (!s || !last_read || !tensor_of) {
        free(s);
        free(last_read);
        free(tensor_of);
        return cuda_fail(CVML_ERR_RUNTIME, "out of memory");
    }
    for (int32_t t = 0; t < tensors; ++t) last_read[t] = -1;
    for (int32_t i = 0; i < steps; ++i) {
        const cvml_ir_node* node = cuda_ir->subgraph_node(g, sg, i);
        for (int32_t k = 0; k < cuda_ir->node_input_count(node); ++k)
            last_read[cuda_ir->tensor_index(cuda_ir->node_input(g, node, k))] = i;
    }
    int32_t n = 0;
    for (int32_t i = 0; i < steps; ++i) {
        const cvml_ir_node* node = cuda_ir->subgraph_node(g, sg, i);
        for (int32_t k = 0; k < cuda_ir->node_output_count(node); ++k) {
            const cvml_ir_tensor* t = cuda_ir->node_output(g, node, k);
            const int32_t index = cuda_ir->tensor_index(t);
            if (st->tensor_ptr[index]) continue;
            // A fused tail's output is written by its head's step; its intermediates never.
            const int32_t first = write_step[index];
            if (first == kNeverWritten) continue;
            const size_t bytes =
                static_cast<size_t>(cuda_ir->tensor_element_count(t)) * sizeof(int32_t);
            s[n] = {bytes, first, last_read[index], 0};
            tensor_of[n++] = index;
        }
    }
    free(last_read);
    // The core's planner (the CPU's): bounded time on any graph, hostile ones included.
    size_t total = 0;
    int rc = g_host->plan_arena(s, n, kAlign, &total);
    if (!rc && total > 0) {
        void* p = nullptr;
        rc = cuda_check(cudaMalloc(&p, total), "cudaMalloc (arena)");
        st->arena = static_cast<uint8_t*>(p);
        if (!rc) st->arena_bytes = total;
        if (!rc) note_arena(total, true);
    }
    for (int32_t i = 0; i < n && !rc; ++i)
        st->tensor_ptr[tensor_of[i]] = reinterpret_cast<int32_t*>(st->arena + s[i].offset);
    free(s);
    free(tensor_of);
    return rc;
}

/* Each node's tensors and context, then its kernel's prerun (which needs shapes and
 * parameters only: device addresses are bound later, by bind_nodes). */
int prepare_nodes(const cvml_ir_graph* g, const cvml_ir_subgraph* sg, sg_state* st) {
    for (int32_t i = 0; i < st->node_count; ++i) {
        const cvml_ir_node* node = cuda_ir->subgraph_node(g, sg, i);
        node_exec* ne = &st->nodes[i];
        const char* op = cuda_ir->node_op(node);
        ne->kernel = find_kernel(op);
        if (!ne->kernel)
            return cuda_fail(CVML_ERR_RUNTIME, "no CUDA kernel for operator %s", op ? op : "null");
        int rc = read_node(g, node, ne);
        if (rc) return rc;
        ne->ctx.stream = st->stream;
        ne->out_tensor = ne->ctx.output_count > 0 ? ne->tensors[ne->ctx.input_count].index : -1;
        if (ne->kernel->prerun) {
            rc = ne->kernel->prerun(&ne->ctx);
            if (rc) return rc;
        }
    }
    return CVML_OK;
}

/* What the CUDA kernels absorb: a tail of at most CUDA_MAX_TAIL steps, on a kernel that
 * said at prerun that it applies one (tail_capacity). */
int32_t tail_capacity(void* user, int32_t step) {
    const cuda_node_ctx& c = static_cast<const sg_state*>(user)->nodes[step].ctx;
    return c.tail_capacity < CUDA_MAX_TAIL ? c.tail_capacity : CUDA_MAX_TAIL;
}

/* Fusion by the core's walk (the CPU's, cvml_host_api::plan_fusion): each head's tail
 * goes into its context; the chain's intermediates get no memory and its last output is
 * written at the head's step. Fills write_step for plan_memory. */
int plan_fusion(cvml_ir_graph* g, const cvml_ir_subgraph* sg, sg_state* st, int32_t* write_step) {
    const int32_t tensors = cuda_ir->graph_tensor_count(g);
    for (int32_t t = 0; t < tensors; ++t) write_step[t] = -1;
    for (int32_t i = 0; i < st->node_count; ++i) {
        const node_exec* ne = &st->nodes[i];
        for (int32_t k = 0; k < ne->ctx.output_count; ++k)
            write_step[ne->tensors[ne->ctx.input_count + k].index] = i;
    }
    cvml_fused_step* fused = static_cast<cvml_fused_step*>(
        calloc(static_cast<size_t>(st->node_count) + 1, sizeof(cvml_fused_step)));
    if (!fused) return cuda_fail(CVML_ERR_RUNTIME, "out of memory");
    const cvml_fusion_rules rules = {
        sizeof(cvml_fusion_rules), CVML_PLUGIN_ABI_VERSION, tail_capacity, st, 0, 0};
    const int rc = g_host->plan_fusion(g, sg, &rules, fused);
    for (int32_t i = 0; i < st->node_count && !rc; ++i) {
        if (fused[i].head < 0) continue;
        node_exec* head = &st->nodes[fused[i].head];
        const int32_t c = head->ctx.tail.count++;
        head->ctx.tail.step[c] = fused[i].step;
        head->tail_operand[c] = fused[i].operand;
        st->nodes[i].fused = 1;
        write_step[head->out_tensor] = kNeverWritten;
        head->out_tensor = st->nodes[i].out_tensor;
        write_step[head->out_tensor] = fused[i].head;
    }
    free(fused);
    return rc;
}

/* Device addresses into every node's context: a tail's head writes its last output;
 * inputs the kernel said it never reads (unread_inputs) get none. */
void bind_nodes(sg_state* st) {
    for (int32_t i = 0; i < st->node_count; ++i) {
        node_exec* ne = &st->nodes[i];
        const int32_t ins = ne->ctx.input_count, outs = ne->ctx.output_count;
        for (int32_t k = 0; k < ins + outs; ++k) ne->ptrs[k] = st->tensor_ptr[ne->tensors[k].index];
        if (outs == 1) ne->ptrs[ins] = st->tensor_ptr[ne->out_tensor];
        // An input its kernel never reads at run gets no address: a read would fault.
        for (int32_t k = 0; k < ins && k < 32; ++k)
            if ((ne->ctx.unread_inputs >> k) & 1u) ne->ptrs[k] = nullptr;
        for (int32_t c = 0; c < ne->ctx.tail.count; ++c)
            ne->ctx.tail.operand[c] =
                ne->tail_operand[c] >= 0 ? st->tensor_ptr[ne->tail_operand[c]] : nullptr;
    }
}

/* Links each convolution that reads its input packed (packed_input) to the node of this
 * subgraph that writes that tensor, when its kernel can store it packed (packs_output):
 * the first reader's buffer becomes the writer's packed_out, and every reader reads it
 * (input_prepacked) instead of packing the tensor itself. */
int link_packed_inputs(sg_state* st) {
    // The step whose kernel writes each tensor and can store it packed: found once, so
    // that a graph of many convolutions links in O(nodes + tensors).
    const int32_t tensors = cuda_ir->graph_tensor_count(st->graph);
    int32_t* writer = static_cast<int32_t*>(malloc(sizeof(int32_t) * (tensors + 1)));
    if (!writer) return cuda_fail(CVML_ERR_RUNTIME, "out of memory");
    for (int32_t t = 0; t < tensors; ++t) writer[t] = -1;
    for (int32_t h = 0; h < st->node_count; ++h) {
        const node_exec* w = &st->nodes[h];
        // A GEMM without a tail may split K, and then no block sees its whole sums to
        // pack (a verified graph never feeds a convolution that raw output anyway: its
        // precision is past 8 bits).
        if (w->fused || !w->ctx.packs_output || w->ctx.output_count != 1 ||
            w->ctx.tail.count == 0 || w->out_tensor < 0 || writer[w->out_tensor] >= 0)
            continue;
        writer[w->out_tensor] = h;
    }
    for (int32_t i = 0; i < st->node_count; ++i) {
        cuda_node_ctx* reader = &st->nodes[i].ctx;
        if (st->nodes[i].fused || !reader->packed_input || reader->input_count < 1) continue;
        const int32_t h = writer[st->nodes[i].tensors[0].index];
        if (h < 0 || h >= i) continue;
        cuda_node_ctx* w = &st->nodes[h].ctx;
        if (!w->packed_out) w->packed_out = reader->packed_input;
        reader->packed_input = w->packed_out;
        reader->input_prepacked = 1;
    }
    free(writer);
    return CVML_OK;
}

}  // namespace cuda_dev
