#include <gtest/gtest.h>

#include "shape_test_util.h"

using namespace shape_test;

/* (3, 2, 2, 4) -> (3, 16): the values in order, input 0's precision, gas base 1. */
TEST(Flatten, KeepsValuesPrecisionAndChargesUnitGas) {
    auto r = run1("flatten", {}, {3, 2, 2, 4}, distinct(48, -24), 1, 8);
    ASSERT_EQ(r.verify_rc, CVML_OK) << r.error;
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (Shape{3, 16}));
    EXPECT_EQ(r.outputs[0], distinct(48, -24));
    EXPECT_EQ(r.precisions[0], 8);
    EXPECT_EQ(r.gas, unit_gas({{3, 2, 2, 4}}, {3, 16}));
}

TEST(Flatten, OneDimensionalInputGetsTrailingOne) {
    auto r = run1("flatten", {}, {5}, distinct(5));
    ASSERT_EQ(r.verify_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (Shape{5, 1}));
    EXPECT_EQ(r.outputs[0], distinct(5));
}

TEST(Flatten, TakesNoAttributes) {
    EXPECT_EQ(run1("flatten", {{"axis", "1"}}, {2, 2}, distinct(4)).verify_rc, CVML_ERR_LOGIC);
}

TEST(Flatten, RandomShapesAndThreads) {
    std::mt19937 rng(48);
    for (int iter = 0; iter < 40; ++iter) {
        Shape in = random_shape(rng, 1, 6, 5);
        for (int threads : {1, 3}) {
            auto r = run1("flatten", {}, in, distinct(size_of(in), 100), threads);
            ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
            EXPECT_EQ(r.shapes[0], (Shape{in[0], static_cast<int32_t>(size_of(in) / in[0])}));
            EXPECT_EQ(r.outputs[0], distinct(size_of(in), 100));
        }
    }
}
