/* upsampling on the CPU: nearest neighbour, each output row copies the scaled input row
 * with every value repeated `scale` times. Work is split over (batch, channel) planes. */
#include "operator/upsampling.h"

#include "device/cpu/cpu_kernel.h"

namespace {

struct up_args {
    const int32_t* x;
    int32_t* y;
    int64_t h, w, scale;
};

void up_planes(void* arg, int64_t begin, int64_t end) {
    const up_args* a = static_cast<const up_args*>(arg);
    const int64_t oh = a->h * a->scale, ow = a->w * a->scale;
    for (int64_t t = begin; t < end; ++t) {
        const int32_t* xp = a->x + t * a->h * a->w;
        int32_t* yp = a->y + t * oh * ow;
        for (int64_t i = 0; i < oh; ++i) {
            const int32_t* xr = xp + (i / a->scale) * a->w;
            int32_t* yr = yp + i * ow;
            for (int64_t j = 0; j < ow; ++j) yr[j] = xr[j / a->scale];
        }
    }
}

int upsampling_run(cpu_node_ctx* ctx) {
    const upsampling_param* p = static_cast<const upsampling_param*>(ctx->param);
    const ir_tensor* x = ctx->inputs[0];
    up_args a = {cpu_in(ctx, 0), cpu_out(ctx, 0), x->dims[2], x->dims[3], p->scale};
    cpu_parallel_for(ctx, x->dims[0] * x->dims[1], up_planes, &a);
    return CVML_OK;
}

}  // namespace

extern const cpu_kernel cpu_kernel_upsampling = {
    .op = "upsampling",
    .run = upsampling_run,
};
