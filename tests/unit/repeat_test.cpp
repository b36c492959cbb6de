#include <gtest/gtest.h>

#include "shape_test_util.h"

using namespace shape_test;

/* (1, 4) along axis 1, 3 times: each value three times in a row; gas base 1. */
TEST(Repeat, RepeatsEachValueInPlace) {
    auto r = run1("repeat", {{"axis", "1"}, {"repeats", "3"}}, {1, 4}, distinct(4), 1, 8);
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (Shape{1, 12}));
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4}));
    EXPECT_EQ(r.gas, unit_gas({{1, 4}}, {1, 12}));
}

TEST(Repeat, AxisDefaultsToZeroAndMayBeNegative) {
    auto r = run1("repeat", {{"repeats", "2"}}, {2, 2}, {1, 2, 3, 4});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (Shape{4, 2}));
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{1, 2, 1, 2, 3, 4, 3, 4}));
    r = run1("repeat", {{"repeats", "2"}, {"axis", "-1"}}, {2, 2}, {1, 2, 3, 4});
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{1, 1, 2, 2, 3, 3, 4, 4}));
}

TEST(Repeat, Errors) {
    EXPECT_EQ(run1("repeat", {{"repeats", "0"}}, {2}, distinct(2)).verify_rc, CVML_ERR_LOGIC);
    EXPECT_EQ(run1("repeat", {{"repeats", "-2"}}, {2}, distinct(2)).verify_rc, CVML_ERR_LOGIC);
    EXPECT_EQ(run1("repeat", {{"repeats", "2"}, {"axis", "1"}}, {2}, distinct(2)).verify_rc,
              CVML_ERR_LOGIC);
    EXPECT_EQ(run1("repeat", {{"repeats", "2"}, {"axis", "-2"}}, {2}, distinct(2)).verify_rc,
              CVML_ERR_LOGIC);
    EXPECT_EQ(run1("repeat", {{"repeats", "33554432"}}, {2}, distinct(2)).verify_rc,
              CVML_ERR_LOGIC);  // 2^26 > 2^24 dim limit
    EXPECT_EQ(run1("repeat", {}, {2}, distinct(2)).verify_rc, CVML_ERR_RUNTIME);
    EXPECT_EQ(run1("repeat", {{"repeats", "2"}, {"times", "2"}}, {2}, distinct(2)).verify_rc,
              CVML_ERR_RUNTIME);
}

TEST(Repeat, RandomShapesAxesAndThreads) {
    std::mt19937 rng(50);
    for (int iter = 0; iter < 50; ++iter) {
        Shape in = random_shape(rng, 1, 5, 4);
        const int nd = static_cast<int>(in.size());
        int axis = rand_int(rng, -nd, nd - 1);
        int real = axis < 0 ? axis + nd : axis;
        int reps = rand_int(rng, 1, 4);
        Shape out = in;
        out[real] *= reps;
        auto x = distinct(size_of(in), 9);
        std::vector<int32_t> expect(size_of(out));
        for_each_index(out, [&](const Shape& d, int64_t flat) {
            Shape s = d;
            s[real] /= reps;
            expect[flat] = x[offset_of(in, s)];
        });
        for (int threads : {1, 3}) {
            auto r =
                run1("repeat", {{"repeats", std::to_string(reps)}, {"axis", std::to_string(axis)}},
                     in, x, threads);
            ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
            EXPECT_EQ(r.shapes[0], out);
            EXPECT_EQ(r.outputs[0], expect);
        }
    }
}
