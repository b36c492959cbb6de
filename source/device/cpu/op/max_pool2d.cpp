/* max_pool2d on the CPU: padded cells count as INT32_MIN, so they never win (upstream
 * and the formalization agree); a window that covers no input cell yields INT32_MIN.
 * Work is split over (batch, channel) planes. */
#include "operator/max_pool2d.h"

#include <stdlib.h>
#include <string.h>

#include "device/cpu/cpu_kernel.h"
#include "device/cpu/cpu_paths.h"
#include "device/cpu/op/max_pool2d_fast.h"
#include "device/cpu/simd/kernel_util.h"
#include "device/cpu/simd/simd.h"
#include "utility/error.h"
#include "utility/memory.h"

namespace {

using namespace cpu_max_pool2d;

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

/* ---- fast path (SIMD levels) -----------------------------------------------------------
 * Per plane, a copy padded with INT32_MIN (so padding never wins, as upstream) and split
 * by column phase, so each window offset is a contiguous row the compiler vectorizes;
 * reads and writes any storage. Verification keeps every pad below the pool size, so
 * every window holds an input cell and the output stays within the input's values. */

/* Padding as -128 cannot win over a window's input cell, and every window has one. */
void pool_plane8(const pool_fast* f, const int8_t* x, int8_t* y, int8_t* ph) {
    void (*max_row)(int8_t*, const int8_t*, int64_t) = f->cfg->max_row8;
    memset(ph, -128, static_cast<size_t>(f->sw * f->hp * f->wq));
    for (int64_t h = 0; h < f->h; ++h) {
        int8_t* row = ph + (h + f->ph) * f->wq;
        if (f->sw == 2) {
            cpu_phase_row2_i8(f->level, x + h * f->w, f->w, f->pw, f->hp * f->wq, row);
            continue;
        }
        cpu_phase_row(x + h * f->w, f->w, f->pw, f->sw, f->hp * f->wq, row);
    }
    if (f->cfg->pool_rows8) {
        f->cfg->pool_rows8(f, ph, y, 0, f->oh);
        return;
    }
    for (int64_t i = 0; i < f->oh; ++i) {
        int8_t* acc = y + i * f->ow;
        memset(acc, -128, static_cast<size_t>(f->ow));
        for (int64_t r = 0; r < f->kh; ++r)
            for (int64_t s = 0; s < f->kw; ++s) max_row(acc, ph + window_offset(f, i, r, s), f->ow);
    }
}

struct pool_fast_args {
    const cpu_node_ctx* ctx;
    const pool_fast* f;
    int64_t planes;
};

/* A level's separable kernel (avx2) reads the input in place where it fits. */
bool pools_direct(const pool_fast* f) {
    return f->cfg->pool_direct8 && pool_direct8_fits(f);
}

/* int8 planes go by bands of output rows where the level reads them in place
 * (pools_direct), or, with column stride 2 (ResNet's 3x3 pool), has the kernels that
 * build and fold a band's rows alone (avx512). */
bool pools_by_bands(const pool_fast* f) {
    return pools_direct(f) || (f->cfg->pool_phase8_s2 && f->cfg->pool_rows8 && f->sw == 2);
}

/* The input rows that output row i0 of a plane reads, fetched a plane ahead: at a band's
 * first row they are the ones the other thread wrote (the band split's edge), and the
 * first loads of each plane waited for them (ResNet-18's pool on two threads 3-4% faster
 * at avx2 and avx512). */
void fetch_band_start(const pool_fast* f, const int8_t* plane, int64_t i0) {
    int64_t r0 = i0 * f->sh - f->ph, r1 = r0 + f->kh;
    if (r0 < 0) r0 = 0;
    if (r1 > f->h) r1 = f->h;
    const uintptr_t end = reinterpret_cast<uintptr_t>(plane + r1 * f->w);
    for (uintptr_t p = reinterpret_cast<uintptr_t>(plane + r0 * f->w) & ~uintptr_t{63}; p < end;
         p += 64)
        __builtin_prefetch(reinterpret_cast<const void*>(p));
}

/* The output lines of a plane's band, asked for in the exclusive state a plane ahead
 * where the level can (prefetchw): on two threads they were last held by the other core
 * (the arena's earlier tensors), and each store of the separable kernel waited for its
 * line. With probes in the kernel, ResNet-18's pool on two threads took 34-36 us a thread
 * writing its output and 19 us writing a private buffer; asked for ahead, the node went
 * from 0.039 to 0.035 ms. */
void own_band_ahead(int8_t* band, int64_t bytes) {
#if CVML_SIMD_X86
    simd_prefetch_lines_for_write(band, bytes);
#else
    (void)band;
    (void)bytes;
#endif
}

/* Thread slot `slot`'s band of output rows in every plane: the rows the convolution
 * before it wrote on this core (its strips are output rows), and those the convolution
 * after it reads here (broadcast mode's rows, or strips). */
void pool_band8(const pool_fast_args* a, int64_t slot, int8_t* ph) {
    const pool_fast* f = a->f;
    const int64_t i0 = f->oh * slot / f->threads, i1 = f->oh * (slot + 1) / f->threads;
    if (i0 == i1) return;
    const int8_t* x = static_cast<const int8_t*>(a->ctx->inputs[0]->data);
    int8_t* y = static_cast<int8_t*>(a->ctx->outputs[0]->data);
    // On one thread the lines are this core's already, and asking for them cost 2%.
    const bool own = f->threads > 1;
    for (int64_t t = 0; t < a->planes; ++t) {
        if (t + 1 < a->planes) {
            fetch_band_start(f, x + (t + 1) * f->h * f->w, i0);
            if (own) own_band_ahead(y + (t + 1) * f->oh * f->ow + i0 * f->ow, (i1 - i0) * f->ow);
        }
        if (f->direct) {
            f->cfg->pool_direct8(f, x + t * f->h * f->w, y + t * f->oh * f->ow, i0, i1);
            continue;
        }
        f->cfg->pool_phase8_s2(f, x + t * f->h * f->w, ph, i0, i1);
        f->cfg->pool_rows8(f, ph, y + t * f->oh * f->ow, i0, i1);
    }
}

void pool_fast_slot(void* arg, int64_t begin, int64_t end) {
    const pool_fast_args* a = static_cast<const pool_fast_args*>(arg);
    const pool_fast* f = a->f;
    const ir_tensor* x = a->ctx->inputs[0];
    const ir_tensor* y = a->ctx->outputs[0];
    void (*max_row)(int32_t*, const int32_t*, int64_t) = f->cfg->max_row;
    epilogue none = {};
    const bool int8_io = x->storage == STORAGE_INT8 && y->storage == STORAGE_INT8;
    for (int64_t slot = begin; slot < end; ++slot) {
        int32_t* ph = reinterpret_cast<int32_t*>(static_cast<uint8_t*>(a->ctx->scratch) +
                                                 f->slot_bytes * slot);
        int32_t* acc = ph + f->sw * f->hp * f->wq;
        if (int8_io && f->by_bands) {
            pool_band8(a, slot, reinterpret_cast<int8_t*>(ph));
            continue;
        }
        for (int64_t t = a->planes * slot / f->threads; t < a->planes * (slot + 1) / f->threads;
             ++t) {
            if (int8_io) {
                pool_plane8(f, static_cast<const int8_t*>(x->data) + t * f->h * f->w,
                            static_cast<int8_t*>(y->data) + t * f->oh * f->ow,
                            reinterpret_cast<int8_t*>(ph));
                continue;
            }
            for (int64_t i = 0; i < f->sw * f->hp * f->wq; ++i) ph[i] = INT32_MIN;
            for (int64_t h = 0; h < f->h; ++h)
                cpu_phase_row_any(x, (t * f->h + h) * f->w, f->w, f->pw, f->sw, f->hp * f->wq,
                                  ph + (h + f->ph) * f->wq);
            for (int64_t i = 0; i < f->oh; ++i) {
                for (int64_t j = 0; j < f->ow; ++j) acc[j] = INT32_MIN;
                for (int64_t r = 0; r < f->kh; ++r)
                    for (int64_t s = 0; s < f->kw; ++s)
                        max_row(acc, ph + window_offset(f, i, r, s), f->ow);
                epilogue_apply(f->level, &none, acc, STORAGE_INT32, 0, 0, y->data, y->storage,
                               (t * f->oh + i) * f->ow, f->ow);
            }
        }
    }
}

int max_pool2d_prerun(cpu_node_ctx* ctx, size_t* scratch_bytes) {
    *scratch_bytes = 0;
    if (cpu_level(ctx) == CPU_SIMD_SCALAR) return CVML_OK;
    const max_pool2d_param* p = static_cast<const max_pool2d_param*>(ctx->param);
    const ir_tensor* x = ctx->inputs[0];
    const ir_tensor* y = ctx->outputs[0];
    pool_fast* f = static_cast<pool_fast*>(cvml_mem_calloc(1, sizeof(pool_fast)));
    if (!f) return cvml_fail_out_of_memory();
    f->level = cpu_level(ctx);
    f->cfg = cpu_config(ctx);
    f->threads = cpu_threads(ctx);
    f->h = x->dims[2];
    f->w = x->dims[3];
    f->oh = y->dims[2];
    f->ow = y->dims[3];
    f->kh = p->pool_size.values[0];
    f->kw = p->pool_size.values[1];
    f->sh = p->strides.values[0];
    f->sw = p->strides.values[1];
    max_pool2d_pads(p, &f->ph, &f->pw);
    // Rows and columns past the input that any window reaches (ceil_mode included).
    const int64_t reach_h = (f->oh - 1) * f->sh + f->kh, reach_w = (f->ow - 1) * f->sw + f->kw;
    f->hp = reach_h > f->ph + f->h ? reach_h : f->ph + f->h;
    const int64_t wpad = reach_w > f->pw + f->w ? reach_w : f->pw + f->w;
    f->wq = (wpad + f->sw - 1) / f->sw + 1;
    f->slot_bytes = (static_cast<size_t>(f->sw * f->hp * f->wq + f->ow) * 4 + 63) & ~size_t{63};
    *scratch_bytes = f->slot_bytes * static_cast<size_t>(f->threads);
    f->direct = pools_direct(f);
    f->by_bands = pools_by_bands(f);
    ctx->state = f;
    ctx->caps = CPU_CAP_NARROW_IN(0) | CPU_CAP_INT16;
    if (f->ph < f->kh && f->pw < f->kw) ctx->caps |= CPU_CAP_NARROW_OUT;
    return CVML_OK;
}

void max_pool2d_postrun(cpu_node_ctx* ctx) {
    cvml_mem_free(ctx->state);
    ctx->state = nullptr;
}

int max_pool2d_run(cpu_node_ctx* ctx) {
    if (ctx->state) {
        pool_fast_args a = {ctx, static_cast<const pool_fast*>(ctx->state),
                            ctx->inputs[0]->dims[0] * ctx->inputs[0]->dims[1]};
        if (ctx->inputs[0]->storage == STORAGE_INT8 && ctx->outputs[0]->storage == STORAGE_INT8 &&
            a.f->direct)
            cpu_path_taken(CPU_PATH_POOL_DIRECT);
        cpu_for_each_slot(ctx, pool_fast_slot, &a);
        return CVML_OK;
    }
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

}  // namespace

extern const cpu_kernel cpu_kernel_max_pool2d = {
    .op = "max_pool2d",
    .prerun = max_pool2d_prerun,
    .run = max_pool2d_run,
    .postrun = max_pool2d_postrun,
};
