/* where on the CPU. Same-shape condition: element-wise cond != 0 ? x : y. 1-D
 * condition: row r of the output (x viewed as (shape[0], rest)) is x's row r when
 * cond[r] != 0, else y's. Upstream copies row_size *bytes* here and leaves the rest of
 * each row stale (divergence D6); cvm-lite copies whole rows, so every output element
 * is written. */
#include "device/cpu/cpu_kernel.h"

namespace {

struct where_args {
    const int32_t* cond;
    const int32_t* x;
    const int32_t* y;
    int32_t* out;
    int64_t row; /* elements per condition value: 1 for a same-shape condition */
};

void where_range(void* arg, int64_t begin, int64_t end) {
    const where_args* a = static_cast<const where_args*>(arg);
    if (a->row == 1) {
        for (int64_t i = begin; i < end; ++i) a->out[i] = a->cond[i] != 0 ? a->x[i] : a->y[i];
        return;
    }
    for (int64_t i = begin; i < end; ++i) {
        const int32_t* src = a->cond[i / a->row] != 0 ? a->x : a->y;
        a->out[i] = src[i];
    }
}

int where_run(cpu_node_ctx* ctx) {
    int64_t n = ir_tensor_element_count(ctx->outputs[0]);
    int64_t cond_n = ir_tensor_element_count(ctx->inputs[0]);
    // Verification guarantees cond has x's shape or is (x.shape[0],).
    where_args a = {cpu_in(ctx, 0), cpu_in(ctx, 1), cpu_in(ctx, 2), cpu_out(ctx, 0),
                    cond_n == n ? 1 : n / cond_n};
    cpu_parallel_for(ctx, n, where_range, &a);
    return CVML_OK;
}

}  // namespace

extern const cpu_kernel cpu_kernel_where = {
    .op = "where",
    .run = where_run,
};
