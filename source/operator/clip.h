/* clip's parameters (upstream ClipParam): both bounds are required ints. */
#pragma once

#include <stdint.h>

typedef struct clip_param {
    int32_t a_min;
    int32_t a_max;
} clip_param;
