/* broadcast_div (FORMAT.md §6-§8; not in the formalization): NumPy broadcasting,
 * right-aligned, of A / B with C's truncation toward zero, and 0 where B is 0
 * (upstream's kernel tests for it). The output precision is input 0's; gas base 1;
 * no attributes. */
#include <gtest/gtest.h>

#include <climits>

#include "broadcast_test_util.h"
#include "operator/scalar.h"

using namespace broadcast_test;

namespace {

const char kOp[] = "broadcast_div";

/* Truncation toward zero written from magnitudes, not with C's '/'. */
int64_t divide(int64_t a, int64_t b) {
    if (b == 0) return 0;
    int64_t q = (a < 0 ? -a : a) / (b < 0 ? -b : b);
    return wrap32((a < 0) != (b < 0) ? -q : q);
}

}  // namespace

TEST(BroadcastDiv, TruncatesTowardZeroAndZeroDivisorGivesZero) {
    OpResult r = run_op(kOp, {},
                        {Operand{{7}, 8, {7, -7, 7, -7, 5, 0, -1}, false},
                         Operand{{7}, 8, {2, 2, -2, -2, 0, 3, 2}, true}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{3, -3, -3, 3, 0, 0, 0}));
    // A whole row of zero divisors, broadcast.
    r = run_op(kOp, {}, {Operand{{2, 2}, 8, {9, -9, 100, 1}, false}, Operand{{1}, 8, {0}, true}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{0, 0, 0, 0}));
}

TEST(BroadcastDiv, SharedScalarAtInt32Min) {
    // INT32_MIN / -1 traps in C; it is unreachable through a verified graph, and the
    // shared scalar gives the wrapped quotient instead of trapping.
    EXPECT_EQ(cvm_div_value(INT32_MIN, -1), INT32_MIN);
    EXPECT_EQ(cvm_div_value(INT32_MIN, 1), INT32_MIN);
    EXPECT_EQ(cvm_div_value(-7, 0), 0);
}

TEST(BroadcastDiv, OutputPrecisionIsInput0s) {
    EXPECT_EQ(output_precision(kOp, 7, 12), 7);
    EXPECT_EQ(output_precision(kOp, 12, 7), 12);
    EXPECT_EQ(output_precision(kOp, 32, 32), 32);
}

TEST(BroadcastDiv, ExtremesOfPrecision32) {
    expect_matches_reference(
        kOp, divide, Operand{{6}, 32, {INT32_MAX, -INT32_MAX, 1, -1, 0, INT32_MAX}, false},
        Operand{{6}, 32, {-1, -1, INT32_MAX, -INT32_MAX, -INT32_MAX, 0}, true});
}

TEST(BroadcastDiv, RefusesIncompatibleShapesInputCountsAndAttributes) {
    expect_refusals(kOp);
}

TEST(BroadcastDivProperty, RandomShapesWithZeroDivisorsAgainstReference) {
    expect_random_shapes_match_reference(kOp, divide, 32767, 16, true);
}

TEST(BroadcastDivProperty, LargeOperandsAgainstReference) {
    expect_large_patterns_match_reference(kOp, divide, 300, 10);
}
