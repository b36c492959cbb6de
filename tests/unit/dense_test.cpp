#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nn_case_util.h"
#include "op_runner.h"

using cvml_test::Operand;
using cvml_test::run_op;

namespace {

std::vector<int32_t> ref_dense(int m, int k, int u, const std::vector<int32_t>& x,
                               const std::vector<int32_t>& w, const std::vector<int32_t>* b) {
    std::vector<int32_t> y;
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < u; ++j) {
            int64_t s = b ? (*b)[j] : 0;
            for (int t = 0; t < k; ++t) s += static_cast<int64_t>(x[i * k + t]) * w[j * k + t];
            y.push_back(static_cast<int32_t>(static_cast<uint32_t>(s)));
        }
    return y;
}

}  // namespace

TEST(Dense, HandChecked) {
    // [[1, 2, 3], [-1, 0, 2]] · [[1, 0, 1], [2, 2, -1]]ᵀ + [100, -100]
    Operand x{{2, 3}, 8, {1, 2, 3, -1, 0, 2}, false};
    Operand w{{2, 3}, 8, {1, 0, 1, 2, 2, -1}, true};
    Operand b{{2}, 8, {100, -100}, true};
    auto r = run_op("dense", {{"units", "2"}}, {x, w, b});
    ASSERT_EQ(r.verify_rc, CVML_OK) << r.error;
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (std::vector<int32_t>{2, 2}));
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{104, -97, 101, -104}));
    // 8 + 8 + bits(3) = 18; with bias max(18, 8) + 1.
    EXPECT_EQ(r.precisions[0], 19);
    // ops (3*3 + 1) * 4 = 40; mem 5 * (6 + 6 + 2) + 5 * 4 = 90.
    EXPECT_EQ(r.gas, 130u);
}

TEST(Dense, NoBias) {
    Operand x{{1, 2}, 8, {3, -4}, false};
    Operand w{{3, 2}, 8, {1, 1, 2, 0, 0, -1}, true};
    auto r = run_op("dense", {{"units", "3"}, {"use_bias", "False"}}, {x, w});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{-1, 6, 4}));
    EXPECT_EQ(r.precisions[0], 8 + 8 + 2);
    EXPECT_EQ(r.gas, 3u * 2 * 3 + 5 * (2 + 6) + 5 * 3);
}

TEST(Dense, ErrorClasses) {
    Operand x{{3, 5}, 8, std::vector<int32_t>(15, 1), false};
    Operand w{{3, 5}, 8, std::vector<int32_t>(15, 1), true};
    Operand b{{3}, 8, {1, 2, 3}, true};
    EXPECT_EQ(run_op("dense", {{"units", "3"}}, {x, w, b}).verify_rc, CVML_OK);
    // ParamError (runtime): lower bound, bad value, missing, unknown key (cases 120, 121).
    EXPECT_EQ(run_op("dense", {{"units", "0"}}, {x, w, b}).verify_rc, CVML_ERR_RUNTIME);
    EXPECT_EQ(run_op("dense", {{"units", "abc"}}, {x, w, b}).verify_rc, CVML_ERR_RUNTIME);
    EXPECT_EQ(run_op("dense", {}, {x, w, b}).verify_rc, CVML_ERR_RUNTIME);
    EXPECT_EQ(run_op("dense", {{"units", "3"}, {"axis", "1"}}, {x, w, b}).verify_rc,
              CVML_ERR_RUNTIME);
    // Weight shape checked against (units, K): runtime, upstream's message.
    auto r = run_op("dense", {{"units", "3"}},
                    {x, Operand{{3, 4}, 8, std::vector<int32_t>(12, 1), true}, b});
    EXPECT_EQ(r.verify_rc, CVML_ERR_RUNTIME);
    EXPECT_NE(r.error.find("expects weight's shape to be [3,5], but got [3,4]"), std::string::npos)
        << r.error;
    r = run_op("dense", {{"units", "3"}}, {x, w, Operand{{2}, 8, {1, 2}, true}});
    EXPECT_EQ(r.verify_rc, CVML_ERR_RUNTIME);
    EXPECT_NE(r.error.find("expects bias's shape to be [3], but got [2]"), std::string::npos)
        << r.error;
    // VERIFY: 2-D data and weight, precisions at most 8, input count.
    EXPECT_EQ(run_op("dense", {{"units", "3"}},
                     {Operand{{3, 5, 1}, 8, std::vector<int32_t>(15, 1), false}, w, b})
                  .verify_rc,
              CVML_ERR_LOGIC);
    EXPECT_EQ(run_op("dense", {{"units", "3"}},
                     {x, Operand{{3, 5, 1}, 8, std::vector<int32_t>(15, 1), true}, b})
                  .verify_rc,
              CVML_ERR_LOGIC);
    EXPECT_EQ(run_op("dense", {{"units", "3"}},
                     {Operand{{3, 5}, 9, std::vector<int32_t>(15, 1), false}, w, b})
                  .verify_rc,
              CVML_ERR_LOGIC);
    EXPECT_EQ(run_op("dense", {{"units", "3"}}, {x, w}).verify_rc, CVML_ERR_LOGIC);
}

TEST(Dense, PropertyAgainstReference) {
    uint32_t seed = 100;
    for (int iter = 0; iter < 40; ++iter) {
        auto rnd = cvml_test::random_values(4, 1000, seed++);
        int m = 1 + (rnd[0] + 1000) % 5, k = 1 + (rnd[1] + 1000) % 300, u = 1 + (rnd[2] + 1000) % 9;
        bool bias = (rnd[3] + 1000) % 2 == 0;
        auto x = cvml_test::random_values(m * k, 127, seed++);
        auto w = cvml_test::random_values(u * k, 127, seed++);
        auto b = cvml_test::random_values(u, (1 << 30) - 1, seed++);
        std::vector<Operand> ops = {Operand{{m, k}, 8, x, false}, Operand{{u, k}, 8, w, true}};
        if (bias) ops.push_back(Operand{{u}, 31, b, true});
        auto expect = ref_dense(m, k, u, x, w, bias ? &b : nullptr);
        for (int threads : {1, 3}) {
            auto r = run_op("dense", {{"units", std::to_string(u)}, {"use_bias", bias ? "1" : "0"}},
                            ops, 1, threads);
            ASSERT_EQ(r.verify_rc, CVML_OK) << r.error;
            ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
            ASSERT_EQ(r.outputs[0], expect) << "iter " << iter;
        }
    }
}

// Batches of at most 4 rows with a multiple of 8 units take the dot-product kernel at
// avx512 (one 64-byte step of K at a time, the last one partial); the extremes of the
// values and K around the steps are where it could go wrong.
TEST(Dense, SmallBatchesAgainstReference) {
    uint32_t seed = 4100;
    for (int m : {1, 2, 3, 4, 5})
        for (int k : {1, 63, 64, 65, 200, 512}) {
            const int u = 8 * (1 + (m + k) % 5);
            auto x = cvml_test::random_values(m * k, 127, seed++);
            auto w = cvml_test::random_values(u * k, 127, seed++);
            x[0] = -127;
            x[m * k - 1] = 127;
            w[0] = -127;
            auto b = cvml_test::random_values(u, (1 << 30) - 1, seed++);
            std::vector<Operand> ops = {Operand{{m, k}, 8, x, false}, Operand{{u, k}, 8, w, true},
                                        Operand{{u}, 31, b, true}};
            auto expect = ref_dense(m, k, u, x, w, &b);
            for (int threads : {1, 3}) {
                auto r = run_op("dense", {{"units", std::to_string(u)}, {"use_bias", "1"}}, ops, 1,
                                threads);
                ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
                ASSERT_EQ(r.outputs[0], expect) << "m " << m << " k " << k << " u " << u;
            }
        }
}

namespace {

void replay(const std::string& name, const std::vector<std::pair<std::string, std::string>>& attrs,
            const std::vector<int32_t>& data_shape,
            const std::vector<std::pair<std::string, int>>& params, uint64_t gas) {
    std::string dir = nn_case::case_dir(name);
    auto pm = nn_case::read_params(dir);
    std::vector<Operand> ops;
    ops.push_back(Operand{data_shape, 8,
                          nn_case::read_values(dir + "/input.bin", nn_case::count_of(data_shape)),
                          false});
    for (auto& pp : params)
        ops.push_back(Operand{pm[pp.first].shape, pp.second, pm[pp.first].values, true});
    auto r = run_op("dense", attrs, ops);
    ASSERT_EQ(r.run_rc, CVML_OK) << name << ": " << r.error;
    EXPECT_EQ(r.gas, gas) << name;
    auto bytes = nn_case::read_file(dir + "/output.bin").size();
    auto want = nn_case::read_values(dir + "/output.bin", r.outputs[0].size());
    ASSERT_FALSE(want.empty()) << name;
    EXPECT_EQ(nn_case::as_written(r.outputs[0], bytes), want) << name;
}

}  // namespace

TEST(Dense, ConformanceCases) {
    replay("007_dense_bias", {{"use_bias", "True"}, {"units", "9"}}, {3, 62}, {{"w", 8}, {"b", 12}},
           8949);
    replay("008_dense_nobias_large_K", {{"use_bias", "False"}, {"units", "3"}}, {2, 3246},
           {{"w", 8}}, 139608);
}
