/* conv2d on the CPU, byte-exact with upstream's CPU kernels:
 * - groups == 1 (upstream's im2col + int8 GEMM path) casts input and weight values to
 *   int8 (static_cast<int8_t>) before multiplying; the casts land in scratch once per run;
 * - groups > 1 multiplies the int32 values as they are;
 * - every sum wraps mod 2^32 (upstream's -O3 build), so the accumulation order is free.
 * Work is split over (batch, output channel) planes; each plane is written by one call.
 * These reference loops are the scalar level; the other levels take the fast paths of
 * conv2d_gemm.cpp and conv2d_grouped.cpp (conv2d_fast.h), chosen at prerun. */
#include "operator/conv2d.h"

#include <stdlib.h>
#include <string.h>

#include "device/cpu/cpu_kernel.h"
#include "device/cpu/op/conv2d_fast.h"
#include "device/cpu/simd/arm/cortexm/accumulate.h"
#include "device/cpu/simd/arm/cortexm/conv2d_plan.h"
#include "device/cpu/simd/arm/cortexm/conv2d_s8.h"
#include "device/cpu/simd/arm/cortexm/epilogue.h"
#include "device/cpu/simd/kernel_util.h"
#include "device/cpu/simd/simd.h"
#include "utility/error.h"
#include "utility/memory.h"

namespace cpu_conv2d {

int64_t* phase_row_table(const conv_geom& g, int64_t hq, int64_t wq) {
    const int64_t rows = hq * g.sh, plane = hq * wq;
    int64_t* row_at =
        static_cast<int64_t*>(cvml_mem_alloc(sizeof(int64_t) * static_cast<size_t>(rows)));
    if (!row_at) return nullptr;
    for (int64_t r = 0; r < rows; ++r) row_at[r] = (r % g.sh) * g.sw * plane + (r / g.sh) * wq;
    return row_at;
}

}  // namespace cpu_conv2d

namespace {

using namespace cpu_conv2d;

/* First and one-past-last output column whose input column ow*s + off lies in [0, W). */
inline void col_range(int64_t off, int64_t s, int64_t w, int64_t ow, int64_t* lo, int64_t* hi) {
    int64_t a = off >= 0 ? 0 : (-off + s - 1) / s;
    int64_t last = w - 1 - off; /* ow*s <= last */
    int64_t b = last < 0 ? 0 : last / s + 1;
    if (b > ow) b = ow;
    if (a > b) a = b;
    *lo = a;
    *hi = b;
}

/* ---- the scalar level ------------------------------------------------------------------
 * Every operand is read in its stored width: int8 weights straight from the constant
 * (in the caller's params buffer when loaded in place), activations int8 or int16 where
 * their bound is proven. An output row's sums build up in an int32 row of scratch (one
 * per thread) and go through the fused tail into the output's storage, so nothing is
 * widened or copied whole. */

struct conv_ref_args {
    conv_geom g;
    bool cast;           /* groups == 1: upstream casts both operands to int8 */
    const ir_tensor* x;  /* any storage */
    const ir_tensor* w;  /* any storage */
    const int32_t* bias; /* nullptr without bias */
    const ir_tensor* y;  /* any storage */
    const epilogue* ep;  /* the fused tail (may be empty) */
    uint32_t* rows;      /* scratch: one row of ow sums per thread slot */
    int64_t slots;
};

/* acc[x] += wv * X(xr[x * sw + off]) for x in [lo, hi), X the cast (or not) value. */
template <typename T, bool kCast>
void accumulate_row(uint32_t* acc, const void* row, uint32_t wv, int64_t lo, int64_t hi, int64_t sw,
                    int64_t off) {
    const T* xr = static_cast<const T*>(row);
    for (int64_t x = lo; x < hi; ++x) {
        const T v = xr[x * sw + off];
        const int32_t xv = kCast ? static_cast<int8_t>(v) : static_cast<int32_t>(v);
        acc[x] += wv * static_cast<uint32_t>(xv);
    }
}

typedef void (*accumulate_fn)(uint32_t*, const void*, uint32_t, int64_t, int64_t, int64_t, int64_t);

/* An int8 input needs no cast: its values are int8 already. */
accumulate_fn pick_accumulate(int storage, bool cast) {
#if CVML_SIMD_CORTEXM
    if (storage == STORAGE_INT8) return cm_accumulate_s8;
    if (storage == STORAGE_INT32) return cast ? cm_accumulate_s32_cast : cm_accumulate_s32;
#endif
    if (storage == STORAGE_INT8) return accumulate_row<int8_t, false>;
    if (storage == STORAGE_INT16)
        return cast ? accumulate_row<int16_t, true> : accumulate_row<int16_t, false>;
    return cast ? accumulate_row<int32_t, true> : accumulate_row<int32_t, false>;
}

/* Output row oy of plane t (batch n, channel o) into acc. */
void conv_row(const conv_ref_args* a, accumulate_fn accumulate, int64_t t, int64_t oy,
              uint32_t* acc) {
    const conv_geom& g = a->g;
    const int64_t n = t / g.o, o = t % g.o;
    const uint32_t init = a->bias ? static_cast<uint32_t>(a->bias[o]) : 0u;
    for (int64_t x = 0; x < g.ow; ++x) acc[x] = init;
    const int64_t c0 = (o / g.opg) * g.ic;
    const int64_t xsize = a->x->storage == STORAGE_INT8    ? 1
                          : a->x->storage == STORAGE_INT16 ? 2
                                                           : 4;
    for (int64_t ic = 0; ic < g.ic; ++ic) {
        const int64_t wbase = ((o * g.ic + ic) * g.kh) * g.kw;
        for (int64_t r = 0; r < g.kh; ++r) {
            const int64_t ih = oy * g.sh + r * g.dh - g.ph;
            if (ih < 0 || ih >= g.h) continue;
            const uint8_t* xr = static_cast<const uint8_t*>(a->x->data) +
                                (((n * g.c + c0 + ic) * g.h + ih) * g.w) * xsize;
            for (int64_t s = 0; s < g.kw; ++s) {
                int32_t wv = ir_storage_load(a->w->data, a->w->storage, wbase + r * g.kw + s);
                if (a->cast) wv = static_cast<int8_t>(wv);
                if (wv == 0) continue;
                const int64_t off = s * g.dw - g.pw;
                int64_t lo, hi;
                col_range(off, g.sw, g.w, g.ow, &lo, &hi);
                if (lo < hi) accumulate(acc, xr, static_cast<uint32_t>(wv), lo, hi, g.sw, off);
            }
        }
    }
}

/* Thread slot k takes planes [P k / T, P (k + 1) / T) with its own row of sums. */
void conv_ref_slot(void* arg, int64_t slot, int64_t) {
    const conv_ref_args* a = static_cast<const conv_ref_args*>(arg);
    const conv_geom& g = a->g;
    const int64_t planes = g.n * g.o, plane = g.oh * g.ow;
    uint32_t* acc = a->rows + slot * g.ow;
    const accumulate_fn accumulate = pick_accumulate(a->x->storage, a->cast);
    for (int64_t t = planes * slot / a->slots; t < planes * (slot + 1) / a->slots; ++t)
        for (int64_t oy = 0; oy < g.oh; ++oy) {
            conv_row(a, accumulate, t, oy, acc);
            epilogue_apply(CPU_SIMD_SCALAR, a->ep, acc, STORAGE_INT32, 0, 0, a->y->data,
                           a->y->storage, t * plane + oy * g.ow, g.ow);
        }
}

/* ---- the scalar level, writing over the image ------------------------------------
 * As conv_cm_in_place (below) with the reference loops: a stride-1 conv2d whose output
 * has its image's shape sums output row oy for every channel, then stores row oy - ph,
 * whose input row no later output row reads; rows wait in a ring of ph rows after the
 * sums. A 1x1 depthwise conv2d (a folded batch norm) needs none of it: each plane
 * reads its own plane only, at the row it writes. */

/* Whether the fused tail adds an operand (read at the output's indices). */
bool tail_adds(const cpu_node_ctx* ctx) {
    for (int32_t k = 0; ctx->tail && k < ctx->tail->count; ++k)
        if (ctx->tail->steps[k].step.kind == CVML_STEP_ADD) return true;
    return false;
}

bool pointwise_depthwise(const conv_geom& g) {
    return g.ic == 1 && g.o == g.c && g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 &&
           g.ph == 0 && g.pw == 0 && g.oh == g.h && g.ow == g.w;
}

bool same_shape_stride1(const conv_geom& g) {
    return g.sh == 1 && g.oh == g.h && g.ow == g.w && g.o == g.c && g.ph < g.oh;
}

/* The ring of rows waiting to be stored (ph rows of every channel), in the output's
 * storage. */
size_t waiting_rows_bytes(const conv_geom& g, int32_t storage) {
    return static_cast<size_t>(g.ph * g.o * g.ow) * static_cast<size_t>(storage);
}

/* The scalar loops' in-place scratch: a row of sums for every channel, then the ring. */
size_t ref_in_place_bytes(const conv_geom& g, int32_t storage) {
    return sizeof(uint32_t) * static_cast<size_t>(g.o * g.ow) + waiting_rows_bytes(g, storage);
}

/* Row `from` of the ring of waiting rows (every channel, ow values each) to output row
 * oy of image n of y (channels x oh x ow a plane): both in-place conv2d loops' store. */
void store_waiting_row(const ir_tensor* y, size_t channels, size_t oh, size_t ow,
                       const uint8_t* ring, size_t from, size_t n, size_t oy) {
    const size_t elem = static_cast<size_t>(y->storage), bytes = ow * elem;
    uint8_t* out = static_cast<uint8_t*>(y->data);
    for (size_t o = 0; o < channels; ++o)
        memcpy(out + ((n * channels + o) * oh + oy) * bytes, ring + (from * channels + o) * bytes,
               bytes);
}

void conv_ref_in_place(const conv_ref_args* a) {
    const conv_geom& g = a->g;
    const accumulate_fn accumulate = pick_accumulate(a->x->storage, a->cast);
    uint8_t* ring = reinterpret_cast<uint8_t*>(a->rows + g.o * g.ow);
    const int64_t lag = g.ph;
    for (int64_t n = 0; n < g.n; ++n) {
        for (int64_t oy = 0; oy < g.oh; ++oy) {
            for (int64_t o = 0; o < g.o; ++o)
                conv_row(a, accumulate, n * g.o + o, oy, a->rows + o * g.ow);
            // Input row oy - lag is read no more: the row waiting in its slot goes there.
            const int64_t slot = lag ? oy % lag : 0;
            if (lag && oy >= lag)
                store_waiting_row(a->y, size_t(g.o), size_t(g.oh), size_t(g.ow), ring, size_t(slot),
                                  size_t(n), size_t(oy - lag));
            for (int64_t o = 0; o < g.o; ++o) {
                void* out = lag ? static_cast<void*>(ring) : a->y->data;
                const int64_t at =
                    lag ? (slot * g.o + o) * g.ow : ((n * g.o + o) * g.oh + oy) * g.ow;
                epilogue_apply(CPU_SIMD_SCALAR, a->ep, a->rows + o * g.ow, STORAGE_INT32, 0, 0, out,
                               a->y->storage, at, g.ow);
            }
        }
        for (int64_t oy = g.oh - lag; oy < g.oh; ++oy)
            store_waiting_row(a->y, size_t(g.o), size_t(g.oh), size_t(g.ow), ring, size_t(oy % lag),
                              size_t(n), size_t(oy));
    }
}

/* ---- Cortex-M (simd/arm/cortexm/): groups == 1 with an int8-stored image and weights.
 * Output rows (batch, oy) are split over thread slots; each slot's scratch holds the
 * row's sums for every channel, then the kernel's own. */

cm_conv make_cm_conv(const conv_geom& g, const cpu_node_ctx* ctx, const int32_t* bias) {
    cm_conv cv;
    cv.x = static_cast<const int8_t*>(ctx->inputs[0]->data);
    cv.w = static_cast<const int8_t*>(ctx->inputs[1]->data);
    cv.bias = bias;
    cv.c = static_cast<int32_t>(g.c);
    cv.h = static_cast<int32_t>(g.h);
    cv.w_in = static_cast<int32_t>(g.w);
    cv.o = static_cast<int32_t>(g.o);
    cv.kh = static_cast<int32_t>(g.kh);
    cv.kw = static_cast<int32_t>(g.kw);
    cv.sh = static_cast<int32_t>(g.sh);
    cv.sw = static_cast<int32_t>(g.sw);
    cv.ph = static_cast<int32_t>(g.ph);
    cv.pw = static_cast<int32_t>(g.pw);
    cv.dh = static_cast<int32_t>(g.dh);
    cv.dw = static_cast<int32_t>(g.dw);
    cv.oh = static_cast<int32_t>(g.oh);
    cv.ow = static_cast<int32_t>(g.ow);
    cv.K = static_cast<int32_t>(g.ic * g.kh * g.kw);
    return cv;
}

/* One slot's scratch: the sums of a row for every channel, then the kernel's. */
size_t cm_slot_bytes(const cm_conv& cv, int kernels) {
    const size_t sums = sizeof(int32_t) * static_cast<size_t>(cv.o) * static_cast<size_t>(cv.ow);
    return cortexm::round16(sums) + cortexm::scratch_bytes(kernels, &cv);
}

/* The Cortex-M kernels the node is planned for (cpu_runtime.cortexm): a Cortex-M build's
 * own, or a compiled plan's target on a host. They decide the scratch and the in-place
 * forms; only a Cortex-M build runs them. */
int cm_kernels(const cpu_node_ctx* ctx) {
    // A host plans for any target; a bare-metal build only for its own kernels, so the
    // smallest image (no Cortex-M kernels) carries none of this.
    constexpr bool kPlansCortexM = CVML_SIMD_CORTEXM || !CVML_BARE_METAL;
    return kPlansCortexM && ctx->rt ? int{ctx->rt->cortexm} : int{CPU_CM_NONE};
}

bool cm_in_place_geometry(const cpu_node_ctx* ctx, const conv_geom& g) {
    return g.sh == 1 && g.oh == g.h && g.ow == g.w && g.o == g.c && g.ph < g.oh &&
           ctx->inputs[1]->kind == TENSOR_CONST && cpu_threads(ctx) == 1;
}

/* A 1x1 depthwise conv2d (a folded batch norm: y = bias + w[c] * x per channel) on
 * Cortex-M: each plane in chunks of sums that go through the tail as a block. */
constexpr int64_t kScaleChunk = 256;

bool cm_scale_applies(const cpu_node_ctx* ctx, const conv_geom& g) {
    const conv2d_param* p = static_cast<const conv2d_param*>(ctx->param);
    const int32_t s = ctx->inputs[0]->storage;
    return p->groups == g.c && g.o == g.c && g.ic == 1 && g.kh == 1 && g.kw == 1 && g.sh == 1 &&
           g.sw == 1 && g.ph == 0 && g.pw == 0 && g.oh == g.h && g.ow == g.w &&
           (s == STORAGE_INT8 || s == STORAGE_INT32);
}

/* Whether the Cortex-M kernel takes this run: upstream's groups == 1 casts to int8,
 * which an int8-stored operand already is. */
bool cm_conv_applies(const cpu_node_ctx* ctx) {
    const conv2d_param* p = static_cast<const conv2d_param*>(ctx->param);
    return p->groups == 1 && ctx->inputs[0]->storage == STORAGE_INT8 &&
           ctx->inputs[1]->storage == STORAGE_INT8;
}

#if CVML_SIMD_CORTEXM

struct conv_cm_args {
    cm_conv cv;
    int64_t n;
    const ir_tensor* y;
    const epilogue* ep;
    uint8_t* scratch;
    size_t slot_bytes;
    int64_t slots;
};

void conv_cm_slot(void* arg, int64_t slot, int64_t) {
    const conv_cm_args* a = static_cast<const conv_cm_args*>(arg);
    const cm_conv& cv = a->cv;
    uint8_t* mine = a->scratch + static_cast<size_t>(slot) * a->slot_bytes;
    int32_t* sums = reinterpret_cast<int32_t*>(mine);
    void* kernel_scratch =
        mine + ((sizeof(int32_t) * static_cast<size_t>(cv.o) * static_cast<size_t>(cv.ow) + 15) &
                ~static_cast<size_t>(15));
    const int64_t rows = a->n * cv.oh, plane = int64_t{cv.oh} * cv.ow;
    for (int64_t row = rows * slot / a->slots; row < rows * (slot + 1) / a->slots; ++row) {
        const int64_t n = row / cv.oh;
        const int32_t oy = static_cast<int32_t>(row % cv.oh);
        cm_conv_row(&cv, n, oy, kernel_scratch, sums);
        cm_epilogue_block(a->ep, sums, cv.o, cv.ow, a->y->data, a->y->storage,
                          n * cv.o * plane + int64_t{oy} * cv.ow, plane);
    }
}

/* ---- Cortex-M, writing over the image ----------------------------------------------
 * A stride-1 conv2d whose output has its image's shape can write each output row over
 * the same input row once no later output row reads it: output row oy reads input rows
 * oy - ph .. oy - ph + (kh - 1) dh, so after row oy is summed, input row oy - ph is
 * dead. Rows wait their turn in a ring of ph rows of scratch (after the slot's), every
 * channel of a row together. One thread goes through the rows in order. The tail must
 * not add an operand: it would read it at the ring's indices. */

void conv_cm_in_place(const conv_cm_args* a, int32_t lag) {
    const cm_conv& cv = a->cv;
    int32_t* sums = reinterpret_cast<int32_t*>(a->scratch);
    void* kernel_scratch =
        a->scratch +
        ((sizeof(int32_t) * static_cast<size_t>(cv.o) * static_cast<size_t>(cv.ow) + 15) &
         ~static_cast<size_t>(15));
    uint8_t* ring = a->scratch + a->slot_bytes;
    const int64_t plane = int64_t{cv.oh} * cv.ow;
    for (int64_t n = 0; n < a->n; ++n) {
        for (int32_t oy = 0; oy < cv.oh; ++oy) {
            cm_conv_row(&cv, n, oy, kernel_scratch, sums);
            if (lag == 0) {
                cm_epilogue_block(a->ep, sums, cv.o, cv.ow, a->y->data, a->y->storage,
                                  n * cv.o * plane + int64_t{oy} * cv.ow, plane);
                continue;
            }
            // Input row oy - lag is read no more: the row waiting in its slot goes there.
            const int32_t slot = oy % lag;
            if (oy >= lag)
                store_waiting_row(a->y, size_t(cv.o), size_t(cv.oh), size_t(cv.ow), ring,
                                  size_t(slot), size_t(n), size_t(oy - lag));
            cm_epilogue_block(a->ep, sums, cv.o, cv.ow, ring, a->y->storage,
                              int64_t{slot} * cv.o * cv.ow, cv.ow);
        }
        for (int32_t oy = cv.oh - lag; oy < cv.oh; ++oy)
            store_waiting_row(a->y, size_t(cv.o), size_t(cv.oh), size_t(cv.ow), ring,
                              size_t(oy % lag), size_t(n), size_t(oy));
    }
}

struct conv_scale_args {
    conv_geom g;
    const cpu_node_ctx* ctx;
    const epilogue* ep;
    const int32_t* bias;
};

void conv_scale_slot(void* arg, int64_t slot, int64_t) {
    const conv_scale_args* a = static_cast<const conv_scale_args*>(arg);
    const conv_geom& g = a->g;
    const ir_tensor* x = a->ctx->inputs[0];
    const ir_tensor* y = a->ctx->outputs[0];
    const int64_t planes = g.n * g.o, plane = g.h * g.w;
    const int64_t slots = cpu_threads(a->ctx);
    int32_t* sums = static_cast<int32_t*>(a->ctx->scratch) + slot * kScaleChunk;
    const size_t xsize = x->storage == STORAGE_INT8 ? 1 : 4;
    for (int64_t t = planes * slot / slots; t < planes * (slot + 1) / slots; ++t) {
        const int64_t o = t % g.o;
        const int32_t wv = ir_storage_load(a->ctx->inputs[1]->data, a->ctx->inputs[1]->storage, o);
        const int32_t b = a->bias ? a->bias[o] : 0;
        for (int64_t at = 0; at < plane; at += kScaleChunk) {
            const int32_t m =
                static_cast<int32_t>(plane - at < kScaleChunk ? plane - at : kScaleChunk);
            cm_scale_add(
                static_cast<const uint8_t*>(x->data) + static_cast<size_t>(t * plane + at) * xsize,
                x->storage, m, wv, b, sums);
            cm_epilogue_block(a->ep, sums, 1, m, y->data, y->storage, t * plane + at, 0);
        }
    }
}

#endif

conv_geom make_geom(const cpu_node_ctx* ctx) {
    const conv2d_param* p = static_cast<const conv2d_param*>(ctx->param);
    return conv2d_geom_of(ctx->inputs[0]->dims, ctx->inputs[1]->dims, ctx->outputs[0]->dims,
                          p->strides.values, p->padding.values, p->dilation.values, p->groups);
}
/* The shift b of a rounding cvm_right_shift that starts the node's tail, else 0. */
int32_t tail_round_shift(const cpu_node_ctx* ctx) {
    if (!ctx->tail || ctx->tail->count == 0) return 0;
    const cvml_step& s = ctx->tail->steps[0].step;
    return s.kind == CVML_STEP_RIGHT_SHIFT && s.a != 1 && s.b < 31 ? s.b : 0;
}

/* Whether that round's + 2^(b-1) can be added to the sums before the tail
 * (epilogue_fold_round): no sum may overflow with it, |bias| + 128 * sum|w| + 2^(b-1)
 * <= INT32_MAX for every output channel (the inputs are int8: upstream's groups == 1
 * path casts them, and the depthwise kernel that folds reads an int8-stored input). */
bool round_fold_fits(const cpu_node_ctx* ctx, const conv_geom& g, const conv2d_param* p,
                     int32_t b) {
    const int64_t per_channel = g.ic * g.kh * g.kw;
    const bool cast = p->groups == 1;  // upstream's groups == 1 path casts weights to int8
    const bool use_bias = p->use_bias;
    const int32_t* bias = use_bias ? cpu_in(ctx, 2) : nullptr;
    for (int64_t o = 0; o < g.o; ++o) {
        int64_t bound =
            (int64_t{1} << (b - 1)) + (bias ? (bias[o] < 0 ? -int64_t{bias[o]} : bias[o]) : 0);
        for (int64_t k = 0; k < per_channel; ++k) {
            int64_t w = cpu_load(ctx->inputs[1], o * per_channel + k);
            if (cast) w = static_cast<int8_t>(w);
            bound += 128 * (w < 0 ? -w : w);
        }
        if (bound > INT32_MAX) return false;
    }
    return true;
}

/* A fast path's state (conv_gemm or conv_grouped), zeroed, with the common part set. */
template <typename Mode>
Mode* new_mode(const cpu_node_ctx* ctx, const conv_geom& g) {
    Mode* f = static_cast<Mode*>(cvml_mem_calloc(1, sizeof(Mode)));
    if (!f) return nullptr;
    f->level = cpu_level(ctx);
    f->cfg = cpu_config(ctx);
    f->threads = cpu_threads(ctx);
    f->g = g;
    f->N = g.oh * g.ow;
    f->K = g.ic * g.kh * g.kw;
    return f;
}

/* groups == 1: the implicit im2col GEMM; the constant bias folded into its sums. */
int gemm_mode_prerun(cpu_node_ctx* ctx, const conv_geom& g, size_t* scratch_bytes) {
    conv_gemm* f = new_mode<conv_gemm>(ctx, g);
    if (!f) return cvml_fail_out_of_memory();
    int rc = gemm_prerun(ctx, f, scratch_bytes);
    if (rc) {
        conv_gemm_free(f);
        return rc;
    }
    const conv2d_param* p = static_cast<const conv2d_param*>(ctx->param);
    if (p->use_bias && ctx->inputs[2]->kind == TENSOR_CONST)
        f->bias_folded = gemm_weights_fold_bias(&f->w, cpu_in(ctx, 2)) != 0;
    gemm_bcast_starts(f);
    ctx->state = f;
    return CVML_OK;
}

/* groups > 1: grouped planes, or depthwise. */
int grouped_mode_prerun(cpu_node_ctx* ctx, const conv_geom& g, size_t* scratch_bytes) {
    conv_grouped* f = new_mode<conv_grouped>(ctx, g);
    if (!f) return cvml_fail_out_of_memory();
    int rc = grouped_prerun(ctx, f, scratch_bytes);
    if (rc) {
        conv_grouped_free(f);
        return rc;
    }
    ctx->state = f;
    return CVML_OK;
}

int conv_fast_prerun(cpu_node_ctx* ctx, const conv_geom& g, size_t* scratch_bytes) {
    const conv2d_param* p = static_cast<const conv2d_param*>(ctx->param);
    int rc = p->groups == 1 ? gemm_mode_prerun(ctx, g, scratch_bytes)
                            : grouped_mode_prerun(ctx, g, scratch_bytes);
    if (rc) return rc;
    ctx->caps = CPU_CAP_TAIL | CPU_CAP_NARROW_OUT | CPU_CAP_INT16 | CPU_CAP_NARROW_IN(0);
    return CVML_OK;
}

int conv_fast_run(cpu_node_ctx* ctx) {
    const conv2d_param* p = static_cast<const conv2d_param*>(ctx->param);
    epilogue ep;
    cpu_tail_epilogue(ctx, &ep);
    if (p->groups == 1) {
        const conv_gemm* f = static_cast<const conv_gemm*>(ctx->state);
        const int32_t* bias = p->use_bias && !f->bias_folded ? cpu_in(ctx, 2) : nullptr;
        if (f->round_folded) epilogue_fold_round(&ep);
        return conv_gemm_run(ctx, f, &ep, bias);
    }
    const conv_grouped* f = static_cast<const conv_grouped*>(ctx->state);
    const int32_t* bias = p->use_bias ? cpu_in(ctx, 2) : nullptr;
    // A depthwise fold is in the direct kernel's sums, which it takes for an int8 input.
    if (f->round_folded && ctx->inputs[0]->storage == STORAGE_INT8) epilogue_fold_round(&ep);
    conv_grouped_run(ctx, f, &ep, bias);
    return CVML_OK;
}

/* The fused tail is known: fold its rounding addend into the sums where that fits,
 * the GEMM's start (groups == 1; the bias must be there already) or the direct
 * depthwise kernel's (its input int8-stored, as that kernel requires). */
int conv2d_fused(cpu_node_ctx* ctx) {
    const conv2d_param* p = static_cast<const conv2d_param*>(ctx->param);
    const int32_t b = tail_round_shift(ctx);
    if (!CVML_CPU_FAST_PATHS || !ctx->state || b == 0) return CVML_OK;
    if (p->groups == 1) {
        conv_gemm* f = static_cast<conv_gemm*>(ctx->state);
        if (f->round_folded || !f->w.start || (p->use_bias && !f->bias_folded) ||
            !round_fold_fits(ctx, f->g, p, b))
            return CVML_OK;
        f->round_folded = gemm_weights_fold_add(&f->w, int32_t{1} << (b - 1)) != 0;
        gemm_bcast_starts(f);
        return CVML_OK;
    }
    conv_grouped* f = static_cast<conv_grouped*>(ctx->state);
    if (f->round_folded || !f->dw.direct.w4 || ctx->inputs[0]->storage != STORAGE_INT8 ||
        (p->use_bias && ctx->inputs[2]->kind != TENSOR_CONST) || !round_fold_fits(ctx, f->g, p, b))
        return CVML_OK;
    f->dw.direct.half = int32_t{1} << (b - 1);
    f->round_folded = true;
    return CVML_OK;
}

void conv_fast_free(cpu_node_ctx* ctx) {
    const conv2d_param* p = static_cast<const conv2d_param*>(ctx->param);
    if (p->groups == 1)
        conv_gemm_free(static_cast<conv_gemm*>(ctx->state));
    else
        conv_grouped_free(static_cast<conv_grouped*>(ctx->state));
    ctx->state = nullptr;
}

void conv2d_postrun(cpu_node_ctx* ctx) {
    if (CVML_CPU_FAST_PATHS) conv_fast_free(ctx);
}

int conv2d_prerun(cpu_node_ctx* ctx, size_t* scratch_bytes) {
    const conv2d_param* p = static_cast<const conv2d_param*>(ctx->param);
    const conv_geom g = make_geom(ctx);
    // Verification (D5) guarantees these; a kernel must still never index past its buffers.
    if (g.o != p->channels || g.ic * p->groups != g.c || ctx->outputs[0]->dims[1] != g.o ||
        ctx->outputs[0]->dims[0] != g.n)
        return cvml_fail(CVML_ERR_RUNTIME, "conv2d: weight and output shapes disagree");
    *scratch_bytes = 0;
    // The scalar loops read every operand as stored; the other levels take the fast
    // paths, which pack constant weights here. A weight that is a graph input or an
    // operator output has no values yet, so it takes the loops that read it per run.
    if (cpu_level(ctx) != CPU_SIMD_SCALAR && ctx->inputs[1]->kind == TENSOR_CONST)
        return conv_fast_prerun(ctx, g, scratch_bytes);
    *scratch_bytes = sizeof(uint32_t) * static_cast<size_t>(g.ow * cpu_threads(ctx));
    if (cm_kernels(ctx)) {
        // Room for the Cortex-M kernel, which takes the run if the operands are int8-stored.
        const size_t threads = static_cast<size_t>(cpu_threads(ctx));
        if (p->groups == 1) {
            const size_t cm =
                cm_slot_bytes(make_cm_conv(g, ctx, nullptr), cm_kernels(ctx)) * threads;
            if (cm > *scratch_bytes) *scratch_bytes = cm;
        }
        const size_t scale = sizeof(int32_t) * kScaleChunk * threads;
        if (p->groups > 1 && g.kh == 1 && g.kw == 1 && scale > *scratch_bytes)
            *scratch_bytes = scale;
    }
    // Every loop below applies the tail to a row (a block of rows on Cortex-M) of sums
    // held apart, reading the added operand at the indices it then writes.
    ctx->caps = CPU_CAP_TAIL | CPU_CAP_NARROW_OUT | CPU_CAP_INT16 | CPU_CAP_NARROW_IN(0) |
                CPU_CAP_NARROW_IN(1) | CPU_CAP_TAIL_IN_PLACE;
    return CVML_OK;
}

int conv2d_run(cpu_node_ctx* ctx) {
    if (CVML_CPU_FAST_PATHS && ctx->state) return conv_fast_run(ctx);
    const conv2d_param* p = static_cast<const conv2d_param*>(ctx->param);
    epilogue ep;
    cpu_tail_epilogue(ctx, &ep);
#if CVML_SIMD_CORTEXM
    if (cm_conv_applies(ctx)) {
        const conv_geom g = make_geom(ctx);
        conv_cm_args cm = {make_cm_conv(g, ctx, p->use_bias ? cpu_in(ctx, 2) : nullptr),
                           g.n,
                           ctx->outputs[0],
                           &ep,
                           static_cast<uint8_t*>(ctx->scratch),
                           0,
                           cpu_threads(ctx)};
        cm.slot_bytes = cm_slot_bytes(cm.cv, cm_kernels(ctx));
        if (ctx->outputs[0]->data == ctx->inputs[0]->data)
            conv_cm_in_place(&cm, static_cast<int32_t>(g.ph));
        else
            cpu_for_each_slot(ctx, conv_cm_slot, &cm);
        return CVML_OK;
    }
    if (cm_scale_applies(ctx, make_geom(ctx))) {
        conv_scale_args sa = {make_geom(ctx), ctx, &ep, p->use_bias ? cpu_in(ctx, 2) : nullptr};
        cpu_for_each_slot(ctx, conv_scale_slot, &sa);
        return CVML_OK;
    }
#endif
    conv_ref_args a = {make_geom(ctx),
                       p->groups == 1,
                       ctx->inputs[0],
                       ctx->inputs[1],
                       p->use_bias ? cpu_in(ctx, 2) : nullptr,
                       ctx->outputs[0],
                       &ep,
                       static_cast<uint32_t*>(ctx->scratch),
                       cpu_threads(ctx)};
    if (ctx->outputs[0]->data == ctx->inputs[0]->data && !pointwise_depthwise(a.g))
        conv_ref_in_place(&a);
    else
        cpu_for_each_slot(ctx, conv_ref_slot, &a);
    return CVML_OK;
}

/* The image's buffer takes the output where the path the run will take allows it:
 * not the x86 and aarch64 fast paths (their tiles are stored before the tail); the
 * Cortex-M kernels and the scalar loops with a stride-1 same-shape geometry (the ring of
 * waiting rows joins the scratch), or a folded batch norm. The added operand of a tail
 * would be read at the ring's indices, so a tail with one keeps its own buffer. */
int32_t conv2d_writes_over_input(const cpu_node_ctx* ctx, size_t* scratch_bytes) {
    if (CVML_CPU_FAST_PATHS && ctx->state) return -1;
    const conv2d_param* p = static_cast<const conv2d_param*>(ctx->param);
    if (ctx->inputs[1]->kind != TENSOR_CONST ||
        (p->use_bias && ctx->inputs[2]->kind != TENSOR_CONST))
        return -1;
    const conv_geom g = make_geom(ctx);
    size_t need = 0;
    if (cm_kernels(ctx) && cm_conv_applies(ctx)) {
        if (!cm_in_place_geometry(ctx, g) || tail_adds(ctx)) return -1;
        need = cm_slot_bytes(make_cm_conv(g, ctx, nullptr), cm_kernels(ctx)) +
               waiting_rows_bytes(g, ctx->outputs[0]->storage);
    } else if (cm_kernels(ctx) && cm_scale_applies(ctx, g)) {
        return 0;
    } else if (pointwise_depthwise(g)) {
        return 0;
    } else {
        if (!same_shape_stride1(g) || cpu_threads(ctx) != 1 || tail_adds(ctx)) return -1;
        need = ref_in_place_bytes(g, ctx->outputs[0]->storage);
    }
    if (need > *scratch_bytes) *scratch_bytes = need;
    return 0;
}

}  // namespace

extern const cpu_kernel cpu_kernel_conv2d = {
    .op = "conv2d",
    .prerun = conv2d_prerun,
    .run = conv2d_run,
    .postrun = conv2d_postrun,
    .fused = conv2d_fused,
    .narrow_consts = CPU_CAP_NARROW_IN(1),
    .writes_over_input = conv2d_writes_over_input,
};
