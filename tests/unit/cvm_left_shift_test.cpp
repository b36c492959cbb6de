/* cvm_left_shift (cvm-formalization.md "cvm_left_shift", FORMAT.md §6-§8): Y =
 * clip(X * 2^shift_bit, +-(2^(precision-1)-1)). Upstream's CPU kernel always fails;
 * cvm-lite computes its formal device's result (divergence D1). precision and
 * shift_bit are checked against 1..33; input precision + shift_bit > 32 makes
 * upstream's precision inference fail (a runtime error); gas base 1. */
#include <gtest/gtest.h>

#include <climits>

#include "operator/scalar.h"
#include "elem_test_util.h"

using namespace elem_test;

namespace {

int64_t ref_formal(int64_t x, int p, int b) {
    int64_t t = x * (int64_t{1} << b);
    int64_t a = precision_max(p);
    return t > a ? a : (t < -a ? -a : t);
}

Attrs shift(int p, int b) {
    return {{"precision", std::to_string(p)}, {"shift_bit", std::to_string(b)}};
}

const Operand kX{{1}, 8, {1}, false};

}  // namespace

TEST(CvmLeftShift, FormalResultD1) {
    OpResult r = run_unary("cvm_left_shift", shift(8, 3), {6}, 6, {1, -1, 15, -15, 16, -16});
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{8, -8, 120, -120, 127, -127}));
    EXPECT_EQ(r.precisions[0], 8);
    EXPECT_EQ(unary_values("cvm_left_shift", shift(32, 16), {2}, 16, {32767, -32767}),
              (std::vector<int32_t>{32767 * 65536, -32767 * 65536}));
    EXPECT_EQ(unary_values("cvm_left_shift", shift(1, 1), {2}, 8, {3, -3}),
              (std::vector<int32_t>{0, 0}));
}

TEST(CvmLeftShift, SharedScalarStaysInRangeAtTheExtremes) {
    // Unreachable through a verified graph (p_in + b <= 32), but the scalar must not
    // overflow: int64 arithmetic, then the clip.
    EXPECT_EQ(cvm_left_shift_value(INT32_MIN, 32, 1), -INT32_MAX);
    EXPECT_EQ(cvm_left_shift_value(INT32_MAX, 32, 32), INT32_MAX);
    EXPECT_EQ(cvm_left_shift_value(-1, 32, 33), -INT32_MAX);
}

TEST(CvmLeftShift, InputPrecisionPlusShiftMayReach32ButNotExceedIt) {
    for (int pin : {1, 8, 16, 31}) {
        int b = 32 - pin;
        EXPECT_EQ(run_op("cvm_left_shift", shift(32, b), {Operand{{1}, pin, {0}, false}}).verify_rc,
                  CVML_OK)
            << pin;
        expect_refused("cvm_left_shift", shift(32, b + 1), {Operand{{1}, pin, {0}, false}},
                       CVML_ERR_RUNTIME, "shift_bit");
    }
}

TEST(CvmLeftShift, OutputPrecisionAndGas) {
    Operand x{{4, 2}, 8, random_values(8, 127, 6), false};
    for (int p : {1, 9, 32}) {
        OpResult r = run_op("cvm_left_shift", shift(p, 5), {x});
        ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
        EXPECT_EQ(r.precisions[0], p);
        EXPECT_EQ(r.gas, unit_base_gas({x}, {4, 2}));
    }
}

TEST(CvmLeftShift, RefusesOutOfRangeAttributes) {
    for (int b : {0, -1, 34, INT32_MAX, INT32_MIN})
        expect_refused("cvm_left_shift", shift(8, b), {kX}, CVML_ERR_LOGIC, "shift_bit");
    for (int p : {0, -1, 34, INT32_MIN})
        expect_refused("cvm_left_shift", shift(p, 1), {kX}, CVML_ERR_LOGIC, "precision");
    EXPECT_EQ(run_op("cvm_left_shift", shift(33, 1), {kX}).verify_rc, CVML_ERR_LOGIC);
}

TEST(CvmLeftShift, RefusesMissingUnknownAndHostileAttributes) {
    expect_refused("cvm_left_shift", {{"precision", "8"}}, {kX}, CVML_ERR_RUNTIME, "shift_bit");
    expect_refused("cvm_left_shift", {{"shift_bit", "2"}}, {kX}, CVML_ERR_RUNTIME, "precision");
    expect_int_attr_refuses_hostile_text("cvm_left_shift", shift(8, 2), "precision", {kX});
    expect_int_attr_refuses_hostile_text("cvm_left_shift", shift(8, 2), "shift_bit", {kX});
    expect_bool_attr_refuses_hostile_text("cvm_left_shift", shift(8, 2), "is_sign", {kX});
}

TEST(CvmLeftShiftProperty, RandomAttributesSizesAndThreadsAgainstFormalization) {
    for (uint32_t seed = 1; seed <= 8; ++seed) {
        int prec = 2 + static_cast<int>(seed * 5 % 30);
        int b = 1 + static_cast<int>(seed * 3 % (32 - prec));
        int p = 1 + static_cast<int>(seed * 11 % 32);
        size_t n = 1 + seed * 397 % 3000;
        auto x = random_values(n, static_cast<int32_t>(precision_max(prec)), seed);
        for (int threads : {1, 3}) {
            auto y = unary_values("cvm_left_shift", shift(p, b), {static_cast<int32_t>(n)}, prec, x,
                                  threads);
            ASSERT_EQ(y.size(), n);
            for (size_t i = 0; i < n; ++i)
                ASSERT_EQ(y[i], ref_formal(x[i], p, b)) << x[i] << " p=" << p << " b=" << b;
        }
    }
}
