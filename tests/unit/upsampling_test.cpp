#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nn_case_util.h"
#include "op_runner.h"

using cvml_test::Operand;
using cvml_test::run_op;

TEST(Upsampling, HandChecked) {
    Operand x{{1, 1, 2, 2}, 8, {1, 2, 3, 4}, false};
    auto r = run_op("upsampling", {{"scale", "2"}}, {x});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (std::vector<int32_t>{1, 1, 4, 4}));
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
    EXPECT_EQ(r.precisions[0], 8);
    EXPECT_EQ(r.gas, 16u + 5 * 4 + 5 * 16);
}

TEST(Upsampling, ErrorClasses) {
    Operand x{{1, 1, 2, 2}, 8, {1, 2, 3, 4}, false};
    auto rc = [&](std::vector<std::pair<std::string, std::string>> a) {
        return run_op("upsampling", a, {x}).verify_rc;
    };
    EXPECT_EQ(rc({{"scale", "1"}, {"layout", "NCHW"}, {"method", "NEAREST_NEIGHBOR"}}), CVML_OK);
    EXPECT_EQ(rc({}), CVML_ERR_RUNTIME);
    EXPECT_EQ(rc({{"scale", "2.5"}}), CVML_ERR_RUNTIME);
    EXPECT_EQ(rc({{"scale", "2"}, {"align_corners", "1"}}), CVML_ERR_RUNTIME);
    EXPECT_EQ(rc({{"scale", "0"}}), CVML_ERR_LOGIC);
    EXPECT_EQ(rc({{"scale", "4097"}}), CVML_ERR_LOGIC);
    EXPECT_EQ(rc({{"scale", "2"}, {"method", "BILINEAR"}}), CVML_ERR_LOGIC);
    EXPECT_EQ(rc({{"scale", "2"}, {"layout", "NHWC"}}), CVML_ERR_LOGIC);
    EXPECT_EQ(
        run_op("upsampling", {{"scale", "2"}}, {Operand{{4}, 8, {1, 2, 3, 4}, false}}).verify_rc,
        CVML_ERR_LOGIC);
}

TEST(Upsampling, PropertyAgainstReference) {
    uint32_t seed = 500;
    for (int iter = 0; iter < 30; ++iter) {
        auto rnd = cvml_test::random_values(5, 1000, seed++);
        auto pick = [&](int i, int lo, int hi) { return lo + (rnd[i] + 1000) % (hi - lo + 1); };
        int n = pick(0, 1, 2), c = pick(1, 1, 3), h = pick(2, 1, 5), w = pick(3, 1, 5),
            s = pick(4, 1, 4);
        auto x = cvml_test::random_values(n * c * h * w, 1 << 20, seed++);
        std::vector<int32_t> expect;
        for (int b = 0; b < n * c; ++b)
            for (int i = 0; i < h * s; ++i)
                for (int j = 0; j < w * s; ++j) expect.push_back(x[(b * h + i / s) * w + j / s]);
        for (int threads : {1, 3}) {
            auto r = run_op("upsampling", {{"scale", std::to_string(s)}},
                            {Operand{{n, c, h, w}, 22, x, false}}, 1, threads);
            ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
            ASSERT_EQ(r.outputs[0], expect) << "iter " << iter;
        }
    }
}

TEST(Upsampling, ConformanceCase) {
    nn_case::replay("upsampling", "036_upsampling", {{"scale", "2"}}, {1, 1, 3, 3}, 16, {}, 261);
}
