#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nn_case_util.h"
#include "op_runner.h"
#include "reduce_narrow_util.h"
#include "reduce_ref.h"

using cvml_test::Operand;
using cvml_test::run_op;

namespace {

// The formalization's worked example, shape (3, 3, 2).
const std::vector<int32_t> kData = {1, 2, 2, 3, 1, 3, 1, 4, 4, 3, 5, 2, 7, 1, 7, 2, 7, 3};

}  // namespace

TEST(Sum, FormalizationExamples) {
    Operand x{{3, 3, 2}, 8, kData, false};
    auto r = run_op("sum", {{"axis", "1"}}, {x});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (std::vector<int32_t>{3, 2}));
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{4, 8, 10, 9, 21, 6}));
    // 8 + bits(18 / 6 = 3).
    EXPECT_EQ(r.precisions[0], 10);
    // ops 3 * 6; mem 5 * 18 + 5 * 6.
    EXPECT_EQ(r.gas, 18u + 90 + 30);
    r = run_op("sum", {{"axis", "[1,2]"}}, {x});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (std::vector<int32_t>{3}));
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{12, 19, 27}));
}

TEST(Sum, ShapesAndKeepdims) {
    Operand x{{3, 3, 2}, 8, kData, false};
    auto r = run_op("sum", {{"axis", "(-1,)"}, {"keepdims", "True"}}, {x});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (std::vector<int32_t>{3, 3, 1}));
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{3, 5, 4, 5, 7, 7, 8, 9, 10}));
    r = run_op("sum", {}, {x});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (std::vector<int32_t>{1}));
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{58}));
    r = run_op("sum", {{"keepdims", "1"}}, {x});
    EXPECT_EQ(r.shapes[0], (std::vector<int32_t>{1, 1, 1}));
    // exclude: reduce over the axes not listed.
    r = run_op("sum", {{"axis", "0"}, {"exclude", "True"}}, {x});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{12, 19, 27}));  // = axis (1, 2)
    // exclude with every axis listed: identity copy.
    r = run_op("sum", {{"axis", "(0, 1, 2)"}, {"exclude", "True"}}, {x});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (std::vector<int32_t>{3, 3, 2}));
    EXPECT_EQ(r.outputs[0], kData);
    EXPECT_EQ(r.precisions[0], 8 + 1);  // bits(1)
}

TEST(Sum, SizeOneAxisIndexBug) {
    // x (2, 2, 1) summed over axis 1: upstream reads x_flat[i + k] (case 040), not
    // x[i, k, 0] = x_flat[2i + k].
    Operand x{{2, 2, 1}, 8, {1, 10, 100, 1000}, false};
    auto r = run_op("sum", {{"axis", "(1,)"}}, {x});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (std::vector<int32_t>{2, 1}));
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{11, 110}));
}

// A trailing reduction whose kept axes end in a size-1 one: upstream's pairing puts the
// size-3 output dim on that axis, so output i does not fold the run at i * 4 (the
// kernel's shortcut for a global pool must not apply).
TEST(Sum, SizeOneKeptAxisBeforeTrailingRun) {
    const std::vector<int32_t> shape = {2, 3, 1, 4};
    auto x = cvml_test::random_values(24, 127, 77);
    auto want = reduce_ref::reduce(shape, x, {3}, false, false, true, 0);
    ASSERT_NE(want.values, reduce_ref::reduce(shape, x, {3}, false, false, true, 1).values);
    for (int threads : {1, 3}) {
        auto r = run_op("sum", {{"axis", "(3,)"}}, {Operand{shape, 8, x, false}}, 1, threads);
        ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
        EXPECT_EQ(r.outputs[0], want.values);
        auto n = reduce_narrow::run_after_clip("sum", {{"axis", "(3,)"}}, shape, x, 8, threads);
        ASSERT_EQ(n.rc, CVML_OK) << n.error;
        EXPECT_EQ(n.values, want.values);
    }
}

TEST(Sum, WrapsAround) {
    Operand x{{2, 2}, 31, {0x7fffffff, 1, -0x7fffffff, -3}, false};
    auto r = run_op("sum", {{"axis", "1"}}, {x});
    ASSERT_EQ(r.verify_rc, CVML_ERR_LOGIC);  // 31 + bits(2) = 33 > 32
    Operand y{{2, 2}, 30, {0x1fffffff, 0x1fffffff, 0, 0}, false};
    r = run_op("sum", {{"axis", "1"}}, {y});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{0x3ffffffe, 0}));
}

TEST(Sum, ErrorClasses) {
    Operand x{{3, 3, 2}, 8, kData, false};
    auto rc = [&](std::vector<std::pair<std::string, std::string>> a) {
        return run_op("sum", a, {x}).verify_rc;
    };
    EXPECT_EQ(rc({{"axis", "(0,)"}, {"keepdims", "0"}, {"exclude", "0"}, {"dtype", "int32"}}),
              CVML_OK);
    EXPECT_EQ(rc({{"axis", "x"}}), CVML_ERR_RUNTIME);
    EXPECT_EQ(rc({{"dtype", "int33"}}), CVML_ERR_RUNTIME);
    EXPECT_EQ(rc({{"axes", "1"}}), CVML_ERR_RUNTIME);
    EXPECT_EQ(rc({{"axis", "3"}}), CVML_ERR_LOGIC);
    EXPECT_EQ(rc({{"axis", "-4"}}), CVML_ERR_LOGIC);
    EXPECT_EQ(rc({{"axis", "(1, -2)"}}), CVML_ERR_LOGIC);  // the same axis twice
}

TEST(Sum, PropertyAgainstReference) {
    uint32_t seed = 700;
    for (int iter = 0; iter < 80; ++iter) {
        auto rnd = cvml_test::random_values(16, 1000, seed++);
        auto pick = [&](int i, int lo, int hi) { return lo + (rnd[i] + 1000) % (hi - lo + 1); };
        int nd = pick(0, 1, 4);
        std::vector<int32_t> shape;
        for (int i = 0; i < nd; ++i) shape.push_back(pick(1 + i, 1, 4));
        std::vector<int> axis;
        for (int i = 0; i < nd; ++i)
            if (pick(6 + i, 0, 2) == 0) axis.push_back(pick(11, 0, 1) ? i : i - nd);
        bool keep = pick(12, 0, 1), excl = pick(13, 0, 3) == 0;
        size_t n = 1;
        for (int d : shape) n *= d;
        auto x = cvml_test::random_values(n, 127, seed++);
        auto want = reduce_ref::reduce(shape, x, axis, keep, excl, true, 0);
        std::vector<std::pair<std::string, std::string>> a = {
            {"axis", reduce_narrow::axes_str(axis)},
            {"keepdims", keep ? "True" : "False"},
            {"exclude", excl ? "True" : "False"}};
        for (int threads : {1, 3}) {
            auto r = run_op("sum", a, {Operand{shape, 8, x, false}}, 1, threads);
            ASSERT_EQ(r.run_rc, CVML_OK) << r.error << " iter " << iter;
            ASSERT_EQ(r.shapes[0], want.shape) << "iter " << iter;
            ASSERT_EQ(r.outputs[0], want.values) << "iter " << iter;
        }
        // Where no kept size-1 axis exists the upstream mapping is the true reduction.
        bool has_kept_one = false;
        for (int i = 0; i < nd; ++i) {
            bool listed = false;
            for (int ax : axis) listed = listed || ax == i || ax + nd == i;
            bool reduced = axis.empty() || (listed != excl);
            has_kept_one = has_kept_one || (!reduced && shape[i] == 1);
        }
        if (!has_kept_one) {
            ASSERT_EQ(want.values, reduce_ref::reduce(shape, x, axis, keep, excl, true, 1).values);
        }
    }
}

// Trailing reduced axes fold one contiguous run per output (a global average pool's
// sum), long enough here for the vectorized loop.
TEST(Sum, LongTrailingRunsAgainstReference) {
    uint32_t seed = 4200;
    const std::vector<std::vector<int32_t>> shapes = {{2, 5, 7, 7}, {3, 97}, {1, 64, 3, 33}};
    const std::vector<std::vector<int>> axes = {{2, 3}, {1}, {1, 2, 3}};
    for (size_t i = 0; i < shapes.size(); ++i) {
        size_t n = 1;
        for (int d : shapes[i]) n *= d;
        auto x = cvml_test::random_values(n, (1 << 17) - 1, seed++);
        auto want = reduce_ref::reduce(shapes[i], x, axes[i], true, false, true, 0);
        for (int threads : {1, 3}) {
            auto r =
                run_op("sum", {{"axis", reduce_narrow::axes_str(axes[i])}, {"keepdims", "True"}},
                       {Operand{shapes[i], 18, x, false}}, 1, threads);
            ASSERT_EQ(r.verify_rc, CVML_OK) << r.error;
            ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
            ASSERT_EQ(r.outputs[0], want.values) << "shape " << i;
        }
    }
}

TEST(Sum, ConformanceCases) {
    nn_case::replay("sum", "037_sum_axes",
                    {{"exclude", "True"}, {"keepdims", "False"}, {"axis", "(0,)"}}, {3, 3, 2}, 8,
                    {}, 123);
    nn_case::replay("sum", "038_sum_all", {{"keepdims", "True"}, {"axis", "()"}}, {4, 4, 4}, 8, {},
                    389);
    nn_case::replay("sum", "039_sum_exclude_all", {{"exclude", "True"}, {"axis", "(0, 1, 2)"}},
                    {4, 4, 4}, 8, {}, 704);
    nn_case::replay("sum", "040_sum_size1_bug", {{"keepdims", "False"}, {"axis", "(1,)"}},
                    {2, 2, 1}, 8, {}, 34);
    nn_case::replay("sum", "041_sum_overflow", {{"axis", "(1,)"}}, {2, 255}, 24, {}, 3070, 1, 0, 3);
}

// A tensor stored as int8 or int16 (a convolution's output before a global pool) is read
// as it is stored.
TEST(Sum, NarrowStoredInputAgainstReference) {
    reduce_narrow::check_against_reference("sum", true, 9100);
}
