/* cvm_left_shift's parameters (upstream CVMLeftShiftParam). is_sign is parsed and
 * ignored, as upstream. */
#pragma once

#include <stdint.h>

typedef struct cvm_left_shift_param {
    int32_t precision;
    uint8_t is_sign;
    int32_t shift_bit;
} cvm_left_shift_param;
