/* get_valid_counts' parsed attributes (upstream GetValidCountsParam). Plain C layout. */
#pragma once

#include <stdint.h>

typedef struct get_valid_counts_param {
    int32_t score_threshold; /* default 0; a row is valid when row[1] > threshold */
} get_valid_counts_param;
