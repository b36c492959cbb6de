/* tile's parsed attributes (upstream TileParam). */
#pragma once

#include "operator/op_def.h"

typedef struct tile_param {
    attr_tuple reps; /* default (0,), which fails verification: reps in [1, 4096] */
} tile_param;
