/* A fixed pool of worker threads for the CPU device. Work is split statically into
 * C = T * THREAD_POOL_CHUNKS_PER_THREAD chunks of T threads: chunk k covers
 * [n*k/C, n*(k+1)/C), so the ranges a kernel is called with never depend on timing
 * (which thread runs a chunk does: thread_pool.cpp). Without CVML_WITH_THREADS the pool
 * runs every chunk on the caller. */
#pragma once

#include <stdint.h>

#define THREAD_POOL_CHUNKS_PER_THREAD 8

typedef struct thread_pool thread_pool;

typedef void (*thread_pool_fn)(void* arg, int64_t begin, int64_t end);

/* Creates a pool of `threads` (>= 1; the caller is one of them). NULL on failure. */
thread_pool* thread_pool_create(int threads);
void thread_pool_release(thread_pool* pool);
int thread_pool_threads(const thread_pool* pool);
/* A session brackets one run of a graph: thread_pool_begin wakes the workers once, and
 * until thread_pool_end they wait for the next job spinning (yielding now and then), not
 * sleeping, so the regions of one run pay no wake-up each; after thread_pool_end they
 * go to sleep at once, so no core burns between runs. Jobs outside a session work as
 * before. (A pool with more threads than CPUs never spins.) */
void thread_pool_begin(thread_pool* pool);
void thread_pool_end(thread_pool* pool);
/* The CPU worker `worker` (0 .. threads-2) is bound to, or -1 where it is not bound:
 * see cpu_affinity.h for when and why workers are bound. */
int thread_pool_worker_cpu(const thread_pool* pool, int worker);
/* Runs fn on every chunk of [0, n) and returns when all are done. */
void thread_pool_run(thread_pool* pool, int64_t n, thread_pool_fn fn, void* arg);

/* As thread_pool_fn, told which thread (0 .. threads-1; the caller is 0) runs the chunk:
 * for per-thread scratch, never for what the chunk computes (which thread runs a chunk
 * depends on timing). A thread runs its chunks one after another, so its scratch is its
 * own for the whole region. */
typedef void (*thread_pool_fn_at)(void* arg, int64_t begin, int64_t end, int thread);
void thread_pool_run_at(thread_pool* pool, int64_t n, thread_pool_fn_at fn, void* arg);
