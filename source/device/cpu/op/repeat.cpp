/* repeat on the CPU: with x viewed as (outer, n, inner), y[o, a*r + k, :] = x[o, a, :]
 * for k < r; one unit of work is one (o, a) block. */
#include "operator/repeat.h"

#include <string.h>

#include "device/cpu/cpu_kernel.h"

namespace {

struct repeat_args {
    const int32_t* x;
    int32_t* y;
    int64_t inner;
    int64_t repeats;
};

void repeat_blocks(void* arg, int64_t begin, int64_t end) {
    const repeat_args* a = static_cast<const repeat_args*>(arg);
    const size_t bytes = sizeof(int32_t) * static_cast<size_t>(a->inner);
    for (int64_t r = begin; r < end; ++r) {
        const int32_t* src = a->x + r * a->inner;
        int32_t* dst = a->y + r * a->repeats * a->inner;
        for (int64_t k = 0; k < a->repeats; ++k) memcpy(dst + k * a->inner, src, bytes);
    }
}

int repeat_run(cpu_node_ctx* ctx) {
    const repeat_param* p = static_cast<const repeat_param*>(ctx->param);
    const ir_tensor* x = ctx->inputs[0];
    const int32_t axis = p->axis < 0 ? p->axis + x->ndim : p->axis;
    repeat_args a = {cpu_in(ctx, 0), cpu_out(ctx, 0), 1, p->repeats};
    int64_t blocks = 1;
    for (int32_t d = 0; d <= axis; ++d) blocks *= x->dims[d];
    for (int32_t d = axis + 1; d < x->ndim; ++d) a.inner *= x->dims[d];
    cpu_parallel_for(ctx, blocks, repeat_blocks, &a);
    return CVML_OK;
}

}  // namespace

extern const cpu_kernel cpu_kernel_repeat = {
    .op = "repeat",
    .run = repeat_run,
};
