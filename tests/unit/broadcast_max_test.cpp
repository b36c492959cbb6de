/* broadcast_max (cvm-formalization.md "Broadcast Operator", FORMAT.md §6-§8): NumPy
 * broadcasting, right-aligned, of max(A, B); the output precision is max(pa, pb);
 * gas base 1; no attributes. */
#include <gtest/gtest.h>

#include "broadcast_test_util.h"

using namespace broadcast_test;

namespace {

const char kOp[] = "broadcast_max";

int64_t larger(int64_t a, int64_t b) {
    return a > b ? a : b;
}

}  // namespace

TEST(BroadcastMax, AgainstAThresholdRow) {
    OpResult r = run_op(
        kOp, {},
        {Operand{{2, 3}, 8, {-5, 0, 5, 7, -7, 1}, false}, Operand{{3}, 8, {0, 1, -1}, true}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{0, 1, 5, 7, 1, 1}));
}

TEST(BroadcastMax, OutputPrecision) {
    EXPECT_EQ(output_precision(kOp, 7, 12), 12);
    EXPECT_EQ(output_precision(kOp, 12, 7), 12);
    EXPECT_EQ(output_precision(kOp, 32, 32), 32);
    EXPECT_EQ(output_precision(kOp, 1, 1), 1);
}

TEST(BroadcastMax, ExtremesOfPrecision32) {
    expect_matches_reference(kOp, larger, Operand{{4}, 32, {INT32_MAX, -INT32_MAX, 0, -1}, false},
                             Operand{{2, 1}, 32, {-INT32_MAX, INT32_MAX}, true});
}

TEST(BroadcastMax, RefusesIncompatibleShapesInputCountsAndAttributes) {
    expect_refusals(kOp);
}

TEST(BroadcastMaxProperty, RandomShapesAgainstFormalization) {
    expect_random_shapes_match_reference(kOp, larger, 32767, 16);
}

TEST(BroadcastMaxProperty, LargeOperandsAgainstFormalization) {
    expect_large_patterns_match_reference(kOp, larger, INT32_MAX, 32);
}
