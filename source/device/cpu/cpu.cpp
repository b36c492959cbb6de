/* The CPU device: runs a subgraph's nodes in order with the registered kernels, its
 * intermediate tensors placed in one arena by the core's lifetime planner at prerun.
 * Before planning, element-wise tails are fused into the kernels that apply them (the
 * core's fusion walk), copies become views, and tensors proven to fit int8 are stored
 * as int8 where every kernel touching them reads and writes narrow storage (CPU_CAP_*).
 * CVML_NO_FUSION=1 turns the three off (tests compare both). This file holds the device
 * and the preparation of its kernels, the state's lifecycle (scratch form, packed form,
 * release); cpu_state.h names the files of the other steps. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "device/cpu/cpu_kernel.h"
#include "device/cpu/cpu_runtime.h"
#include "device/cpu/cpu_state.h"
#include "device/cpu/simd/epilogue.h"
#include "device/cpu/simd/simd.h"
#include "device/cpu/simd/simd_config.h"
#include "graph/verify.h"
#include "module/device.h"
#include "module/plan/fusion.h"
#include "module/plan/order.h"
#include "operator/op_def.h"
#include "utility/error.h"
#include "utility/platform.h"
#include "utility/memory.h"

namespace {

using namespace cpu_dev;

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

int cpu_supports(cvml_device*, const ir_graph*, const ir_node* node) {
    return node->op && !node->op->alias && cpu_kernel_find(node->op->name) != nullptr;
}

void free_stand_in(ir_tensor* w) {
    if (!w) return;
    cvml_mem_free(w->data);
    cvml_mem_free(w);
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

/* ---- fused tails ---------------------------------------------------------------------- */

/* The longest tail fused at the vector levels, in chain slots and steps: their tile
 * and row code is tuned for chains this long. The scalar level takes all the chain
 * has room for, so that MRT's requantize-add-requantize runs reach an int8 tensor
 * instead of leaving an int32 one between (a quarter of the arena at that level). */
constexpr int32_t kVectorTailSlots = 6;
constexpr int32_t kVectorTailSteps = 6;

/* The rule's links become the head's tail; the chain's nodes no longer run, and the head
 * writes the chain's last output. */
int take_tail(cpu_subgraph_state* st, const ir_graph* g, int32_t h, const fusion_link* links,
              int32_t count) {
    cpu_node_exec* head = &st->nodes[h];
    head->tail.steps = static_cast<cpu_tail_step*>(
        cvml_scratch_alloc(sizeof(cpu_tail_step) * static_cast<size_t>(count)));
    if (!head->tail.steps) return cvml_fail_out_of_memory();
    for (int32_t k = 0; k < count; ++k) {
        head->tail.steps[k].step = links[k].op;
        head->tail.steps[k].operand = links[k].operand;
        st->nodes[links[k].step].skip = 1;
    }
    const ir_node* last = st->nodes[links[count - 1].step].ctx.node;
    head->tensors[head->ctx.input_count] = g->tensors[last->outputs[0]];
    head->tail.count = count;
    head->ctx.tail = &head->tail;
    return CVML_OK;
}

/* The walk with the CPU's rules: a step whose kernel applies tails (CPU_CAP_TAIL) takes
 * the chain of element-wise operators after it (module/plan/fusion.h), as long as the
 * level's bounds allow; a right shift takes two of the epilogue's chain slots once
 * lowered (epilogue_add_step: a round and a clip). */
int fuse_tails(ir_graph* g, ir_subgraph* sg, cpu_subgraph_state* st) {
    static const cvml_fusion_rules kScalar = {
        sizeof(cvml_fusion_rules), CVML_PLUGIN_ABI_VERSION, nullptr, nullptr, EP_MAX_STEPS - 2, 2};
    static const cvml_fusion_rules kVector = {
        sizeof(cvml_fusion_rules), CVML_PLUGIN_ABI_VERSION, nullptr, nullptr, kVectorTailSlots, 2};
    static_assert(CPU_TAIL_MAX <= FUSION_MAX_TAIL, "the walk's links hold a CPU tail");
    const bool scalar = !st->rt.simd || !st->rt.simd->vector_tails;
    const int32_t capacity = scalar ? CPU_TAIL_MAX : kVectorTailSteps;
    fusion_link links[FUSION_MAX_TAIL];
    for (int32_t h = 0; h < sg->node_count; ++h) {
        if (!(st->nodes[h].ctx.caps & CPU_CAP_TAIL)) continue;
        const int32_t count =
            fusion_tail(g, sg, st->step_of_node, scalar ? &kScalar : &kVector, h, capacity, links);
        const int rc = count ? take_tail(st, g, h, links, count) : CVML_OK;
        if (rc) return rc;
    }
    return CVML_OK;
}

/* ---- the state's packed form ------------------------------------------------------------ */

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
    int rc = st->rt.fusion ? plan_order(g, sg, st->step_of_node) : CVML_OK;
    if (!rc) rc = prepare_nodes(g, sg, st, scratch);
    if (!rc && st->rt.fusion) rc = fuse_tails(g, sg, st);
    if (!rc) rc = lay_out_tensors(g, sg, st, scratch);
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
    st->rt.simd_level = g->cpu_target_level ? g->cpu_target_level - 1 : cpu_simd_level();
#if CVML_CPU_FAST_PATHS
    st->rt.simd = cpu_simd_config_of(st->rt.simd_level);
#endif
    // A plan made for a target is the one its loader checks against: fusion always on.
    st->rt.fusion = CVML_BARE_METAL || g->cpu_target_level || !getenv("CVML_NO_FUSION");
    st->rt.cortexm =
        static_cast<uint8_t>(g->cpu_target_level ? g->cpu_target_cortexm : cpu_build_cortexm());
    st->rt.portable = g->cpu_target_level == CPU_SIMD_SCALAR + 1 && !g->cpu_target_cortexm;
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

const int cpu_fast_marker = 1;

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
