/* expand_dims's parsed attributes (upstream ExpandDimsParam). */
#pragma once

#include <stdint.h>

typedef struct expand_dims_param {
    int32_t axis;        /* required; [-ndim-1, ndim] */
    int32_t num_newaxis; /* default 1, parse lower bound 1, verified <= 4096 */
} expand_dims_param;
