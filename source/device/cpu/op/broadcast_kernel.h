/* The NumPy broadcast loop shared by the broadcast_* CPU kernels. Prerun computes
 * each input's element strides over the output's dims (0 along broadcast dims) once;
 * run walks each thread's contiguous output range with an odometer, so the work per
 * element is one load of each operand and no division. */
#pragma once

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "device/cpu/cpu_kernel.h"
#include "utility/error.h"
#include "utility/memory.h"

namespace cpu_broadcast {

struct state {
    int32_t ndim;
    uint8_t same_shape; /* both inputs have the output's shape: a flat loop */
    int64_t dims[CVML_MAX_DIMS];
    int64_t a_stride[CVML_MAX_DIMS];
    int64_t b_stride[CVML_MAX_DIMS];
};

inline void strides_for(const ir_tensor* t, int32_t ndim, const int64_t* dims, int64_t* stride) {
    int32_t off = ndim - t->ndim;
    int64_t s = 1;
    for (int32_t d = ndim - 1; d >= 0; --d) {
        if (d < off || t->dims[d - off] == 1) {
            stride[d] = 0;
        } else {
            stride[d] = s;
            s *= t->dims[d - off];
        }
    }
    (void)dims;
}

/* The state prerun makes for ctx's tensors, every byte set (padding zero), so that two
 * states for the same tensors compare equal byte for byte (state_matches). */
inline void fill_state(const cpu_node_ctx* ctx, state* st) {
    memset(st, 0, sizeof *st);
    const ir_tensor* out = ctx->outputs[0];
    st->ndim = out->ndim;
    for (int32_t d = 0; d < out->ndim; ++d) st->dims[d] = out->dims[d];
    strides_for(ctx->inputs[0], st->ndim, st->dims, st->a_stride);
    strides_for(ctx->inputs[1], st->ndim, st->dims, st->b_stride);
    st->same_shape = 1;
    for (int i = 0; i < 2; ++i) {
        const ir_tensor* t = ctx->inputs[i];
        if (t->ndim != out->ndim) st->same_shape = 0;
        for (int32_t d = 0; st->same_shape && d < out->ndim; ++d)
            if (t->dims[d] != out->dims[d]) st->same_shape = 0;
    }
}

inline int prerun(cpu_node_ctx* ctx, size_t* scratch_bytes) {
    *scratch_bytes = 0;
    state* st = static_cast<state*>(cvml_mem_calloc(1, sizeof(state)));
    if (!st) return cvml_fail_out_of_memory();
    fill_state(ctx, st);
    ctx->state = st;
    return CVML_OK;
}

/* cpu_kernel.state_matches: a stored state is used only when it is the one prerun makes. */
inline bool state_matches(const cpu_node_ctx* ctx, const void* stored) {
    state expected;
    fill_state(ctx, &expected);
    return memcmp(&expected, stored, sizeof expected) == 0;
}

inline void postrun(cpu_node_ctx* ctx) {
    cvml_mem_free(ctx->state);
    ctx->state = nullptr;
}

struct args {
    const int32_t* a;
    const int32_t* b;
    int32_t* y;
    const state* st;
};

/* Op::apply(int32_t, int32_t) -> int32_t is the element function. */
template <typename Op>
void range(void* arg, int64_t begin, int64_t end) {
    const args* p = static_cast<const args*>(arg);
    const state* s = p->st;
    const int32_t* a = p->a;
    const int32_t* b = p->b;
    int32_t* y = p->y;
    if (s->same_shape) {
        for (int64_t i = begin; i < end; ++i) y[i] = Op::apply(a[i], b[i]);
        return;
    }
    const int32_t last = s->ndim - 1;
    int64_t idx[CVML_MAX_DIMS];
    int64_t ao = 0, bo = 0, rem = begin;
    for (int32_t d = last; d >= 0; --d) {
        idx[d] = rem % s->dims[d];
        rem /= s->dims[d];
        ao += idx[d] * s->a_stride[d];
        bo += idx[d] * s->b_stride[d];
    }
    const int64_t as = s->a_stride[last];
    const int64_t bs = s->b_stride[last];
    int64_t i = begin;
    while (i < end) {
        int64_t n = s->dims[last] - idx[last];
        if (n > end - i) n = end - i;
        for (int64_t k = 0; k < n; ++k) y[i + k] = Op::apply(a[ao + k * as], b[bo + k * bs]);
        i += n;
        idx[last] += n;
        ao += n * as;
        bo += n * bs;
        for (int32_t d = last; d > 0 && idx[d] == s->dims[d]; --d) {
            ao -= idx[d] * s->a_stride[d];
            bo -= idx[d] * s->b_stride[d];
            idx[d] = 0;
            ++idx[d - 1];
            ao += s->a_stride[d - 1];
            bo += s->b_stride[d - 1];
        }
    }
}

template <typename Op>
int run(cpu_node_ctx* ctx) {
    args p = {cpu_in(ctx, 0), cpu_in(ctx, 1), cpu_out(ctx, 0),
              static_cast<const state*>(ctx->state)};
    cpu_parallel_for(ctx, ir_tensor_element_count(ctx->outputs[0]), range<Op>, &p);
    return CVML_OK;
}

}  // namespace cpu_broadcast
