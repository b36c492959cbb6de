/* cvm_right_shift's parameters (upstream CVMRightShiftParam). is_sign is parsed and
 * ignored, as upstream. */
#pragma once

#include <stdint.h>

typedef struct cvm_right_shift_param {
    int32_t precision;
    uint8_t is_sign;
    int32_t shift_bit;
} cvm_right_shift_param;
