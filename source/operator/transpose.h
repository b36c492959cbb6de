/* transpose's parsed attributes (upstream TransposeParam). */
#pragma once

#include "operator/op_def.h"

typedef struct transpose_param {
    attr_tuple axes; /* () reverses the axes; negative values count from the end */
} transpose_param;
