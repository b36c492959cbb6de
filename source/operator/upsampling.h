/* upsampling's parsed attributes (upstream UpSamplingParam). Plain C layout. */
#pragma once

#include <stdint.h>

#include "operator/op_def.h"

typedef struct upsampling_param {
    int32_t scale;      /* required, 1..4096 */
    attr_string layout; /* default "NCHW"; only NCHW */
    attr_string method; /* default "NEAREST_NEIGHBOR"; only that */
} upsampling_param;
