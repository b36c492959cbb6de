/* non_max_suppression's parsed attributes (upstream NonMaximumSuppressionParam, with the
 * defaults of the deployed runtime). Plain C layout. */
#pragma once

#include <stdint.h>

typedef struct non_max_suppression_param {
    int32_t max_output_size;   /* default -1; only > 0 limits */
    int32_t iou_threshold;     /* default 50 (percent); must be > 0 */
    uint8_t force_suppress;    /* default false: only equal class ids suppress */
    int32_t top_k;             /* default -1 */
    int32_t coord_start;       /* default 2; must be 2 */
    int32_t score_index;       /* default 1; must be 1 */
    int32_t id_index;          /* default 0; must be 0 */
    uint8_t return_indices;    /* default false; must be false */
    uint8_t invalid_to_bottom; /* default true; must be true */
} non_max_suppression_param;
