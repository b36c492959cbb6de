/* dense's parsed attributes (upstream DenseParam). Plain C layout. */
#pragma once

#include <stdint.h>

typedef struct dense_param {
    int32_t units;    /* >= 1 (a smaller value is a ParamError) */
    uint8_t use_bias; /* default true: inputs are (data, weight, bias) */
} dense_param;
