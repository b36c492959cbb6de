/* broadcast_greater (FORMAT.md §6-§8; not in the formalization): NumPy broadcasting,
 * right-aligned, of A > B as 1 or 0. The output precision is input 0's (not 1);
 * gas base 1; no attributes. */
#include <gtest/gtest.h>

#include "broadcast_test_util.h"

using namespace broadcast_test;

namespace {

const char kOp[] = "broadcast_greater";

int64_t greater(int64_t a, int64_t b) {
    return a > b ? 1 : 0;
}

}  // namespace

TEST(BroadcastGreater, OneOrZeroAndEqualIsNotGreater) {
    OpResult r =
        run_op(kOp, {}, {Operand{{5}, 8, {1, 2, 3, -1, -127}, false}, Operand{{1}, 8, {2}, true}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{0, 0, 1, 0, 0}));
    r = run_op(kOp, {}, {Operand{{1}, 8, {2}, true}, Operand{{5}, 8, {1, 2, 3, -1, -127}, false}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{1, 0, 0, 1, 1}));
}

TEST(BroadcastGreater, OutputPrecisionIsInput0s) {
    EXPECT_EQ(output_precision(kOp, 7, 12), 7);
    EXPECT_EQ(output_precision(kOp, 12, 7), 12);
    EXPECT_EQ(output_precision(kOp, 32, 1), 32);
}

TEST(BroadcastGreater, ExtremesOfPrecision32) {
    expect_matches_reference(kOp, greater,
                             Operand{{4}, 32, {INT32_MAX, -INT32_MAX, 0, INT32_MAX}, false},
                             Operand{{2, 1}, 32, {-INT32_MAX, INT32_MAX}, true});
}

TEST(BroadcastGreater, RefusesIncompatibleShapesInputCountsAndAttributes) {
    expect_refusals(kOp);
}

TEST(BroadcastGreaterProperty, RandomShapesAgainstReference) {
    expect_random_shapes_match_reference(kOp, greater, 20, 16);  // many equal pairs
}

TEST(BroadcastGreaterProperty, LargeOperandsAgainstReference) {
    expect_large_patterns_match_reference(kOp, greater, 50, 8);
}
