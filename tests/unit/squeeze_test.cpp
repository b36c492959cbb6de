#include <gtest/gtest.h>

#include "shape_test_util.h"

using namespace shape_test;

namespace {
Shape squeeze_of(const Shape& in, const Attrs& attrs, int* rc = nullptr) {
    auto r = run1("squeeze", attrs, in, distinct(size_of(in)));
    if (rc) *rc = r.verify_rc;
    if (r.verify_rc != CVML_OK) return {};
    EXPECT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], distinct(size_of(in)));
    return r.shapes[0];
}
}  // namespace

/* upstream's documented examples: x.shape = (1, 3, 1) */
TEST(Squeeze, DocumentedExamples) {
    EXPECT_EQ(squeeze_of({1, 3, 1}, {}), (Shape{3}));
    EXPECT_EQ(squeeze_of({1, 3, 1}, {{"axis", "0"}}), (Shape{3, 1}));
    EXPECT_EQ(squeeze_of({1, 3, 1}, {{"axis", "(0, 2)"}}), (Shape{3}));
}

TEST(Squeeze, Quirks) {
    EXPECT_EQ(squeeze_of({1, 1, 1}, {}), (Shape{1}));                           // all dropped
    EXPECT_EQ(squeeze_of({1, 1}, {{"axis", "(0, 1)"}}), (Shape{1}));            // all dropped
    EXPECT_EQ(squeeze_of({2, 1, 3}, {{"axis", "(-2,)"}}), (Shape{2, 3}));       // negative
    EXPECT_EQ(squeeze_of({2, 1, 3}, {{"axis", "(1, -2, 1)"}}), (Shape{2, 3}));  // repeats ok
}

/* Only the listed size-1 axis goes; the values unchanged, gas base 1. */
TEST(Squeeze, ListedAxisKeepsValuesAndChargesUnitGas) {
    auto r = run1("squeeze", {{"axis", "(2,)"}}, {1, 3, 1, 2}, distinct(6), 1, 8);
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (Shape{1, 3, 2}));
    EXPECT_EQ(r.outputs[0], distinct(6));
    EXPECT_EQ(r.gas, unit_gas({{1, 3, 1, 2}}, {1, 3, 2}));
}

TEST(Squeeze, Errors) {
    int rc = 0;
    squeeze_of({2, 1, 3}, {{"axis", "0"}}, &rc);
    EXPECT_EQ(rc, CVML_ERR_LOGIC);
    squeeze_of({2, 1, 3}, {{"axis", "3"}}, &rc);
    EXPECT_EQ(rc, CVML_ERR_LOGIC);
    squeeze_of({2, 1, 3}, {{"axis", "-4"}}, &rc);
    EXPECT_EQ(rc, CVML_ERR_LOGIC);
    squeeze_of({2, 1, 3}, {{"axis", "(1"}}, &rc);
    EXPECT_EQ(rc, CVML_ERR_RUNTIME);
    squeeze_of({2, 1, 3}, {{"axes", "(1,)"}}, &rc);
    EXPECT_EQ(rc, CVML_ERR_RUNTIME);
}

TEST(Squeeze, RandomShapesAndThreads) {
    std::mt19937 rng(52);
    for (int iter = 0; iter < 40; ++iter) {
        Shape in = random_shape(rng, 1, 6, 2);
        Shape expect;
        for (int32_t d : in)
            if (d != 1) expect.push_back(d);
        if (expect.empty()) expect.push_back(1);
        for (int threads : {1, 3}) {
            auto r = run1("squeeze", {}, in, distinct(size_of(in), 5), threads);
            ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
            EXPECT_EQ(r.shapes[0], expect);
            EXPECT_EQ(r.outputs[0], distinct(size_of(in), 5));
        }
    }
}
