#include <gtest/gtest.h>

#include "shape_test_util.h"

using namespace shape_test;

/* (2,) with reps (2, 1): a new leading axis of 2 copies; gas base 1. */
TEST(Tile, MoreRepsThanDimsAddLeadingAxes) {
    auto r = run1("tile", {{"reps", "(2, 1)"}}, {2}, distinct(2), 1, 8);
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (Shape{2, 2}));
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{1, 2, 1, 2}));
    EXPECT_EQ(r.gas, unit_gas({{2}}, {2, 2}));
}

TEST(Tile, LikeNumpy) {
    // np.tile([[1,2],[3,4]], 2) -> [[1,2,1,2],[3,4,3,4]]
    auto r = run1("tile", {{"reps", "2"}}, {2, 2}, {1, 2, 3, 4});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (Shape{2, 4}));
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{1, 2, 1, 2, 3, 4, 3, 4}));
    // np.tile([1,2], (2,1,2)) -> shape (2,1,4)
    r = run1("tile", {{"reps", "(2,1,2)"}}, {2}, {1, 2});
    EXPECT_EQ(r.shapes[0], (Shape{2, 1, 4}));
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{1, 2, 1, 2, 1, 2, 1, 2}));
    // np.tile([[1,2],[3,4]], (2,1))
    r = run1("tile", {{"reps", "(2,1)"}}, {2, 2}, {1, 2, 3, 4});
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{1, 2, 3, 4, 1, 2, 3, 4}));
}

TEST(Tile, Errors) {
    // upstream's default reps is (0,), which its range check refuses: logic, not parse
    EXPECT_EQ(run1("tile", {}, {2}, distinct(2)).verify_rc, CVML_ERR_LOGIC);
    EXPECT_EQ(run1("tile", {{"reps", "()"}}, {2}, distinct(2)).verify_rc, CVML_ERR_LOGIC);
    EXPECT_EQ(run1("tile", {{"reps", "(2, 0)"}}, {2}, distinct(2)).verify_rc, CVML_ERR_LOGIC);
    EXPECT_EQ(run1("tile", {{"reps", "(-1,)"}}, {2}, distinct(2)).verify_rc, CVML_ERR_LOGIC);
    EXPECT_EQ(run1("tile", {{"reps", "(4097,)"}}, {2}, distinct(2)).verify_rc, CVML_ERR_LOGIC);
    EXPECT_EQ(run1("tile", {{"reps", "(1,1,1,1,1,1,2)"}}, {2}, distinct(2)).verify_rc,
              CVML_ERR_LOGIC);
    EXPECT_EQ(run1("tile", {{"reps", "(2,"}}, {2}, distinct(2)).verify_rc, CVML_ERR_RUNTIME);
    EXPECT_EQ(run1("tile", {{"reps", "2"}, {"axis", "0"}}, {2}, distinct(2)).verify_rc,
              CVML_ERR_RUNTIME);
}

TEST(Tile, RandomShapesRepsAndThreads) {
    std::mt19937 rng(51);
    for (int iter = 0; iter < 60; ++iter) {
        Shape in = random_shape(rng, 1, 4, 3);
        std::vector<int64_t> reps(rand_int(rng, 1, 5));
        for (auto& v : reps) v = rand_int(rng, 1, 3);
        const size_t nd = std::max(in.size(), reps.size());
        Shape xin(nd - in.size(), 1), rin(nd - reps.size(), 1);
        xin.insert(xin.end(), in.begin(), in.end());
        for (auto v : reps) rin.push_back(static_cast<int32_t>(v));
        Shape out(nd);
        for (size_t d = 0; d < nd; ++d) out[d] = xin[d] * rin[d];
        auto x = distinct(size_of(in), -3);
        std::vector<int32_t> expect(size_of(out));
        for_each_index(out, [&](const Shape& k, int64_t flat) {
            Shape s(nd);
            for (size_t d = 0; d < nd; ++d) s[d] = k[d] % xin[d];
            expect[flat] = x[offset_of(xin, s)];
        });
        for (int threads : {1, 3}) {
            auto r = run1("tile", {{"reps", tuple_str(reps)}}, in, x, threads);
            ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
            EXPECT_EQ(r.shapes[0], out);
            EXPECT_EQ(r.outputs[0], expect);
        }
    }
}
