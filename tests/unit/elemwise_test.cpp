/* Unary and same-shape element-wise operators, clipping and shifts: hand-checked
 * examples, upstream's quirks, error classes, and random tests against plain loops. */
#include <gtest/gtest.h>

#include <climits>

#include "device/cpu/op/elemwise_scalar.h"
#include "op_runner.h"

using cvml_test::Operand;
using cvml_test::random_values;
using cvml_test::run_op;

namespace {

using Attrs = std::vector<std::pair<std::string, std::string>>;

std::vector<int32_t> run1(const std::string& op, const Attrs& attrs, std::vector<int32_t> shape,
                          int prec, const std::vector<int32_t>& x, int threads = 1,
                          int* out_prec = nullptr) {
    auto r = run_op(op, attrs, {Operand{shape, prec, x, false}}, 1, threads);
    EXPECT_EQ(r.verify_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.run_rc, CVML_OK) << r.error;
    if (out_prec && !r.precisions.empty()) *out_prec = r.precisions[0];
    return r.outputs.empty() ? std::vector<int32_t>{} : r.outputs[0];
}

int verify_rc(const std::string& op, const Attrs& attrs, const std::vector<Operand>& ops) {
    return run_op(op, attrs, ops).verify_rc;
}

/* Independent reference of upstream's cvm_right_shift, in int64 arithmetic. */
int64_t ref_rshift(int64_t x, int p, int b) {
    int64_t mx = (int64_t{1} << (p - 1)) - 1;
    if (mx == 0) return 0;
    if (b >= 31) return x < 0 ? -1 : 0;
    int64_t t = (x >> (b - 1)) + 1;
    t = static_cast<int32_t>(static_cast<uint32_t>(t));  // wrap to int32
    t >>= 1;
    if (p + b >= 32) return t;
    return t > mx ? mx : (t < -mx ? -mx : t);
}

}  // namespace

TEST(ElemScalar, Int32MinWraps) {
    // INT32_MIN cannot enter through a verified graph (inputs are clipped to their
    // precision), so the wrap paths are checked on the shared scalar functions.
    EXPECT_EQ(cvm_abs_value(INT32_MIN), INT32_MIN);
    EXPECT_EQ(wrap_neg(INT32_MIN), INT32_MIN);
    EXPECT_EQ(cvm_precision_value(INT32_MIN), 32);
    EXPECT_EQ(cvm_div_value(INT32_MIN, -1), INT32_MIN);
    EXPECT_EQ(cvm_div_value(INT32_MIN, 1), INT32_MIN);
    EXPECT_EQ(cvm_div_value(-7, 0), 0);
    EXPECT_EQ(cvm_div_value(-7, 2), -3);
    EXPECT_EQ(cvm_div_value(7, -2), -3);
    EXPECT_EQ(cvm_left_shift_value(INT32_MIN, 32, 1), -INT32_MAX);
    EXPECT_EQ(cvml_right_shift(INT32_MIN, 16, 31), -1);
    EXPECT_EQ(cvml_right_shift(INT32_MIN, 24, 8), INT32_MIN >> 8);
}

TEST(ElemScalar, RightShiftMatchesReferenceEverywhere) {
    auto xs = random_values(2000, INT32_MAX, 11);
    xs.push_back(INT32_MAX);
    xs.push_back(-INT32_MAX);
    xs.push_back(0);
    for (int p = 1; p <= 32; ++p)
        for (int b = 1; b <= 33; ++b)
            for (int32_t x : xs)
                ASSERT_EQ(cvml_right_shift(x, p, b), ref_rshift(x, p, b))
                    << "x=" << x << " p=" << p << " b=" << b;
}

TEST(Abs, HandCheckedAndPrecision) {
    int p = 0;
    EXPECT_EQ(run1("abs", {}, {5}, 8, {-127, -1, 0, 1, 127}, 1, &p),
              (std::vector<int32_t>{127, 1, 0, 1, 127}));
    EXPECT_EQ(p, 8);
    EXPECT_EQ(run1("abs", {}, {2}, 32, {-INT32_MAX, INT32_MAX}),
              (std::vector<int32_t>{INT32_MAX, INT32_MAX}));
}

TEST(Negative, HandChecked) {
    int p = 0;
    EXPECT_EQ(run1("negative", {}, {4}, 31, {5, -5, 0, 1073741823}, 1, &p),
              (std::vector<int32_t>{-5, 5, 0, -1073741823}));
    EXPECT_EQ(p, 31);
}

TEST(CvmPrecision, HandCheckedAndFixedPrecision6) {
    int p = 0;
    EXPECT_EQ(run1("cvm_precision", {}, {8}, 32, {0, 1, -1, 2, 3, 4, -128, INT32_MAX}, 1, &p),
              (std::vector<int32_t>{1, 1, 1, 2, 2, 3, 8, 31}));
    EXPECT_EQ(p, 6);
}

TEST(ElemwiseAddSub, HandCheckedPrecisionAndShapes) {
    auto r = run_op("elemwise_add", {},
                    {Operand{{3}, 8, {1, -2, 127}, false}, Operand{{3}, 4, {7, -7, 1}, true}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{8, -9, 128}));
    EXPECT_EQ(r.precisions[0], 9);
    r = run_op("elemwise_sub", {},
               {Operand{{3}, 8, {1, -2, 127}, false}, Operand{{3}, 12, {7, -7, 1}, true}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{-6, 5, 126}));
    EXPECT_EQ(r.precisions[0], 13);
    // Equal shapes are required (upstream ElemwiseShape VERIFY): no broadcasting.
    EXPECT_EQ(verify_rc("elemwise_add", {},
                        {Operand{{3}, 8, {1, 2, 3}, false}, Operand{{1}, 8, {1}, true}}),
              CVML_ERR_LOGIC);
    // Two 32-bit inputs give precision 33, outside 1..32 (case 125).
    EXPECT_EQ(
        verify_rc("elemwise_add", {}, {Operand{{1}, 32, {1}, false}, Operand{{1}, 32, {1}, true}}),
        CVML_ERR_LOGIC);
    EXPECT_EQ(verify_rc("elemwise_sub", {{"x", "1"}},
                        {Operand{{1}, 8, {1}, false}, Operand{{1}, 8, {1}, true}}),
              CVML_ERR_LOGIC);
}

TEST(Clip, HandCheckedAndPrecision) {
    int p = 0;
    EXPECT_EQ(run1("clip", {{"a_min", "-3"}, {"a_max", "5"}}, {5}, 8, {-100, -3, 0, 5, 100}, 1, &p),
              (std::vector<int32_t>{-3, -3, 0, 5, 5}));
    EXPECT_EQ(p, 4);  // NP(5) = bits(6) + 1
    run1("clip", {{"a_min", "-127"}, {"a_max", "127"}}, {1}, 8, {1}, 1, &p);
    EXPECT_EQ(p, 9);  // case 014: NP(127) is 9, not 8
    run1("clip", {{"a_min", "-300"}, {"a_max", "2"}}, {1}, 8, {1}, 1, &p);
    EXPECT_EQ(p, 10);
}

TEST(Clip, Errors) {
    Operand x{{2}, 8, {1, 2}, false};
    EXPECT_EQ(verify_rc("clip", {{"a_min", "5"}, {"a_max", "5"}}, {x}), CVML_ERR_LOGIC);
    EXPECT_EQ(verify_rc("clip", {{"a_min", "6"}, {"a_max", "5"}}, {x}), CVML_ERR_LOGIC);
    EXPECT_EQ(verify_rc("clip", {{"a_min", "-2147483648"}, {"a_max", "5"}}, {x}), CVML_ERR_LOGIC);
    // a_max = 2^31-1 passes the range check, but NP gives 33 bits: logic.
    EXPECT_EQ(verify_rc("clip", {{"a_min", "0"}, {"a_max", "2147483647"}}, {x}), CVML_ERR_LOGIC);
    EXPECT_EQ(verify_rc("clip", {{"a_min", "0"}}, {x}), CVML_ERR_RUNTIME);  // required
    EXPECT_EQ(verify_rc("clip", {{"a_min", "0"}, {"a_max", "x"}}, {x}), CVML_ERR_RUNTIME);
    EXPECT_EQ(verify_rc("clip", {{"a_min", "0"}, {"a_max", "1"}, {"b", "1"}}, {x}),
              CVML_ERR_RUNTIME);
}

TEST(CvmClip, SymmetricAndIgnoresIsSign) {
    std::vector<int32_t> x = {275, 157, -23, -168, -275};
    std::vector<int32_t> want = {127, 127, -23, -127, -127};
    int p = 0;
    EXPECT_EQ(run1("cvm_clip", {{"precision", "8"}}, {5}, 10, x, 1, &p), want);
    EXPECT_EQ(p, 8);
    // Upstream's doc says is_sign=False clips to [0, 255]; its kernel ignores it.
    EXPECT_EQ(run1("cvm_clip", {{"precision", "8"}, {"is_sign", "False"}}, {5}, 10, x), want);
    EXPECT_EQ(run1("cvm_clip", {{"precision", "1"}}, {5}, 10, x),
              (std::vector<int32_t>{0, 0, 0, 0, 0}));
    EXPECT_EQ(run1("cvm_clip", {{"precision", "32"}}, {2}, 32, {INT32_MAX, -INT32_MAX}),
              (std::vector<int32_t>{INT32_MAX, -INT32_MAX}));
    Operand o{{1}, 8, {1}, false};
    EXPECT_EQ(verify_rc("cvm_clip", {{"precision", "0"}}, {o}), CVML_ERR_LOGIC);
    EXPECT_EQ(verify_rc("cvm_clip", {{"precision", "33"}}, {o}), CVML_ERR_LOGIC);
    EXPECT_EQ(verify_rc("cvm_clip", {}, {o}), CVML_ERR_RUNTIME);
    EXPECT_EQ(verify_rc("cvm_clip", {{"precision", "8"}, {"is_sign", "maybe"}}, {o}),
              CVML_ERR_RUNTIME);
}

TEST(CvmRightShift, Quirks) {
    Attrs a = {{"precision", "8"}, {"shift_bit", "2"}};
    // Round half up through an arithmetic shift: -1.5 -> -1, -2.5 -> -2, 1.5 -> 2.
    EXPECT_EQ(run1("cvm_right_shift", a, {8}, 12, {6, -6, -10, 10, 1, -1, 1000, -1000}),
              (std::vector<int32_t>{2, -1, -2, 3, 0, 0, 127, -127}));
    // p == 1: all zero.
    EXPECT_EQ(run1("cvm_right_shift", {{"precision", "1"}, {"shift_bit", "5"}}, {3}, 16,
                   {1000, -1000, 0}),
              (std::vector<int32_t>{0, 0, 0}));
    // b >= 31: x >> 31, no rounding.
    EXPECT_EQ(run1("cvm_right_shift", {{"precision", "11"}, {"shift_bit", "32"}}, {3}, 32,
                   {INT32_MAX, -5, 0}),
              (std::vector<int32_t>{0, -1, 0}));
    EXPECT_EQ(run1("cvm_right_shift", {{"precision", "11"}, {"shift_bit", "31"}}, {2}, 32,
                   {INT32_MAX, -INT32_MAX}),
              (std::vector<int32_t>{0, -1}));
    // p + b >= 32: rounding without the clip (2^23 is outside 24 bits).
    EXPECT_EQ(
        run1("cvm_right_shift", {{"precision", "24"}, {"shift_bit", "8"}}, {1}, 32, {INT32_MAX}),
        (std::vector<int32_t>{1 << 23}));
    // The +1 wraps: p=31, b=1, x=2^31-1 gives -2^30.
    EXPECT_EQ(
        run1("cvm_right_shift", {{"precision", "31"}, {"shift_bit", "1"}}, {1}, 32, {INT32_MAX}),
        (std::vector<int32_t>{-(1 << 30)}));
}

TEST(CvmRightShift, Errors) {
    Operand o{{1}, 8, {1}, false};
    EXPECT_EQ(verify_rc("cvm_right_shift", {{"precision", "8"}, {"shift_bit", "0"}}, {o}),
              CVML_ERR_LOGIC);
    EXPECT_EQ(verify_rc("cvm_right_shift", {{"precision", "8"}, {"shift_bit", "34"}}, {o}),
              CVML_ERR_LOGIC);
    EXPECT_EQ(verify_rc("cvm_right_shift", {{"precision", "0"}, {"shift_bit", "3"}}, {o}),
              CVML_ERR_LOGIC);
    EXPECT_EQ(verify_rc("cvm_right_shift", {{"precision", "8"}}, {o}), CVML_ERR_RUNTIME);
    EXPECT_EQ(verify_rc("cvm_right_shift",
                        {{"precision", "8"}, {"shift_bit", "2"}, {"is_sign", "0"}}, {o}),
              CVML_OK);
}

TEST(CvmLeftShift, FormalResultD1) {
    int p = 0;
    EXPECT_EQ(run1("cvm_left_shift", {{"precision", "8"}, {"shift_bit", "3"}}, {6}, 6,
                   {1, -1, 15, -15, 16, -16}, 1, &p),
              (std::vector<int32_t>{8, -8, 120, -120, 127, -127}));
    EXPECT_EQ(p, 8);
    EXPECT_EQ(run1("cvm_left_shift", {{"precision", "32"}, {"shift_bit", "16"}}, {2}, 16,
                   {32767, -32767}),
              (std::vector<int32_t>{32767 * 65536, -32767 * 65536}));
    EXPECT_EQ(run1("cvm_left_shift", {{"precision", "1"}, {"shift_bit", "1"}}, {2}, 8, {3, -3}),
              (std::vector<int32_t>{0, 0}));
}

TEST(CvmLeftShift, Errors) {
    // Case 124: p_in + shift_bit > 32 makes inference fail: a runtime error.
    Operand o{{1}, 8, {1}, false};
    EXPECT_EQ(verify_rc("cvm_left_shift", {{"precision", "8"}, {"shift_bit", "25"}}, {o}),
              CVML_ERR_RUNTIME);
    EXPECT_EQ(verify_rc("cvm_left_shift", {{"precision", "8"}, {"shift_bit", "24"}}, {o}), CVML_OK);
    EXPECT_EQ(verify_rc("cvm_left_shift", {{"precision", "8"}, {"shift_bit", "0"}}, {o}),
              CVML_ERR_LOGIC);
    EXPECT_EQ(verify_rc("cvm_left_shift", {{"precision", "34"}, {"shift_bit", "1"}}, {o}),
              CVML_ERR_LOGIC);
}

TEST(ElemProperty, UnaryOpsAgainstReferenceLoops) {
    for (uint32_t seed = 1; seed <= 6; ++seed) {
        int prec = 2 + static_cast<int>(seed * 5 % 31);
        int32_t bound = prec >= 32 ? INT32_MAX : (1 << (prec - 1)) - 1;
        size_t n = 1 + seed * 397 % 3000;
        auto x = random_values(n, bound, seed);
        std::vector<int32_t> shape = {static_cast<int32_t>(n)};
        for (int threads : {1, 3}) {
            auto y = run1("abs", {}, shape, prec, x, threads);
            for (size_t i = 0; i < n; ++i) ASSERT_EQ(y[i], x[i] < 0 ? -x[i] : x[i]);
            y = run1("negative", {}, shape, prec, x, threads);
            for (size_t i = 0; i < n; ++i) ASSERT_EQ(y[i], -x[i]);
            y = run1("cvm_precision", {}, shape, prec, x, threads);
            for (size_t i = 0; i < n; ++i) {
                int64_t m = x[i] < 0 ? -int64_t{x[i]} : x[i];
                int bits = 0;
                while ((int64_t{1} << bits) <= m) ++bits;
                ASSERT_EQ(y[i], bits ? bits : 1) << x[i];
            }
            y = run1("clip", {{"a_min", "-77"}, {"a_max", "1000"}}, shape, prec, x, threads);
            for (size_t i = 0; i < n; ++i)
                ASSERT_EQ(y[i], x[i] < -77 ? -77 : (x[i] > 1000 ? 1000 : x[i]));
            int cp = 1 + static_cast<int>(seed * 7 % 32);
            int64_t cb = (int64_t{1} << (cp - 1)) - 1;
            y = run1("cvm_clip", {{"precision", std::to_string(cp)}}, shape, prec, x, threads);
            for (size_t i = 0; i < n; ++i)
                ASSERT_EQ(y[i], x[i] > cb ? cb : (x[i] < -cb ? -cb : x[i]));
            for (int b : {1, 3, 8, 17, 31}) {
                int rp = 1 + static_cast<int>((seed * 13 + b) % 32);
                y = run1("cvm_right_shift",
                         {{"precision", std::to_string(rp)}, {"shift_bit", std::to_string(b)}},
                         shape, prec, x, threads);
                for (size_t i = 0; i < n; ++i) ASSERT_EQ(y[i], ref_rshift(x[i], rp, b));
            }
            if (prec < 32) {
                int b = 32 - prec;
                int lp = 1 + static_cast<int>(seed * 11 % 32);
                int64_t lb = (int64_t{1} << (lp - 1)) - 1;
                y = run1("cvm_left_shift",
                         {{"precision", std::to_string(lp)}, {"shift_bit", std::to_string(b)}},
                         shape, prec, x, threads);
                for (size_t i = 0; i < n; ++i) {
                    int64_t v = int64_t{x[i]} * (int64_t{1} << b);
                    ASSERT_EQ(y[i], v > lb ? lb : (v < -lb ? -lb : v));
                }
            }
        }
    }
}

TEST(ElemProperty, BinaryOpsAgainstReferenceLoops) {
    for (uint32_t seed = 1; seed <= 5; ++seed) {
        size_t n = 1 + seed * 733 % 4000;
        auto a = random_values(n, (1 << 30) - 1, seed);
        auto b = random_values(n, (1 << 30) - 1, seed + 100);
        std::vector<int32_t> shape = {static_cast<int32_t>(n)};
        for (int threads : {1, 3}) {
            auto r =
                run_op("elemwise_add", {},
                       {Operand{shape, 31, a, false}, Operand{shape, 31, b, true}}, 1, threads);
            ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
            for (size_t i = 0; i < n; ++i) ASSERT_EQ(r.outputs[0][i], a[i] + b[i]);
            r = run_op("elemwise_sub", {},
                       {Operand{shape, 31, a, true}, Operand{shape, 31, b, false}}, 1, threads);
            ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
            for (size_t i = 0; i < n; ++i) ASSERT_EQ(r.outputs[0][i], a[i] - b[i]);
        }
    }
}
