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

/* Conformance 061_slice_like_axis: axes (1, -1) */
TEST(SliceLike, Conformance061) {
    std::vector<int32_t> x = {
        -46, 1,   46,  -93, 46,  -33, -12, 125, 56,   -40,  1,    -49,  -110, -1,  22,   106,
        53,  -79, 22,  77,  108, 40,  67,  38,  123,  -99,  -127, -103, 11,   -48, 56,   -57,
        1,   0,   96,  100, 3,   -8,  -49, 90,  -123, -118, 109,  70,   -50,  85,  -57,  80,
        -10, 122, -37, 1,   -7,  -19, -13, -74, -45,  19,   96,   -95,  -30,  127, 64,   113,
        0,   127, 20,  42,  114, -1,  39,  -39, -33,  -53,  -42,  -38,  109,  -21, -115, 74,
        90,  83,  -94, -38, -67, -17, 126, 112, 37,   46,   96,   123,  -100, -21, 0,    89};
    std::vector<int32_t> like = {126, -1,  109, -83, -4, -1, -116, -73,  8,   -1, 1,   -47,
                                 119, 127, 10,  -49, -1, 1,  -103, -112, -89, 48, -97, -84};
    auto r = run_op("slice_like", {{"axis", "(1, -1)"}},
                    {Operand{{4, 6, 4}, 8, x, false}, Operand{{2, 6, 2}, 8, like, true}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (Shape{4, 6, 2}));
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{
                                -46, 1,   46,  -33, 56,  -40, -110, -1,  53,   -79,  108,  40,
                                123, -99, 11,  -48, 1,   0,   3,    -8,  -123, -118, -50,  85,
                                -10, 122, -7,  -19, -45, 19,  -30,  127, 0,    127,  114,  -1,
                                -33, -53, 109, -21, 90,  83,  -67,  -17, 37,   46,   -100, -21}));
    EXPECT_EQ(r.gas, 888u);
}

/* Conformance 062_slice_like_all: no axis, every axis of `like` */
TEST(SliceLike, Conformance062) {
    std::vector<int32_t> x = {
        103,  -29,  35,  -26, 78,  102,  127, 1,   77,   20,  -114, -67, 3,    -93,  -44,  70,
        -125, -100, 29,  -93, -37, -93,  13,  69,  -125, 40,  0,    -33, -108, 120,  49,   61,
        -47,  -54,  -83, 49,  49,  89,   70,  21,  72,   -28, -119, -83, 99,   -100, 1,    -56,
        -78,  75,   114, -23, -72, -125, 94,  49,  27,   49,  -99,  125, -81,  26,   105,  1,
        -28,  -91,  0,   -95, 99,  40,   85,  73,  -89,  60,  -120, 9,   -57,  -41,  -44,  -24,
        24,   -10,  127, -34, -38, 72,   -58, -96, -76,  121, 69,   17,  -79,  104,  -109, -7};
    std::vector<int32_t> like(24, 1);
    auto r = run_op("slice_like", {},
                    {Operand{{6, 4, 4}, 8, x, false}, Operand{{6, 4, 1}, 8, like, true}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (Shape{6, 4, 1}));
    EXPECT_EQ(r.outputs[0],
              (std::vector<int32_t>{103, 78,  77, 3,   -125, -37, -125, -108, -47, 49,  72,  99,
                                    -78, -72, 27, -81, -28,  99,  -89,  -57,  24,  -38, -76, -79}));
    EXPECT_EQ(r.gas, 744u);
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
