/* cvm_clip (cvm-formalization.md "cvm_clip", FORMAT.md §6-§8): Y = clip(X, -a, a) with
 * a = 2^(precision-1) - 1 and precision in 1..32; the output precision is the
 * attribute; upstream parses is_sign and ignores it (its doc says is_sign=False
 * clips to [0, 2^p - 1], its kernel does not); gas base 1. */
#include <gtest/gtest.h>

#include "elem_test_util.h"

using namespace elem_test;

namespace {

int64_t ref_cvm_clip(int64_t x, int p) {
    int64_t a = precision_max(p);
    return x > a ? a : (x < -a ? -a : x);
}

Attrs precision(int p) {
    return {{"precision", std::to_string(p)}};
}

const Operand kX{{1}, 8, {1}, false};

}  // namespace

TEST(CvmClip, EveryPrecisionAtTheBounds) {
    for (int p = 1; p <= 32; ++p) {
        int64_t a = precision_max(p);
        std::vector<int32_t> x = {INT32_MAX, -INT32_MAX, 0, 1, -1};
        for (int64_t d : {-1, 0, 1})
            if (a + d <= INT32_MAX) {
                x.push_back(static_cast<int32_t>(a + d));
                x.push_back(static_cast<int32_t>(-(a + d)));
            }
        OpResult r = run_unary("cvm_clip", precision(p), {static_cast<int32_t>(x.size())}, 32, x);
        ASSERT_EQ(r.outputs.size(), 1u);
        for (size_t i = 0; i < x.size(); ++i)
            EXPECT_EQ(r.outputs[0][i], ref_cvm_clip(x[i], p)) << "p=" << p << " x=" << x[i];
        EXPECT_EQ(r.precisions[0], p);
    }
}

TEST(CvmClip, IsSignIsParsedButIgnored) {
    std::vector<int32_t> x = {275, 157, -23, -168, -275};
    std::vector<int32_t> want = {127, 127, -23, -127, -127};
    for (const char* sign : {"True", "true", "1", "False", "false", "0", " FALSE "}) {
        EXPECT_EQ(unary_values("cvm_clip", {{"precision", "8"}, {"is_sign", sign}}, {5}, 10, x),
                  want)
            << sign;
    }
}

TEST(CvmClip, Gas) {
    Operand x{{2, 5}, 16, random_values(10, 32767, 4), false};
    OpResult r = run_op("cvm_clip", precision(8), {x});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.gas, unit_base_gas({x}, {2, 5}));
}

TEST(CvmClip, RefusesPrecisionOutsideOneTo32) {
    for (int p : {0, -1, 33, 34, 1000, INT32_MIN, INT32_MAX})
        expect_refused("cvm_clip", precision(p), {kX}, CVML_ERR_LOGIC, "precision");
}

TEST(CvmClip, RefusesMissingUnknownAndHostileAttributes) {
    expect_refused("cvm_clip", {}, {kX}, CVML_ERR_RUNTIME, "precision");
    expect_refused("cvm_clip", {{"precision", "8"}, {"a_min", "1"}}, {kX}, CVML_ERR_RUNTIME,
                   "a_min");
    expect_int_attr_refuses_hostile_text("cvm_clip", precision(8), "precision", {kX});
    expect_bool_attr_refuses_hostile_text("cvm_clip", precision(8), "is_sign", {kX});
}

TEST(CvmClipProperty, RandomPrecisionsSizesAndThreadsAgainstFormalization) {
    for (uint32_t seed = 1; seed <= 8; ++seed) {
        int prec = 2 + static_cast<int>(seed * 5 % 31);
        int p = 1 + static_cast<int>(seed * 7 % 32);
        size_t n = 1 + seed * 467 % 3000;
        auto x = random_values(n, static_cast<int32_t>(precision_max(prec)), seed);
        for (int threads : {1, 3}) {
            auto y =
                unary_values("cvm_clip", precision(p), {static_cast<int32_t>(n)}, prec, x, threads);
            ASSERT_EQ(y.size(), n);
            for (size_t i = 0; i < n; ++i) ASSERT_EQ(y[i], ref_cvm_clip(x[i], p)) << x[i];
        }
    }
}
