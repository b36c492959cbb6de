/* clip (cvm-formalization.md "clip", FORMAT.md §6-§8): y = a_max when x >= a_max,
 * a_min when x <= a_min, x between; the output precision is NP(max(|a_min|, |a_max|))
 * with NP(n) = bits(n + 1) + 1; a_min < a_max, both in +-(2^31 - 1); gas base 1. */
#include <gtest/gtest.h>

#include <climits>

#include "elem_test_util.h"

using namespace elem_test;

namespace {

/* The formalization's three cases. */
int64_t ref_clip(int64_t x, int64_t lo, int64_t hi) {
    if (x >= hi) return hi;
    if (x <= lo) return lo;
    return x;
}

/* NP(n) = bits(n + 1) + 1 (upstream GetNumberPrecision). */
int ref_number_precision(int64_t n) {
    int bits = 0;
    for (int64_t m = n + 1; m; m >>= 1) ++bits;
    return bits + 1;
}

Attrs bounds(int64_t lo, int64_t hi) {
    return {{"a_min", std::to_string(lo)}, {"a_max", std::to_string(hi)}};
}

const Operand kX{{2}, 8, {1, 2}, false};

}  // namespace

TEST(Clip, FormalizationAtAndAroundTheBounds) {
    const int64_t lo = -3, hi = 5;
    std::vector<int32_t> x = {-100, -4, -3, -2, 0, 4, 5, 6, 100};
    auto y = unary_values("clip", bounds(lo, hi), {9}, 8, x);
    ASSERT_EQ(y.size(), x.size());
    for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], ref_clip(x[i], lo, hi)) << x[i];
}

TEST(Clip, OutputPrecisionIsNumberPrecisionOfTheLargerBound) {
    const std::pair<int64_t, int64_t> cases[] = {
        {-3, 5},  {-127, 127},      {-300, 2},
        {0, 1},   {-1, 0},          {-128, -1},
        {1, 255}, {-1073741823, 1}, {-2147483647, -2147483646},
    };
    for (const auto& [lo, hi] : cases) {
        int64_t m = std::max(lo < 0 ? -lo : lo, hi < 0 ? -hi : hi);
        int want = ref_number_precision(m);
        OpResult r = run_op("clip", bounds(lo, hi), {kX});
        if (want > 32) {
            EXPECT_EQ(r.verify_rc, CVML_ERR_LOGIC) << lo << " " << hi;
            continue;
        }
        ASSERT_EQ(r.verify_rc, CVML_OK) << lo << " " << hi << ": " << r.error;
        EXPECT_EQ(r.precisions[0], want) << lo << " " << hi;
    }
    // NP(127) is 9, not 8 (case 014): the output is stored as int32.
    EXPECT_EQ(run_op("clip", bounds(-127, 127), {kX}).precisions[0], 9);
}

TEST(Clip, Gas) {
    Operand x{{3, 4}, 16, random_values(12, 32767, 9), false};
    OpResult r = run_op("clip", bounds(-1000, 1000), {x});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.gas, unit_base_gas({x}, {3, 4}));
}

TEST(Clip, RefusesEmptyOrInvertedRangesAndInt32Min) {
    expect_refused("clip", bounds(5, 5), {kX}, CVML_ERR_LOGIC, "a_min");
    expect_refused("clip", bounds(6, 5), {kX}, CVML_ERR_LOGIC, "a_min");
    expect_refused("clip", bounds(INT32_MIN, 5), {kX}, CVML_ERR_LOGIC, "a_min");
    expect_refused("clip", bounds(-5, INT32_MIN), {kX}, CVML_ERR_LOGIC, "a_max");
    // a_max = 2^31 - 1 passes the range check, but NP gives 33 bits: logic.
    EXPECT_EQ(run_op("clip", bounds(0, INT32_MAX), {kX}).verify_rc, CVML_ERR_LOGIC);
}

TEST(Clip, RefusesMissingUnknownAndHostileAttributes) {
    expect_refused("clip", {{"a_min", "0"}}, {kX}, CVML_ERR_RUNTIME, "a_max");
    expect_refused("clip", {{"a_max", "1"}}, {kX}, CVML_ERR_RUNTIME, "a_min");
    expect_refused("clip", {{"a_min", "0"}, {"a_max", "1"}, {"b", "1"}}, {kX}, CVML_ERR_RUNTIME,
                   "'b'");
    expect_int_attr_refuses_hostile_text("clip", bounds(-1, 1), "a_min", {kX});
    expect_int_attr_refuses_hostile_text("clip", bounds(-1, 1), "a_max", {kX});
    EXPECT_EQ(run_op("clip", bounds(-1, 1), {kX, Operand{{2}, 8, {1, 2}, true}}).verify_rc,
              CVML_ERR_LOGIC);
}

TEST(Clip, AcceptsUpstreamIntegerSpellings) {
    // `istream >> int`: leading blanks, a sign, trailing blanks.
    OpResult r = run_op("clip", {{"a_min", " -3"}, {"a_max", "+5 "}}, {kX});
    ASSERT_EQ(r.verify_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.precisions[0], ref_number_precision(5));
}

TEST(ClipProperty, RandomBoundsSizesAndThreadsAgainstFormalization) {
    for (uint32_t seed = 1; seed <= 8; ++seed) {
        int prec = 2 + static_cast<int>(seed * 5 % 31);
        int32_t m = static_cast<int32_t>(precision_max(prec));
        size_t n = 1 + seed * 397 % 3000;
        auto x = random_values(n, m, seed);
        auto b = random_values(2, m, seed + 50);
        int64_t lo = std::min(b[0], b[1]), hi = std::max(b[0], b[1]);
        if (lo == hi) ++hi;
        for (int threads : {1, 3}) {
            auto y =
                unary_values("clip", bounds(lo, hi), {static_cast<int32_t>(n)}, prec, x, threads);
            ASSERT_EQ(y.size(), n);
            for (size_t i = 0; i < n; ++i) ASSERT_EQ(y[i], ref_clip(x[i], lo, hi)) << x[i];
        }
    }
}
