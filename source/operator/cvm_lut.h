/* cvm_lut's parameters (upstream CVMLUTParam): in_dim must equal the table's size. */
#pragma once

#include <stdint.h>

typedef struct cvm_lut_param {
    int32_t in_dim;
} cvm_lut_param;
