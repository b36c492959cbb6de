/* slice_like's parsed attributes (upstream SliceLikeParam). */
#pragma once

#include "operator/op_def.h"

typedef struct slice_like_param {
    attr_tuple axis; /* Tuple<int>: () means every axis the second input has */
} slice_like_param;
