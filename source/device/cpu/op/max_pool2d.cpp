/* max_pool2d on the CPU: padded cells count as INT32_MIN, so they never win (upstream
 * and the formalization agree); a window that covers no input cell yields INT32_MIN.
 * Work is split over (batch, channel) planes. */
#include "operator/max_pool2d.h"

#include "device/cpu/cpu_kernel.h"

namespace {

struct pool_args {
    const int32_t* x;
    int32_t* y;
    int64_t h, w, oh, ow, kh, kw, sh, sw, ph, pw;
};

void pool_planes(void* arg, int64_t begin, int64_t end) {
    const pool_args* a = static_cast<const pool_args*>(arg);
    for (int64_t t = begin; t < end; ++t) {
        const int32_t* xp = a->x + t * a->h * a->w;
        int32_t* yp = a->y + t * a->oh * a->ow;
        for (int64_t i = 0; i < a->oh; ++i) {
            int64_t r0 = i * a->sh - a->ph, r1 = r0 + a->kh;
            if (r0 < 0) r0 = 0;
            if (r1 > a->h) r1 = a->h;
            for (int64_t j = 0; j < a->ow; ++j) {
                int64_t c0 = j * a->sw - a->pw, c1 = c0 + a->kw;
                if (c0 < 0) c0 = 0;
                if (c1 > a->w) c1 = a->w;
                int32_t m = INT32_MIN;
                for (int64_t r = r0; r < r1; ++r)
                    for (int64_t c = c0; c < c1; ++c) {
                        const int32_t v = xp[r * a->w + c];
                        if (v > m) m = v;
                    }
                yp[i * a->ow + j] = m;
            }
        }
    }
}

int max_pool2d_run(cpu_node_ctx* ctx) {
    const max_pool2d_param* p = static_cast<const max_pool2d_param*>(ctx->param);
    const ir_tensor* x = ctx->inputs[0];
    const ir_tensor* y = ctx->outputs[0];
    pool_args a;
    a.x = cpu_in(ctx, 0);
    a.y = cpu_out(ctx, 0);
    a.h = x->dims[2];
    a.w = x->dims[3];
    a.oh = y->dims[2];
    a.ow = y->dims[3];
    a.kh = p->pool_size.values[0];
    a.kw = p->pool_size.values[1];
    a.sh = p->strides.values[0];
    a.sw = p->strides.values[1];
    max_pool2d_pads(p, &a.ph, &a.pw);
    cpu_parallel_for(ctx, x->dims[0] * x->dims[1], pool_planes, &a);
    return CVML_OK;
}

const cpu_kernel max_pool2d_kernel = {"max_pool2d", nullptr, max_pool2d_run, nullptr};

}  // namespace

int register_cpu_op_max_pool2d(void) {
    return cpu_kernel_registry_add(&max_pool2d_kernel);
}
int unregister_cpu_op_max_pool2d(void) {
    return cpu_kernel_registry_remove(&max_pool2d_kernel);
}
