/* reshape's parsed attributes (upstream ReshapeParam). */
#pragma once

#include "operator/op_def.h"

typedef struct reshape_param {
    attr_tuple shape; /* required; MXNet codes 0, -1, -2, -3, -4 */
} reshape_param;
