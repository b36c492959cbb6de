#include <gtest/gtest.h>

#include "shape_test_util.h"

using namespace shape_test;

namespace {
cvml_test::OpResult slice(const Shape& in, const Attrs& attrs, int threads = 1) {
    return run1("strided_slice", attrs, in, distinct(size_of(in)), threads);
}
}  // namespace

TEST(StridedSlice, DocumentedExamples) {
    // x = [[1,4,7,10],[2,5,8,11],[3,6,9,12]]
    auto r = run1("strided_slice", {{"begin", "[0, 1]"}, {"end", "[2, 4]"}, {"stride", "[1, 1]"}},
                  {3, 4}, {1, 4, 7, 10, 2, 5, 8, 11, 3, 6, 9, 12});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (Shape{2, 3}));
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{4, 7, 10, 5, 8, 11}));
    r = run1("strided_slice", {{"begin", "[0, 0]"}, {"end", "[2, 2]"}}, {2, 2, 2}, distinct(8));
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], distinct(8));
}

/* Every axis given, a negative begin past the start clamped to 0:
 * y[i][j][k] = x[3 + i][j][k]. */
TEST(StridedSlice, AllAxesWithAClampedNegativeBegin) {
    auto r = run1("strided_slice",
                  {{"stride", "(1, 1, 1)"}, {"end", "(5, 2, 4)"}, {"begin", "(3, 0, -5)"}},
                  {7, 3, 4}, distinct(84, -42), 1, 8);
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (Shape{2, 2, 4}));
    std::vector<int32_t> want;
    for (int32_t i = 3; i < 5; ++i)
        for (int32_t j = 0; j < 2; ++j)
            for (int32_t k = 0; k < 4; ++k) want.push_back((i * 3 + j) * 4 + k - 42);
    EXPECT_EQ(r.outputs[0], want);
    EXPECT_EQ(r.gas, unit_gas({{7, 3, 4}}, {2, 2, 4}));
}

/* Stride -1 from 2 to 1 keeps x[2]; begin -1 with stride 2 keeps x[4]. */
TEST(StridedSlice, NegativeStrideAndNegativeBegin) {
    auto r = slice({6, 5, 7}, {{"stride", "(-1,)"}, {"end", "(1,)"}, {"begin", "(2,)"}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (Shape{1, 5, 7}));
    EXPECT_EQ(r.outputs[0], distinct(35, 1 + 2 * 35));
    EXPECT_EQ(r.gas, unit_gas({{6, 5, 7}}, {1, 5, 7}));
    r = slice({5, 4, 7}, {{"stride", "(2,)"}, {"end", "(5,)"}, {"begin", "(-1,)"}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (Shape{1, 4, 7}));
    EXPECT_EQ(r.outputs[0], distinct(28, 1 + 4 * 28));
    EXPECT_EQ(r.gas, unit_gas({{5, 4, 7}}, {1, 4, 7}));
}

TEST(StridedSlice, ClampingAndDefaults) {
    // stride < 0 clamps to [-1, n-1]: begin 10 -> 4, end -100 -> -1: all, reversed
    auto r = slice({5}, {{"begin", "(10,)"}, {"end", "(-100,)"}, {"stride", "(-1,)"}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{5, 4, 3, 2, 1}));
    // stride > 0 clamps to [0, n]: the last element is kept
    r = slice({5}, {{"begin", "(-100,)"}, {"end", "(100,)"}, {"stride", "(2,)"}});
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{1, 3, 5}));
    // size = ceil(|end - begin| / |stride|)
    r = slice({7}, {{"begin", "(6,)"}, {"end", "(0,)"}, {"stride", "(-4,)"}});
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{7, 3}));
    // end defaults to (1,) when absent, then each missing entry is the dim
    r = slice({5, 2}, {{"begin", "(4,)"}, {"stride", "(-1,)"}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (Shape{3, 2}));
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{9, 10, 7, 8, 5, 6}));
    // begin defaults to (0,)
    r = slice({3, 2}, {{"end", "(2, 1)"}});
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{1, 3}));
    // extra entries past the rank are ignored
    r = slice({3}, {{"begin", "(1, 7, 7)"}, {"end", "(3, 0, 0)"}, {"stride", "(1, 0, 0)"}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{2, 3}));
}

TEST(StridedSlice, HugeStridesFollowUpstreamWrapAround) {
    auto r = slice({5}, {{"begin", "(0,)"}, {"end", "(1,)"}, {"stride", "(9223372036854775807,)"}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{1}));
    r = slice({5}, {{"begin", "(2,)"}, {"end", "(1,)"}, {"stride", "(-9223372036854775808,)"}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{3}));
    // interval + stride - 1 wraps negative: size -1, refused
    EXPECT_EQ(slice({5}, {{"begin", "(0,)"}, {"end", "(5,)"}, {"stride", "(9223372036854775807,)"}})
                  .verify_rc,
              CVML_ERR_LOGIC);
}

TEST(StridedSlice, Errors) {
    EXPECT_EQ(slice({5}, {{"begin", "(0,)"}, {"end", "(5,)"}, {"stride", "(0,)"}}).verify_rc,
              CVML_ERR_LOGIC);
    EXPECT_EQ(slice({5}, {{"begin", "(2,)"}, {"end", "(2,)"}}).verify_rc, CVML_ERR_LOGIC);
    EXPECT_EQ(slice({5}, {{"begin", "(3,)"}, {"end", "(1,)"}}).verify_rc, CVML_ERR_LOGIC);
    EXPECT_EQ(slice({5}, {{"begin", "(1,)"}, {"end", "(3,)"}, {"stride", "(-1,)"}}).verify_rc,
              CVML_ERR_LOGIC);
    EXPECT_EQ(slice({5}, {{"begin", "(9,)"}, {"end", "(12,)"}}).verify_rc, CVML_ERR_LOGIC);
    EXPECT_EQ(slice({5}, {{"begin", "(a,)"}}).verify_rc, CVML_ERR_RUNTIME);
    EXPECT_EQ(slice({5}, {{"strides", "(1,)"}}).verify_rc, CVML_ERR_RUNTIME);
}

/* Property: independent reference with numpy's slice rules re-derived in the test. */
TEST(StridedSlice, RandomSlicesAndThreads) {
    std::mt19937 rng(58);
    int checked = 0;
    for (int iter = 0; iter < 200 && checked < 60; ++iter) {
        Shape in = random_shape(rng, 1, 4, 6);
        const size_t nd = in.size();
        std::vector<int64_t> b(rand_int(rng, 0, static_cast<int>(nd)));
        std::vector<int64_t> e(rand_int(rng, 1, static_cast<int>(nd)));
        std::vector<int64_t> s(rand_int(rng, 0, static_cast<int>(nd)));
        for (auto& v : b) v = rand_int(rng, -8, 8);
        for (auto& v : e) v = rand_int(rng, -8, 8);
        for (auto& v : s) v = rand_int(rng, 1, 3) * (rand_int(rng, 0, 1) ? 1 : -1);
        Shape out(nd);
        std::vector<int64_t> first(nd), step(nd);
        bool valid = true;
        for (size_t i = 0; i < nd; ++i) {
            int64_t n = in[i];
            int64_t st = i < s.size() ? s[i] : 1;
            int64_t bb = i < b.size() ? b[i] : 0;
            int64_t ee = i < e.size() ? e[i] : n;
            if (bb < 0) bb += n;
            if (ee < 0) ee += n;
            int64_t lo = st > 0 ? 0 : -1, hi = st > 0 ? n : n - 1;
            bb = std::min(std::max(bb, lo), hi);
            ee = std::min(std::max(ee, lo), hi);
            if (st > 0 ? bb >= ee : ee >= bb) valid = false;
            int64_t len = st > 0 ? ee - bb : bb - ee;
            out[i] = static_cast<int32_t>((len + std::abs(st) - 1) / std::abs(st));
            first[i] = bb;
            step[i] = st;
        }
        Attrs attrs = {{"begin", tuple_str(b)}, {"end", tuple_str(e)}};
        if (!s.empty()) attrs.push_back({"stride", tuple_str(s)});
        if (b.empty()) attrs[0].second = "()";
        if (!valid) {
            EXPECT_EQ(slice(in, attrs).verify_rc, CVML_ERR_LOGIC);
            continue;
        }
        ++checked;
        auto x = distinct(size_of(in), 1);
        std::vector<int32_t> expect(size_of(out));
        for_each_index(out, [&](const Shape& d, int64_t flat) {
            Shape src(nd);
            for (size_t i = 0; i < nd; ++i)
                src[i] = static_cast<int32_t>(first[i] + d[i] * step[i]);
            expect[flat] = x[offset_of(in, src)];
        });
        for (int threads : {1, 3}) {
            auto r = slice(in, attrs, threads);
            ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
            EXPECT_EQ(r.shapes[0], out);
            EXPECT_EQ(r.outputs[0], expect);
        }
    }
    EXPECT_GE(checked, 20);
}
