/* The compiled plan's loader (compiled.h): every check of docs/compiled-plan.md, "What
 * the loader checks", in its order, each failure naming the byte at fault; then the
 * runtime state placed at the start of the caller's arena. A plan is hostile input like
 * any other: a record is used only once it is known to keep every kernel inside its
 * buffers. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "device/cpu/compiled/plan_state.h"
#include "device/cpu/thread_pool.h"
#include "operator/format_limits.h"
#include "utility/error.h"
#include "utility/platform.h"

namespace {

/* "compiled plan: byte N (SECT record R): ..." */
int fail_record(int tag, uint32_t size, uint32_t i, uint32_t field, const plan_file* f,
                const char* fmt, ...) CVML_PRINTF(6, 7);
int fail_record(int tag, uint32_t size, uint32_t i, uint32_t field, const plan_file* f,
                const char* fmt, ...) {
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const uint64_t byte = f->sections[tag].offset + static_cast<uint64_t>(i) * size + field;
    // unsigned long: newlib-nano has no 64-bit printf conversions; a plan is < 4 GiB.
    return cvml_fail(CVML_ERR_LOGIC, "compiled plan: byte %lu (%s record %" PRIu32 "): %s",
                     static_cast<unsigned long>(byte), plan_tag_name(tag), i, what);
}

uint32_t count_of(const plan_file* f, int tag, uint32_t record) {
    return f->sections[tag].size / record;
}

/* A NUL-terminated string at `at` inside NAME. */
bool name_ok(const plan_file* f, uint32_t at) {
    const plan_section& n = f->sections[PLAN_NAME];
    return at < n.size && memchr(n.data + at, 0, n.size - at) != nullptr;
}

/* ---- 2. the graph record --------------------------------------------------------------- */

int read_graph(const plan_file* f, compiled_plan* p) {
    const uint8_t* g = f->sections[PLAN_GRPH].data;
    const uint32_t counts[5][2] = {{GRPH_TENSORS, count_of(f, PLAN_TENS, PLAN_TENS_RECORD)},
                                   {GRPH_STEPS, count_of(f, PLAN_STEP, PLAN_STEP_RECORD)},
                                   {GRPH_SLOTS, count_of(f, PLAN_SLOT, PLAN_SLOT_RECORD)},
                                   {GRPH_TAILS, count_of(f, PLAN_TAIL, PLAN_TAIL_RECORD)},
                                   {GRPH_KERNELS, count_of(f, PLAN_KERN, PLAN_KERN_RECORD)}};
    for (const auto& c : counts)
        if (plan_get32(g + c[0]) != c[1])
            return fail_record(PLAN_GRPH, 0, 0, c[0], f,
                               "count %" PRIu32 " but the section holds %" PRIu32 " records",
                               plan_get32(g + c[0]), c[1]);
    for (uint32_t b = GRPH_USED; b < PLAN_GRPH_RECORD; ++b)
        if (g[b]) return fail_record(PLAN_GRPH, 0, 0, b, f, "reserved byte is not zero");
    p->tensors = counts[0][1];
    p->steps = counts[1][1];
    p->slots = counts[2][1];
    p->tails = counts[3][1];
    p->kernels = counts[4][1];
    p->window = plan_get32(g + GRPH_WINDOW);
    p->arena_bytes = plan_get32(g + GRPH_ARENA);
    p->inputs = plan_get32(g + GRPH_INPUTS);
    p->outputs = plan_get32(g + GRPH_OUTPUTS);
    // The window holds one step's tensors: never more than all slots and tails.
    if (p->window > p->slots + p->tails || (p->steps && p->window == 0))
        return fail_record(PLAN_GRPH, 0, 0, GRPH_WINDOW, f, "window of %" PRIu32 " tensors",
                           p->window);
    if (p->arena_bytes > INT32_MAX)
        return fail_record(PLAN_GRPH, 0, 0, GRPH_ARENA, f, "arena of %" PRIu32 " bytes",
                           p->arena_bytes);
    if (p->inputs < 1 ||
        static_cast<uint64_t>(p->inputs) + p->outputs != count_of(f, PLAN_IOTB, PLAN_IOTB_RECORD) ||
        p->outputs < 1)
        return fail_record(PLAN_GRPH, 0, 0, GRPH_INPUTS, f,
                           "%" PRIu32 " inputs and %" PRIu32 " outputs for %" PRIu32
                           " IOTB records",
                           p->inputs, p->outputs, count_of(f, PLAN_IOTB, PLAN_IOTB_RECORD));
    const uint32_t version = plan_get32(g + GRPH_VERSION);
    if (version != PLAN_NONE && !name_ok(f, version))
        return fail_record(PLAN_GRPH, 0, 0, GRPH_VERSION, f, "version string outside NAME");
    if (!name_ok(f, plan_get32(g + GRPH_POSTPROCESS)))
        return fail_record(PLAN_GRPH, 0, 0, GRPH_POSTPROCESS, f, "postprocess string outside NAME");
    return CVML_OK;
}

/* ---- 3. kernels ------------------------------------------------------------------------- */

int check_kernel(const plan_file* f, uint32_t i, const cpu_kernel** kernel, const op_def** op) {
    const uint8_t* r = f->sections[PLAN_KERN].data + static_cast<size_t>(i) * PLAN_KERN_RECORD;
    const void* end = memchr(r + KERN_NAME, 0, PLAN_KERNEL_NAME_BYTES);
    if (!end) return fail_record(PLAN_KERN, PLAN_KERN_RECORD, i, KERN_NAME, f, "name not ended");
    for (const uint8_t* b = static_cast<const uint8_t*>(end); b < r + PLAN_KERNEL_NAME_BYTES; ++b)
        if (*b)
            return fail_record(PLAN_KERN, PLAN_KERN_RECORD, i, static_cast<uint32_t>(b - r), f,
                               "name padding is not zero");
    for (uint32_t b = KERN_USED; b < PLAN_KERN_RECORD; ++b)
        if (r[b]) return fail_record(PLAN_KERN, PLAN_KERN_RECORD, i, b, f, "reserved byte");
    const char* name = reinterpret_cast<const char*>(r + KERN_NAME);
    *kernel = cpu_kernel_find(name);
    *op = op_registry_find(name);
    if (!*kernel || !*op || (*op)->alias)
        return fail_record(PLAN_KERN, PLAN_KERN_RECORD, i, KERN_NAME, f,
                           "kernel %s is not in this build (CVML_OPERATORS); rebuild with it",
                           name);
    if (plan_get32(r + KERN_PARAM_SIZE) != (*op)->param_size ||
        plan_get32(r + KERN_PARAM_PRINT) != plan_param_fingerprint(*op))
        return fail_record(PLAN_KERN, PLAN_KERN_RECORD, i, KERN_PARAM_SIZE, f,
                           "%s's parameters are laid out otherwise in this build", name);
    if (plan_get32(r + KERN_STATE_SIZE) != (*kernel)->plain_state_size)
        return fail_record(PLAN_KERN, PLAN_KERN_RECORD, i, KERN_STATE_SIZE, f,
                           "%s's state is %" PRIu32 " bytes in this build", name,
                           (*kernel)->plain_state_size);
    return CVML_OK;
}

/* ---- 4. tensors ------------------------------------------------------------------------- */

int check_values(const plan_file* f, uint32_t i, const ir_tensor* t, uint64_t count) {
    const int32_t bound = ir_precision_bound(t->precision);
    for (uint64_t k = 0; k < count; ++k) {
        const int32_t v = ir_storage_load(t->data, t->storage, static_cast<int64_t>(k));
        if (v < -bound || v > bound)
            return fail_record(PLAN_TENS, PLAN_TENS_RECORD, i, TENS_PRECISION, f,
                               "constant value %" PRId32 " at %lu exceeds %" PRId32 " bits", v,
                               static_cast<unsigned long>(k), t->precision);
    }
    return CVML_OK;
}

int check_tensor(const compiled_plan* p, uint32_t i) {
    const plan_file* f = &p->file;
    const uint8_t* r = plan_record(p, PLAN_TENS, PLAN_TENS_RECORD, i);
    const uint8_t kind = r[TENS_KIND], storage = r[TENS_STORAGE], ndim = r[TENS_NDIM];
    if (kind > TENSOR_CONST)
        return fail_record(PLAN_TENS, PLAN_TENS_RECORD, i, TENS_KIND, f, "kind %u", kind);
    if (storage != STORAGE_INT8 && storage != STORAGE_INT16 && storage != STORAGE_INT32)
        return fail_record(PLAN_TENS, PLAN_TENS_RECORD, i, TENS_STORAGE, f, "storage %u", storage);
    // The format's shape limits (operator/format_limits.h), which the CVM verifier holds
    // every tensor to and kernels and the byte I/O rely on (no empty dimension).
    if (ndim < 1 || ndim > CVML_MAX_DIMS)
        return fail_record(PLAN_TENS, PLAN_TENS_RECORD, i, TENS_NDIM, f, "ndim %u", ndim);
    const int32_t precision = static_cast<int32_t>(plan_get32(r + TENS_PRECISION));
    if (precision < 1 || precision > 32)
        return fail_record(PLAN_TENS, PLAN_TENS_RECORD, i, TENS_PRECISION, f, "precision %" PRId32,
                           precision);
    uint64_t count = 1;
    for (uint32_t d = 0; d < CVML_MAX_DIMS; ++d) {
        const uint32_t dim = plan_get32(r + TENS_DIMS + 4 * d);
        const bool ok = d < ndim ? dim >= 1 && dim <= kFormatMaxDim : dim == 0;
        if (!ok)
            return fail_record(PLAN_TENS, PLAN_TENS_RECORD, i, TENS_DIMS + 4 * d, f,
                               "dimension %" PRIu32, dim);
        if (d < ndim) count *= dim;
        if (count > static_cast<uint64_t>(kFormatMaxElements))
            return fail_record(PLAN_TENS, PLAN_TENS_RECORD, i, TENS_DIMS + 4 * d, f,
                               "more than 2^30 elements");
    }
    const uint64_t bytes = count * storage;
    if (bytes > INT32_MAX || plan_get32(r + TENS_BYTES) != bytes)
        return fail_record(PLAN_TENS, PLAN_TENS_RECORD, i, TENS_BYTES, f,
                           "%" PRIu32 " bytes for %lu elements of %u bytes",
                           plan_get32(r + TENS_BYTES), static_cast<unsigned long>(count), storage);
    const uint64_t end = uint64_t{plan_get32(r + TENS_OFFSET)} + bytes;
    const bool in_cnst = r[TENS_WHERE] == PLAN_IN_CNST;
    if (r[TENS_WHERE] > PLAN_IN_CNST || in_cnst != (kind == TENSOR_CONST))
        return fail_record(PLAN_TENS, PLAN_TENS_RECORD, i, TENS_WHERE, f,
                           "a tensor of kind %u cannot lie in %s", kind,
                           in_cnst ? "CNST" : "the arena");
    const uint64_t room = in_cnst ? f->sections[PLAN_CNST].size : p->arena_bytes;
    if (end + (in_cnst || storage != STORAGE_INT32 ? PLAN_CONST_SLACK : 0) > room)
        return fail_record(PLAN_TENS, PLAN_TENS_RECORD, i, TENS_OFFSET, f,
                           "bytes %" PRIu32 "..%lu and their slack pass the %s's %lu",
                           plan_get32(r + TENS_OFFSET), static_cast<unsigned long>(end),
                           in_cnst ? "CNST" : "arena", static_cast<unsigned long>(room));
    // Every buffer starts where the planner puts them, on a 64-byte boundary: kernels
    // read them as words (and vectors), never misaligned.
    if (plan_get32(r + TENS_OFFSET) % PLAN_ALIGN)
        return fail_record(PLAN_TENS, PLAN_TENS_RECORD, i, TENS_OFFSET, f,
                           "offset not on a 64-byte boundary");
    if (!in_cnst) return CVML_OK;
    ir_tensor t;
    plan_fill_tensor(p, i, &t);
    return check_values(f, i, &t, count);
}

/* ---- slots, tails, inputs and outputs ---------------------------------------------------- */

int check_indices(const compiled_plan* p) {
    const plan_file* f = &p->file;
    for (uint32_t i = 0; i < p->slots; ++i)
        if (plan_get32(plan_record(p, PLAN_SLOT, PLAN_SLOT_RECORD, i)) >= p->tensors)
            return fail_record(PLAN_SLOT, PLAN_SLOT_RECORD, i, 0, f, "tensor index past %" PRIu32,
                               p->tensors);
    for (uint32_t i = 0; i < p->inputs + p->outputs; ++i) {
        const uint8_t* r = plan_record(p, PLAN_IOTB, PLAN_IOTB_RECORD, i);
        const uint32_t t = plan_get32(r + IOTB_TENSOR);
        if (t >= p->tensors)
            return fail_record(PLAN_IOTB, PLAN_IOTB_RECORD, i, IOTB_TENSOR, f, "tensor index");
        if (!name_ok(f, plan_get32(r + IOTB_NAME)))
            return fail_record(PLAN_IOTB, PLAN_IOTB_RECORD, i, IOTB_NAME, f, "name outside NAME");
        const uint8_t kind = plan_record(p, PLAN_TENS, PLAN_TENS_RECORD, t)[TENS_KIND];
        if ((i < p->inputs) != (kind == TENSOR_INPUT) && i < p->inputs)
            return fail_record(PLAN_IOTB, PLAN_IOTB_RECORD, i, IOTB_TENSOR, f,
                               "a graph input must be a tensor of kind input");
    }
    return CVML_OK;
}

/* A fused step a kernel may apply (cvml_ops.h's kinds and ranges); its epilogue chain
 * slots (a right shift lowers to two). */
bool step_sane(const cvml_step& s, int32_t operands, uint32_t* slots) {
    *slots += s.kind == CVML_STEP_RIGHT_SHIFT ? 2 : 1;
    switch (s.kind) {
        case CVML_STEP_CLIP:
        case CVML_STEP_MUL:
            return true;
        case CVML_STEP_RIGHT_SHIFT:
            return s.a >= 1 && s.a <= 32 && s.b >= 1 && s.b <= 32;
        case CVML_STEP_ADD:
            return s.operand >= 0 && s.operand < operands;
        default:
            return false;
    }
}

/* ---- 5. steps ------------------------------------------------------------------------------ */

int step_fail(const compiled_plan* p, uint32_t s, uint32_t field, const char* what) {
    return fail_record(PLAN_STEP, PLAN_STEP_RECORD, s, field, &p->file, "%s", what);
}

/* Ranges of step s's record, before its tensors are bound. */
int check_step_ranges(const compiled_plan* p, uint32_t s) {
    const uint8_t* r = plan_record(p, PLAN_STEP, PLAN_STEP_RECORD, s);
    for (uint32_t b = STEP_USED; b < PLAN_STEP_RECORD; ++b)
        if (r[b]) return step_fail(p, s, b, "reserved byte is not zero");
    if (plan_get32(r + STEP_KERNEL) >= p->kernels) return step_fail(p, s, STEP_KERNEL, "kernel");
    const uint64_t in = plan_get32(r + STEP_INPUTS), out = plan_get32(r + STEP_OUTPUTS);
    if (out < 1 || out > PLAN_MAX_STEP_OUTPUTS)
        return step_fail(p, s, STEP_OUTPUTS, "output count");
    if (plan_get32(r + STEP_SLOT) + in + out > p->slots)
        return step_fail(p, s, STEP_SLOT, "slots pass SLOT");
    const uint64_t tail = plan_get32(r + STEP_TAIL), tails = plan_get32(r + STEP_TAIL_COUNT);
    if (tails > CPU_TAIL_MAX || tail + tails > p->tails)
        return step_fail(p, s, STEP_TAIL, "tail passes TAIL or CPU_TAIL_MAX");
    uint32_t chain = 0, operands = 0;
    for (uint32_t k = 0; k < tails; ++k) {
        const uint8_t* t =
            plan_record(p, PLAN_TAIL, PLAN_TAIL_RECORD, static_cast<uint32_t>(tail) + k);
        const cvml_step st = plan_get_step(t + TAIL_STEP);
        const uint32_t operand = plan_get32(t + TAIL_OPERAND);
        // A tail's added operand is the record's tensor, not one of the step's inputs:
        // the step's own operand index is never read, so any is sane.
        if (!step_sane(st, INT32_MAX, &chain) ||
            (st.kind == CVML_STEP_ADD) != (operand != PLAN_NONE) ||
            (operand != PLAN_NONE && operand >= p->tensors))
            return fail_record(PLAN_TAIL, PLAN_TAIL_RECORD, static_cast<uint32_t>(tail) + k, 0,
                               &p->file, "a step no kernel applies");
        operands += operand != PLAN_NONE;
    }
    if (chain > EP_MAX_STEPS - 2) return step_fail(p, s, STEP_TAIL_COUNT, "tail too long");
    if (in + out + operands > p->window)
        return step_fail(p, s, STEP_SLOT, "more tensors than the window");
    const op_def* op = p->op_of[plan_get32(r + STEP_KERNEL)];
    const uint32_t param = plan_get32(r + STEP_PARAM);
    if ((param == PLAN_NONE) != (op->param_size == 0) ||
        (param != PLAN_NONE &&
         (param % 8 || uint64_t{param} + op->param_size > p->file.sections[PLAN_PARM].size)))
        return step_fail(p, s, STEP_PARAM, "parameters outside PARM");
    const uint32_t kind = plan_get32(r + STEP_STATE_KIND);
    const uint32_t state_size = p->kernel_of[plan_get32(r + STEP_KERNEL)]->plain_state_size;
    if (kind > PLAN_STATE_PLAIN || (kind == PLAN_STATE_PLAIN && !state_size))
        return step_fail(p, s, STEP_STATE_KIND, "state kind");
    const uint32_t state = plan_get32(r + STEP_STATE);
    if (kind == PLAN_STATE_PLAIN &&
        (state % 64 || uint64_t{state} + state_size > p->file.sections[PLAN_STAT].size))
        return step_fail(p, s, STEP_STATE, "state outside STAT");
    if (kind != PLAN_STATE_PLAIN && state) return step_fail(p, s, STEP_STATE, "state offset");
    const uint32_t scratch = plan_get32(r + STEP_SCRATCH), size = plan_get32(r + STEP_SCRATCH_SIZE);
    if (scratch == PLAN_NONE ? size != 0 : uint64_t{scratch} + size > p->arena_bytes)
        return step_fail(p, s, STEP_SCRATCH, "scratch outside the arena");
    if (scratch != PLAN_NONE && scratch % PLAN_ALIGN)
        return step_fail(p, s, STEP_SCRATCH, "scratch not on a 64-byte boundary");
    return CVML_OK;
}

/* Storage a kernel reads or writes only where its prerun declared it (CPU_CAP_*). */
int check_storage(const compiled_plan* p, uint32_t s, const cpu_node_ctx* c, const cpu_kernel* k) {
    for (int32_t i = 0; i < c->input_count; ++i) {
        const ir_tensor* t = c->inputs[i];
        if (t->storage == STORAGE_INT32) continue;
        const bool narrow = (c->caps & CPU_CAP_NARROW_IN(i)) &&
                            (t->storage == STORAGE_INT8 || (c->caps & CPU_CAP_INT16));
        const bool as_const = t->kind == TENSOR_CONST && t->storage == STORAGE_INT8 &&
                              (k->narrow_consts & CPU_CAP_NARROW_IN(i));
        if (!narrow && !as_const)
            return step_fail(p, s, STEP_CAPS, "an input in a storage its kernel does not read");
    }
    for (int32_t o = 0; o < c->output_count; ++o) {
        const ir_tensor* t = c->outputs[o];
        if (t->kind != TENSOR_VAR)
            return step_fail(p, s, STEP_SLOT, "an output that is not an operator's");
        const bool ok = t->storage == STORAGE_INT32 ||
                        (o == 0 && (c->caps & CPU_CAP_NARROW_OUT) &&
                         (t->storage == STORAGE_INT8 || (c->caps & CPU_CAP_INT16)));
        if (!ok)
            return step_fail(p, s, STEP_CAPS, "an output in a storage its kernel does not write");
    }
    if (c->tail && !(c->caps & CPU_CAP_TAIL))
        return step_fail(p, s, STEP_CAPS, "a tail its kernel does not apply");
    for (int32_t k2 = 0; c->tail && k2 < c->tail->count; ++k2) {
        const ir_tensor* y = c->tail->steps[k2].operand;
        if (y && ir_tensor_element_count(y) != ir_tensor_element_count(c->outputs[0]))
            return step_fail(p, s, STEP_TAIL, "a tail operand of another size");
    }
    return CVML_OK;
}

/* Byte range of an arena tensor, or [0, 0) for a constant. */
void span(const compiled_plan* p, const ir_tensor* t, uint64_t* lo, uint64_t* hi) {
    const uint8_t* d = static_cast<const uint8_t*>(t->data);
    if (t->kind == TENSOR_CONST) {
        *lo = *hi = 0;
        return;
    }
    *lo = static_cast<uint64_t>(d - p->acts);
    *hi = *lo + static_cast<uint64_t>(ir_tensor_element_count(t)) * t->storage;
}

/* An output shares bytes with what the step reads only as its kernel allows: the whole
 * buffer of the input it writes over (cpu_kernel.writes_over_input, with the scratch
 * that form needs), or of a tail operand read element by element (CPU_CAP_TAIL_IN_PLACE). */
int check_overlaps(const compiled_plan* p, uint32_t s, cpu_node_ctx* c, const cpu_kernel* k) {
    for (int32_t o = 0; o < c->output_count; ++o) {
        uint64_t olo, ohi;
        span(p, c->outputs[o], &olo, &ohi);
        const int32_t readers = c->input_count + (c->tail ? c->tail->count : 0);
        for (int32_t i = 0; i < readers; ++i) {
            const bool is_input = i < c->input_count;
            const ir_tensor* x =
                is_input ? c->inputs[i] : c->tail->steps[i - c->input_count].operand;
            if (!x) continue;
            uint64_t lo, hi;
            span(p, x, &lo, &hi);
            if (hi <= olo || ohi <= lo || lo == hi) continue;
            bool allowed = o == 0 && lo == olo && hi == ohi;
            if (allowed && is_input) {
                size_t need = 0;
                allowed = k->writes_over_input && k->writes_over_input(c, &need) == i &&
                          need <= c->scratch_size;
            } else if (allowed) {
                allowed = (c->caps & CPU_CAP_TAIL_IN_PLACE) != 0;
            }
            if (!allowed)
                return step_fail(p, s, STEP_SLOT, "an output overlaps what its step reads");
        }
        for (int32_t o2 = 0; o2 < o; ++o2) {
            uint64_t lo, hi;
            span(p, c->outputs[o2], &lo, &hi);
            if (lo < ohi && olo < hi) return step_fail(p, s, STEP_SLOT, "two outputs overlap");
        }
    }
    return CVML_OK;
}

/* The operator's shape rule on the stored inputs must give the stored outputs. */
int check_shapes(const compiled_plan* p, uint32_t s, const cpu_node_ctx* c, const op_def* op) {
    ir_tensor out[PLAN_MAX_STEP_OUTPUTS];
    ir_tensor* outs[PLAN_MAX_STEP_OUTPUTS];
    for (int32_t o = 0; o < c->output_count; ++o) {
        out[o] = *c->outputs[o];
        outs[o] = &out[o];
    }
    op_infer_ctx ic = {nullptr,   c->node,         c->param, c->input_count,
                       c->inputs, c->output_count, outs};
    if (op->fixed_inputs >= 0 && !op->num_inputs && c->input_count != op->fixed_inputs)
        return step_fail(p, s, STEP_INPUTS, "input count");
    if (op->num_inputs) {
        const int32_t n = op->num_inputs(c->param);
        if (n >= 0 ? c->input_count != n : c->input_count < 1)
            return step_fail(p, s, STEP_INPUTS, "input count");
    }
    if (op->infer_shape && op->infer_shape(&ic) != CVML_OK)
        return step_fail(p, s, STEP_SLOT, "its operator refuses these shapes");
    for (int32_t o = 0; o < c->output_count; ++o) {
        bool same = out[o].ndim == c->outputs[o]->ndim;
        for (int32_t d = 0; same && d < out[o].ndim; ++d)
            same = out[o].dims[d] == c->outputs[o]->dims[d];
        if (!same) return step_fail(p, s, STEP_SLOT, "an output's shape is not its operator's");
    }
    return CVML_OK;
}

/* The kernel's prerun on the bound step must declare the stored capabilities, need no
 * more scratch than stored, and make the stored kind of state (a plain one byte for
 * byte): what a run then does is what the CVM path does. */
int check_prerun(const compiled_plan* p, uint32_t s, cpu_node_ctx* c, const cpu_kernel* k) {
    cpu_node_ctx fresh = *c;
    fresh.state = nullptr;
    fresh.caps = 0;
    fresh.tail = nullptr;
    size_t scratch = 0;
    int rc = k->prerun ? k->prerun(&fresh, &scratch) : CVML_OK;
    if (rc) return cvml_fail_context(rc, "compiled plan: step %" PRIu32 ": ", s);
    bool ok = fresh.caps == c->caps && scratch <= c->scratch_size;
    if (ok && fresh.state == &cpu_fast_marker)
        ok = c->state == &cpu_fast_marker;
    else if (ok && fresh.state)
        ok = k->state_matches && c->state && c->state != &cpu_fast_marker &&
             k->state_matches(&fresh, c->state);
    else if (ok)
        ok = c->state == nullptr;
    if (fresh.state && fresh.state != &cpu_fast_marker && k->postrun) k->postrun(&fresh);
    return ok ? CVML_OK : step_fail(p, s, STEP_CAPS, "its kernel prepares otherwise in this build");
}

int check_step(compiled_plan* p, uint32_t s) {
    int rc = check_step_ranges(p, s);
    if (rc) return rc;
    cpu_node_ctx c;
    const cpu_kernel* kernel = plan_bind_step(p, s, &c);
    rc = op_check_params(c.node->op, c.param);
    if (rc) return cvml_fail_context(rc, "compiled plan: step %" PRIu32 ": ", s);
    rc = check_storage(p, s, &c, kernel);
    if (!rc) rc = check_shapes(p, s, &c, c.node->op);
    if (!rc) rc = check_prerun(p, s, &c, kernel);
    if (!rc) rc = check_overlaps(p, s, &c, kernel);
    return rc;
}

/* ---- the runtime state in the arena --------------------------------------------------------- */

size_t align_to(size_t v, size_t a) {
    return (v + a - 1) / a * a;
}

/* Offsets of the parts the arena holds, from its (16-aligned) start. */
struct arena_layout {
    size_t kernels, window, window_ptrs, window_ids, io, io_ptrs, io_ids, acts, total;
};

arena_layout layout_for(uint32_t kernels, uint32_t window, uint32_t io, uint32_t arena) {
    arena_layout l;
    l.kernels = align_to(sizeof(compiled_plan), 16);
    l.window = align_to(l.kernels + 2 * sizeof(void*) * kernels, 16);
    l.window_ptrs = l.window + sizeof(ir_tensor) * window;
    l.window_ids = l.window_ptrs + sizeof(ir_tensor*) * window;
    l.io = align_to(l.window_ids + sizeof(int32_t) * window, 16);
    l.io_ptrs = l.io + sizeof(ir_tensor) * io;
    l.io_ids = l.io_ptrs + sizeof(ir_tensor*) * io;
    l.acts = align_to(l.io_ids + sizeof(int32_t) * io, 64);
    // 64 bytes of slack past the plan (kernels may read, never use, that far).
    l.total = l.acts + arena + 64;
    return l;
}

arena_layout layout_of(const plan_file* f) {
    const uint8_t* g = f->sections[PLAN_GRPH].data;
    return layout_for(plan_get32(g + GRPH_KERNELS), plan_get32(g + GRPH_WINDOW),
                      plan_get32(g + GRPH_INPUTS) + plan_get32(g + GRPH_OUTPUTS),
                      plan_get32(g + GRPH_ARENA));
}

/* The graph of inputs and outputs the API works on. */
void build_io_graph(compiled_plan* p) {
    ir_graph* g = &p->io;
    memset(g, 0, sizeof *g);
    const uint8_t* grph = p->file.sections[PLAN_GRPH].data;
    const char* names = reinterpret_cast<const char*>(p->file.sections[PLAN_NAME].data);
    const uint32_t io = p->inputs + p->outputs;
    for (uint32_t i = 0; i < io; ++i) {
        const uint8_t* r = plan_record(p, PLAN_IOTB, PLAN_IOTB_RECORD, i);
        plan_fill_tensor(p, plan_get32(r + IOTB_TENSOR), &p->io_tensors[i]);
        p->io_tensors[i].name = const_cast<char*>(names + plan_get32(r + IOTB_NAME));
        p->io_tensors[i].index = static_cast<int32_t>(i);
        p->io_ptrs[i] = &p->io_tensors[i];
        p->io_ids[i] = static_cast<int32_t>(i);
    }
    g->tensors = p->io_ptrs;
    g->tensor_count = g->tensor_capacity = static_cast<int32_t>(io);
    g->inputs = p->io_ids;
    g->input_count = static_cast<int32_t>(p->inputs);
    g->outputs = p->io_ids + p->inputs;
    g->output_count = static_cast<int32_t>(p->outputs);
    const uint32_t version = plan_get32(grph + GRPH_VERSION);
    g->version = version == PLAN_NONE ? nullptr : const_cast<char*>(names + version);
    g->postprocess = const_cast<char*>(names + plan_get32(grph + GRPH_POSTPROCESS));
    g->verified = 1;
    g->gas = plan_get64(grph + GRPH_GAS);
    g->gas_ops = plan_get64(grph + GRPH_GAS_OPS);
    g->gas_mem = plan_get64(grph + GRPH_GAS_MEM);
}

int place_state(const plan_file* f, uint8_t* arena, size_t arena_len, compiled_plan** out) {
    uint8_t* base = reinterpret_cast<uint8_t*>(align_to(reinterpret_cast<uintptr_t>(arena), 64));
    const arena_layout l = layout_of(f);
    const size_t skip = static_cast<size_t>(base - arena);
    if (skip > arena_len || arena_len - skip < l.total)
        return cvml_fail(CVML_ERR_LOGIC,
                         "compiled plan: the plan needs %" CVML_PRIuSIZE
                         " bytes of arena, %" CVML_PRIuSIZE " given",
                         l.total + 63, arena_len);
    compiled_plan* p = reinterpret_cast<compiled_plan*>(base);
    memset(p, 0, sizeof *p);
    p->file = *f;
    p->kernel_of = reinterpret_cast<const cpu_kernel**>(base + l.kernels);
    p->op_of = reinterpret_cast<const op_def**>(base + l.kernels) +
               plan_get32(f->sections[PLAN_GRPH].data + GRPH_KERNELS);
    p->win = reinterpret_cast<ir_tensor*>(base + l.window);
    p->win_ptrs = reinterpret_cast<ir_tensor**>(base + l.window_ptrs);
    p->ids = reinterpret_cast<int32_t*>(base + l.window_ids);
    for (uint32_t i = 0; i < plan_get32(f->sections[PLAN_GRPH].data + GRPH_WINDOW); ++i)
        p->ids[i] = static_cast<int32_t>(i);
    p->io_tensors = reinterpret_cast<ir_tensor*>(base + l.io);
    p->io_ptrs = reinterpret_cast<ir_tensor**>(base + l.io_ptrs);
    p->io_ids = reinterpret_cast<int32_t*>(base + l.io_ids);
    p->acts = base + l.acts;
    p->tail.steps = p->tail_steps;
    p->node.name = const_cast<char*>("");
    *out = p;
    return CVML_OK;
}

int start_runtime(compiled_plan* p) {
    const int family = p->file.target.family;
    const bool vector = family == PLAN_FAMILY_X86_64 || family == PLAN_FAMILY_AARCH64;
    p->rt.simd_level = vector ? int{p->file.target.level} : int{CPU_SIMD_SCALAR};
#if CVML_CPU_FAST_PATHS
    p->rt.simd = cpu_simd_config_of(p->rt.simd_level);
#endif
    p->rt.fusion = 1;
    p->rt.cortexm = family == PLAN_FAMILY_CORTEXM ? p->file.target.level : uint8_t{CPU_CM_NONE};
    p->rt.portable = family == PLAN_FAMILY_PORTABLE;
    if (p->file.target.threads == 1) return CVML_OK;
    p->rt.pool = thread_pool_create(p->file.target.threads);
    return p->rt.pool
               ? CVML_OK
               : cvml_fail(CVML_ERR_RUNTIME, "cannot start %u CPU threads", p->file.target.threads);
}

int check_all(compiled_plan* p) {
    int rc = read_graph(&p->file, p);
    for (uint32_t i = 0; i < p->kernels && !rc; ++i)
        rc = check_kernel(&p->file, i, &p->kernel_of[i], &p->op_of[i]);
    for (uint32_t i = 0; i < p->tensors && !rc; ++i) rc = check_tensor(p, i);
    if (!rc) rc = check_indices(p);
    for (uint32_t s = 0; s < p->steps && !rc; ++s) rc = check_step(p, s);
    return rc;
}

}  // namespace

int plan_arena_need(const uint8_t* buf, size_t len, size_t* bytes) {
    plan_file f;
    int rc = plan_file_read(buf, len, &f);
    compiled_plan probe;
    memset(&probe, 0, sizeof probe);
    if (!rc) rc = read_graph(&f, &probe);
    if (rc) return rc;
    *bytes = layout_of(&f).total + 63;
    return CVML_OK;
}

int plan_figures(const uint8_t* buf, size_t len, size_t* arena, size_t* live_pair) {
    plan_file f;
    const int rc = plan_file_inspect(buf, len, &f);
    if (rc) return rc;
    *arena = plan_get32(f.sections[PLAN_GRPH].data + GRPH_ARENA);
    *live_pair = plan_get32(f.sections[PLAN_GRPH].data + GRPH_LIVE_PAIR);
    return CVML_OK;
}

int plan_load(const uint8_t* buf, size_t len, uint8_t* arena, size_t arena_len, compiled_plan** out,
              ir_graph** ir) {
    *out = nullptr;
    *ir = nullptr;
    plan_file f;
    int rc = plan_file_read(buf, len, &f);
    if (!rc && reinterpret_cast<uintptr_t>(buf) % 8)
        rc = cvml_fail(CVML_ERR_LOGIC, "compiled plan: the buffer must be 8-byte aligned");
    if (!rc && f.sections[PLAN_RELO].size)
        rc = cvml_fail(CVML_ERR_LOGIC,
                       "compiled plan: byte %" PRIu32
                       ": relocated kernel state is not read by this build",
                       f.sections[PLAN_RELO].offset);
    // The graph record's counts size the state: they are checked against the sections
    // before the arena is written.
    compiled_plan probe;
    memset(&probe, 0, sizeof probe);
    if (!rc) rc = read_graph(&f, &probe);
    compiled_plan* p = nullptr;
    if (!rc) rc = place_state(&f, arena, arena_len, &p);
    if (!rc) rc = start_runtime(p);
    if (!rc) rc = check_all(p);
    if (rc) {
        plan_release(p);
        return rc;
    }
    build_io_graph(p);
    *out = p;
    *ir = &p->io;
    return CVML_OK;
}
