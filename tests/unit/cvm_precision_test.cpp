/* cvm_precision (cvm-formalization.md "cvm_precision", FORMAT.md §6-§8): y is the
 * number of bits of |x|, ceil(log2(|x| + 1)), and 1 for x = 0; the output precision
 * is always 6; gas has base 1; no attributes. */
#include <gtest/gtest.h>

#include <climits>

#include "operator/scalar.h"
#include "elem_test_util.h"

using namespace elem_test;

namespace {

/* The formalization: the smallest k with 2^k >= |x| + 1, and 1 for 0. */
int32_t ref_precision(int64_t x) {
    if (x == 0) return 1;
    int64_t m = (x < 0 ? -x : x) + 1;
    int32_t k = 0;
    while ((int64_t{1} << k) < m) ++k;
    return k;
}

}  // namespace

TEST(CvmPrecision, PowersOfTwoAndTheirNeighbours) {
    std::vector<int32_t> x = {0};
    for (int k = 0; k < 31; ++k) {
        int32_t v = static_cast<int32_t>(int64_t{1} << k);
        for (int32_t d : {-1, 0, 1}) {
            int64_t w = int64_t{v} + d;
            if (w > 0 && w <= INT32_MAX) {
                x.push_back(static_cast<int32_t>(w));
                x.push_back(static_cast<int32_t>(-w));
            }
        }
    }
    x.push_back(INT32_MAX);
    OpResult r = run_unary("cvm_precision", {}, {static_cast<int32_t>(x.size())}, 32, x);
    ASSERT_EQ(r.outputs.size(), 1u);
    for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(r.outputs[0][i], ref_precision(x[i])) << x[i];
    EXPECT_EQ(r.precisions[0], 6);  // FORMAT.md §6, whatever the input's precision
}

TEST(CvmPrecision, FixedOutputPrecisionAndGas) {
    for (int p : {1, 8, 32}) {
        Operand x{{2, 2}, p, {0, 0, 0, 0}, false};
        OpResult r = run_op("cvm_precision", {}, {x});
        ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
        EXPECT_EQ(r.precisions[0], 6);
        EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{1, 1, 1, 1}));
        EXPECT_EQ(r.gas, unit_base_gas({x}, {2, 2}));
    }
}

TEST(CvmPrecision, Int32MinHas32BitsOnTheSharedScalar) {
    // Unreachable through a verified graph; |INT32_MIN| = 2^31 needs 32 bits.
    EXPECT_EQ(cvm_precision_value(INT32_MIN), 32);
}

TEST(CvmPrecision, RefusesAttributesAndASecondInput) {
    Operand x{{2}, 8, {1, -1}, false};
    expect_no_attributes("cvm_precision", {x});
    EXPECT_EQ(run_op("cvm_precision", {}, {x, Operand{{2}, 8, {1, 2}, true}}).verify_rc,
              CVML_ERR_LOGIC);
}

TEST(CvmPrecisionProperty, RandomSizesAndThreadsAgainstFormalization) {
    for (uint32_t seed = 1; seed <= 6; ++seed) {
        int prec = 2 + static_cast<int>(seed * 5 % 31);
        size_t n = 1 + seed * 613 % 3000;
        auto x = random_values(n, static_cast<int32_t>(precision_max(prec)), seed);
        for (int threads : {1, 3}) {
            auto y = unary_values("cvm_precision", {}, {static_cast<int32_t>(n)}, prec, x, threads);
            ASSERT_EQ(y.size(), n);
            for (size_t i = 0; i < n; ++i) ASSERT_EQ(y[i], ref_precision(x[i])) << x[i];
        }
    }
}
