/* A run of a subgraph: its work enqueued directly, captured into a CUDA graph that
 * later runs replay, or profiled node by node. */
#include <stdlib.h>

#include "cuda_device.h"

namespace cuda_dev {
namespace {

/* y = the sign-extended int8 (width 1) or int16 (width 2) values of x. */
__global__ void widen_kernel(const void* x, int32_t* y, int64_t n, int width) {
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x)
        y[i] = width == 1 ? static_cast<const int8_t*>(x)[i] : static_cast<const int16_t*>(x)[i];
}

}  // namespace

/* ---- runs -------------------------------------------------------------------------------- */

/* Everything one run does on the stream: inputs in, every kernel, outputs out. With
 * `events` (node_count + 1 of them), each kernel node's start and the end are recorded. */
int enqueue_run(sg_state* st, cudaEvent_t* events) {
    for (int32_t i = 0; i < st->in_count; ++i) {
        const staged* b = &st->in[i];
        if (!b->host || !b->bytes) continue;
        const int64_t n = static_cast<int64_t>(b->bytes / 4);
        int rc = CVML_OK;
        if (b->link)
            rc = cuda_check(
                cudaMemcpyAsync(b->dev, b->link, b->bytes, cudaMemcpyDeviceToDevice, st->stream),
                "cudaMemcpyAsync (input from the GPU)");
        else if (b->width < 4 && !b->whole)
            rc = CVML_OK;  // copied as it was staged (cu_to_device), outside the graph
        else
            rc = cuda_check(
                cudaMemcpyAsync(b->dev, b->host, b->bytes, cudaMemcpyHostToDevice, st->stream),
                "cudaMemcpyAsync (input)");
        if (rc) return rc;
        if (!b->link && b->width < 4 && !b->whole)
            CUDA_LAUNCH(widen_kernel, cuda_blocks(n), 256, st->stream, b->narrow,
                        static_cast<int32_t*>(b->dev), n, b->width);
    }
    for (int32_t i = 0; i < st->node_count; ++i) {
        node_exec* ne = &st->nodes[i];
        if (ne->fused) continue;  // done by its head's kernel
        int rc = events ? cuda_check(cudaEventRecord(events[i], st->stream), "cudaEventRecord")
                        : CVML_OK;
        if (!rc) rc = ne->kernel->run(&ne->ctx);
        if (rc) return rc;
    }
    if (events) {
        int rc = cuda_check(cudaEventRecord(events[st->node_count], st->stream), "cudaEventRecord");
        if (rc) return rc;
    }
    for (int32_t i = 0; i < st->out_count; ++i) {
        const staged* b = &st->out[i];
        if (!b->bytes) continue;
        int rc = cuda_check(
            cudaMemcpyAsync(b->host, b->dev, b->bytes, cudaMemcpyDeviceToHost, st->stream),
            "cudaMemcpyAsync (output)");
        if (rc) return rc;
    }
    return CVML_OK;
}

/* Records enqueue_run into a graph and instantiates it. A launch error inside is the
 * run's error; any other failure leaves the subgraph to direct runs (*fallback). */
int capture_run(sg_state* st, int* fallback) {
    *fallback = 0;
    if (cudaStreamBeginCapture(st->stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
        cudaGetLastError();
        *fallback = 1;
        return CVML_OK;
    }
    int rc = enqueue_run(st);
    cudaGraph_t graph = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(st->stream, &graph);
    if (!rc) rc = cuda_check(cudaGetLastError(), "kernel launch");
    if (!rc && ended == cudaSuccess)
        rc = cuda_check(cudaGraphInstantiate(&st->exec, graph, 0), "cudaGraphInstantiate");
    else if (!rc)
        *fallback = 1;
    if (graph) cudaGraphDestroy(graph);
    for (int32_t i = 0; i < st->in_count; ++i) st->exec_links[i] = st->in[i].link;
    return rc;
}

/* The captured graph no longer matches the inputs' sources: capture again. */
void drop_graph_if_stale(sg_state* st) {
    if (!st->exec) return;
    for (int32_t i = 0; i < st->in_count; ++i)
        if (st->exec_links[i] != st->in[i].link) {
            cudaGraphExecDestroy(st->exec);
            st->exec = nullptr;
            return;
        }
}

/* ---- profiling ------------------------------------------------------------------------ */

bool profiling(const sg_state* st) {
    return CVML_PLUGIN_HAS(cvml_ir_api, cuda_ir, node_set_time) &&
           cuda_ir->graph_profiling(st->graph);
}

void free_events(sg_state* st) {
    for (int32_t i = 0; st->events && i <= st->node_count; ++i)
        if (st->events[i]) cudaEventDestroy(st->events[i]);
    free(st->events);
    st->events = nullptr;
}

/* A profiled run: the work enqueued directly with an event before each kernel node and
 * one at the end, waited for here, and each node's GPU time (from its event to the
 * next) reported to the library. A fused node's time is in its head's. */
int run_profiled(sg_state* st) {
    if (!st->events) {
        st->events = static_cast<cudaEvent_t*>(
            calloc(static_cast<size_t>(st->node_count) + 1, sizeof(cudaEvent_t)));
        if (!st->events) return cuda_fail(CVML_ERR_RUNTIME, "out of memory");
        for (int32_t i = 0; i <= st->node_count; ++i) {
            int rc = cuda_check(cudaEventCreate(&st->events[i]), "cudaEventCreate");
            if (rc) return rc;
        }
    }
    int rc = enqueue_run(st, st->events);
    if (!rc) rc = cuda_check(cudaGetLastError(), "kernel launch");
    if (!rc)
        rc = cuda_check(cudaEventSynchronize(st->events[st->node_count]), "cudaEventSynchronize");
    if (rc) return rc;
    // The inputs' copies came before the last event on the stream: done too.
    for (int32_t i = 0; i < st->in_count; ++i) st->in[i].in_flight = 0;
    for (int32_t i = 0; i < st->node_count; ++i) {
        const node_exec* ne = &st->nodes[i];
        int32_t next = i + 1;
        while (next < st->node_count && st->nodes[next].fused) ++next;
        float ms = 0;
        if (!ne->fused)
            rc = cuda_check(cudaEventElapsedTime(&ms, st->events[i], st->events[next]),
                            "cudaEventElapsedTime");
        if (rc) return rc;
        cuda_ir->node_set_time(st->graph, ne->ctx.node,
                               ms > 0 ? static_cast<uint64_t>(static_cast<double>(ms) * 1e6) : 0);
    }
    return CVML_OK;
}

/* Waits for the enqueued run, once. */
int wait_run(sg_state* st) {
    bool copying = false;
    for (int32_t i = 0; i < st->in_count; ++i) copying |= st->in[i].in_flight != 0;
    if (!st->pending && !copying) return CVML_OK;
    st->pending = 0;
    for (int32_t i = 0; i < st->in_count; ++i) st->in[i].in_flight = 0;
    return cuda_check(cudaStreamSynchronize(st->stream), "cudaStreamSynchronize");
}

}  // namespace cuda_dev
