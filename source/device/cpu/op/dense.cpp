/* dense on the CPU: Y[m, u] = Σ_k X[m, k]·W[u, k] (+ b[u]) in int32 with wrap-around
 * (upstream casts nothing here, unlike conv2d's groups == 1 path). Rows of X and W are
 * contiguous, so each output is one streaming dot product; work is split over outputs. */
#include "operator/dense.h"

#include "device/cpu/cpu_kernel.h"
#include "utility/error.h"

namespace {

struct dense_args {
    const int32_t* x;
    const int32_t* w;
    const int32_t* bias;
    int32_t* y;
    int64_t k, units;
};

void dense_range(void* arg, int64_t begin, int64_t end) {
    const dense_args* a = static_cast<const dense_args*>(arg);
    for (int64_t t = begin; t < end; ++t) {
        const int64_t m = t / a->units;
        const int64_t u = t % a->units;
        const int32_t* xr = a->x + m * a->k;
        const int32_t* wr = a->w + u * a->k;
        uint32_t acc = a->bias ? static_cast<uint32_t>(a->bias[u]) : 0u;
        for (int64_t i = 0; i < a->k; ++i)
            acc += static_cast<uint32_t>(xr[i]) * static_cast<uint32_t>(wr[i]);
        a->y[t] = static_cast<int32_t>(acc);
    }
}

int dense_prerun(cpu_node_ctx* ctx, size_t* scratch_bytes) {
    *scratch_bytes = 0;
    const ir_tensor* x = ctx->inputs[0];
    const ir_tensor* w = ctx->inputs[1];
    const ir_tensor* y = ctx->outputs[0];
    if (x->ndim != 2 || w->ndim != 2 || y->ndim != 2 || w->dims[1] != x->dims[1] ||
        y->dims[0] != x->dims[0] || y->dims[1] != w->dims[0])
        return cvml_fail(CVML_ERR_RUNTIME, "dense: input, weight and output shapes disagree");
    return CVML_OK;
}

int dense_run(cpu_node_ctx* ctx) {
    const dense_param* p = static_cast<const dense_param*>(ctx->param);
    dense_args a;
    a.x = cpu_in(ctx, 0);
    a.w = cpu_in(ctx, 1);
    a.bias = p->use_bias ? cpu_in(ctx, 2) : nullptr;
    a.y = cpu_out(ctx, 0);
    a.k = ctx->inputs[0]->dims[1];
    a.units = ctx->outputs[0]->dims[1];
    cpu_parallel_for(ctx, ctx->outputs[0]->dims[0] * a.units, dense_range, &a);
    return CVML_OK;
}

const cpu_kernel dense_kernel = {"dense", dense_prerun, dense_run, nullptr};

}  // namespace

int register_cpu_op_dense(void) {
    return cpu_kernel_registry_add(&dense_kernel);
}
int unregister_cpu_op_dense(void) {
    return cpu_kernel_registry_remove(&dense_kernel);
}
