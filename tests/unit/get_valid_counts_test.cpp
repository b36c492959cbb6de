#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nn_case_util.h"
#include "op_runner.h"

using cvml_test::Operand;
using cvml_test::run_op;

TEST(GetValidCounts, HandChecked) {
    // Scores 5, 1, 7, 3 against threshold 3: strictly greater keeps rows 0 and 2.
    Operand x{{1, 4, 3}, 8, {0, 5, 10, 1, 1, 11, 2, 7, 12, 3, 3, 13}, false};
    auto r = run_op("get_valid_counts", {{"score_threshold", "3"}}, {x}, 2);
    ASSERT_EQ(r.verify_rc, CVML_OK) << r.error;
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (std::vector<int32_t>{1}));
    EXPECT_EQ(r.shapes[1], (std::vector<int32_t>{1, 4, 3}));
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{2}));
    EXPECT_EQ(r.outputs[1], (std::vector<int32_t>{0, 5, 10, 2, 7, 12, -1, -1, -1, -1, -1, -1}));
    // NP(N*K = 12) = bits(13) + 1; the boxes keep the input precision.
    EXPECT_EQ(r.precisions[0], 5);
    EXPECT_EQ(r.precisions[1], 8);
    // Gas charges entry 0 (the counts): ops 1 * 1; mem 5 * 12 + 5 * (1 + 12).
    EXPECT_EQ(r.gas, 1u + 60 + 65);
}

TEST(GetValidCounts, DefaultThresholdIsZero) {
    Operand x{{2, 2, 2}, 8, {0, 0, 1, 1, 2, -1, 3, 4}, false};
    auto r = run_op("get_valid_counts", {}, {x}, 2);
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{1, 1}));
    EXPECT_EQ(r.outputs[1], (std::vector<int32_t>{1, 1, -1, -1, 3, 4, -1, -1}));
}

TEST(GetValidCounts, ErrorClasses) {
    auto rc = [](std::vector<int32_t> shape, std::vector<std::pair<std::string, std::string>> a) {
        size_t n = 1;
        for (int d : shape) n *= d;
        return run_op("get_valid_counts", a, {Operand{shape, 8, std::vector<int32_t>(n, 1), false}},
                      2)
            .verify_rc;
    };
    EXPECT_EQ(rc({1, 3, 2}, {}), CVML_OK);
    EXPECT_EQ(rc({1, 3, 31}, {}), CVML_OK);
    EXPECT_EQ(rc({1, 3, 1}, {}), CVML_ERR_LOGIC);
    EXPECT_EQ(rc({1, 3, 32}, {}), CVML_ERR_LOGIC);
    EXPECT_EQ(rc({3, 6}, {}), CVML_ERR_LOGIC);
    EXPECT_EQ(rc({1, 3, 6}, {{"score_threshold", "0.5"}}), CVML_ERR_RUNTIME);
    EXPECT_EQ(rc({1, 3, 6}, {{"threshold", "1"}}), CVML_ERR_RUNTIME);
}

TEST(GetValidCounts, PropertyAgainstReference) {
    uint32_t seed = 1100;
    for (int iter = 0; iter < 40; ++iter) {
        auto rnd = cvml_test::random_values(4, 1000, seed++);
        auto pick = [&](int i, int lo, int hi) { return lo + (rnd[i] + 1000) % (hi - lo + 1); };
        int b = pick(0, 1, 4), n = pick(1, 1, 12), k = pick(2, 2, 8), thr = pick(3, -20, 20);
        auto x = cvml_test::random_values(b * n * k, 30, seed++);
        std::vector<int32_t> cnt, y;
        for (int i = 0; i < b; ++i) {
            int c = 0;
            for (int j = 0; j < n; ++j)
                if (x[(i * n + j) * k + 1] > thr) {
                    for (int t = 0; t < k; ++t) y.push_back(x[(i * n + j) * k + t]);
                    ++c;
                }
            for (int j = c; j < n; ++j)
                for (int t = 0; t < k; ++t) y.push_back(-1);
            cnt.push_back(c);
        }
        for (int threads : {1, 3}) {
            auto r = run_op("get_valid_counts", {{"score_threshold", std::to_string(thr)}},
                            {Operand{{b, n, k}, 8, x, false}}, 2, threads);
            ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
            ASSERT_EQ(r.outputs[0], cnt) << "iter " << iter;
            ASSERT_EQ(r.outputs[1], y) << "iter " << iter;
        }
    }
}

TEST(GetValidCounts, ConformanceCases) {
    // 065's head is output 1 (the boxes), 066's output 0 (the counts).
    nn_case::replay("get_valid_counts", "065_get_valid_counts", {{"score_threshold", "45"}},
                    {1, 8, 2}, 8, {}, 166, 2, 1);
    nn_case::replay("get_valid_counts", "066_get_valid_counts_count_output",
                    {{"score_threshold", "48"}}, {2, 11, 6}, 8, {}, 1332, 2, 0);
}
