/* get_valid_counts on the CPU: rows with score (column 1) strictly above the threshold
 * are copied to the top in input order, the remaining rows are -1, and output 0 holds
 * the count per batch. Batches are independent and split over threads. */
#include "operator/get_valid_counts.h"

#include <string.h>

#include "device/cpu/cpu_kernel.h"

namespace {

struct gvc_args {
    const int32_t* x;
    int32_t* count;
    int32_t* y;
    int64_t n, k;
    int32_t threshold;
};

void gvc_batches(void* arg, int64_t begin, int64_t end) {
    const gvc_args* a = static_cast<const gvc_args*>(arg);
    for (int64_t b = begin; b < end; ++b) {
        const int32_t* xb = a->x + b * a->n * a->k;
        int32_t* yb = a->y + b * a->n * a->k;
        int64_t kept = 0;
        for (int64_t j = 0; j < a->n; ++j) {
            const int32_t* row = xb + j * a->k;
            if (row[1] > a->threshold) {
                memcpy(yb + kept * a->k, row, static_cast<size_t>(a->k) * sizeof(int32_t));
                ++kept;
            }
        }
        for (int64_t i = kept * a->k; i < a->n * a->k; ++i) yb[i] = -1;
        a->count[b] = static_cast<int32_t>(kept);
    }
}

int gvc_run(cpu_node_ctx* ctx) {
    const get_valid_counts_param* p = static_cast<const get_valid_counts_param*>(ctx->param);
    const ir_tensor* x = ctx->inputs[0];
    gvc_args a = {cpu_in(ctx, 0), cpu_out(ctx, 0), cpu_out(ctx, 1),
                  x->dims[1],     x->dims[2],      p->score_threshold};
    cpu_parallel_for(ctx, x->dims[0], gvc_batches, &a);
    return CVML_OK;
}

}  // namespace

extern const cpu_kernel cpu_kernel_get_valid_counts = {
    .op = "get_valid_counts",
    .run = gvc_run,
};
