// What a load with the caller's arena keeps small (docs/memory.md): a graph input of at
// most 8 bits stored as int8 where every CPU reader takes narrow input, and
// CVML_LOAD_NO_NAMES. Each compares its outputs with a plain load's. The model is built
// and saved to memory, so the test needs nothing from ../shared.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <string.h>

#include <string>
#include <vector>

#include "cvml.h"
#include "graph/graph.h"
#include "module/graph_handle.h"

namespace {

constexpr int kIn = 4 * 6 * 6;
constexpr int kOut = 8 * 6 * 6;

struct LoadLean : ::testing::Test {
    cvml_context* ctx = nullptr;
    std::string graph;
    std::vector<uint8_t> params;
    std::vector<int32_t> input;

    void SetUp() override {
        ASSERT_EQ(cvml_init(), CVML_OK) << cvml_last_error();
        ASSERT_EQ(cvml_context_create(&ctx), CVML_OK);
        build_and_save();
        // Values beyond the input's 8 bits too: the API clips them as it stores them.
        for (int i = 0; i < kIn; ++i) input.push_back((i * 97) % 701 - 350);
    }
    void TearDown() override {
        cvml_context_release(ctx);
        cvml_release();
    }

    /* data (1,4,6,6), 8 bits -> conv2d 3x3 pad 1 (int8 weights, int32 bias) ->
     * cvm_right_shift(8, 5) -> relu. */
    void build_and_save() {
        cvml_graph* g = nullptr;
        ASSERT_EQ(cvml_graph_create(ctx, &g), CVML_OK);
        const int32_t xd[4] = {1, 4, 6, 6}, wd[4] = {8, 4, 3, 3}, bd[1] = {8};
        std::vector<int32_t> w(8 * 4 * 9), b(8);
        for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int32_t>(i * 53 % 255) - 127;
        for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<int32_t>(i * 1000) - 3500;
        cvml_tensor *x = nullptr, *wt = nullptr, *bt = nullptr, *y = nullptr, *z = nullptr,
                    *r = nullptr;
        ASSERT_EQ(cvml_graph_add_input(g, "data", 4, xd, 8, &x), CVML_OK);
        ASSERT_EQ(cvml_graph_add_const(g, "w", 4, wd, 8, w.data(), &wt), CVML_OK);
        ASSERT_EQ(cvml_graph_add_const(g, "b", 1, bd, 20, b.data(), &bt), CVML_OK);
        const char* keys[] = {"channels", "kernel_size", "padding"};
        const char* values[] = {"8", "(3, 3)", "(1, 1)"};
        cvml_tensor* ins[3] = {x, wt, bt};
        ASSERT_EQ(cvml_graph_add_node(g, "conv2d", "conv", keys, values, 3, ins, 3, &y, 1), CVML_OK)
            << cvml_last_error();
        const char* sk[] = {"precision", "shift_bit"};
        const char* sv[] = {"8", "5"};
        ASSERT_EQ(cvml_graph_add_node(g, "cvm_right_shift", "shift", sk, sv, 2, &y, 1, &z, 1),
                  CVML_OK);
        ASSERT_EQ(cvml_graph_add_node(g, "relu", "relu", nullptr, nullptr, 0, &z, 1, &r, 1),
                  CVML_OK);
        ASSERT_EQ(cvml_graph_set_outputs(g, &r, 1), CVML_OK);
        ASSERT_EQ(cvml_graph_verify(g), CVML_OK) << cvml_last_error();
        void *gd = nullptr, *pd = nullptr;
        size_t gs = 0, ps = 0;
        ASSERT_EQ(cvml_graph_save_memory(g, "cvm", &gd, &gs, &pd, &ps), CVML_OK)
            << cvml_last_error();
        graph.assign(static_cast<const char*>(gd), gs);
        params.assign(static_cast<const uint8_t*>(pd), static_cast<const uint8_t*>(pd) + ps);
        cvml_free(gd);
        cvml_free(pd);
        cvml_graph_release(g);
    }

    int load(const cvml_load_options* o, cvml_graph** g) const {
        return cvml_graph_load_memory_ex(ctx, "cvm", graph.data(), graph.size(), params.data(),
                                         params.size(), o, g);
    }

    std::vector<int32_t> run(cvml_graph* g) const {
        cvml_tensor *in = nullptr, *out = nullptr;
        EXPECT_EQ(cvml_graph_get_input(g, 0, &in), CVML_OK);
        EXPECT_EQ(cvml_tensor_set_i32(in, input.data(), input.size()), CVML_OK);
        EXPECT_EQ(cvml_graph_run(g), CVML_OK) << cvml_last_error();
        EXPECT_EQ(cvml_graph_get_output(g, 0, &out), CVML_OK);
        std::vector<int32_t> v(kOut);
        EXPECT_EQ(cvml_tensor_get_i32(out, v.data(), v.size()), CVML_OK);
        return v;
    }

    /* A plain load (the input set before the first run: int32 storage). */
    std::vector<int32_t> reference(size_t* arena_bytes) const {
        cvml_graph* g = nullptr;
        EXPECT_EQ(load(nullptr, &g), CVML_OK) << cvml_last_error();
        std::vector<int32_t> v = run(g);
        EXPECT_EQ(g->ir->tensors[g->ir->inputs[0]]->storage, STORAGE_INT32);
        EXPECT_EQ(cvml_graph_arena_bytes(g, arena_bytes), CVML_OK);
        cvml_graph_release(g);
        return v;
    }
};

TEST_F(LoadLean, NarrowInputInTheArenaLoadGivesTheSameOutputs) {
    size_t bytes = 0;
    const std::vector<int32_t> want = reference(&bytes);
    std::vector<uint8_t> arena(bytes);
    cvml_load_options o = {sizeof o, 0, arena.data(), arena.size()};
    cvml_graph* g = nullptr;
    ASSERT_EQ(load(&o, &g), CVML_OK) << cvml_last_error();
    const ir_tensor* x = g->ir->tensors[g->ir->inputs[0]];
    // conv2d reads narrow input at every level with fusion on; the reference loops
    // (CVML_NO_FUSION=1) read int32.
    EXPECT_EQ(x->storage, getenv("CVML_NO_FUSION") ? STORAGE_INT32 : STORAGE_INT8);
    EXPECT_EQ(run(g), want);
    // The stored values are the clipped ones, read back as int32.
    cvml_tensor* in = nullptr;
    ASSERT_EQ(cvml_graph_get_input(g, 0, &in), CVML_OK);
    std::vector<int32_t> back(kIn);
    ASSERT_EQ(cvml_tensor_get_i32(in, back.data(), back.size()), CVML_OK);
    for (int i = 0; i < kIn; ++i) {
        const int32_t v = input[static_cast<size_t>(i)];
        ASSERT_EQ(back[static_cast<size_t>(i)], v < -127 ? -127 : v > 127 ? 127 : v) << i;
    }
    // And through the bytes call (int8 input bytes): the same outputs again.
    std::vector<int8_t> bytes_in(kIn);
    for (int i = 0; i < kIn; ++i)
        bytes_in[static_cast<size_t>(i)] = static_cast<int8_t>(back[static_cast<size_t>(i)]);
    size_t in_len = 0, out_len = 0;
    int in_type = 0, out_type = 0;
    ASSERT_EQ(cvml_graph_input_bytes(g, &in_len, &in_type), CVML_OK);
    ASSERT_EQ(cvml_graph_output_bytes(g, &out_len, &out_type), CVML_OK);
    ASSERT_EQ(in_len, static_cast<size_t>(kIn));
    std::vector<uint8_t> out(out_len);
    ASSERT_EQ(cvml_graph_run_bytes(g, bytes_in.data(), in_len, out.data(), out.size()), CVML_OK)
        << cvml_last_error();
    for (int i = 0; i < kOut; ++i) {
        const int32_t got = out_type == 1 ? static_cast<int8_t>(out[static_cast<size_t>(i)])
                                          : reinterpret_cast<const int32_t*>(out.data())[i];
        ASSERT_EQ(got, want[static_cast<size_t>(i)]) << i;
    }
    cvml_graph_release(g);
}

TEST_F(LoadLean, NoNamesKeepsVariablesAndRunsTheSame) {
    size_t bytes = 0;
    const std::vector<int32_t> want = reference(&bytes);
    std::vector<uint8_t> arena(bytes);
    cvml_load_options o = {sizeof o, CVML_LOAD_NO_NAMES, arena.data(), arena.size()};
    cvml_graph* g = nullptr;
    ASSERT_EQ(load(&o, &g), CVML_OK) << cvml_last_error();
    EXPECT_EQ(run(g), want);
    int32_t unnamed = 0;
    for (int32_t i = 0; i < g->ir->node_count; ++i) {
        const ir_node* n = g->ir->nodes[i];
        if (n->op) {
            EXPECT_STREQ(n->name, "") << i;
            ++unnamed;
        } else {
            EXPECT_STRNE(n->name, "") << i;  // "data", "w", "b"
        }
    }
    EXPECT_EQ(unnamed, 3);
    EXPECT_NE(ir_graph_find_tensor(g->ir, "data"), nullptr);
    EXPECT_NE(ir_graph_find_tensor(g->ir, "w"), nullptr);
    EXPECT_EQ(ir_graph_find_tensor(g->ir, "conv"), nullptr);
    void *gd = nullptr, *pd = nullptr;
    size_t gs = 0, ps = 0;
    EXPECT_EQ(cvml_graph_save_memory(g, "cvm", &gd, &gs, &pd, &ps), CVML_ERR_LOGIC);
    EXPECT_NE(strstr(cvml_last_error(), "CVML_LOAD_NO_NAMES"), nullptr) << cvml_last_error();
    cvml_graph_release(g);
    // Without the flag the same load keeps every name.
    o.flags = 0;
    ASSERT_EQ(load(&o, &g), CVML_OK) << cvml_last_error();
    EXPECT_NE(ir_graph_find_tensor(g->ir, "conv"), nullptr);
    cvml_graph_release(g);
}

TEST_F(LoadLean, UnknownFlagIsRefused) {
    cvml_load_options o = {sizeof o, 4u, nullptr, 0};
    cvml_graph* g = nullptr;
    EXPECT_EQ(load(&o, &g), CVML_ERR_LOGIC);
    EXPECT_EQ(g, nullptr);
}

}  // namespace
