#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nn_case_util.h"
#include "op_runner.h"
#include "reduce_narrow_util.h"
#include "reduce_ref.h"

using cvml_test::Operand;
using cvml_test::run_op;

TEST(Max, HandChecked) {
    Operand x{{2, 3}, 8, {1, -5, 3, -7, -2, -9}, false};
    auto r = run_op("max", {{"axis", "1"}}, {x});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (std::vector<int32_t>{2}));
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{3, -2}));
    EXPECT_EQ(r.precisions[0], 8);
    EXPECT_EQ(r.gas, 2u + 5 * 6 + 5 * 2);
    r = run_op("max", {{"axis", "0"}, {"keepdims", "true"}}, {x});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (std::vector<int32_t>{1, 3}));
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{1, -2, 3}));
}

TEST(Max, AllAxesStartsAtZero) {
    // axis = (): upstream's accumulator starts at 0 (case 043), so all-negative data gives 0.
    Operand x{{2, 2}, 8, {-1, -5, -3, -7}, false};
    auto r = run_op("max", {}, {x});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{0}));
    // Listing every axis takes the general path, which starts from the first element.
    r = run_op("max", {{"axis", "(0, 1)"}}, {x});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{-1}));
    // So does axis = () with exclude.
    r = run_op("max", {{"exclude", "True"}}, {x});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (std::vector<int32_t>{1}));
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{-1}));
}

TEST(Max, ErrorClasses) {
    Operand x{{2, 3}, 8, {1, -5, 3, -7, -2, -9}, false};
    EXPECT_EQ(run_op("max", {{"axis", "2"}}, {x}).verify_rc, CVML_ERR_LOGIC);
    EXPECT_EQ(run_op("max", {{"axis", "(0, 0)"}}, {x}).verify_rc, CVML_ERR_LOGIC);
    EXPECT_EQ(run_op("max", {{"axis", "-3"}}, {x}).verify_rc, CVML_ERR_LOGIC);
    EXPECT_EQ(run_op("max", {{"axis", "2147483647"}}, {x}).verify_rc, CVML_ERR_LOGIC);
    EXPECT_EQ(run_op("max", {{"axis", "-2147483648"}}, {x}).verify_rc, CVML_ERR_LOGIC);
    EXPECT_EQ(run_op("max", {{"axis", "(0, 1, 0)"}}, {x}).verify_rc, CVML_ERR_LOGIC);
    EXPECT_EQ(run_op("max", {{"axis", "(0, -2)"}}, {x}).verify_rc, CVML_ERR_LOGIC);  // same axis
    EXPECT_EQ(run_op("max", {{"keepdims", "yes"}}, {x}).verify_rc, CVML_ERR_RUNTIME);
    EXPECT_EQ(run_op("max", {{"exclude", "2"}}, {x}).verify_rc, CVML_ERR_RUNTIME);
    EXPECT_EQ(run_op("max", {{"axis", "(0,"}}, {x}).verify_rc, CVML_ERR_RUNTIME);
    EXPECT_EQ(run_op("max", {{"dtype", "float32"}}, {x}).verify_rc, CVML_OK);
}

TEST(Max, PropertyAgainstReference) {
    uint32_t seed = 900;
    for (int iter = 0; iter < 80; ++iter) {
        auto rnd = cvml_test::random_values(16, 1000, seed++);
        auto pick = [&](int i, int lo, int hi) { return lo + (rnd[i] + 1000) % (hi - lo + 1); };
        int nd = pick(0, 1, 4);
        std::vector<int32_t> shape;
        for (int i = 0; i < nd; ++i) shape.push_back(pick(1 + i, 1, 4));
        std::vector<int> axis;
        for (int i = 0; i < nd; ++i)
            if (pick(6 + i, 0, 2) == 0) axis.push_back(i);
        bool keep = pick(12, 0, 1), excl = pick(13, 0, 3) == 0;
        size_t n = 1;
        for (int d : shape) n *= d;
        // Mostly negative data, so that the axis = () start-at-0 rule shows.
        auto x = cvml_test::random_values(n, 1 << 20, seed++);
        for (auto& v : x) v = v / 2 - (1 << 19);
        auto want = reduce_ref::reduce(shape, x, axis, keep, excl, false, 0);
        std::string ax = "(";
        for (size_t i = 0; i < axis.size(); ++i) ax += (i ? "," : "") + std::to_string(axis[i]);
        ax += ")";
        std::vector<std::pair<std::string, std::string>> a = {
            {"axis", ax}, {"keepdims", keep ? "1" : "0"}, {"exclude", excl ? "1" : "0"}};
        for (int threads : {1, 3}) {
            auto r = run_op("max", a, {Operand{shape, 22, x, false}}, 1, threads);
            ASSERT_EQ(r.run_rc, CVML_OK) << r.error << " iter " << iter;
            ASSERT_EQ(r.shapes[0], want.shape) << "iter " << iter;
            ASSERT_EQ(r.outputs[0], want.values) << "iter " << iter;
        }
    }
}

// Trailing reduced axes: one contiguous run per output, long enough to vectorize.
TEST(Max, LongTrailingRunsAgainstReference) {
    const std::vector<int32_t> shape = {3, 4, 41};
    auto x = cvml_test::random_values(3 * 4 * 41, 1 << 20, 4300);
    for (auto& v : x) v = v / 2 - (1 << 19);
    const std::vector<std::pair<const char*, std::vector<int>>> cases = {{"(2,)", {2}},
                                                                         {"(1, 2)", {1, 2}}};
    for (const auto& [axis, ax] : cases) {
        auto want = reduce_ref::reduce(shape, x, ax, false, false, false, 0);
        for (int threads : {1, 3}) {
            auto r = run_op("max", {{"axis", axis}}, {Operand{shape, 22, x, false}}, 1, threads);
            ASSERT_EQ(r.verify_rc, CVML_OK) << r.error;
            ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
            ASSERT_EQ(r.outputs[0], want.values) << axis;
        }
    }
}

TEST(Max, ConformanceCases) {
    nn_case::replay("max", "042_max_axes",
                    {{"exclude", "True"}, {"keepdims", "False"}, {"axis", "(2,)"}}, {4, 2, 5}, 8,
                    {}, 230);
    nn_case::replay("max", "043_max_all", {{"keepdims", "True"}, {"axis", "()"}}, {3, 2, 3}, 32, {},
                    96);
}

// A tensor stored as int8 or int16 (a convolution's output before a global pool) is read
// as it is stored.
TEST(Max, NarrowStoredInputAgainstReference) {
    reduce_narrow::check_against_reference("max", false, 9300);
}
