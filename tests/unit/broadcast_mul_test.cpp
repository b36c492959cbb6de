/* broadcast_mul (cvm-formalization.md "Broadcast Operator", FORMAT.md §6-§8): NumPy
 * broadcasting, right-aligned, of A * B; the output precision is pa + pb and must stay
 * within 32; gas base 1; no attributes. */
#include <gtest/gtest.h>

#include "broadcast_test_util.h"

using namespace broadcast_test;

namespace {

const char kOp[] = "broadcast_mul";

int64_t mul(int64_t a, int64_t b) {
    return wrap32(a * b);
}

}  // namespace

TEST(BroadcastMul, ScalesRowsAndColumns) {
    OpResult r =
        run_op(kOp, {},
               {Operand{{2, 3}, 8, {1, 2, 3, 4, 5, 6}, false}, Operand{{3}, 8, {-1, 0, 2}, true}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{-1, 0, 6, -4, 0, 12}));
    r = run_op(kOp, {},
               {Operand{{2, 1}, 8, {3, -3}, true}, Operand{{2, 3}, 8, {1, 2, 3, 4, 5, 6}, false}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{3, 6, 9, -12, -15, -18}));
}

TEST(BroadcastMul, OutputPrecision) {
    EXPECT_EQ(output_precision(kOp, 7, 12), 19);
    EXPECT_EQ(output_precision(kOp, 1, 1), 2);
    EXPECT_EQ(output_precision(kOp, 16, 16), 32);
    EXPECT_EQ(output_precision(kOp, 16, 17), 0);  // 33 bits: logic
    EXPECT_EQ(output_precision(kOp, 32, 1), 0);
}

TEST(BroadcastMul, ExtremesOfPrecision16) {
    const int32_t m = 32767;
    expect_matches_reference(kOp, mul, Operand{{4}, 16, {m, -m, m, -m}, false},
                             Operand{{2, 1}, 16, {m, -m}, true});
}

TEST(BroadcastMul, RefusesIncompatibleShapesInputCountsAndAttributes) {
    expect_refusals(kOp);
}

TEST(BroadcastMulProperty, RandomShapesAgainstFormalization) {
    expect_random_shapes_match_reference(kOp, mul, 32767, 16);
}

TEST(BroadcastMulProperty, LargeOperandsAgainstFormalization) {
    expect_large_patterns_match_reference(kOp, mul, 32767, 16);
}
