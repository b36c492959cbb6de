/* concatenate on the CPU: each output row (the dims before `axis`) is the inputs'
 * matching blocks laid end to end. */
#include "operator/concatenate.h"

#include <string.h>

#include "device/cpu/cpu_kernel.h"

namespace {

struct concat_args {
    const cpu_node_ctx* ctx;
    int32_t axis;
    int64_t inner;   /* product of the dims after axis */
    int64_t out_row; /* output elements per outer index */
};

void concat_rows(void* arg, int64_t begin, int64_t end) {
    const concat_args* a = static_cast<const concat_args*>(arg);
    const cpu_node_ctx* ctx = a->ctx;
    for (int64_t o = begin; o < end; ++o) {
        int32_t* out = cpu_out(ctx, 0) + o * a->out_row;
        for (int32_t i = 0; i < ctx->input_count; ++i) {
            const int64_t len = ctx->inputs[i]->dims[a->axis] * a->inner;
            memcpy(out, cpu_in(ctx, i) + o * len, sizeof(int32_t) * static_cast<size_t>(len));
            out += len;
        }
    }
}

int concatenate_run(cpu_node_ctx* ctx) {
    const concatenate_param* p = static_cast<const concatenate_param*>(ctx->param);
    const ir_tensor* y = ctx->outputs[0];
    const int32_t axis = p->axis < 0 ? p->axis + y->ndim : p->axis;
    concat_args a = {ctx, axis, 1, 0};
    int64_t outer = 1;
    for (int32_t d = 0; d < axis; ++d) outer *= y->dims[d];
    for (int32_t d = axis + 1; d < y->ndim; ++d) a.inner *= y->dims[d];
    a.out_row = y->dims[axis] * a.inner;
    cpu_parallel_for(ctx, outer, concat_rows, &a);
    return CVML_OK;
}

}  // namespace

extern const cpu_kernel cpu_kernel_concatenate = {
    .op = "concatenate",
    .run = concatenate_run,
};
