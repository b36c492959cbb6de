/* broadcast_sub (cvm-formalization.md "Broadcast Operator", FORMAT.md §6-§8): NumPy
 * broadcasting, right-aligned, of A - B; the output precision is max(pa, pb) + 1 and
 * must stay within 32; gas base 1; no attributes. */
#include <gtest/gtest.h>

#include "broadcast_test_util.h"

using namespace broadcast_test;

namespace {

const char kOp[] = "broadcast_sub";

int64_t sub(int64_t a, int64_t b) {
    return wrap32(a - b);
}

}  // namespace

TEST(BroadcastSub, OperandOrderMatters) {
    // [[5, 6, 7], [8, 9, 10]] - [[1], [2]] and its reverse.
    OpResult r =
        run_op(kOp, {},
               {Operand{{2, 3}, 8, {5, 6, 7, 8, 9, 10}, false}, Operand{{2, 1}, 8, {1, 2}, true}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{4, 5, 6, 6, 7, 8}));
    r = run_op(kOp, {},
               {Operand{{2, 1}, 8, {1, 2}, true}, Operand{{2, 3}, 8, {5, 6, 7, 8, 9, 10}, false}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{-4, -5, -6, -6, -7, -8}));
}

TEST(BroadcastSub, OutputPrecision) {
    EXPECT_EQ(output_precision(kOp, 7, 12), 13);
    EXPECT_EQ(output_precision(kOp, 12, 7), 13);
    EXPECT_EQ(output_precision(kOp, 1, 1), 2);
    EXPECT_EQ(output_precision(kOp, 31, 1), 32);
    EXPECT_EQ(output_precision(kOp, 32, 1), 0);  // 33 bits: logic
    EXPECT_EQ(output_precision(kOp, 1, 32), 0);
}

TEST(BroadcastSub, ExtremesOfPrecision31) {
    const int32_t m = (1 << 30) - 1;
    expect_matches_reference(kOp, sub, Operand{{4}, 31, {m, -m, m, -m}, false},
                             Operand{{2, 1}, 31, {m, -m}, true});
}

TEST(BroadcastSub, RefusesIncompatibleShapesInputCountsAndAttributes) {
    expect_refusals(kOp);
}

TEST(BroadcastSubProperty, RandomShapesAgainstFormalization) {
    expect_random_shapes_match_reference(kOp, sub, 32767, 16);
}

TEST(BroadcastSubProperty, LargeOperandsAgainstFormalization) {
    expect_large_patterns_match_reference(kOp, sub, (1 << 30) - 1, 31);
}
