/* negative (cvm-formalization.md "negative", FORMAT.md §6-§8): Y = -X; the output
 * keeps the input's precision; gas has base 1; no attributes. */
#include <gtest/gtest.h>

#include <climits>

#include "elem_test_util.h"

using namespace elem_test;

TEST(Negative, FormalizationOnPrecisionLimits) {
    for (int p : {1, 2, 8, 17, 31, 32}) {
        int32_t m = static_cast<int32_t>(precision_max(p));
        std::vector<int32_t> x = {-m, m, 0, m / 2, -(m / 3)};
        OpResult r = run_unary("negative", {}, {5}, p, x);
        ASSERT_EQ(r.outputs.size(), 1u);
        for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(r.outputs[0][i], -int64_t{x[i]}) << p;
        EXPECT_EQ(r.precisions[0], p);
    }
}

TEST(Negative, IsItsOwnInverse) {
    auto x = random_values(777, INT32_MAX, 5);
    auto y = unary_values("negative", {}, {777}, 32, x);
    EXPECT_EQ(unary_values("negative", {}, {777}, 32, y), x);
}

TEST(Negative, ShapeAndGas) {
    Operand x{{3, 1, 5}, 12, random_values(15, 2047, 2), false};
    OpResult r = run_op("negative", {}, {x});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (Shape{3, 1, 5}));
    EXPECT_EQ(r.gas, unit_base_gas({x}, {3, 1, 5}));
}

TEST(Negative, RefusesAttributesAndASecondInput) {
    Operand x{{2}, 8, {1, -1}, false};
    expect_no_attributes("negative", {x});
    EXPECT_EQ(run_op("negative", {}, {x, Operand{{2}, 8, {1, 2}, true}}).verify_rc, CVML_ERR_LOGIC);
}

TEST(NegativeProperty, RandomSizesAndThreadsAgainstFormalization) {
    for (uint32_t seed = 1; seed <= 8; ++seed) {
        int prec = 2 + static_cast<int>(seed * 7 % 31);
        size_t n = 1 + seed * 541 % 2500;
        auto x = random_values(n, static_cast<int32_t>(precision_max(prec)), seed);
        for (int threads : {1, 3}) {
            auto y = unary_values("negative", {}, {static_cast<int32_t>(n)}, prec, x, threads);
            ASSERT_EQ(y.size(), n);
            for (size_t i = 0; i < n; ++i) ASSERT_EQ(y[i], -int64_t{x[i]});
        }
    }
}
