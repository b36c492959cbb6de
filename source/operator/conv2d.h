/* conv2d's parsed attributes (upstream Conv2DParam), shared by the operator definition,
 * the CPU kernels and device plugins. Plain C layout. */
#pragma once

#include <stdint.h>

#include "operator/op_def.h"

typedef struct conv2d_param {
    int32_t channels;
    /* Pairs (op_def.pair_tuples): verification refuses any count but 2 first. */
    attr_pair kernel_size;
    attr_pair strides;         /* default (1, 1) */
    attr_pair padding;         /* default (0, 0) */
    attr_pair dilation;        /* default (1, 1) */
    int32_t groups;            /* default 1 */
    attr_string layout;        /* default "NCHW"; only NCHW is accepted at inference */
    attr_string kernel_layout; /* default "OIHW"; only OIHW */
    attr_string out_layout;    /* default "__undef__" (= layout); only NCHW */
    attr_string out_dtype;     /* default "same"; parsed, ignored */
    uint8_t use_bias;          /* default true: inputs are (data, weight, bias) */
} conv2d_param;
