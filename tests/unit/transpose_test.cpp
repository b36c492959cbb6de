#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "shape_test_util.h"

using namespace shape_test;

namespace {
/* y[d] = x[s] with s[perm[j]] = d[j] */
std::vector<int32_t> ref_transpose(const Shape& in, const std::vector<int>& perm,
                                   const std::vector<int32_t>& x, Shape* out_shape) {
    Shape out(in.size());
    for (size_t j = 0; j < in.size(); ++j) out[j] = in[perm[j]];
    std::vector<int32_t> y(x.size());
    for_each_index(out, [&](const Shape& d, int64_t flat) {
        Shape s(in.size());
        for (size_t j = 0; j < in.size(); ++j) s[perm[j]] = d[j];
        y[flat] = x[offset_of(in, s)];
    });
    *out_shape = out;
    return y;
}
}  // namespace

TEST(Transpose, DocumentedExamples) {
    auto r = run1("transpose", {}, {2, 2}, {1, 2, 3, 4});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{1, 3, 2, 4}));
    r = run1("transpose", {}, {2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{1, 5, 3, 7, 2, 6, 4, 8}));
    r = run1("transpose", {{"axes", "(1,0,2)"}}, {2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{1, 2, 5, 6, 3, 4, 7, 8}));
}

/* Conformance 044 (axes=() reverses), 045 (the (1,2,0) fast path), 046 (negative axis) */
TEST(Transpose, Conformance044to046) {
    auto r = run1("transpose", {}, {3, 3, 3},
                  {11,  -20, -43, -57, 122, 127, -47, 127,  -9,  78,  -127, -1,  -49, -127,
                   -51, -62, 110, -28, 38,  31,  -68, -127, 115, 102, 1,    -19, 12},
                  1, 8);
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{11,  78,   38,  -57, -49,  -127, -47, -62, 1,
                                                  -20, -127, 31,  122, -127, 115,  127, 110, -19,
                                                  -43, -1,   -68, 127, -51,  102,  -9,  -28, 12}));
    EXPECT_EQ(r.gas, 297u);
    r = run1("transpose", {{"axes", "(1, 2, 0)"}}, {3, 4, 3},
             {-13, -41,  -51, -66,  37,   -104, 72,  21,   -1, -127, -47, 25,
              38,  85,   19,  -114, -102, -64,  -25, -127, 13, -121, 74,  30,
              1,   -117, -61, 91,   -1,   117,  5,   117,  30, -69,  54,  16},
             1, 8);
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (Shape{4, 3, 3}));
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{
                                -13, 38,   1,  -41,  85,   -117, -51, 19,  -61, -66, -114, 91,
                                37,  -102, -1, -104, -64,  117,  72,  -25, 5,   21,  -127, 117,
                                -1,  13,   30, -127, -121, -69,  -47, 74,  54,  25,  30,   16}));
    EXPECT_EQ(r.gas, 396u);
    r = run1("transpose", {{"axes", "(0, 2, -2)"}}, {3, 4, 4},
             {107, 127, -116, -127, 119, 100,  -91, -119, 3,   45, -42, 110, 71,  -127, 41,   76,
              94,  37,  79,   103,  -11, -115, 6,   36,   -91, 49, -67, -54, -73, 54,   -114, 15,
              -98, 91,  -100, 104,  118, 25,   15,  84,   -56, -9, 73,  -15, 109, -51,  65,   -59},
             1, 8);
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{
                                107,  119,  3,   71, 127, 100, 45,  -127, -116, -91, -42, 41, -127,
                                -119, 110,  76,  94, -11, -91, -73, 37,   -115, 49,  54,  79, 6,
                                -67,  -114, 103, 36, -54, 15,  -98, 118,  -56,  109, 91,  25, -9,
                                -51,  -100, 15,  73, 65,  104, 84,  -15,  -59}));
    EXPECT_EQ(r.gas, 528u);
}

TEST(Transpose, Errors) {
    EXPECT_EQ(run1("transpose", {{"axes", "(0, 0)"}}, {2, 3}, distinct(6)).verify_rc,
              CVML_ERR_LOGIC);
    EXPECT_EQ(run1("transpose", {{"axes", "(1, -1)"}}, {2, 3}, distinct(6)).verify_rc,
              CVML_ERR_LOGIC);  // repeated once normalised
    EXPECT_EQ(run1("transpose", {{"axes", "(0, 2)"}}, {2, 3}, distinct(6)).verify_rc,
              CVML_ERR_LOGIC);
    EXPECT_EQ(run1("transpose", {{"axes", "(0, -3)"}}, {2, 3}, distinct(6)).verify_rc,
              CVML_ERR_LOGIC);
    EXPECT_EQ(run1("transpose", {{"axes", "(0,)"}}, {2, 3}, distinct(6)).verify_rc, CVML_ERR_LOGIC);
    EXPECT_EQ(run1("transpose", {{"axes", "0,1"}}, {2, 3}, distinct(6)).verify_rc,
              CVML_ERR_RUNTIME);
    EXPECT_EQ(run1("transpose", {{"axis", "(1,0)"}}, {2, 3}, distinct(6)).verify_rc,
              CVML_ERR_RUNTIME);
}

TEST(Transpose, RandomPermutationsAndThreads) {
    std::mt19937 rng(44);
    for (int iter = 0; iter < 60; ++iter) {
        Shape in = random_shape(rng, 1, 6, 4);
        const int nd = static_cast<int>(in.size());
        std::vector<int> perm(nd);
        std::iota(perm.begin(), perm.end(), 0);
        std::shuffle(perm.begin(), perm.end(), rng);
        bool reverse = rand_int(rng, 0, 4) == 0;
        std::vector<int64_t> axes;
        if (reverse) {
            for (int j = 0; j < nd; ++j) perm[j] = nd - 1 - j;
        } else {
            for (int p : perm) axes.push_back(rand_int(rng, 0, 1) ? p - nd : p);
        }
        auto x = distinct(size_of(in), -50);
        Shape out;
        auto expect = ref_transpose(in, perm, x, &out);
        Attrs attrs;
        if (!reverse || rand_int(rng, 0, 1))
            attrs.push_back({"axes", reverse ? "()" : tuple_str(axes)});
        for (int threads : {1, 3}) {
            auto r = run1("transpose", attrs, in, x, threads);
            ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
            EXPECT_EQ(r.shapes[0], out);
            EXPECT_EQ(r.outputs[0], expect);
        }
    }
}
