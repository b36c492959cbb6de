/* The writer of compiled plans (compiled.h): a graph the CPU device prepared for a
 * target, its steps, tensors, tails, parameters, kernel states and constants, laid out
 * as docs/compiled-plan.md describes. Host code: a device only loads. */
#include <inttypes.h>
#include <string.h>

#include "device/cpu/compiled/compiled.h"
#include "device/cpu/cpu_state.h"
#include "device/cpu/simd/simd.h"
#include "module/device.h"
#include "serializer/plan/plan_records.h"
#include "utility/error.h"
#include "utility/memory.h"
#include "utility/platform.h"

namespace {

using namespace cpu_dev;

/* A growing byte buffer of one section. */
struct sink {
    uint8_t* data;
    size_t size, cap;
    bool failed;
};

uint8_t* sink_grow(sink* s, size_t n, size_t align) {
    if (s->failed) return nullptr;
    const size_t at = (s->size + align - 1) / align * align;
    if (at + n > UINT32_MAX) {
        s->failed = true;
        return nullptr;
    }
    if (at + n > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        while (cap < at + n) cap *= 2;
        uint8_t* d = static_cast<uint8_t*>(cvml_mem_realloc(s->data, cap));
        if (!d) {
            s->failed = true;
            return nullptr;
        }
        s->data = d;
        s->cap = cap;
    }
    memset(s->data + s->size, 0, at + n - s->size);
    s->size = at + n;
    return s->data + at;
}

/* Appends n bytes (zero when bytes is NULL) at the next multiple of align; returns
 * their offset in the section. */
uint32_t sink_put(sink* s, const void* bytes, size_t n, size_t align) {
    uint8_t* p = sink_grow(s, n, align);
    if (!p) return 0;
    if (bytes && n) memcpy(p, bytes, n);
    return static_cast<uint32_t>(p - s->data);
}

uint32_t sink_string(sink* s, const char* text) {
    return sink_put(s, text, strlen(text) + 1, 1);
}

struct writer {
    const ir_graph* g;
    const cpu_subgraph_state* st;
    sink sec[PLAN_TAG_COUNT];
    /* Plan tensor index + 1 of each graph tensor (0: not yet), and of its int32
     * stand-in (cpu.cpp, const_input). */
    uint32_t* of_tensor;
    uint32_t* of_stand_in;
    uint32_t tensors;
    uint32_t input_offset; /* where the next graph input goes, after the activations */
    const cpu_kernel** kernels;
    uint32_t kernel_count;
};

int too_big(void) {
    return cvml_fail(CVML_ERR_LOGIC, "compiled plan: a section passes 4 GiB");
}

/* Where t's bytes go: the arena (activations at their planned offsets, inputs after
 * them) or CNST (constants, copied with their slack). */
int place_tensor(writer* w, const ir_tensor* t, uint8_t* rec) {
    const uint64_t bytes = static_cast<uint64_t>(ir_tensor_element_count(t)) * t->storage;
    if (bytes > INT32_MAX)
        return cvml_fail(CVML_ERR_LOGIC, "tensor '%s' has more than 2^31 bytes", t->name);
    plan_put32(rec + TENS_BYTES, static_cast<uint32_t>(bytes));
    if (t->kind == TENSOR_CONST) {
        rec[TENS_WHERE] = PLAN_IN_CNST;
        const uint32_t at = sink_put(&w->sec[PLAN_CNST], t->data, bytes, 64);
        sink_put(&w->sec[PLAN_CNST], nullptr, PLAN_CONST_SLACK, 1);
        plan_put32(rec + TENS_OFFSET, at);
        return CVML_OK;
    }
    rec[TENS_WHERE] = PLAN_IN_ARENA;
    if (t->kind == TENSOR_INPUT) {
        plan_put32(rec + TENS_OFFSET, w->input_offset);
        w->input_offset += static_cast<uint32_t>((bytes + PLAN_CONST_SLACK + 63) / 64 * 64);
        return CVML_OK;
    }
    const uint8_t* at = static_cast<const uint8_t*>(t->data);
    if (!at || !w->st->arena || at < w->st->arena || at + bytes > w->st->arena + w->st->arena_size)
        return cvml_fail(CVML_ERR_LOGIC, "tensor '%s' is not in the CPU device's arena", t->name);
    plan_put32(rec + TENS_OFFSET, static_cast<uint32_t>(at - w->st->arena));
    return CVML_OK;
}

/* The plan index of t (a graph tensor or a stand-in), its record written on first use. */
int tensor_index(writer* w, const ir_tensor* t, uint32_t* index) {
    const bool stand_in = w->g->tensors[t->index] != t;
    uint32_t* slot = stand_in ? &w->of_stand_in[t->index] : &w->of_tensor[t->index];
    if (*slot) {
        *index = *slot - 1;
        return CVML_OK;
    }
    uint8_t* rec = sink_grow(&w->sec[PLAN_TENS], PLAN_TENS_RECORD, 1);
    if (!rec) return too_big();
    rec[TENS_KIND] = t->kind;
    rec[TENS_STORAGE] = t->storage;
    rec[TENS_NDIM] = static_cast<uint8_t>(t->ndim);
    plan_put32(rec + TENS_PRECISION, static_cast<uint32_t>(t->precision));
    for (int32_t d = 0; d < t->ndim; ++d) {
        if (t->dims[d] > INT32_MAX)
            return cvml_fail(CVML_ERR_LOGIC, "tensor '%s' has a dimension past 2^31", t->name);
        plan_put32(rec + TENS_DIMS + 4 * d, static_cast<uint32_t>(t->dims[d]));
    }
    const int rc = place_tensor(w, t, rec);
    if (rc) return rc;
    *slot = ++w->tensors;
    *index = *slot - 1;
    return CVML_OK;
}

int kernel_index(writer* w, const cpu_node_exec* ne, uint32_t* index) {
    for (uint32_t k = 0; k < w->kernel_count; ++k)
        if (w->kernels[k] == ne->kernel) {
            *index = k;
            return CVML_OK;
        }
    const op_def* op = ne->ctx.node->op;
    uint8_t* rec = sink_grow(&w->sec[PLAN_KERN], PLAN_KERN_RECORD, 1);
    if (!rec) return too_big();
    memcpy(rec + KERN_NAME, ne->kernel->op, strlen(ne->kernel->op));
    plan_put32(rec + KERN_PARAM_SIZE, static_cast<uint32_t>(op->param_size));
    plan_put32(rec + KERN_PARAM_PRINT, plan_param_fingerprint(op));
    plan_put32(rec + KERN_STATE_SIZE, ne->kernel->plain_state_size);
    w->kernels[w->kernel_count] = ne->kernel;
    *index = w->kernel_count++;
    return CVML_OK;
}

/* "step S (node 'N', op)" before a refusal. */
int step_error(const cpu_node_exec* ne, int32_t s, int rc) {
    return cvml_fail_context(rc, "step %" PRId32 " (node '%s', %s): ", s, ne->ctx.node->name,
                             ne->kernel->op);
}

int put_state(writer* w, const cpu_node_exec* ne, uint8_t* rec) {
    const void* state = ne->ctx.state;
    uint32_t kind = PLAN_STATE_NONE;
    if (state == &cpu_fast_marker) kind = PLAN_STATE_MARKER;
    if (state && kind == PLAN_STATE_NONE) {
        if (!ne->kernel->plain_state_size)
            return cvml_fail(CVML_ERR_LOGIC,
                             "its state at level %s holds pointers, which a plan of format %d.%d "
                             "does not store; compile for --target scalar",
                             cpu_simd_name(w->st->rt.simd_level), PLAN_FORMAT_MAJOR,
                             PLAN_FORMAT_MINOR);
        kind = PLAN_STATE_PLAIN;
        plan_put32(rec + STEP_STATE,
                   sink_put(&w->sec[PLAN_STAT], state, ne->kernel->plain_state_size, 64));
    }
    plan_put32(rec + STEP_STATE_KIND, kind);
    return CVML_OK;
}

void put_cvml_step(uint8_t* p, const cvml_step& s) {
    plan_put32(p, static_cast<uint32_t>(s.kind));
    plan_put32(p + 4, static_cast<uint32_t>(s.a));
    plan_put32(p + 8, static_cast<uint32_t>(s.b));
    plan_put32(p + 12, static_cast<uint32_t>(s.operand));
}

int put_tail(writer* w, const cpu_node_exec* ne, uint8_t* rec) {
    plan_put32(rec + STEP_TAIL, static_cast<uint32_t>(w->sec[PLAN_TAIL].size / PLAN_TAIL_RECORD));
    plan_put32(rec + STEP_TAIL_COUNT, static_cast<uint32_t>(ne->tail.count));
    for (int32_t k = 0; k < ne->tail.count; ++k) {
        const cpu_tail_step& ts = ne->tail.steps[k];
        uint32_t operand = PLAN_NONE;
        if (ts.operand) {
            const int rc = tensor_index(w, ts.operand, &operand);
            if (rc) return rc;
        }
        uint8_t* t = sink_grow(&w->sec[PLAN_TAIL], PLAN_TAIL_RECORD, 1);
        if (!t) return too_big();
        put_cvml_step(t + TAIL_STEP, ts.step);
        plan_put32(t + TAIL_OPERAND, operand);
    }
    return CVML_OK;
}

int put_scratch_and_param(writer* w, const cpu_node_exec* ne, uint8_t* rec) {
    const uint8_t* scratch = static_cast<const uint8_t*>(ne->ctx.scratch);
    plan_put32(rec + STEP_SCRATCH,
               scratch ? static_cast<uint32_t>(scratch - w->st->arena) : PLAN_NONE);
    plan_put32(rec + STEP_SCRATCH_SIZE, scratch ? static_cast<uint32_t>(ne->ctx.scratch_size) : 0);
    const size_t param_size = ne->ctx.node->op->param_size;
    plan_put32(rec + STEP_PARAM,
               param_size ? sink_put(&w->sec[PLAN_PARM], ne->ctx.param, param_size, 8) : PLAN_NONE);
    return CVML_OK;
}

int put_step(writer* w, const cpu_node_exec* ne, uint32_t* window) {
    uint8_t* rec = sink_grow(&w->sec[PLAN_STEP], PLAN_STEP_RECORD, 1);
    if (!rec) return too_big();
    uint32_t kernel = 0;
    int rc = kernel_index(w, ne, &kernel);
    const int32_t total = ne->ctx.input_count + ne->ctx.output_count;
    const uint32_t slot_first = static_cast<uint32_t>(w->sec[PLAN_SLOT].size / PLAN_SLOT_RECORD);
    for (int32_t k = 0; k < total && !rc; ++k) {
        uint32_t t = 0;
        rc = tensor_index(w, ne->tensors[k], &t);
        uint8_t* slot = rc ? nullptr : sink_grow(&w->sec[PLAN_SLOT], PLAN_SLOT_RECORD, 1);
        if (!rc && !slot) rc = too_big();
        if (!rc) plan_put32(slot, t);
    }
    if (!rc) rc = put_tail(w, ne, rec);
    if (!rc) rc = put_state(w, ne, rec);
    if (!rc) rc = put_scratch_and_param(w, ne, rec);
    if (rc) return rc;
    plan_put32(rec + STEP_KERNEL, kernel);
    plan_put32(rec + STEP_NODE, static_cast<uint32_t>(ne->ctx.node->index));
    plan_put32(rec + STEP_INPUTS, static_cast<uint32_t>(ne->ctx.input_count));
    plan_put32(rec + STEP_OUTPUTS, static_cast<uint32_t>(ne->ctx.output_count));
    plan_put32(rec + STEP_SLOT, slot_first);
    plan_put32(rec + STEP_CAPS, ne->ctx.caps);
    const uint32_t touched = static_cast<uint32_t>(total + ne->tail.count);
    if (touched > *window) *window = touched;
    return CVML_OK;
}

/* The most bytes one step reads and writes in the arena at once: no plan that keeps a
 * step's inputs apart from its outputs can have a smaller arena. */
uint32_t largest_step_io(const writer* w) {
    uint64_t most = 0;
    for (int32_t i = 0; i < w->st->node_count; ++i) {
        const cpu_node_exec* ne = &w->st->nodes[i];
        uint64_t sum = 0;
        for (int32_t k = 0; k < ne->ctx.input_count + ne->ctx.output_count; ++k) {
            const ir_tensor* t = ne->tensors[k];
            if (t->kind == TENSOR_CONST) continue;
            bool seen = false;  // a view or an in-place output counts once
            for (int32_t j = 0; j < k && !seen; ++j) seen = ne->tensors[j]->data == t->data;
            if (!seen) sum += static_cast<uint64_t>(ir_tensor_element_count(t)) * t->storage;
        }
        if (sum > most) most = sum;
    }
    return most > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(most);
}

int put_io(writer* w, const int32_t* ids, int32_t count) {
    for (int32_t i = 0; i < count; ++i) {
        uint32_t t = 0;
        const int rc = tensor_index(w, w->g->tensors[ids[i]], &t);
        if (rc) return rc;
        const uint32_t name = sink_string(&w->sec[PLAN_NAME], w->g->tensors[ids[i]]->name);
        uint8_t* rec = sink_grow(&w->sec[PLAN_IOTB], PLAN_IOTB_RECORD, 1);
        if (!rec) return too_big();
        plan_put32(rec + IOTB_TENSOR, t);
        plan_put32(rec + IOTB_NAME, name);
    }
    return CVML_OK;
}

int put_graph(writer* w, uint32_t window) {
    const ir_graph* g = w->g;
    uint8_t* rec = sink_grow(&w->sec[PLAN_GRPH], PLAN_GRPH_RECORD, 1);
    if (!rec) return too_big();
    plan_put32(rec + GRPH_TENSORS, w->tensors);
    plan_put32(rec + GRPH_STEPS, static_cast<uint32_t>(w->st ? w->st->node_count : 0));
    plan_put32(rec + GRPH_SLOTS, static_cast<uint32_t>(w->sec[PLAN_SLOT].size / PLAN_SLOT_RECORD));
    plan_put32(rec + GRPH_TAILS, static_cast<uint32_t>(w->sec[PLAN_TAIL].size / PLAN_TAIL_RECORD));
    plan_put32(rec + GRPH_KERNELS, w->kernel_count);
    plan_put32(rec + GRPH_WINDOW, window);
    plan_put64(rec + GRPH_GAS, g->gas);
    plan_put64(rec + GRPH_GAS_OPS, g->gas_ops);
    plan_put64(rec + GRPH_GAS_MEM, g->gas_mem);
    plan_put32(rec + GRPH_ARENA, w->input_offset);
    plan_put32(rec + GRPH_LIVE_PAIR, w->st ? largest_step_io(w) : 0);
    plan_put32(rec + GRPH_INPUTS, static_cast<uint32_t>(g->input_count));
    plan_put32(rec + GRPH_OUTPUTS, static_cast<uint32_t>(g->output_count));
    return CVML_OK;
}

/* The CPU subgraph's state; a graph of no operators has none. */
int cpu_state_of(const ir_graph* g, const cpu_subgraph_state** st) {
    *st = nullptr;
    if (g->subgraph_count == 0) return CVML_OK;
    const cvml_device* cpu = device_registry_find("cpu");
    if (g->subgraph_count != 1 || !cpu || device_registry_at(g->subgraphs[0]->device) != cpu ||
        !g->subgraphs[0]->device_state)
        return cvml_fail(CVML_ERR_LOGIC,
                         "compiled plan: the graph must be prepared by the CPU device alone "
                         "(it has %" PRId32 " subgraphs)",
                         g->subgraph_count);
    *st = static_cast<const cpu_subgraph_state*>(g->subgraphs[0]->device_state);
    return CVML_OK;
}

int write_sections(writer* w) {
    uint32_t window = 0;
    const cpu_subgraph_state* st = w->st;
    w->input_offset = st ? static_cast<uint32_t>((st->arena_size + 63) / 64 * 64) : 0;
    int rc = CVML_OK;
    for (int32_t i = 0; st && i < st->node_count && !rc; ++i) {
        rc = put_step(w, &st->nodes[i], &window);
        if (rc) rc = step_error(&st->nodes[i], i, rc);
    }
    if (!rc) rc = put_io(w, w->g->inputs, w->g->input_count);
    if (!rc) rc = put_io(w, w->g->outputs, w->g->output_count);
    if (!rc) rc = put_graph(w, window);
    if (rc) return rc;
    uint8_t* grph = w->sec[PLAN_GRPH].data;
    plan_put32(grph + GRPH_VERSION,
               w->g->version ? sink_string(&w->sec[PLAN_NAME], w->g->version) : PLAN_NONE);
    plan_put32(grph + GRPH_POSTPROCESS,
               sink_string(&w->sec[PLAN_NAME], w->g->postprocess ? w->g->postprocess : ""));
    for (int t = 0; t < PLAN_TAG_COUNT; ++t)
        if (w->sec[t].failed) return too_big();
    return CVML_OK;
}

int assemble(writer* w, const plan_target* target, uint8_t** out, size_t* size) {
    plan_section_in in[PLAN_TAG_COUNT];
    int32_t count = 0;
    for (int t = 0; t < PLAN_TAG_COUNT; ++t) {
        const bool required = t != PLAN_TAIL && t != PLAN_PARM && t != PLAN_STAT && t != PLAN_RELO;
        if (w->sec[t].size == 0 && !required) continue;
        static const uint8_t nothing = 0;
        in[count++] = {t, w->sec[t].data ? w->sec[t].data : &nothing, w->sec[t].size};
    }
    int rc = plan_file_size(in, count, size);
    if (rc) return rc;
    *out = static_cast<uint8_t*>(cvml_mem_alloc(*size));
    if (!*out) return cvml_fail_out_of_memory();
    rc = plan_file_write(target, in, count, *out, *size);
    if (rc) {
        cvml_mem_free(*out);
        *out = nullptr;
    }
    return rc;
}

}  // namespace

static_assert(PLAN_LEVEL_CM_DSP == CPU_CM_DSP && PLAN_LEVEL_CM_MVE == CPU_CM_MVE,
              "a plan's Cortex-M levels are the runtime's kernels");

namespace {

/* A Cortex-M target: any build plans for it, with the kernels' figures of
 * simd/arm/cortexm/conv2d_plan.h; only a build for that core runs it. */
bool is_cortexm_target(const char* name) {
    return strcmp(name, "cortex-m55") == 0 || strcmp(name, "cortex-m4f") == 0 ||
           strcmp(name, "cortex-m7") == 0;
}

int cortexm_target(const char* name, int threads, plan_target* out) {
    const bool mve = strcmp(name, "cortex-m55") == 0;
    if (threads != 1)
        return cvml_fail(CVML_ERR_LOGIC, "compiled plan: a Cortex-M target runs one thread");
    *out = {PLAN_FAMILY_CORTEXM, static_cast<uint8_t>(mve ? CPU_CM_MVE : CPU_CM_DSP), 1};
    return CVML_OK;
}

}  // namespace

int plan_target_from_name(const char* name, int threads, plan_target* out) {
    static const struct {
        const char* name;
        uint8_t family, level;
    } kTargets[] = {
        {"scalar", PLAN_FAMILY_PORTABLE, CPU_SIMD_SCALAR},
        {"avx2", PLAN_FAMILY_X86_64, CPU_SIMD_AVX2},
        {"avx512", PLAN_FAMILY_X86_64, CPU_SIMD_AVX512},
        {"neon", PLAN_FAMILY_AARCH64, CPU_SIMD_NEON},
        {"dotprod", PLAN_FAMILY_AARCH64, CPU_SIMD_DOTPROD},
        {"i8mm", PLAN_FAMILY_AARCH64, CPU_SIMD_I8MM},
    };
    if (threads < 1 || threads > PLAN_MAX_THREADS)
        return cvml_fail(CVML_ERR_LOGIC, "compiled plan: %d threads (1 to %d)", threads,
                         PLAN_MAX_THREADS);
    if (is_cortexm_target(name)) return cortexm_target(name, threads, out);
    for (const auto& t : kTargets) {
        if (strcmp(t.name, name) != 0) continue;
        // Prepared here, so a vector level must be this machine's or below it.
        int levels[8];
        const int n = cpu_simd_levels(levels, 8);
        bool here = t.level == CPU_SIMD_SCALAR;
        for (int i = 0; i < n && !here && t.level != CPU_SIMD_SCALAR; ++i)
            here = levels[i] == t.level;
        if (!here)
            return cvml_fail(CVML_ERR_RUNTIME, "compiled plan: target %s: this machine runs %s",
                             name, cpu_simd_name(cpu_simd_level()));
        *out = {t.family, t.level, static_cast<uint16_t>(threads)};
        return CVML_OK;
    }
    return cvml_fail(CVML_ERR_LOGIC,
                     "compiled plan: unknown target '%s' (scalar, avx2, avx512, neon, dotprod, "
                     "i8mm, cortex-m4f, cortex-m7, cortex-m55)",
                     name);
}

int plan_compile(const ir_graph* g, const plan_target* target, uint8_t** out, size_t* size) {
    *out = nullptr;
    *size = 0;
    writer w = {};
    w.g = g;
    int rc = cpu_state_of(g, &w.st);
    if (rc) return rc;
    const size_t n = static_cast<size_t>(g->tensor_count) + 1;
    w.of_tensor = static_cast<uint32_t*>(cvml_mem_calloc(n, sizeof(uint32_t)));
    w.of_stand_in = static_cast<uint32_t*>(cvml_mem_calloc(n, sizeof(uint32_t)));
    w.kernels = static_cast<const cpu_kernel**>(
        cvml_mem_calloc(static_cast<size_t>(cpu_kernel_count()) + 1, sizeof(cpu_kernel*)));
    rc = w.of_tensor && w.of_stand_in && w.kernels ? CVML_OK : cvml_fail_out_of_memory();
    if (!rc) rc = write_sections(&w);
    if (!rc) rc = assemble(&w, target, out, size);
    for (int t = 0; t < PLAN_TAG_COUNT; ++t) cvml_mem_free(w.sec[t].data);
    cvml_mem_free(w.of_tensor);
    cvml_mem_free(w.of_stand_in);
    cvml_mem_free(w.kernels);
    return rc;
}
