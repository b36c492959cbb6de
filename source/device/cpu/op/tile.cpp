/* tile on the CPU: the input is aligned to the output's trailing axes (leading axes of
 * size 1 when reps is longer than its rank); each output row reads input row
 * (index mod input dim) per axis and repeats it along the last axis. */
#include "operator/tile.h"

#include <string.h>

#include "device/cpu/cpu_kernel.h"

namespace {

struct tile_args {
    const int32_t* x;
    int32_t* y;
    int32_t ndim;                      /* output rank */
    int64_t out_dims[CVML_MAX_DIMS];   /* output dims */
    int64_t in_dims[CVML_MAX_DIMS];    /* input dims aligned to the output rank */
    int64_t in_strides[CVML_MAX_DIMS]; /* row-major strides of the aligned input */
};

void tile_rows(void* arg, int64_t begin, int64_t end) {
    const tile_args* a = static_cast<const tile_args*>(arg);
    const int32_t last = a->ndim - 1;
    const int64_t in_row = a->in_dims[last];
    const int64_t out_row = a->out_dims[last];
    const size_t bytes = sizeof(int32_t) * static_cast<size_t>(in_row);
    for (int64_t row = begin; row < end; ++row) {
        int64_t r = row;
        int64_t off = 0;
        for (int32_t d = last - 1; d >= 0; --d) {
            const int64_t i = r % a->out_dims[d];
            r /= a->out_dims[d];
            off += (i % a->in_dims[d]) * a->in_strides[d];
        }
        int32_t* dst = a->y + row * out_row;
        for (int64_t k = 0; k < out_row; k += in_row) memcpy(dst + k, a->x + off, bytes);
    }
}

int tile_run(cpu_node_ctx* ctx) {
    const ir_tensor* x = ctx->inputs[0];
    const ir_tensor* y = ctx->outputs[0];
    tile_args a = {};
    a.x = cpu_in(ctx, 0);
    a.y = cpu_out(ctx, 0);
    a.ndim = y->ndim;
    const int32_t lead = y->ndim - x->ndim;
    for (int32_t d = 0; d < y->ndim; ++d) {
        a.out_dims[d] = y->dims[d];
        a.in_dims[d] = d < lead ? 1 : x->dims[d - lead];
    }
    int64_t s = 1;
    for (int32_t d = y->ndim - 1; d >= 0; --d) {
        a.in_strides[d] = s;
        s *= a.in_dims[d];
    }
    int64_t rows = 1;
    for (int32_t d = 0; d + 1 < y->ndim; ++d) rows *= y->dims[d];
    cpu_parallel_for(ctx, rows, tile_rows, &a);
    return CVML_OK;
}

}  // namespace

extern const cpu_kernel cpu_kernel_tile = {
    .op = "tile",
    .run = tile_run,
};
