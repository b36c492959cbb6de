#include <gtest/gtest.h>

#include "shape_test_util.h"

using namespace shape_test;

namespace {
Shape expand_of(const Shape& in, const Attrs& attrs, int* rc = nullptr) {
    auto r = run1("expand_dims", attrs, in, distinct(size_of(in)));
    if (rc) *rc = r.verify_rc;
    if (r.verify_rc != CVML_OK) return {};
    EXPECT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], distinct(size_of(in)));
    return r.shapes[0];
}
}  // namespace

TEST(ExpandDims, AxisRangeIncludesBothEnds) {
    EXPECT_EQ(expand_of({2, 3}, {{"axis", "0"}}), (Shape{1, 2, 3}));
    EXPECT_EQ(expand_of({2, 3}, {{"axis", "2"}}), (Shape{2, 3, 1}));
    EXPECT_EQ(expand_of({2, 3}, {{"axis", "-1"}}), (Shape{2, 3, 1}));
    EXPECT_EQ(expand_of({2, 3}, {{"axis", "-3"}}), (Shape{1, 2, 3}));
    EXPECT_EQ(expand_of({2, 3}, {{"axis", "1"}, {"num_newaxis", "3"}}), (Shape{2, 1, 1, 1, 3}));
}

/* Two new axes after axis 0 of a (2,): the values unchanged, gas base 1. */
TEST(ExpandDims, KeepsValuesAndChargesUnitGas) {
    auto r = run1("expand_dims", {{"num_newaxis", "2"}, {"axis", "1"}}, {2}, distinct(2), 1, 8);
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (Shape{2, 1, 1}));
    EXPECT_EQ(r.outputs[0], distinct(2));
    EXPECT_EQ(r.gas, unit_gas({{2}}, {2, 1, 1}));
}

TEST(ExpandDims, Errors) {
    int rc = 0;
    expand_of({2, 3}, {{"axis", "3"}}, &rc);
    EXPECT_EQ(rc, CVML_ERR_LOGIC);
    expand_of({2, 3}, {{"axis", "-4"}}, &rc);
    EXPECT_EQ(rc, CVML_ERR_LOGIC);
    expand_of({2, 3}, {{"axis", "0"}, {"num_newaxis", "4097"}}, &rc);
    EXPECT_EQ(rc, CVML_ERR_LOGIC);
    expand_of({2, 3}, {{"axis", "0"}, {"num_newaxis", "5"}}, &rc);  // 7 dims
    EXPECT_EQ(rc, CVML_ERR_LOGIC);
    expand_of({2, 3}, {{"axis", "0"}, {"num_newaxis", "0"}}, &rc);  // parse lower bound
    EXPECT_EQ(rc, CVML_ERR_RUNTIME);
    expand_of({2, 3}, {}, &rc);  // axis is required
    EXPECT_EQ(rc, CVML_ERR_RUNTIME);
    expand_of({2, 3}, {{"axis", "1.5"}}, &rc);
    EXPECT_EQ(rc, CVML_ERR_RUNTIME);
}

TEST(ExpandDims, RandomAxesAndThreads) {
    std::mt19937 rng(53);
    for (int iter = 0; iter < 40; ++iter) {
        Shape in = random_shape(rng, 1, 4, 4);
        const int nd = static_cast<int>(in.size());
        int axis = rand_int(rng, -nd - 1, nd);
        int k = rand_int(rng, 1, 6 - nd);
        int real = axis < 0 ? axis + nd + 1 : axis;
        Shape expect(in.begin(), in.begin() + real);
        expect.insert(expect.end(), k, 1);
        expect.insert(expect.end(), in.begin() + real, in.end());
        for (int threads : {1, 3}) {
            auto r = run1("expand_dims",
                          {{"axis", std::to_string(axis)}, {"num_newaxis", std::to_string(k)}}, in,
                          distinct(size_of(in)), threads);
            ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
            EXPECT_EQ(r.shapes[0], expect);
            EXPECT_EQ(r.outputs[0], distinct(size_of(in)));
        }
    }
}
