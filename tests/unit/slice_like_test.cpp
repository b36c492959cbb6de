#include <gtest/gtest.h>

#include "shape_test_util.h"

using namespace shape_test;
using cvml_test::Operand;
using cvml_test::run_op;

namespace {
cvml_test::OpResult slice_like(const Shape& data, const Shape& like, const Attrs& attrs,
                               int threads = 1) {
    return run_op("slice_like", attrs,
                  {Operand{data, 31, distinct(size_of(data)), false},
                   Operand{like, 8, std::vector<int32_t>(size_of(like), 0), true}},
                  1, threads);
}
}  // namespace

/* axes (1, -1): dims 1 and 2 cut to like's, dim 0 kept; y[i][j][k] = x[i][j][k]. */
TEST(SliceLike, ListedAxesOnly) {
    auto r = run_op("slice_like", {{"axis", "(1, -1)"}},
                    {Operand{{4, 6, 4}, 8, distinct(96, -48), false},
                     Operand{{2, 6, 2}, 8, distinct(24), true}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (Shape{4, 6, 2}));
    std::vector<int32_t> want;
    for (int32_t i = 0; i < 4; ++i)
        for (int32_t j = 0; j < 6; ++j)
            for (int32_t k = 0; k < 2; ++k) want.push_back((i * 6 + j) * 4 + k - 48);
    EXPECT_EQ(r.outputs[0], want);
    EXPECT_EQ(r.gas, unit_gas({{4, 6, 4}, {2, 6, 2}}, {4, 6, 2}));
}

/* No axis: every axis of `like`, here the last cut to 1; y[i][j][0] = x[i][j][0]. */
TEST(SliceLike, EveryAxisOfLike) {
    auto r = run_op("slice_like", {},
                    {Operand{{6, 4, 4}, 8, distinct(96, -48), false},
                     Operand{{6, 4, 1}, 8, std::vector<int32_t>(24, 1), true}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (Shape{6, 4, 1}));
    std::vector<int32_t> want;
    for (int32_t i = 0; i < 6 * 4; ++i) want.push_back(i * 4 - 48);
    EXPECT_EQ(r.outputs[0], want);
    EXPECT_EQ(r.gas, unit_gas({{6, 4, 4}, {6, 4, 1}}, {6, 4, 1}));
}

TEST(SliceLike, RanksMayDiffer) {
    auto r = slice_like({4, 5, 6}, {2, 3}, {});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (Shape{2, 3, 6}));
    r = slice_like({4, 5}, {2, 3, 7}, {});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (Shape{2, 3}));
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{1, 2, 3, 6, 7, 8}));
    r = slice_like({4, 5, 6}, {2, 3}, {{"axis", "(-2,)"}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (Shape{4, 3, 6}));
}

TEST(SliceLike, Errors) {
    EXPECT_EQ(slice_like({2, 3}, {3, 3}, {}).verify_rc, CVML_ERR_LOGIC);
    EXPECT_EQ(slice_like({2, 3}, {2, 4}, {{"axis", "1"}}).verify_rc, CVML_ERR_LOGIC);
    EXPECT_EQ(slice_like({2, 3}, {2, 3}, {{"axis", "2"}}).verify_rc, CVML_ERR_LOGIC);
    EXPECT_EQ(slice_like({2, 3}, {2, 3}, {{"axis", "-3"}}).verify_rc, CVML_ERR_LOGIC);
    // -1 of a 3-D data is axis 2, which a 2-D `like` lacks (upstream reads past its shape)
    EXPECT_EQ(slice_like({4, 5, 6}, {2, 3}, {{"axis", "-1"}}).verify_rc, CVML_ERR_LOGIC);
    // axis 2 is in range for a 3-D `like` but not an axis of 2-D data
    EXPECT_EQ(slice_like({4, 5}, {2, 3, 1}, {{"axis", "2"}}).verify_rc, CVML_ERR_LOGIC);
    EXPECT_EQ(slice_like({2, 3}, {2, 3}, {{"axis", "(4294967296,)"}}).verify_rc,
              CVML_ERR_RUNTIME);  // Tuple<int>
    EXPECT_EQ(slice_like({2, 3}, {2, 3}, {{"axes", "(0,)"}}).verify_rc, CVML_ERR_RUNTIME);
}

TEST(SliceLike, RandomShapesAxesAndThreads) {
    std::mt19937 rng(61);
    for (int iter = 0; iter < 50; ++iter) {
        Shape data = random_shape(rng, 1, 5, 5);
        const int nd = static_cast<int>(data.size());
        Shape like(data.size());
        for (int i = 0; i < nd; ++i) like[i] = rand_int(rng, 1, data[i]);
        std::vector<int64_t> axes;
        Shape out = data;
        if (rand_int(rng, 0, 2) == 0) {
            out = like;
        } else {
            for (int i = 0; i < nd; ++i)
                if (rand_int(rng, 0, 1)) {
                    axes.push_back(rand_int(rng, 0, 1) ? i - nd : i);
                    out[i] = like[i];
                }
        }
        if (axes.empty()) out = like;  // no axis attribute means every axis
        Attrs attrs;
        if (!axes.empty()) attrs.push_back({"axis", tuple_str(axes)});
        auto x = distinct(size_of(data));
        std::vector<int32_t> expect(size_of(out));
        for_each_index(out,
                       [&](const Shape& d, int64_t flat) { expect[flat] = x[offset_of(data, d)]; });
        for (int threads : {1, 3}) {
            auto r = slice_like(data, like, attrs, threads);
            ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
            EXPECT_EQ(r.shapes[0], out);
            EXPECT_EQ(r.outputs[0], expect);
        }
    }
}
