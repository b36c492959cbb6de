/* take's parameters (upstream TakeParam): an optional axis, absent or "None" meaning
 * "index the flattened data". The member has attr_opt_int's layout, so the generic
 * attribute parser fills it; take.cpp checks that the two layouts agree. */
#pragma once

#include <stdint.h>

typedef struct take_param {
    struct {
        uint8_t present;
        int32_t value;
    } axis;
} take_param;
