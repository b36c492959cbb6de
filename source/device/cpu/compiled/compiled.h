/* Compiled plans on the CPU device (docs/compiled-plan.md): the writer that turns a
 * graph prepared for a target into a plan file, and the loader and run loop that use a
 * plan where it lies, its runtime state in the caller's arena. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "device/cpu/cpu_kernel.h"
#include "device/cpu/cpu_runtime.h"
#include "graph/graph.h"
#include "operator/op_def.h"
#include "serializer/plan/plan_file.h"

/* The layout fingerprint of an operator's parameter struct (FNV-1a over its size, its
 * tuple form and each attribute's name, offset and type): a plan made by a build whose
 * struct differs is refused instead of misread. */
static inline uint32_t plan_param_fingerprint(const op_def* op) {
    uint32_t h = 2166136261u;
    auto mix = [&h](uint64_t v) {
        for (int i = 0; i < 8; ++i) h = (h ^ static_cast<uint8_t>(v >> (8 * i))) * 16777619u;
    };
    mix(op->param_size);
    mix(op->pair_tuples);
    for (int32_t i = 0; i < op->attr_count; ++i) {
        for (const char* c = op->attrs[i].name; *c; ++c) mix(static_cast<uint8_t>(*c));
        mix(op->attrs[i].offset);
        mix(static_cast<uint64_t>(op->attrs[i].type));
    }
    return h;
}

/* The target a `--target` name means ("scalar", "avx2", ...), or CVML_ERR_LOGIC naming
 * the names this build knows. */
int plan_target_from_name(const char* name, int threads, plan_target* out);

/* Writes the plan of graph g, which the CPU device alone has prepared for `target`
 * (ir_graph.cpu_target_level), into a buffer from cvml_mem_alloc. Refuses, naming the
 * step, what format 1.0 cannot hold. */
int plan_compile(const ir_graph* g, const plan_target* target, uint8_t** out, size_t* size);

/* A loaded plan: views into the file, and the run's state (struct in plan_load.cpp). */
struct compiled_plan;

/* Bytes of arena that cvml_graph_load_compiled needs for the plan in buf (its container
 * checked), for this build: the runtime state, the step window and the plan's arena. */
int plan_arena_need(const uint8_t* buf, size_t len, size_t* bytes);
/* GRPH_ARENA and GRPH_LIVE_PAIR of the plan in buf (its container checked). */
int plan_figures(const uint8_t* buf, size_t len, size_t* arena, size_t* live_pair);
/* Checks the plan in buf in full (docs/compiled-plan.md, "What the loader checks") and
 * places its runtime state at the start of `arena`, which must hold plan_arena_need
 * bytes. *ir is a graph of the plan's inputs and outputs only, in the arena too, for
 * the API's tensor and byte calls. Allocates nothing but the thread pool of a plan
 * for several threads. */
int plan_load(const uint8_t* buf, size_t len, uint8_t* arena, size_t arena_len, compiled_plan** out,
              ir_graph** ir);
/* Runs the plan's steps once (its inputs written through *ir). */
int plan_run(compiled_plan* p);
/* Stops the plan's threads; the arena is the caller's again. */
void plan_release(compiled_plan* p);
