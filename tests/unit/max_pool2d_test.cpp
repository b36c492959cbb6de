#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cvml.h"
#include "device/cpu/cpu_paths.h"
#include "device/cpu/simd/simd.h"
#include "device/cpu/simd/simd_config.h"
#include "nn_case_util.h"
#include "op_runner.h"

using cvml_test::Operand;
using cvml_test::run_op;

namespace {

/* Independent reference: explicit padded image filled with INT32_MIN. */
std::vector<int32_t> ref_pool(int n, int c, int h, int w, int kh, int kw, int sh, int sw, int ph,
                              int pw, int oh, int ow, const std::vector<int32_t>& x) {
    int H = h + 2 * ph + kh + sh, W = w + 2 * pw + kw + sw;
    std::vector<int32_t> y;
    for (int b = 0; b < n * c; ++b) {
        std::vector<int32_t> img(H * W, INT32_MIN);
        for (int i = 0; i < h; ++i)
            for (int j = 0; j < w; ++j) img[(i + ph) * W + j + pw] = x[(b * h + i) * w + j];
        for (int i = 0; i < oh; ++i)
            for (int j = 0; j < ow; ++j) {
                int32_t m = INT32_MIN;
                for (int r = 0; r < kh; ++r)
                    for (int s = 0; s < kw; ++s)
                        m = std::max(m, img[(i * sh + r) * W + j * sw + s]);
                y.push_back(m);
            }
    }
    return y;
}

/* An output extent as upstream computes it, floor or ceil mode. */
int pooled_extent(int in, int k, int s, int pad, bool ceil) {
    return ceil ? (in + 2 * pad - k + s - 1) / s + 1 : (in + 2 * pad - k) / s + 1;
}

/* max_pool2d's attributes; `padding` as written in the graph, "(p,)" or "(ph, pw)". */
std::vector<std::pair<std::string, std::string>> pool_attrs(int kh, int kw, int sh, int sw,
                                                            const std::string& padding, bool ceil) {
    return {{"pool_size", "(" + std::to_string(kh) + ", " + std::to_string(kw) + ")"},
            {"strides", "(" + std::to_string(sh) + ", " + std::to_string(sw) + ")"},
            {"padding", padding},
            {"ceil_mode", ceil ? "True" : "False"}};
}

}  // namespace

TEST(MaxPool2d, HandChecked) {
    // 4x4, 2x2 windows, stride 2.
    Operand x{
        {1, 1, 4, 4}, 8, {1, 2, 3, 4, 5, 6, 7, 8, -9, -10, -11, -12, -13, -14, -15, -1}, false};
    auto r = run_op("max_pool2d", {{"pool_size", "(2, 2)"}, {"strides", "(2, 2)"}}, {x});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (std::vector<int32_t>{1, 1, 2, 2}));
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{6, 8, -9, -1}));
    EXPECT_EQ(r.precisions[0], 8);
    // ops 4 * 4; mem 5 * 16 + 5 * 4.
    EXPECT_EQ(r.gas, 16u + 80 + 20);
}

TEST(MaxPool2d, PaddingNeverWinsOverNegatives) {
    // All-negative input with padding 1: padded cells are INT32_MIN, not 0.
    Operand x{{1, 1, 2, 2}, 8, {-5, -6, -7, -8}, false};
    auto r = run_op("max_pool2d", {{"pool_size", "(2, 2)"}, {"padding", "1"}}, {x});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (std::vector<int32_t>{1, 1, 3, 3}));
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{-5, -5, -6, -5, -5, -6, -7, -7, -8}));
}

TEST(MaxPool2d, CeilMode) {
    // H = 5, k = 2, s = 2: floor gives 2 rows, ceil gives 3 (last window is half outside).
    Operand x{{1, 1, 5, 1}, 8, {1, -2, 3, -4, -5}, false};
    auto r = run_op("max_pool2d",
                    {{"pool_size", "(2, 1)"}, {"strides", "(2, 1)"}, {"ceil_mode", "True"}}, {x});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (std::vector<int32_t>{1, 1, 3, 1}));
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{1, 3, -5}));
    r = run_op("max_pool2d", {{"pool_size", "(2, 1)"}, {"strides", "(2, 1)"}}, {x});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{1, 3}));
}

TEST(MaxPool2d, ErrorClasses) {
    Operand x{{1, 1, 4, 4}, 8, std::vector<int32_t>(16, 1), false};
    auto rc = [&](std::vector<std::pair<std::string, std::string>> a) {
        return run_op("max_pool2d", a, {x}).verify_rc;
    };
    EXPECT_EQ(rc({{"pool_size", "(2, 2)"}}), CVML_OK);
    EXPECT_EQ(rc({}), CVML_ERR_RUNTIME);
    EXPECT_EQ(rc({{"pool_size", "(2, 2)"}, {"count_include_pad", "1"}}), CVML_ERR_RUNTIME);
    EXPECT_EQ(rc({{"pool_size", "(2, 2)"}, {"ceil_mode", "maybe"}}), CVML_ERR_RUNTIME);
    EXPECT_EQ(rc({{"pool_size", "(2, 2)"}, {"layout", "NHWC"}}), CVML_ERR_LOGIC);
    EXPECT_EQ(rc({{"pool_size", "(2, 2)"}, {"padding", "()"}}), CVML_ERR_LOGIC);
    EXPECT_EQ(rc({{"pool_size", "(2, 2)"}, {"padding", "(0, 0, 0, 0)"}}), CVML_ERR_LOGIC);
    EXPECT_EQ(rc({{"pool_size", "(2, 2)"}, {"padding", "(-1, 0)"}}), CVML_ERR_LOGIC);
    EXPECT_EQ(rc({{"pool_size", "(2, 2)"}, {"padding", "(2, 0)"}}), CVML_ERR_LOGIC);  // >= pool
    EXPECT_EQ(rc({{"pool_size", "(2, 2, 2)"}}), CVML_ERR_LOGIC);
    EXPECT_EQ(rc({{"pool_size", "(0, 2)"}}), CVML_ERR_LOGIC);
    EXPECT_EQ(rc({{"pool_size", "(5, 2)"}}), CVML_ERR_LOGIC);  // > H + 2 * pad
    EXPECT_EQ(rc({{"pool_size", "(2, 2)"}, {"strides", "(0, 1)"}}), CVML_ERR_LOGIC);
    EXPECT_EQ(rc({{"pool_size", "(2, 2)"}, {"strides", "(1,)"}}), CVML_ERR_LOGIC);
    // ceil_mode whose last window would start past the input: H = 1, pad 1, k = 2,
    // s = 3 gives 2 rows and (2-1)*3 - 1 = 2 >= 1.
    Operand x1{{1, 1, 1, 1}, 8, {1}, false};
    EXPECT_EQ(run_op("max_pool2d",
                     {{"pool_size", "(2, 2)"},
                      {"padding", "(1, 1)"},
                      {"strides", "(3, 3)"},
                      {"ceil_mode", "true"}},
                     {x1})
                  .verify_rc,
              CVML_ERR_LOGIC);
    EXPECT_EQ(run_op("max_pool2d", {{"pool_size", "(1, 1)"}},
                     {Operand{{4, 4}, 8, std::vector<int32_t>(16, 1), false}})
                  .verify_rc,
              CVML_ERR_LOGIC);
}

TEST(MaxPool2d, PropertyAgainstReference) {
    uint32_t seed = 300;
    for (int iter = 0; iter < 120; ++iter) {
        auto rnd = cvml_test::random_values(12, 1000, seed++);
        auto pick = [&](int i, int lo, int hi) { return lo + (rnd[i] + 1000) % (hi - lo + 1); };
        int n = pick(0, 1, 2), c = pick(1, 1, 3), kh = pick(2, 1, 3), kw = pick(3, 1, 3);
        if (iter % 10 == 3) kh = kw = 9;  // windows past the kernels' 64-offset list
        int ph = pick(4, 0, kh - 1), pw = pick(5, 0, kw - 1);
        bool one_pad = pick(6, 0, 3) == 0;
        if (one_pad) pw = ph = std::min(ph, std::min(kh, kw) - 1);
        int sh = pick(7, 1, 3), sw = pick(8, 1, 3);
        int h = std::max(1, kh - 2 * ph) + pick(9, 0, 6);
        int w = std::max(1, kw - 2 * pw) + pick(10, 0, 6);
        if (iter % 4 == 0) w += 130;             // output rows past one 64-lane vector
        if (iter % 4 == 1) w += 16 + iter % 37;  // rows of 16 to 48 (avx2's overlapping blocks)
        bool ceil = pick(11, 0, 1) == 1;
        int oh = pooled_extent(h, kh, sh, ph, ceil), ow = pooled_extent(w, kw, sw, pw, ceil);
        bool valid = !ceil || ((oh - 1) * sh - ph < h && (ow - 1) * sw - pw < w);
        auto x = cvml_test::random_values(n * c * h * w, 127, seed++);
        auto a = pool_attrs(kh, kw, sh, sw,
                            one_pad ? "(" + std::to_string(ph) + ",)"
                                    : "(" + std::to_string(ph) + ", " + std::to_string(pw) + ")",
                            ceil);
        for (int threads : {1, 3}) {
            auto r = run_op("max_pool2d", a, {Operand{{n, c, h, w}, 8, x, false}}, 1, threads);
            if (!valid) {
                ASSERT_EQ(r.verify_rc, CVML_ERR_LOGIC);
                continue;
            }
            ASSERT_EQ(r.run_rc, CVML_OK) << r.error << " iter " << iter;
            ASSERT_EQ(r.shapes[0], (std::vector<int32_t>{n, c, oh, ow}));
            ASSERT_EQ(r.outputs[0], ref_pool(n, c, h, w, kh, kw, sh, sw, ph, pw, oh, ow, x))
                << "iter " << iter;
        }
    }
}

namespace {

/* input -> cvm_clip(8) -> max_pool2d -> cvm_clip(8): the pool reads and writes int8
 * storage, as in a network (a graph's own input and output stay int32). */
std::vector<int32_t> run_between_clips(const std::vector<int32_t>& shape,
                                       const std::vector<std::pair<std::string, std::string>>& a,
                                       const std::vector<int32_t>& x, int threads,
                                       std::string* error) {
    cvml_context* ctx = nullptr;
    cvml_graph* g = cvml_test::new_graph(threads, &ctx);
    cvml_tensor *in = nullptr, *clipped = nullptr, *pooled = nullptr, *y = nullptr;
    const char* ck[] = {"precision"};
    const char* cv[] = {"8"};
    std::vector<const char*> keys, vals;
    for (auto& kv : a) {
        keys.push_back(kv.first.c_str());
        vals.push_back(kv.second.c_str());
    }
    int rc = cvml_graph_add_input(g, "data", 4, shape.data(), 8, &in);
    if (!rc) rc = cvml_graph_add_node(g, "cvm_clip", "clip_in", ck, cv, 1, &in, 1, &clipped, 1);
    if (!rc)
        rc = cvml_graph_add_node(g, "max_pool2d", "pool", keys.data(), vals.data(),
                                 static_cast<int>(keys.size()), &clipped, 1, &pooled, 1);
    if (!rc) rc = cvml_graph_add_node(g, "cvm_clip", "clip_out", ck, cv, 1, &pooled, 1, &y, 1);
    return cvml_test::run_to_output(g, ctx, rc, {{in, &x}}, y, error);
}

}  // namespace

/* The separable kernel (a level's pool_direct8: avx2) on the shapes at its domain's
 * edges: ResNet's 3x3 stride-2 pool, stride 1, rows of exactly 32, a ceil-mode window
 * past the row, an odd width; negative values (padding must never win). At a level with
 * the kernel, every case must have taken it. */
TEST(MaxPool2d, SeparableKernelAgainstReference) {
    struct Case {
        int c, h, w, kh, kw, sh, sw, ph, pw;
        bool ceil;
    };
    const Case cases[] = {
        {3, 112, 112, 3, 3, 2, 2, 1, 1, false},  // ResNet-18's, 3 channels
        {2, 20, 40, 3, 3, 1, 1, 1, 1, false},    // stride 1
        {2, 9, 32, 2, 1, 1, 1, 0, 0, false},     // rows and output rows of 32
        {2, 11, 67, 3, 3, 2, 2, 1, 1, true},     // odd width, the last window past the row
        {1, 13, 70, 5, 4, 3, 2, 2, 1, false},    // kernel rows at stride 3, an even kw
    };
    const cpu_simd_config* cfg = cpu_simd_config_of(cpu_simd_level());
    uint32_t seed = 900;
    for (const Case& k : cases) {
        const int oh = pooled_extent(k.h, k.kh, k.sh, k.ph, k.ceil);
        const int ow = pooled_extent(k.w, k.kw, k.sw, k.pw, k.ceil);
        auto x = cvml_test::random_values(k.c * k.h * k.w, 127, seed++);
        const auto a =
            pool_attrs(k.kh, k.kw, k.sh, k.sw,
                       "(" + std::to_string(k.ph) + ", " + std::to_string(k.pw) + ")", k.ceil);
        const auto expect =
            ref_pool(1, k.c, k.h, k.w, k.kh, k.kw, k.sh, k.sw, k.ph, k.pw, oh, ow, x);
        for (int threads : {1, 2, 3}) {
            const int64_t taken0 = cpu_path_count(CPU_PATH_POOL_DIRECT);
            std::string error;
            const auto got = run_between_clips({1, k.c, k.h, k.w}, a, x, threads, &error);
            ASSERT_EQ(got, expect) << error << " case w " << k.w << " threads " << threads;
            if (cfg->pool_direct8) {
                EXPECT_EQ(cpu_path_count(CPU_PATH_POOL_DIRECT) - taken0, 1)
                    << "the separable kernel did not run, case w " << k.w;
            }
        }
    }
}

TEST(MaxPool2d, ConformanceCases) {
    nn_case::replay("max_pool2d", "032_max_pool2d_basic",
                    {{"ceil_mode", "False"},
                     {"padding", "(0, 0)"},
                     {"strides", "(3, 1)"},
                     {"pool_size", "(2, 1)"}},
                    {1, 1, 3, 4}, 8, {}, 88);
    nn_case::replay("max_pool2d", "033_max_pool2d_pad1",
                    {{"ceil_mode", "False"},
                     {"padding", "(0,)"},
                     {"strides", "(2, 1)"},
                     {"pool_size", "(2, 1)"}},
                    {2, 2, 7, 6}, 8, {}, 1344);
    nn_case::replay("max_pool2d", "034_max_pool2d_pad2_ceil",
                    {{"ceil_mode", "True"},
                     {"padding", "(0, 0)"},
                     {"strides", "(2, 1)"},
                     {"pool_size", "(2, 3)"}},
                    {2, 3, 9, 3}, 8, {}, 1140);
    nn_case::replay("max_pool2d", "035_max_pool2d_negpad",
                    {{"ceil_mode", "False"},
                     {"padding", "(0, 1)"},
                     {"strides", "(2, 2)"},
                     {"pool_size", "(1, 2)"}},
                    {2, 3, 5, 8}, 8, {}, 1830, 1, 0, 3);
}
