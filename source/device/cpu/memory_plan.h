/* Lifetime-based placement of buffers in one arena: each request lives over a closed
 * interval of steps [first, last]; two requests whose intervals overlap never overlap
 * in memory. Greedy by decreasing size, each at the lowest offset that fits, which
 * keeps peak memory close to the largest set of simultaneously live buffers. */
#pragma once

#include <stddef.h>
#include <stdint.h>

typedef struct plan_request {
    size_t size;   /* bytes */
    int32_t first; /* first step the buffer is live (written) */
    int32_t last;  /* last step the buffer is read */
    size_t offset; /* result */
} plan_request;

/* Places every request; returns the arena size (aligned), or 0 with the error set
 * when out of memory for the planner's scratch. `align` is a power of two. */
int memory_plan(plan_request* requests, int32_t count, size_t align, size_t* arena_size);
