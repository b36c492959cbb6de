/* A strided gather on CUDA for layout operators: output element (i_0..i_n) reads the
 * input at base + sum(((i_d / div_d) % mod_d) * stride_d). Transpose permutes the
 * strides, repeat and upsampling divide, tile wraps with the input's extent,
 * strided_slice starts at a base and may step backwards, slice_like keeps the data's
 * strides. */
#pragma once

#include "cuda_kernel.h"

struct gather_map {
    int32_t ndim;
    int64_t dims[CVML_MAX_DIMS]; /* output */
    int64_t div[CVML_MAX_DIMS];
    int64_t mod[CVML_MAX_DIMS];
    int64_t stride[CVML_MAX_DIMS]; /* may be negative (strided_slice) */
    int64_t base;
};

__global__ void gather_kernel(const int32_t* x, int32_t* y, gather_map m, int64_t n);

static inline void row_major_strides(const cuda_tensor* t, int64_t* s) {
    int64_t k = 1;
    for (int32_t d = t->ndim - 1; d >= 0; --d) {
        s[d] = k;
        k *= t->dims[d];
    }
}

int gather_launch(cuda_node_ctx* ctx, const gather_map& m);
