#include <gtest/gtest.h>

#include <string>

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

namespace {

TEST_F(Lib, ModelFactsAndProfiling) {
    cvml_graph* g = nullptr;
    ASSERT_EQ(cvml_graph_create(ctx, &g), CVML_OK);
    int32_t dims[1] = {4};
    const int32_t w[4] = {1, -2, 3, -4};
    cvml_tensor *x = nullptr, *c = nullptr, *y = nullptr;
    ASSERT_EQ(cvml_graph_add_input(g, "data", 1, dims, 8, &x), CVML_OK);
    ASSERT_EQ(cvml_graph_add_const(g, "w", 1, dims, 8, w, &c), CVML_OK);
    ASSERT_EQ(cvml_graph_add_node(g, "relu", "r", nullptr, nullptr, 0, &x, 1, &y, 1), CVML_OK);
    ASSERT_EQ(cvml_graph_set_outputs(g, &y, 1), CVML_OK);
    // Building after verification is refused; a bad index is a logic error.
    ASSERT_EQ(cvml_graph_verify(g), CVML_OK);
    cvml_tensor* extra = nullptr;
    EXPECT_EQ(cvml_graph_add_input(g, "late", 1, dims, 8, &extra), CVML_ERR_LOGIC);
    int n = 0;
    ASSERT_EQ(cvml_graph_node_count(g, &n), CVML_OK);
    EXPECT_EQ(n, 3);
    const char *name = nullptr, *op = nullptr, *dev = nullptr;
    ASSERT_EQ(cvml_graph_node_info(g, 2, &name, &op), CVML_OK);
    EXPECT_STREQ(name, "r");
    EXPECT_STREQ(op, "relu");
    EXPECT_EQ(cvml_graph_node_info(g, 3, &name, &op), CVML_ERR_LOGIC);
    EXPECT_EQ(cvml_graph_node_device(g, 2, &dev), CVML_ERR_LOGIC);  // not prerun yet
    uint64_t ops = 0, mem = 0;
    ASSERT_EQ(cvml_graph_gas_split(g, &ops, &mem), CVML_OK);
    EXPECT_EQ(ops, 4u);
    EXPECT_EQ(mem, 3u * 4 * 5);
    int is_const = -1;
    ASSERT_EQ(cvml_tensor_is_const(c, &is_const), CVML_OK);
    EXPECT_EQ(is_const, 1);
    ASSERT_EQ(cvml_graph_set_profiling(g, 1), CVML_OK);
    const int32_t in[4] = {1, 2, 3, 4};
    ASSERT_EQ(cvml_tensor_set_i32(x, in, 4), CVML_OK);
    ASSERT_EQ(cvml_graph_run(g), CVML_OK);
    ASSERT_EQ(cvml_graph_node_device(g, 2, &dev), CVML_OK);
    EXPECT_STREQ(dev, "cpu");
    uint64_t ns = 0;
    EXPECT_EQ(cvml_graph_node_time(g, 2, &ns), CVML_OK);
    int tcount = 0;
    ASSERT_EQ(cvml_graph_tensor_count(g, &tcount), CVML_OK);
    EXPECT_EQ(tcount, 3);
    const char* version = nullptr;
    ASSERT_EQ(cvml_graph_version(g, &version), CVML_OK);
    EXPECT_STREQ(version, "");
    cvml_graph_release(g);
}

TEST(Library, InitReleaseInit) {
    for (int i = 0; i < 3; ++i) {
        ASSERT_EQ(cvml_init(), CVML_OK) << cvml_last_error();
        int ops = 0, sers = 0, devs = 0;
        ASSERT_EQ(cvml_registry_counts(&ops, &sers, &devs), CVML_OK);
        EXPECT_GE(ops, 1);
        EXPECT_EQ(devs, 1);
        ASSERT_EQ(cvml_release(), CVML_OK);
    }
    EXPECT_EQ(cvml_release(), CVML_ERR_LOGIC);
}

}  // namespace

namespace {

TEST_F(Lib, ThreadsLookupAndArena) {
    int threads = 0;
    ASSERT_EQ(cvml_context_set_threads(ctx, 3), CVML_OK);
    ASSERT_EQ(cvml_context_get_threads(ctx, &threads), CVML_OK);
    EXPECT_EQ(threads, 3);
    EXPECT_EQ(cvml_context_get_threads(ctx, nullptr), CVML_ERR_LOGIC);

    cvml_graph* g = nullptr;
    ASSERT_EQ(cvml_graph_create(ctx, &g), CVML_OK);
    int32_t dims[2] = {4, 256};
    cvml_tensor *x = nullptr, *a = nullptr, *b = nullptr;
    ASSERT_EQ(cvml_graph_add_input(g, "data", 2, dims, 8, &x), CVML_OK);
    ASSERT_EQ(cvml_graph_add_node(g, "relu", "a", nullptr, nullptr, 0, &x, 1, &a, 1), CVML_OK);
    ASSERT_EQ(cvml_graph_add_node(g, "relu", "b", nullptr, nullptr, 0, &a, 1, &b, 1), CVML_OK);
    ASSERT_EQ(cvml_graph_set_outputs(g, &b, 1), CVML_OK);

    cvml_tensor* found = nullptr;
    ASSERT_EQ(cvml_graph_find_tensor(g, "a", &found), CVML_OK);
    EXPECT_EQ(found, a);
    EXPECT_EQ(cvml_graph_find_tensor(g, "nope", &found), CVML_ERR_LOGIC);

    size_t arena = 0;
    ASSERT_EQ(cvml_graph_prerun(g), CVML_OK) << cvml_last_error();
    ASSERT_EQ(cvml_graph_cpu_arena_bytes(g, &arena), CVML_OK);
    // Both intermediates (4 KiB each as int32, or less when narrowed) fit; the planner
    // never needs more than the sum of everything it places.
    EXPECT_GT(arena, 0u);
    EXPECT_LE(arena, 2u * 4 * 256 * sizeof(int32_t) + 256);
    const char* level = cvml_cpu_simd_level();
    ASSERT_NE(level, nullptr);
    const std::string name = level;
    EXPECT_TRUE(name == "scalar" || name == "avx2" || name == "avx512" || name == "neon" ||
                name == "dotprod" || name == "i8mm")
        << level;
    cvml_graph_release(g);
}

}  // namespace
