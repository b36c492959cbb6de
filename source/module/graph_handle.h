/* What a cvml_graph handle holds: the IR, the context it was made with, and the lock
 * that serializes its runs. */
#pragma once

#include "graph/graph.h"
#include "module/context.h"
#include "utility/error.h"

#if CVML_WITH_THREADS
#include <pthread.h>
#endif

/* One run of a graph at a time: a run writes the graph's input tensors, its arena and
 * its outputs, and the CPU device's thread pool is the graph's, so two runs of one handle
 * at once would mix their bytes (issue 18: wrong outputs with status 0, a crash and a
 * deadlock). The lock makes a shared handle safe for whole runs; see cvml.h. */
typedef struct graph_lock {
#if CVML_WITH_THREADS
    pthread_mutex_t mutex;
#else
    int unused;
#endif
} graph_lock;

/* Every handle's lock is initialised where the handle is made (new_handle) and destroyed
 * where it is released: zeroed memory is not a mutex (winpthreads' initializer is -1).
 * Returns 0, or the error of pthread_mutex_init. */
static inline int graph_lock_init(graph_lock* l) {
#if CVML_WITH_THREADS
    return pthread_mutex_init(&l->mutex, nullptr);
#else
    (void)l;
    return 0;
#endif
}

static inline void graph_lock_destroy(graph_lock* l) {
#if CVML_WITH_THREADS
    pthread_mutex_destroy(&l->mutex);
#else
    (void)l;
#endif
}

static inline void graph_lock_acquire(graph_lock* l) {
#if CVML_WITH_THREADS
    pthread_mutex_lock(&l->mutex);
#else
    (void)l;
#endif
}

static inline void graph_lock_release(graph_lock* l) {
#if CVML_WITH_THREADS
    pthread_mutex_unlock(&l->mutex);
#else
    (void)l;
#endif
}

struct compiled_plan;

struct cvml_graph {
    ir_graph* ir;
    cvml_context context; /* a copy: releasing the caller's context does not matter */
    graph_lock lock;      /* held by prerun, run and run_bytes */
    /* A graph loaded from a compiled plan (cvml_graph_load_compiled): the handle, `ir`
     * (its inputs and outputs only) and the plan's state lie in the caller's arena. */
    struct compiled_plan* plan;
    /* How a run prepares and executes the graph, and how a compiled one is released:
     * set where the handle is made, so that an image which only loads CVM files links
     * no compiled-plan code, and one which only loads plans links no verifier or
     * scheduler (a microcontroller's code budget). */
    int (*prepare)(cvml_graph* g);
    int (*execute)(cvml_graph* g);
    int (*release_compiled)(cvml_graph* g);
};

/* Fills a zeroed handle: its lock, graph, a copy of the context and how it runs.
 * Returns CVML_OK or a runtime error (the lock could not be made). */
static inline int graph_handle_init(cvml_graph* g, const cvml_context* ctx, ir_graph* ir,
                                    int (*prepare)(cvml_graph*), int (*execute)(cvml_graph*)) {
    if (graph_lock_init(&g->lock) != 0)
        return cvml_fail(CVML_ERR_RUNTIME, "cannot create the graph's lock");
    g->ir = ir;
    g->context = *ctx;
    g->prepare = prepare;
    g->execute = execute;
    return CVML_OK;
}

/* The refusal of a call that needs a graph's nodes, for a compiled one. */
int graph_compiled_refusal(const char* fn);

/* Reads a whole file into a malloc'd buffer. */
int graph_read_file(const char* path, uint8_t** data, size_t* size);

/* How the values handed to graph_set_input lie: host int32, int8, or the bytes of
 * little-endian int32 (cvml_graph_run_bytes' input). */
enum input_layout { INPUT_INT32 = 0, INPUT_INT8 = 1, INPUT_INT32_LE = 2 };
/* Stores `count` values into input tensor t, clipped to its precision, in its storage
 * (cvml_tensor_set_i32/_i8). */
int graph_set_input(cvml_tensor* t, const void* values, int layout, size_t count);

/* cvml_graph_run without the lock, for callers that hold it. */
int graph_run_locked(cvml_graph* g);
