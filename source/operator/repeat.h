/* repeat's parsed attributes (upstream RepeatParam). */
#pragma once

#include <stdint.h>

typedef struct repeat_param {
    int32_t repeats; /* required; verified > 0 */
    int32_t axis;    /* default 0; [-ndim, ndim-1] */
} repeat_param;
