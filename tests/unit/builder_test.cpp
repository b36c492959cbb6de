#include <gtest/gtest.h>

#include "cvml.h"

namespace {

struct Lib : ::testing::Test {
    cvml_context* ctx = nullptr;
    void SetUp() override {
        ASSERT_EQ(cvml_init(), CVML_OK) << cvml_last_error();
        ASSERT_EQ(cvml_context_create(&ctx), CVML_OK);
    }
    void TearDown() override {
        cvml_context_release(ctx);
        cvml_release();
    }
};

TEST_F(Lib, ReluEndToEnd) {
    cvml_graph* g = nullptr;
    ASSERT_EQ(cvml_graph_create(ctx, &g), CVML_OK);
    int32_t dims[2] = {2, 3};
    cvml_tensor* x = nullptr;
    ASSERT_EQ(cvml_graph_add_input(g, "data", 2, dims, 8, &x), CVML_OK);
    cvml_tensor* y = nullptr;
    ASSERT_EQ(cvml_graph_add_node(g, "relu", "relu_0", nullptr, nullptr, 0, &x, 1, &y, 1), CVML_OK)
        << cvml_last_error();
    ASSERT_EQ(cvml_graph_set_outputs(g, &y, 1), CVML_OK);
    ASSERT_EQ(cvml_graph_verify(g), CVML_OK) << cvml_last_error();
    const int32_t in[6] = {-5, 0, 7, -128, 127, 3};
    ASSERT_EQ(cvml_tensor_set_i32(x, in, 6), CVML_OK);
    ASSERT_EQ(cvml_graph_run(g), CVML_OK) << cvml_last_error();
    int32_t out[6];
    ASSERT_EQ(cvml_tensor_get_i32(y, out, 6), CVML_OK);
    const int32_t want[6] = {0, 0, 7, 0, 127, 3};  // -128 was clipped to -127 at input
    for (int i = 0; i < 6; ++i) EXPECT_EQ(out[i], want[i]) << i;
    uint64_t gas = 0;
    ASSERT_EQ(cvml_graph_gas(g, &gas), CVML_OK);
    EXPECT_EQ(gas, 6u * 5 + 6 + 6u * 5);
    EXPECT_EQ(cvml_graph_release(g), CVML_OK);
}

TEST_F(Lib, NullArgumentsAreErrors) {
    EXPECT_EQ(cvml_graph_create(nullptr, nullptr), CVML_ERR_LOGIC);
    EXPECT_EQ(cvml_graph_run(nullptr), CVML_ERR_LOGIC);
    EXPECT_NE(cvml_last_error()[0], '\0');
    EXPECT_EQ(cvml_tensor_get_i32(nullptr, nullptr, 0), CVML_ERR_LOGIC);
}

}  // namespace
