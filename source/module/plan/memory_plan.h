/* The core's arena planner, shared by every device (the CPU directly, plugins through
 * cvml_host_api::plan_arena). Lifetime-based placement of buffers in one arena: each request lives
 * over a closed interval of steps [first, last]; two requests whose intervals overlap never overlap
 * in memory.
 *
 * The plan is greedy by decreasing size, each buffer at the lowest offset that fits
 * among the buffers it overlaps in time, which keeps peak memory close to the largest
 * set of simultaneously live buffers. It costs O(n log n + P log P), P being the number
 * of pairs of buffers alive at once; a hostile graph can make P quadratic (thousands of
 * outputs alive to the end), so past PLAN_EXACT_PAIRS pairs the plan is made in time
 * order instead, reusing freed blocks of the same or a slightly larger size, in
 * O(n log n). Load time stays bounded by the graph's size either way. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "cvml_plugin.h"

/* A buffer to place: size, first and last step, and the offset found (the plugin ABI's
 * struct, so that a plugin's requests are planned as they are). */
typedef cvml_plan_buffer plan_request;

/* Pairs of simultaneously live buffers above which the time-ordered plan is used. */
#define PLAN_EXACT_PAIRS (1 << 21)

/* Places every request; returns the arena size (aligned), or 0 with the error set
 * when out of memory for the planner's scratch. `align` is a power of two. */
int memory_plan(plan_request* requests, int32_t count, size_t align, size_t* arena_size);

/* Same, with the pair limit given: tests force either method with it. */
int memory_plan_ex(plan_request* requests, int32_t count, size_t align, int64_t exact_pairs,
                   size_t* arena_size);
