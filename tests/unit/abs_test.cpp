/* abs (cvm-formalization.md "abs", FORMAT.md §6-§8): y = x for x >= 0, -x otherwise;
 * the output keeps the input's precision; gas has base 1; no attributes. */
#include <gtest/gtest.h>

#include <climits>

#include "operator/scalar.h"
#include "elem_test_util.h"

using namespace elem_test;

namespace {

/* The formalization's cases, written out. */
int64_t ref_abs(int64_t x) {
    if (x >= 0) return x;
    return -x;
}

}  // namespace

TEST(Abs, FormalizationOnPrecisionLimits) {
    for (int p : {1, 2, 8, 9, 16, 31, 32}) {
        int32_t m = static_cast<int32_t>(precision_max(p));
        std::vector<int32_t> x = {-m, m, 0, -(m > 0 ? 1 : 0), m > 0 ? 1 : 0};
        OpResult r = run_unary("abs", {}, {5}, p, x);
        ASSERT_EQ(r.outputs.size(), 1u);
        for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(r.outputs[0][i], ref_abs(x[i])) << p;
        EXPECT_EQ(r.precisions[0], p);  // FORMAT.md §6: input 0's precision
        EXPECT_EQ(r.shapes[0], (Shape{5}));
    }
}

TEST(Abs, Int32MinWrapsOnTheSharedScalar) {
    // INT32_MIN cannot enter through a verified graph (inputs are clipped to their
    // precision); upstream's -O3 build wraps it, and so does the shared scalar.
    EXPECT_EQ(cvm_abs_value(INT32_MIN), INT32_MIN);
    EXPECT_EQ(cvm_abs_value(-INT32_MAX), INT32_MAX);
}

TEST(Abs, ShapeAndGas) {
    Operand x{{2, 3, 4}, 8, random_values(24, 127, 3), false};
    OpResult r = run_op("abs", {}, {x});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (Shape{2, 3, 4}));
    EXPECT_EQ(r.gas, unit_base_gas({x}, {2, 3, 4}));
}

TEST(Abs, RefusesAttributesAndASecondInput) {
    Operand x{{2}, 8, {1, -1}, false};
    expect_no_attributes("abs", {x});
    Operand c{{2}, 8, {1, 2}, true};
    EXPECT_EQ(run_op("abs", {}, {x, c}).verify_rc, CVML_ERR_LOGIC);
}

TEST(AbsProperty, RandomSizesAndThreadsAgainstFormalization) {
    for (uint32_t seed = 1; seed <= 8; ++seed) {
        int prec = 2 + static_cast<int>(seed * 5 % 31);
        size_t n = 1 + seed * 397 % 3000;  // odd sizes reach the vector tails
        auto x = random_values(n, static_cast<int32_t>(precision_max(prec)), seed);
        for (int threads : {1, 3}) {
            auto y = unary_values("abs", {}, {static_cast<int32_t>(n)}, prec, x, threads);
            ASSERT_EQ(y.size(), n);
            for (size_t i = 0; i < n; ++i) ASSERT_EQ(y[i], ref_abs(x[i])) << x[i];
        }
    }
}
