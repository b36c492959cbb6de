#include <gtest/gtest.h>

#include "op_runner.h"

using cvml_test::Operand;
using cvml_test::run_op;

TEST(Relu, HandChecked) {
    auto r = run_op("relu", {}, {Operand{{4}, 8, {-3, 0, 5, -127}, false}});
    ASSERT_EQ(r.verify_rc, CVML_OK) << r.error;
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{0, 0, 5, 0}));
    EXPECT_EQ(r.precisions[0], 8);
}

TEST(Relu, RejectsAttributes) {
    auto r = run_op("relu", {{"foo", "1"}}, {Operand{{4}, 8, {1, 2, 3, 4}, false}});
    EXPECT_EQ(r.verify_rc, CVML_ERR_LOGIC);
}

TEST(Relu, ThreadsGiveSameBytes) {
    auto x = cvml_test::random_values(1000, 127, 7);
    auto a = run_op("relu", {}, {Operand{{10, 100}, 8, x, false}}, 1, 1);
    auto b = run_op("relu", {}, {Operand{{10, 100}, 8, x, false}}, 1, 3);
    ASSERT_EQ(a.run_rc, CVML_OK);
    EXPECT_EQ(a.outputs, b.outputs);
    for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(a.outputs[0][i], x[i] > 0 ? x[i] : 0);
}
