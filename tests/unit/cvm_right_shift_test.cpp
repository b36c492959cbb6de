/* cvm_right_shift (cvm-formalization.md "cvm_right_shift", FORMAT.md §6-§8): a
 * rounding right shift, floor((floor(x / 2^(b-1)) + 1) / 2), clipped to +-(2^(p-1)-1).
 * Upstream's CPU kernel (which the bytes follow) differs from that formula in three
 * documented cases: p == 1 gives 0, b >= 31 gives x >> 31, p + b >= 32 does not clip;
 * and its rounding +1 wraps in int32. precision and shift_bit are checked against 1..33
 * (inclusive); the output precision is the attribute and must be 1..32. */
#include <gtest/gtest.h>

#include <climits>

#include "cvml_ops.h"
#include "elem_test_util.h"

using namespace elem_test;

namespace {

int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* The formalization, in exact arithmetic. */
int64_t ref_formal(int64_t x, int p, int b) {
    int64_t t = floor_div(floor_div(x, int64_t{1} << (b - 1)) + 1, 2);
    int64_t a = precision_max(p);
    return t > a ? a : (t < -a ? -a : t);
}

/* Upstream's CPU kernel, from FORMAT.md §7's description of its three cases. */
int64_t ref_cpu(int64_t x, int p, int b) {
    if (p == 1) return 0;
    if (b >= 31) return x < 0 ? -1 : 0;
    int64_t t = (x >> (b - 1)) + 1;
    t = static_cast<int32_t>(static_cast<uint32_t>(t));  // the +1 wraps in int32
    t >>= 1;
    if (p + b >= 32) return t;
    int64_t a = precision_max(p);
    return t > a ? a : (t < -a ? -a : t);
}

Attrs shift(int p, int b) {
    return {{"precision", std::to_string(p)}, {"shift_bit", std::to_string(b)}};
}

const Operand kX{{1}, 8, {1}, false};

}  // namespace

TEST(CvmRightShift, CpuEqualsTheFormalizationOutsideItsThreeCases) {
    auto x = random_values(3000, INT32_MAX, 21);
    x.insert(x.end(), {INT32_MAX - 1, -INT32_MAX, 0, 1, -1, 2, -2, 3, -3});
    for (int p = 2; p <= 32; ++p)
        for (int b = 1; b < 31 && p + b < 32; ++b)
            for (int32_t v : x)
                ASSERT_EQ(ref_cpu(v, p, b), ref_formal(v, p, b)) << v << " p=" << p << " b=" << b;
    // The loop leaves out the one value whose +1 wraps (b = 1, x = 2^31 - 1): there the
    // kernel rounds to -2^30 before the clip (as ../shared/tools/ref_interp.py does).
    EXPECT_EQ(ref_cpu(INT32_MAX, 2, 1), -1);
    EXPECT_EQ(ref_formal(INT32_MAX, 2, 1), 1);
    EXPECT_EQ(unary_values("cvm_right_shift", shift(2, 1), {1}, 32, {INT32_MAX}),
              (std::vector<int32_t>{-1}));
}

TEST(CvmRightShift, TheFusedStepFollowsTheKernelRulesForEveryAttribute) {
    // cvml_right_shift (cvml_ops.h) is the step every device fuses into a tail.
    auto x = random_values(2000, INT32_MAX, 11);
    x.insert(x.end(), {INT32_MAX, -INT32_MAX, 0, 1, -1});
    for (int p = 1; p <= 32; ++p)
        for (int b = 1; b <= 33; ++b)
            for (int32_t v : x)
                ASSERT_EQ(cvml_right_shift(v, p, b), ref_cpu(v, p, b))
                    << v << " p=" << p << " b=" << b;
}

TEST(CvmRightShift, RoundsHalfUpThroughAnArithmeticShift) {
    // -1.5 -> -1, -2.5 -> -2, 1.5 -> 2, 2.5 -> 3; then the clip to +-127.
    EXPECT_EQ(
        unary_values("cvm_right_shift", shift(8, 2), {8}, 12, {6, -6, -10, 10, 1, -1, 1000, -1000}),
        (std::vector<int32_t>{2, -1, -2, 3, 0, 0, 127, -127}));
    EXPECT_EQ(unary_values("cvm_right_shift", shift(8, 1), {4}, 8, {3, -3, 5, -5}),
              (std::vector<int32_t>{2, -1, 3, -2}));
}

TEST(CvmRightShift, TheKernelsThreeCases) {
    // p == 1: all zero.
    EXPECT_EQ(unary_values("cvm_right_shift", shift(1, 5), {3}, 16, {1000, -1000, 0}),
              (std::vector<int32_t>{0, 0, 0}));
    // b >= 31: x >> 31, no rounding.
    EXPECT_EQ(unary_values("cvm_right_shift", shift(11, 32), {3}, 32, {INT32_MAX, -5, 0}),
              (std::vector<int32_t>{0, -1, 0}));
    EXPECT_EQ(unary_values("cvm_right_shift", shift(11, 33), {2}, 32, {INT32_MAX, -7}),
              (std::vector<int32_t>{0, -1}));
    // p + b >= 32: rounding without the clip (2^23 is outside 24 bits).
    EXPECT_EQ(unary_values("cvm_right_shift", shift(24, 8), {1}, 32, {INT32_MAX}),
              (std::vector<int32_t>{1 << 23}));
    // The +1 wraps: p=31, b=1, x=2^31-1 gives -2^30 (the formalization: 2^30 - 1).
    EXPECT_EQ(unary_values("cvm_right_shift", shift(31, 1), {1}, 32, {INT32_MAX}),
              (std::vector<int32_t>{-(1 << 30)}));
    EXPECT_EQ(ref_formal(INT32_MAX, 31, 1), (1 << 30) - 1);
}

TEST(CvmRightShift, OutputPrecisionAndGas) {
    Operand x{{2, 3}, 20, random_values(6, 524287, 8), false};
    for (int p : {1, 8, 32}) {
        OpResult r = run_op("cvm_right_shift", shift(p, 4), {x});
        ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
        EXPECT_EQ(r.precisions[0], p);
        EXPECT_EQ(r.gas, unit_base_gas({x}, {2, 3}));
    }
}

TEST(CvmRightShift, RefusesOutOfRangeAttributes) {
    for (int b : {0, -1, 34, INT32_MAX, INT32_MIN})
        expect_refused("cvm_right_shift", shift(8, b), {kX}, CVML_ERR_LOGIC, "shift_bit");
    for (int p : {0, -3, 34, INT32_MAX})
        expect_refused("cvm_right_shift", shift(p, 3), {kX}, CVML_ERR_LOGIC, "precision");
    // 33 passes upstream's inclusive range check; as an output precision it is logic.
    EXPECT_EQ(run_op("cvm_right_shift", shift(33, 3), {kX}).verify_rc, CVML_ERR_LOGIC);
}

TEST(CvmRightShift, RefusesMissingUnknownAndHostileAttributes) {
    expect_refused("cvm_right_shift", {{"precision", "8"}}, {kX}, CVML_ERR_RUNTIME, "shift_bit");
    expect_refused("cvm_right_shift", {{"shift_bit", "8"}}, {kX}, CVML_ERR_RUNTIME, "precision");
    Attrs extra = shift(8, 2);
    extra.emplace_back("axis", "0");
    expect_refused("cvm_right_shift", extra, {kX}, CVML_ERR_RUNTIME, "axis");
    expect_int_attr_refuses_hostile_text("cvm_right_shift", shift(8, 2), "precision", {kX});
    expect_int_attr_refuses_hostile_text("cvm_right_shift", shift(8, 2), "shift_bit", {kX});
    expect_bool_attr_refuses_hostile_text("cvm_right_shift", shift(8, 2), "is_sign", {kX});
    Attrs unsigned_shift = shift(8, 2);
    unsigned_shift.emplace_back("is_sign", "0");  // parsed, ignored
    EXPECT_EQ(run_op("cvm_right_shift", unsigned_shift, {kX}).verify_rc, CVML_OK);
}

TEST(CvmRightShiftProperty, RandomAttributesSizesAndThreadsAgainstTheKernelRules) {
    for (uint32_t seed = 1; seed <= 6; ++seed) {
        int prec = 2 + static_cast<int>(seed * 5 % 31);
        size_t n = 1 + seed * 397 % 3000;
        auto x = random_values(n, static_cast<int32_t>(precision_max(prec)), seed);
        for (int b : {1, 3, 8, 17, 31, 33}) {
            int p = 1 + static_cast<int>((seed * 13 + b) % 32);
            for (int threads : {1, 3}) {
                auto y = unary_values("cvm_right_shift", shift(p, b), {static_cast<int32_t>(n)},
                                      prec, x, threads);
                ASSERT_EQ(y.size(), n);
                for (size_t i = 0; i < n; ++i)
                    ASSERT_EQ(y[i], ref_cpu(x[i], p, b)) << x[i] << " p=" << p << " b=" << b;
            }
        }
    }
}
