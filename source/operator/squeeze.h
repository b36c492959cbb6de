/* squeeze's parsed attributes (upstream SqueezeParam). */
#pragma once

#include "operator/op_def.h"

typedef struct squeeze_param {
    attr_tuple axis; /* () drops every dim of size 1 */
} squeeze_param;
