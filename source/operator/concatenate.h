/* concatenate's parsed attributes (upstream ConcatenateParam). */
#pragma once

#include <stdint.h>

typedef struct concatenate_param {
    int32_t axis; /* default 1; [-ndim, ndim-1] */
} concatenate_param;
