/* max_pool2d's parsed attributes (upstream MaxPool2DParam). Plain C layout. */
#pragma once

#include <stdint.h>

#include "operator/op_def.h"

typedef struct max_pool2d_param {
    attr_tuple pool_size; /* required, 2 values */
    attr_tuple strides;   /* default (1, 1) */
    attr_tuple padding;   /* default (0, 0); 1 value = same on both axes */
    attr_string layout;   /* default "NCHW"; only NCHW */
    uint8_t ceil_mode;    /* default false */
} max_pool2d_param;

/* The (top, left) padding the kernel applies: one value pads both axes. */
static inline void max_pool2d_pads(const max_pool2d_param* p, int64_t* ph, int64_t* pw) {
    *ph = p->padding.values[0];
    *pw = p->padding.count == 2 ? p->padding.values[1] : p->padding.values[0];
}
