/* conv2d at the SIMD levels, groups == 1: the image the implicit GEMM reads (see the
 * fast-path notes in conv2d_fast.h and docs/cpu.md): the phase image of the strips, taps
 * mode's and broadcast mode's channel-interleaved ones, or a direct 1x1 conv's input cast
 * to int8, each built by the context's threads. */
#include <string.h>

#include "device/cpu/op/conv2d_fast.h"
#include "device/cpu/simd/kernel_util.h"
#include "device/cpu/simd/simd.h"

namespace cpu_conv2d {
namespace {

/* The image: zero-padded (ph, pw) and split into sh x sw phases of hq x wq values,
 * phase (pr, pc) holding padded rows pr, pr + sh, ... and columns pc, pc + sw, ...:
 *   img[((ic*sh + pr)*sw + pc)*hq*wq + i*wq + j] = xpad[ic][i*sh + pr][j*sw + pc].
 * Output (y, x) then reads tap (r, s) at taps[k] + y*wq + x, so GEMM column y*wq + x
 * is one flat run per tap over every output row; columns x >= ow read padding or the
 * next row and are computed but never stored. */
struct image_args {
    const conv_gemm* f;
    const ir_tensor* x;
    int64_t base; /* first element of the image in x */
    int8_t* img;
};

/* One int32 input row (stride 1 or 2) into its phase row(s), cast to int8 as upstream's
 * groups == 1 path does, in vector-sized chunks. */
void image_row_from_i32(const conv_gemm* f, const int32_t* src, int8_t* row) {
    const conv_geom& g = f->g;
    if (g.sw == 1) {
        simd_narrow_i32_i8(f->level, src, g.w, row + g.pw);
        return;
    }
    int8_t chunk[256];
    for (int64_t x = 0; x < g.w; x += 256) {  // x even: chunk parity is the row's
        const int64_t n = g.w - x < 256 ? g.w - x : 256;
        simd_narrow_i32_i8(f->level, src + x, n, chunk);
        cpu_phase_row2_i8(f->level, chunk, n, g.pw, f->hq * f->wq, row + x / 2);
    }
}

/* Items are input rows (ic, h), so even a 3-channel image splits evenly over threads;
 * the first and last row of a channel also zero the padding rows above and below.
 * Rows are a few dozen bytes, so (ic, h) are stepped and row starts looked up rather
 * than divided out: four 64-bit divisions per row took most of this function's time. */
void image_rows(void* arg, int64_t begin, int64_t end) {
    const image_args* a = static_cast<const image_args*>(arg);
    const conv_gemm* f = a->f;
    const conv_geom& g = f->g;
    const int64_t plane = f->hq * f->wq;
    if (a->x->storage == STORAGE_INT8 && f->cfg->image_rows_i8 &&
        g.sw <= f->cfg->image_rows_max_sw) {
        f->cfg->image_rows_i8(f, static_cast<const int8_t*>(a->x->data) + a->base, a->img, begin,
                              end);
        return;
    }
    int64_t ic = begin / g.h, h = begin % g.h;
    for (int64_t item = begin; item < end; ++item, ++h) {
        int8_t* channel = image_item(f, a->img, &ic, &h);
        if (!f->row_read[h + g.ph]) continue;
        const int64_t src = a->base + item * g.w;
        const int64_t hp = h + g.ph;
        int8_t* row = channel + f->row_at[hp];
        if (a->x->storage == STORAGE_INT8 && g.sw == 1) {
            image_copy_row(f, static_cast<const int8_t*>(a->x->data) + src, row);
            continue;
        }
        if (a->x->storage == STORAGE_INT8 && g.sw == 2) {
            image_zero_row2_around(f, channel, hp);
            cpu_phase_row2_i8(f->level, static_cast<const int8_t*>(a->x->data) + src, g.w, g.pw,
                              plane, row);
            continue;
        }
        image_zero_row(f, channel, hp);
        if (a->x->storage == STORAGE_INT32 && g.sw <= 2) {
            image_row_from_i32(f, static_cast<const int32_t*>(a->x->data) + src, row);
        } else {
            // Upstream's groups == 1 path casts every input value to int8.
            cpu_phase_row_any(a->x, src, g.w, g.pw, g.sw, plane, row);
        }
    }
}

struct cast8_args {
    int level;
    const ir_tensor* t;
    int64_t base;
    int8_t* dst;
};

void cast8_range(void* arg, int64_t begin, int64_t end) {
    const cast8_args* a = static_cast<const cast8_args*>(arg);
    if (a->t->storage == STORAGE_INT32) {
        simd_narrow_i32_i8(a->level, static_cast<const int32_t*>(a->t->data) + a->base + begin,
                           end - begin, a->dst + begin);
        return;
    }
    for (int64_t i = begin; i < end; ++i)
        a->dst[i] = static_cast<int8_t>(cpu_load(a->t, a->base + i));
}

/* The c4 image of taps mode. Items are (group of 4 channels, input row); the first and
 * last row of a group also fill the padding rows (the value 0: gemm_taps_zero). */
void image4_rows(void* arg, int64_t begin, int64_t end) {
    const image_args* a = static_cast<const image_args*>(arg);
    const conv_gemm* f = a->f;
    const conv_geom& g = f->g;
    const size_t row_bytes = static_cast<size_t>(f->wq) * 4;
    const uint8_t zero = gemm_taps_zero(f->level);
    int64_t grp = begin / g.h, h = begin % g.h;  // stepped, as in image_rows
    for (int64_t item = begin; item < end; ++item, ++h) {
        if (h == g.h) {
            h = 0;
            ++grp;
        }
        uint8_t* plane =
            reinterpret_cast<uint8_t*>(a->img) + static_cast<size_t>(grp * f->hq) * row_bytes;
        if (h == 0) memset(plane, zero, row_bytes * static_cast<size_t>(g.ph));
        if (h == g.h - 1)
            memset(plane + static_cast<size_t>(g.ph + g.h) * row_bytes, zero,
                   row_bytes * static_cast<size_t>(f->hq - g.ph - g.h));
        uint8_t* row = plane + static_cast<size_t>(g.ph + h) * row_bytes;
        if (a->x->storage == STORAGE_INT8) {
            const int8_t* rows[4];
            for (int64_t i = 0; i < 4; ++i) {
                const int64_t c = grp * 4 + i;
                rows[i] =
                    c < g.c ? static_cast<const int8_t*>(a->x->data) + a->base + (c * g.h + h) * g.w
                            : nullptr;
            }
            gemm_interleave4(f->level, rows, g.pw, g.w, f->wq, row);
            continue;
        }
        // An int32 or int16 input, value by value (upstream casts each to int8).
        for (int64_t j = 0; j < f->wq; ++j)
            for (int64_t i = 0; i < 4; ++i) {
                const int64_t c = grp * 4 + i, x = j - g.pw;
                const int32_t v = c < g.c && x >= 0 && x < g.w
                                      ? cpu_load(a->x, a->base + (c * g.h + h) * g.w + x)
                                      : 0;
                row[4 * j + i] = static_cast<uint8_t>(static_cast<uint8_t>(v) ^ zero);
            }
    }
}

/* Broadcast mode's image: each group of 4 channels' plane interleaved by 4 (x ^ zero)
 * as one run of h * w pixels, with no padding (no tap that reads it is multiplied), so a
 * group is a few whole-vector steps however small its rows. This writes pixels
 * [p0, p0 + n) of group grp. */
void bcast_image_run(const image_args* a, int64_t grp, int64_t p0, int64_t n) {
    const conv_gemm* f = a->f;
    const conv_geom& g = f->g;
    const int64_t hw = g.h * g.w;
    const uint8_t zero = gemm_taps_zero(f->level);
    uint8_t* dst = reinterpret_cast<uint8_t*>(a->img) + grp * f->bcast.plane4 + p0 * 4;
    if (a->x->storage == STORAGE_INT8) {
        const int8_t* planes[4];
        for (int64_t i = 0; i < 4; ++i) {
            const int64_t c = grp * 4 + i;
            planes[i] =
                c < g.c ? static_cast<const int8_t*>(a->x->data) + a->base + c * hw + p0 : nullptr;
        }
        gemm_interleave4(f->level, planes, 0, n, n, dst);
        return;
    }
    // An int32 or int16 input, value by value (upstream casts each to int8).
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < 4; ++i) {
            const int64_t c = grp * 4 + i;
            const int32_t v = c < g.c ? cpu_load(a->x, a->base + c * hw + p0 + j) : 0;
            dst[4 * j + i] = static_cast<uint8_t>(static_cast<uint8_t>(v) ^ zero);
        }
}

/* Items are groups (each thread builds whole planes). */
void bcast_image_planes(void* arg, int64_t begin, int64_t end) {
    const image_args* a = static_cast<const image_args*>(arg);
    const int64_t hw = a->f->g.h * a->f->g.w;
    for (int64_t grp = begin; grp < end; ++grp) bcast_image_run(a, grp, 0, hw);
}

/* Items are input rows (each thread builds the rows of every group that its output
 * rows read most of, when the items below go rows first). */
void bcast_image_rows(void* arg, int64_t begin, int64_t end) {
    const image_args* a = static_cast<const image_args*>(arg);
    const conv_geom& g = a->f->g;
    for (int64_t grp = 0; grp < a->f->taps4.groups4; ++grp)
        bcast_image_run(a, grp, begin * g.w, (end - begin) * g.w);
}

}  // namespace

void gemm_build_image(cpu_node_ctx* ctx, const conv_gemm* f, const ir_tensor* x, int64_t n,
                      int8_t* img) {
    const conv_geom& g = f->g;
    const int64_t chw = g.c * g.h * g.w;
    if (f->direct) {
        // Upstream's groups == 1 path casts every input value to int8.
        cast8_args c = {f->level, x, n * chw, img};
        cpu_parallel_for(ctx, chw, cast8_range, &c);
        return;
    }
    image_args ia = {f, x, n * chw, img};
    if (f->bcast.on && f->bcast.rows_first)
        cpu_parallel_for(ctx, g.h, bcast_image_rows, &ia);
    else if (f->bcast.on)
        cpu_parallel_for(ctx, f->taps4.groups4, bcast_image_planes, &ia);
    else if (f->taps4.on)
        cpu_parallel_for(ctx, f->taps4.groups4 * g.h, image4_rows, &ia);
    else
        cpu_parallel_for(ctx, g.c * g.h, image_rows, &ia);
}

}  // namespace cpu_conv2d
