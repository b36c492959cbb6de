/* The C layouts attribute values are parsed into (op_def.h's attr_spec tables fill
 * them): what an operator's parameter struct is made of. Dependency-free, so that a
 * parameter header with a rule every device shares (strided_slice.h) includes nothing
 * from graph/. */
#pragma once

#include <stdint.h>

#define ATTR_TUPLE_MAX 16

typedef struct attr_tuple {
    int32_t count;
    int64_t values[ATTR_TUPLE_MAX];
} attr_tuple;

/* An ATTR_TUPLE of an operator that accepts exactly two values (op_def.pair_tuples:
 * conv2d's kernel_size, strides, padding, dilation). It is parsed as any tuple (the same
 * syntax, errors and ATTR_TUPLE_MAX limit), then only its first two values are kept and
 * `count` stays the number given, so a longer tuple still fails verification with the
 * message naming its count. Its readers check count == 2 before reading values. 24
 * bytes where an attr_tuple takes 136 (a microcontroller keeps one per conv2d node). */
#define ATTR_PAIR_KEEP 2

typedef struct attr_pair {
    int32_t count;
    int64_t values[ATTR_PAIR_KEEP];
} attr_pair;

typedef struct attr_opt_int {
    uint8_t present; /* 0 for "None" or absent */
    int32_t value;
} attr_opt_int;

typedef struct attr_string {
    char value[32];
} attr_string;
