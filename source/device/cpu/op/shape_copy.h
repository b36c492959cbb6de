/* Copy loops shared by the CPU shape and layout kernels (header-only). Work is split
 * over output rows with cpu_parallel_for; each row is written by exactly one call, so
 * the bytes never depend on the thread count. */
#pragma once

#include <stdint.h>
#include <string.h>

#include "device/cpu/cpu_kernel.h"
#include "utility/error.h"

namespace shape_copy {

/* out[i0..iD-1] = in[base + sum_d i_d * strides[d]] over the output dims. */
struct gather {
    const int32_t* src;
    int32_t* dst;
    int32_t ndim;
    int64_t dims[CVML_MAX_DIMS];
    int64_t strides[CVML_MAX_DIMS];
    int64_t base;
};

inline void gather_rows(void* arg, int64_t begin, int64_t end) {
    const gather* g = static_cast<const gather*>(arg);
    const int32_t last = g->ndim - 1;
    const int64_t inner = g->dims[last];
    const int64_t step = g->strides[last];
    int64_t idx[CVML_MAX_DIMS] = {};
    int64_t r = begin;
    for (int32_t d = last - 1; d >= 0; --d) {
        idx[d] = r % g->dims[d];
        r /= g->dims[d];
    }
    int64_t off = g->base;
    for (int32_t d = 0; d < last; ++d) off += idx[d] * g->strides[d];
    for (int64_t row = begin; row < end; ++row) {
        int32_t* out = g->dst + row * inner;
        const int32_t* in = g->src + off;
        if (step == 1) {
            memcpy(out, in, sizeof(int32_t) * static_cast<size_t>(inner));
        } else {
            for (int64_t j = 0; j < inner; ++j) out[j] = in[j * step];
        }
        for (int32_t d = last - 1; d >= 0; --d) {
            off += g->strides[d];
            if (++idx[d] < g->dims[d]) break;
            off -= idx[d] * g->strides[d];
            idx[d] = 0;
        }
    }
}

/* Runs a gather; axes of size 1 get stride 0 so that no product of a huge stride is
 * ever formed for an index that is always 0. */
inline void gather_run(const cpu_node_ctx* ctx, gather* g) {
    for (int32_t d = 0; d < g->ndim; ++d)
        if (g->dims[d] == 1) g->strides[d] = 0;
    int64_t rows = 1;
    for (int32_t d = 0; d + 1 < g->ndim; ++d) rows *= g->dims[d];
    cpu_parallel_for(ctx, rows, gather_rows, g);
}

/* Row-major strides of a tensor's dims. */
inline void row_major_strides(const ir_tensor* t, int64_t* strides) {
    int64_t s = 1;
    for (int32_t d = t->ndim - 1; d >= 0; --d) {
        strides[d] = s;
        s *= t->dims[d];
    }
}

struct flat_copy {
    const int32_t* src;
    int32_t* dst;
};

inline void flat_copy_range(void* arg, int64_t begin, int64_t end) {
    const flat_copy* c = static_cast<const flat_copy*>(arg);
    memcpy(c->dst + begin, c->src + begin, sizeof(int32_t) * static_cast<size_t>(end - begin));
}

/* The copy-like ops (flatten, reshape, squeeze, expand_dims): the same values in the
 * same order. When the planner placed the output on the input's slot (upstream's
 * in-place list allows it) there is nothing to move. */
inline int copy_input0(cpu_node_ctx* ctx) {
    flat_copy c = {cpu_in(ctx, 0), cpu_out(ctx, 0)};
    if (c.src == c.dst) return CVML_OK;
    const int64_t n = ir_tensor_element_count(ctx->outputs[0]);
    if (ir_tensor_element_count(ctx->inputs[0]) != n)
        return cvml_fail(CVML_ERR_RUNTIME, "%s: input and output sizes differ", ctx->node->name);
    cpu_parallel_for(ctx, n, flat_copy_range, &c);
    return CVML_OK;
}

}  // namespace shape_copy
