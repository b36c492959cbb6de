/* take on the CPU. Indices are clipped to [0, n-1] (upstream's kernel), so any index
 * value reads inside the data. Without an axis n is the flattened data's size; with
 * one, the output is viewed as (outer, indices, inner) and each (outer, index) pair
 * copies one contiguous inner row. */
#include <string.h>

#include "device/cpu/cpu_kernel.h"
#include "operator/scalar.h"
#include "operator/take.h"

namespace {

struct take_args {
    const int32_t* data;
    const int32_t* indices;
    int32_t* y;
    int64_t n_idx;  /* indices' element count */
    int64_t axis_n; /* extent being indexed */
    int64_t inner;  /* elements per copied row */
};

void take_flat_range(void* arg, int64_t begin, int64_t end) {
    const take_args* a = static_cast<const take_args*>(arg);
    for (int64_t i = begin; i < end; ++i)
        a->y[i] = a->data[cvm_clip_index(a->indices[i], a->axis_n)];
}

/* One work item per (outer, index) row. */
void take_axis_range(void* arg, int64_t begin, int64_t end) {
    const take_args* a = static_cast<const take_args*>(arg);
    const size_t row_bytes = static_cast<size_t>(a->inner) * sizeof(int32_t);
    for (int64_t r = begin; r < end; ++r) {
        int64_t o = r / a->n_idx;
        int64_t j = r % a->n_idx;
        int64_t k = cvm_clip_index(a->indices[j], a->axis_n);
        memcpy(a->y + r * a->inner, a->data + (o * a->axis_n + k) * a->inner, row_bytes);
    }
}

int take_run(cpu_node_ctx* ctx) {
    const take_param* p = static_cast<const take_param*>(ctx->param);
    const ir_tensor* data = ctx->inputs[0];
    take_args a = {cpu_in(ctx, 0),
                   cpu_in(ctx, 1),
                   cpu_out(ctx, 0),
                   ir_tensor_element_count(ctx->inputs[1]),
                   0,
                   1};
    if (!p->axis.present) {
        a.axis_n = ir_tensor_element_count(data);
        cpu_parallel_for(ctx, a.n_idx, take_flat_range, &a);
        return CVML_OK;
    }
    int32_t axis = p->axis.value < 0 ? p->axis.value + data->ndim : p->axis.value;
    int64_t outer = 1;
    for (int32_t d = 0; d < axis; ++d) outer *= data->dims[d];
    for (int32_t d = axis + 1; d < data->ndim; ++d) a.inner *= data->dims[d];
    a.axis_n = data->dims[axis];
    cpu_parallel_for(ctx, outer * a.n_idx, take_axis_range, &a);
    return CVML_OK;
}

}  // namespace

extern const cpu_kernel cpu_kernel_take = {
    .op = "take",
    .run = take_run,
};
