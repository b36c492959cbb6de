/* A loaded compiled plan's runtime state, shared by its loader (plan_load.cpp: the
 * checks, the placement in the caller's arena) and its run loop (plan_run.cpp: the step
 * window). Everything here lies in the caller's arena; the records stay in the file. */
#pragma once

#include "device/cpu/compiled/compiled.h"
#include "device/cpu/simd/epilogue.h"
#include "serializer/plan/plan_records.h"

/* The most outputs one step may have: the shape check keeps a copy of each on the stack. */
#define PLAN_MAX_STEP_OUTPUTS 8

struct compiled_plan {
    plan_file file;
    uint32_t tensors, steps, slots, tails, kernels, window, arena_bytes, inputs, outputs;
    const cpu_kernel** kernel_of; /* by KERN index */
    const op_def** op_of;         /* by KERN index */
    cpu_runtime rt;
    uint8_t* acts; /* the plan's arena: activations, scratch, inputs */
    /* The step window: the tensors and the context of the step about to run, filled
     * from the records before each step (plan_bind_step). */
    ir_tensor* win;
    ir_tensor** win_ptrs;
    cpu_tail_step tail_steps[CPU_TAIL_MAX];
    cpu_tail tail;
    /* The step's node: its index and operator, parameters, tensor ids; no name (the run
     * loop's message names the step, node index and operator). */
    ir_node node;
    ir_graph view; /* the window's tensors as a graph the node's ids index */
    int32_t* ids;  /* 0, 1, ...: the window's tensors in slot order */
    /* The graph the API sees: the plan's inputs, then its outputs. */
    ir_graph io;
    ir_tensor* io_tensors;
    ir_tensor** io_ptrs;
    int32_t* io_ids;
};

static inline const uint8_t* plan_record(const compiled_plan* p, int tag, uint32_t size,
                                         uint32_t i) {
    return p->file.sections[tag].data + static_cast<size_t>(i) * size;
}

static inline cvml_step plan_get_step(const uint8_t* r) {
    cvml_step s;
    s.kind = static_cast<int32_t>(plan_get32(r));
    s.a = static_cast<int32_t>(plan_get32(r + 4));
    s.b = static_cast<int32_t>(plan_get32(r + 8));
    s.operand = static_cast<int32_t>(plan_get32(r + 12));
    return s;
}

/* Tensor i of TENS as an ir_tensor (its data in the arena or the file). */
void plan_fill_tensor(const compiled_plan* p, uint32_t i, ir_tensor* t);
/* Step s's context in the window: its tensors, tail, parameters, state and scratch;
 * returns its kernel. */
const cpu_kernel* plan_bind_step(compiled_plan* p, uint32_t s, cpu_node_ctx* ctx);
