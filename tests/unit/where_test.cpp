/* where: same-shape selection, the 1-D row selection of divergence D6, the
 * condition's precision, and shape errors. */
#include <gtest/gtest.h>

#include "op_runner.h"

using cvml_test::Operand;
using cvml_test::random_values;
using cvml_test::run_op;

TEST(Where, SameShapeAndConditionPrecision) {
    // Upstream's doc example.
    auto r =
        run_op("where", {},
               {Operand{{2, 2}, 3, {0, 1, -1, 0}, false}, Operand{{2, 2}, 8, {1, 2, 3, 4}, true},
                Operand{{2, 2}, 12, {5, 6, 7, 8}, true}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{5, 2, 3, 8}));
    EXPECT_EQ(r.precisions[0], 3);  // the condition's, an upstream quirk
}

TEST(Where, OneDimConditionSelectsRows) {
    // D6: upstream leaves most of each row stale; cvm-lite selects whole rows.
    auto r = run_op("where", {},
                    {Operand{{2}, 8, {1, 0}, false}, Operand{{2, 3}, 8, {1, 2, 3, 4, 5, 6}, true},
                     Operand{{2, 3}, 8, {7, 8, 9, 10, 11, 12}, true}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{1, 2, 3, 10, 11, 12}));
}

TEST(Where, ShapeErrors) {
    Operand x{{2, 2}, 8, {1, 2, 3, 4}, true};
    Operand y3{{2, 3}, 8, {1, 2, 3, 4, 5, 6}, true};
    EXPECT_EQ(run_op("where", {}, {Operand{{2, 2}, 8, {1, 0, 1, 0}, false}, x, y3}).verify_rc,
              CVML_ERR_LOGIC);
    EXPECT_EQ(run_op("where", {}, {Operand{{4}, 8, {1, 0, 1, 0}, false}, x, x}).verify_rc,
              CVML_ERR_LOGIC);
    EXPECT_EQ(run_op("where", {}, {Operand{{1, 2}, 8, {1, 0}, false}, x, x}).verify_rc,
              CVML_ERR_LOGIC);
    EXPECT_EQ(run_op("where", {{"a", "1"}}, {Operand{{2}, 8, {1, 0}, false}, x, x}).verify_rc,
              CVML_ERR_LOGIC);
}

TEST(WhereProperty, RandomAgainstReference) {
    for (uint32_t seed = 1; seed <= 8; ++seed) {
        int32_t rows = 1 + static_cast<int32_t>(seed * 7 % 13);
        int32_t cols = 1 + static_cast<int32_t>(seed * 5 % 11);
        size_t n = static_cast<size_t>(rows * cols);
        auto x = random_values(n, 1000, seed);
        auto y = random_values(n, 1000, seed + 50);
        bool rowwise = seed % 2;
        auto c = random_values(rowwise ? rows : n, 1, seed + 99);
        std::vector<int32_t> cs =
            rowwise ? std::vector<int32_t>{rows} : std::vector<int32_t>{rows, cols};
        for (int threads : {1, 3}) {
            auto r = run_op("where", {},
                            {Operand{cs, 2, c, false}, Operand{{rows, cols}, 11, x, true},
                             Operand{{rows, cols}, 11, y, true}},
                            1, threads);
            ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
            for (size_t i = 0; i < n; ++i) {
                int32_t cv = rowwise ? c[i / cols] : c[i];
                ASSERT_EQ(r.outputs[0][i], cv != 0 ? x[i] : y[i]);
            }
        }
    }
}
