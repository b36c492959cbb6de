/* conv2d with groups > 1 (depthwise included) on CUDA: upstream multiplies the int32
 * values as they are (no int8 cast), so this stays in int32 with wrap-around sums.
 *
 * Each thread computes a strip of kStrip neighbouring outputs of one output row: it
 * reads each weight once for the strip (the per-output loop read it once per output)
 * and the strip's input windows overlap in the row it reads, which the cache serves.
 * Threads are ordered strip-fastest, so a warp reads neighbouring input columns. */
#pragma once

#include "cuda_kernel.h"
#include "operator/conv2d_geom.h"

namespace grouped {

constexpr int kStrip = 4;

using geom = conv2d_geom;

/* Strips in the output: N * O * OH rows of ceil(OW / kStrip). */
inline int64_t strip_count(const geom& g) {
    return g.n * g.o * g.oh * ((g.ow + kStrip - 1) / kStrip);
}

__global__ void conv_grouped(const int32_t* x, const int32_t* w, const int32_t* bias, int32_t* y,
                             geom g, int64_t total, cuda_tail tail) {
    const int64_t strips = (g.ow + kStrip - 1) / kStrip;
    if (blockIdx.x == 0 && threadIdx.x == 0 && tail.count > 0)
        CUDA_PATH("conv_grouped: fused tail");
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const int64_t ox0 = (i % strips) * kStrip;
        const int64_t row = i / strips; /* (n * O + o) * OH + oy */
        const int64_t oy = row % g.oh;
        const int64_t o = (row / g.oh) % g.o;
        const int64_t n = row / (g.oh * g.o);
        const int64_t c0 = (o / g.opg) * g.ic;
        const uint32_t b = bias ? static_cast<uint32_t>(bias[o]) : 0u;
        uint32_t acc[kStrip] = {b, b, b, b};
        for (int64_t ic = 0; ic < g.ic; ++ic) {
            const int32_t* xp = x + (n * g.c + c0 + ic) * g.h * g.w;
            const int32_t* wp = w + (o * g.ic + ic) * g.kh * g.kw;
            for (int64_t r = 0; r < g.kh; ++r) {
                const int64_t ih = oy * g.sh + r * g.dh - g.ph;
                if (ih < 0 || ih >= g.h) continue;
                const int32_t* xr = xp + ih * g.w;
                for (int64_t s = 0; s < g.kw; ++s) {
                    const uint32_t wv = static_cast<uint32_t>(wp[r * g.kw + s]);
                    for (int j = 0; j < kStrip; ++j) {
                        const int64_t iw = (ox0 + j) * g.sw + s * g.dw - g.pw;
                        if (iw >= 0 && iw < g.w) acc[j] += wv * static_cast<uint32_t>(xr[iw]);
                    }
                }
            }
        }
        for (int j = 0; j < kStrip; ++j) {
            const int64_t i = row * g.ow + ox0 + j;
            if (ox0 + j < g.ow) y[i] = cuda_tail_apply(tail, static_cast<int32_t>(acc[j]), i);
        }
    }
}

}  // namespace grouped
