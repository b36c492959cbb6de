/* broadcast_add (cvm-formalization.md "Broadcast Operator", FORMAT.md §6-§8): NumPy
 * broadcasting, right-aligned, of A + B; the output precision is max(pa, pb) + 1 and
 * must stay within 32; gas base 1; no attributes. */
#include <gtest/gtest.h>

#include "broadcast_test_util.h"

using namespace broadcast_test;

namespace {

const char kOp[] = "broadcast_add";

int64_t add(int64_t a, int64_t b) {
    return wrap32(a + b);
}

}  // namespace

TEST(BroadcastAdd, FormalizationExample) {
    // x = [[1, 1, 1], [1, 1, 1]], y = [[0], [1]] gives [[1, 1, 1], [2, 2, 2]].
    OpResult r = run_op(
        kOp, {}, {Operand{{2, 3}, 8, {1, 1, 1, 1, 1, 1}, false}, Operand{{2, 1}, 8, {0, 1}, true}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (Shape{2, 3}));
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{1, 1, 1, 2, 2, 2}));
}

TEST(BroadcastAdd, OutputPrecision) {
    EXPECT_EQ(output_precision(kOp, 7, 12), 13);
    EXPECT_EQ(output_precision(kOp, 12, 7), 13);
    EXPECT_EQ(output_precision(kOp, 1, 1), 2);
    EXPECT_EQ(output_precision(kOp, 31, 1), 32);
    EXPECT_EQ(output_precision(kOp, 32, 1), 0);  // 33 bits: logic
    EXPECT_EQ(output_precision(kOp, 1, 32), 0);
}

TEST(BroadcastAdd, ExtremesOfPrecision31) {
    const int32_t m = (1 << 30) - 1;
    expect_matches_reference(kOp, add, Operand{{4}, 31, {m, -m, m, -m}, false},
                             Operand{{2, 1}, 31, {m, -m}, true});
}

TEST(BroadcastAdd, RefusesIncompatibleShapesInputCountsAndAttributes) {
    expect_refusals(kOp);
}

TEST(BroadcastAddProperty, RandomShapesAgainstFormalization) {
    expect_random_shapes_match_reference(kOp, add, 32767, 16);
}

TEST(BroadcastAddProperty, LargeOperandsAgainstFormalization) {
    expect_large_patterns_match_reference(kOp, add, (1 << 30) - 1, 31);
}
