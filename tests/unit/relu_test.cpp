/* relu (FORMAT.md §6-§8): y = max(x, 0) element-wise; the output keeps the input's
 * precision; gas has base 1; no attributes. */
#include <gtest/gtest.h>

#include "elem_test_util.h"

using namespace elem_test;

namespace {

int64_t ref_relu(int64_t x) {
    return x > 0 ? x : 0;
}

}  // namespace

TEST(Relu, HandCheckedAtThePrecisionLimits) {
    for (int p : {1, 2, 8, 31, 32}) {
        const int32_t m = static_cast<int32_t>(precision_max(p));
        OpResult r = run_unary("relu", {}, {5}, p, {-m, m, 0, -1 * (m > 0), 1 * (m > 0)});
        ASSERT_EQ(r.outputs.size(), 1u);
        EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{0, m, 0, 0, m > 0 ? 1 : 0})) << p;
        EXPECT_EQ(r.precisions[0], p);
    }
}

TEST(Relu, ShapeAndGas) {
    Operand x{{2, 3, 5}, 8, random_values(30, 127, 4), false};
    OpResult r = run_op("relu", {}, {x});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (Shape{2, 3, 5}));
    EXPECT_EQ(r.gas, unit_base_gas({x}, {2, 3, 5}));
}

TEST(Relu, RefusesAttributesAndASecondInput) {
    Operand x{{4}, 8, {1, 2, 3, 4}, false};
    expect_no_attributes("relu", {x});
    EXPECT_EQ(run_op("relu", {}, {x, Operand{{4}, 8, {1, 2, 3, 4}, true}}).verify_rc,
              CVML_ERR_LOGIC);
}

TEST(ReluProperty, RandomSizesPrecisionsAndThreads) {
    for (uint32_t seed = 1; seed <= 8; ++seed) {
        const int prec = 2 + static_cast<int>(seed * 5 % 31);
        const size_t n = 1 + seed * 389 % 3000;  // odd sizes reach the vector tails
        auto x = random_values(n, static_cast<int32_t>(precision_max(prec)), seed);
        for (int threads : {1, 3}) {
            auto y = unary_values("relu", {}, {static_cast<int32_t>(n)}, prec, x, threads);
            ASSERT_EQ(y.size(), n);
            for (size_t i = 0; i < n; ++i) ASSERT_EQ(y[i], ref_relu(x[i])) << x[i];
        }
    }
}
