/* take: index clipping, axis handling, shapes, precisions and errors, and
 * random tests against numpy-style reference loops. */
#include <gtest/gtest.h>

#include "op_runner.h"

using cvml_test::Operand;
using cvml_test::random_values;
using cvml_test::run_op;

TEST(Take, NoAxisClipsIndices) {
    auto r = run_op(
        "take", {},
        {Operand{{2, 2}, 8, {1, 2, 3, 4}, false}, Operand{{5}, 8, {3, 0, 2, -5, 100}, true}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (std::vector<int32_t>{5}));
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{4, 1, 3, 1, 4}));
    EXPECT_EQ(r.precisions[0], 8);
    r = run_op("take", {{"axis", "None"}},
               {Operand{{2, 2}, 5, {1, 2, 3, 4}, false}, Operand{{1, 2}, 8, {3, 1}, true}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (std::vector<int32_t>{1, 2}));
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{4, 2}));
    EXPECT_EQ(r.precisions[0], 5);
}

TEST(Take, AlongAxis) {
    // Upstream's doc example: take([[1,2],[3,4]], [1,0], axis=1) = [[2,1],[4,3]].
    auto r = run_op("take", {{"axis", "1"}},
                    {Operand{{2, 2}, 8, {1, 2, 3, 4}, false}, Operand{{2}, 8, {1, 0}, true}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{2, 1, 4, 3}));
    r = run_op(
        "take", {{"axis", "-2"}},
        {Operand{{3, 2}, 8, {1, 2, 3, 4, 5, 6}, false}, Operand{{2, 2}, 8, {2, -1, 9, 1}, true}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (std::vector<int32_t>{2, 2, 2}));
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{5, 6, 1, 2, 5, 6, 3, 4}));
}

TEST(Take, Errors) {
    Operand d{{2, 2}, 8, {1, 2, 3, 4}, false};
    Operand i{{1}, 8, {0}, true};
    EXPECT_EQ(run_op("take", {{"axis", "2"}}, {d, i}).verify_rc, CVML_ERR_LOGIC);
    EXPECT_EQ(run_op("take", {{"axis", "-3"}}, {d, i}).verify_rc, CVML_ERR_LOGIC);
    EXPECT_EQ(run_op("take", {{"axis", "x"}}, {d, i}).verify_rc, CVML_ERR_RUNTIME);
    EXPECT_EQ(run_op("take", {{"mode", "clip"}}, {d, i}).verify_rc, CVML_ERR_RUNTIME);
    EXPECT_EQ(run_op("take", {}, {d}).verify_rc, CVML_ERR_LOGIC);
    // Output ndim past 6.
    Operand d4{{1, 1, 1, 2}, 8, {1, 2}, false};
    Operand i4{{1, 1, 1, 1}, 8, {0}, true};
    EXPECT_EQ(run_op("take", {{"axis", "0"}}, {d4, i4}).verify_rc, CVML_ERR_LOGIC);
}

TEST(TakeProperty, RandomAxesAgainstReference) {
    uint32_t seed = 40;
    for (int trial = 0; trial < 20; ++trial) {
        auto r0 = random_values(8, 1000, ++seed);
        size_t nd = 1 + (r0[0] + 1000) % 4;
        std::vector<int32_t> sd(nd);
        size_t n = 1;
        for (size_t d = 0; d < nd; ++d) n *= sd[d] = 1 + (r0[1 + d] + 1000) % 6;
        std::vector<int32_t> si = {1 + (r0[5] + 1000) % 7};
        if (trial % 2) si.push_back(2);
        size_t ni = 1;
        for (int32_t v : si) ni *= v;
        auto data = random_values(n, 127, ++seed);
        auto idx = random_values(ni, 9, ++seed);
        int axis = static_cast<int>((r0[6] + 1000) % (2 * nd + 1)) - static_cast<int>(nd);
        bool no_axis = axis == static_cast<int>(nd);
        if (!no_axis && axis < -static_cast<int>(nd)) axis = 0;
        std::vector<std::pair<std::string, std::string>> attrs;
        if (!no_axis) attrs.push_back({"axis", std::to_string(axis)});
        std::vector<int32_t> want;
        if (no_axis) {
            for (int32_t i : idx) want.push_back(data[std::min<int64_t>(std::max(i, 0), n - 1)]);
        } else {
            size_t ax = axis < 0 ? axis + nd : axis;
            size_t outer = 1, inner = 1;
            for (size_t d = 0; d < ax; ++d) outer *= sd[d];
            for (size_t d = ax + 1; d < nd; ++d) inner *= sd[d];
            for (size_t o = 0; o < outer; ++o)
                for (size_t j = 0; j < ni; ++j)
                    for (size_t in = 0; in < inner; ++in) {
                        int64_t k = std::min<int64_t>(std::max(idx[j], 0), sd[ax] - 1);
                        want.push_back(data[(o * sd[ax] + k) * inner + in]);
                    }
        }
        for (int threads : {1, 3}) {
            auto r = run_op("take", attrs, {Operand{sd, 8, data, false}, Operand{si, 8, idx, true}},
                            1, threads);
            ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
            ASSERT_EQ(r.outputs[0], want) << "trial " << trial << " axis " << axis;
        }
        auto r = run_op("cvm_lut", {{"in_dim", std::to_string(n)}},
                        {Operand{si, 8, idx, false}, Operand{sd, 8, data, true}}, 1, 3);
        ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
        for (size_t j = 0; j < ni; ++j)
            ASSERT_EQ(r.outputs[0][j], data[std::min<int64_t>(std::max(idx[j], 0), n - 1)]);
    }
}
