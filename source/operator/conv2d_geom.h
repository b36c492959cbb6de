/* conv2d's geometry: the output size rule of shape inference and the sizes every
 * device's kernels index by, one definition for the operator, the CPU kernels and the
 * CUDA kernels (host and device code). Dependency-free: it includes nothing from
 * graph/. */
#pragma once

#include <stdint.h>

#include "cvml_ops.h"

/* A conv2d node's sizes: input NCHW, weight OIHW, output NCHW. */
typedef struct conv2d_geom {
    int64_t n, c, h, w;    /* input */
    int64_t o, ic, kh, kw; /* weight (o, ic = c / groups, kh, kw) */
    int64_t oh, ow;        /* output spatial */
    int64_t sh, sw, ph, pw, dh, dw;
    int64_t opg; /* output channels per group */
} conv2d_geom;

/* The extent a kernel of k taps covers with dilation d. */
CVML_OPS_FN int64_t conv2d_dilated_extent(int64_t k, int64_t d) {
    return 1 + (k - 1) * d;
}

/* An output extent: upstream's int64 arithmetic, the division truncating toward zero. */
CVML_OPS_FN int64_t conv2d_out_extent(int64_t in, int64_t pad, int64_t k, int64_t stride,
                                      int64_t dilation) {
    return (in + pad * 2 - conv2d_dilated_extent(k, dilation)) / stride + 1;
}

/* The geometry from the tensors' dims (x, w, y) and the node's (stride, padding,
 * dilation) pairs and groups. */
CVML_OPS_FN conv2d_geom conv2d_geom_of(const int64_t* x, const int64_t* w, const int64_t* y,
                                       const int64_t* strides, const int64_t* padding,
                                       const int64_t* dilation, int64_t groups) {
    conv2d_geom g;
    g.n = x[0];
    g.c = x[1];
    g.h = x[2];
    g.w = x[3];
    g.o = w[0];
    g.ic = w[1];
    g.kh = w[2];
    g.kw = w[3];
    g.oh = y[2];
    g.ow = y[3];
    g.sh = strides[0];
    g.sw = strides[1];
    g.ph = padding[0];
    g.pw = padding[1];
    g.dh = dilation[0];
    g.dw = dilation[1];
    g.opg = groups > 0 ? g.o / groups : 0;
    return g;
}
