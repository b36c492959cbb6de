/* The CPU device's state of a subgraph, shared by the files of its prerun: cpu.cpp
 * (the device, its kernels' preparation and fused tails, the state's lifecycle),
 * cpu_layout.cpp (where tensors live: views, storage, the arena); the order of the steps,
 * the fusion walk and the arena planner are the core's (module/plan/). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "device/cpu/cpu_kernel.h"
#include "device/cpu/cpu_runtime.h"
#include "graph/graph.h"
#include "module/plan/fusion.h"

namespace cpu_dev {

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

/* The steps of a prerun after the tails are fused (cpu.cpp calls it): where tensors live
 * (views, narrow storage, buffers taken over, inputs' storage), the kernels told
 * (cpu_kernel.fused), then the arena placed. */
int lay_out_tensors(ir_graph* g, ir_subgraph* sg, cpu_subgraph_state* st, size_t* scratch);
/* Bytes a caller's arena needs for a plan of `size` bytes: the plan, 64 bytes of slack
 * (vector kernels may read, never use, up to a vector past a buffer) and the most that
 * aligning its start to kArenaAlign can skip. */
inline size_t arena_need(size_t size) {
    return size ? size + kArenaAlign + (kArenaAlign - 1) : 0;
}

}  // namespace cpu_dev
