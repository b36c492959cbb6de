/* cvm_clip's parameters (upstream CVMClipParam). is_sign is parsed but the kernels
 * ignore it: upstream clips symmetrically whatever its value. */
#pragma once

#include <stdint.h>

typedef struct cvm_clip_param {
    int32_t precision;
    uint8_t is_sign;
} cvm_clip_param;
