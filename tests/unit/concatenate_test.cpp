#include <gtest/gtest.h>

#include "shape_test_util.h"

using namespace shape_test;
using cvml_test::Operand;
using cvml_test::run_op;

TEST(Concatenate, DocumentedExamples) {
    // x = [[1,1],[2,2]], y = [[3,3],[4,4],[5,5]], z = [[6,6],[7,7],[8,8]]
    auto r = run_op(
        "concatenate", {{"axis", "0"}},
        {Operand{{2, 2}, 8, {1, 1, 2, 2}, false}, Operand{{3, 2}, 8, {3, 3, 4, 4, 5, 5}, true},
         Operand{{3, 2}, 8, {6, 6, 7, 7, 8, 8}, true}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (Shape{8, 2}));
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8}));
    r = run_op("concatenate", {},  // axis defaults to 1
               {Operand{{3, 2}, 8, {3, 3, 4, 4, 5, 5}, false},
                Operand{{3, 2}, 8, {6, 6, 7, 7, 8, 8}, true}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (Shape{3, 4}));
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{3, 3, 6, 6, 4, 4, 7, 7, 5, 5, 8, 8}));
}

/* Axis -1 of 1-D inputs; the output precision is the inputs' largest (FORMAT.md §6),
 * whichever input it is; gas base 1. */
TEST(Concatenate, LastAxisAndLargestPrecision) {
    for (bool wide_first : {false, true}) {
        const int p0 = wide_first ? 14 : 6, p1 = wide_first ? 6 : 14;
        auto r = run_op("concatenate", {{"axis", "-1"}},
                        {Operand{{2}, p0, {31, -21}, false}, Operand{{3}, p1, {-17, 30, 5}, true}});
        ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
        EXPECT_EQ(r.shapes[0], (Shape{5}));
        EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{31, -21, -17, 30, 5}));
        EXPECT_EQ(r.precisions[0], 14);
        EXPECT_EQ(r.gas, unit_gas({{2}, {3}}, {5}));
    }
}

TEST(Concatenate, SingleInputAndManyInputs) {
    auto r = run_op("concatenate", {{"axis", "0"}}, {Operand{{3}, 8, {1, 2, 3}, false}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{1, 2, 3}));
    std::vector<Operand> ops{Operand{{1, 2}, 5, {0, 1}, false}};
    std::vector<int32_t> expect{0, 1};
    for (int i = 1; i < 12; ++i) {
        ops.push_back(Operand{{1, 2}, 5 + i, {2 * i, 2 * i + 1}, true});
        expect.push_back(2 * i);
        expect.push_back(2 * i + 1);
    }
    r = run_op("concatenate", {{"axis", "0"}}, ops);
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (Shape{12, 2}));
    EXPECT_EQ(r.outputs[0], expect);
    EXPECT_EQ(r.precisions[0], 16);
}

TEST(Concatenate, Errors) {
    auto two = [](const Shape& a, const Shape& b, const Attrs& attrs) {
        return run_op("concatenate", attrs,
                      {Operand{a, 8, distinct(size_of(a)), false},
                       Operand{b, 8, distinct(size_of(b)), true}})
            .verify_rc;
    };
    EXPECT_EQ(two({2, 3}, {2, 4}, {{"axis", "0"}}), CVML_ERR_LOGIC);  // other dim differs
    EXPECT_EQ(two({2, 3}, {2, 3, 1}, {{"axis", "0"}}), CVML_ERR_LOGIC);
    EXPECT_EQ(two({2, 3}, {2, 3}, {{"axis", "2"}}), CVML_ERR_LOGIC);
    EXPECT_EQ(two({2, 3}, {2, 3}, {{"axis", "-3"}}), CVML_ERR_LOGIC);
    EXPECT_EQ(two({2, 3}, {2, 3}, {{"axis", "one"}}), CVML_ERR_RUNTIME);
    EXPECT_EQ(two({2, 3}, {2, 3}, {{"dim", "1"}}), CVML_ERR_RUNTIME);
    EXPECT_EQ(two({2, 3}, {2, 3}, {{"axis", "-2"}}), CVML_OK);
}

TEST(Concatenate, RandomShapesAxesAndThreads) {
    std::mt19937 rng(49);
    for (int iter = 0; iter < 50; ++iter) {
        Shape base = random_shape(rng, 1, 5, 4);
        const int nd = static_cast<int>(base.size());
        int axis = rand_int(rng, -nd, nd - 1);
        int real = axis < 0 ? axis + nd : axis;
        int n = rand_int(rng, 1, 4);
        std::vector<Shape> shapes;
        std::vector<std::vector<int32_t>> vals;
        std::vector<Operand> ops;
        int32_t next = 1;
        for (int i = 0; i < n; ++i) {
            Shape s = base;
            s[real] = rand_int(rng, 1, 4);
            shapes.push_back(s);
            vals.push_back(distinct(size_of(s), next));
            next += static_cast<int32_t>(size_of(s));
            ops.push_back(Operand{s, 20, vals.back(), i != 0});
        }
        Shape out = base;
        out[real] = 0;
        for (auto& s : shapes) out[real] += s[real];
        std::vector<int32_t> expect(size_of(out));
        for_each_index(out, [&](const Shape& d, int64_t flat) {
            int32_t k = d[real];
            int i = 0;
            while (k >= shapes[i][real]) k -= shapes[i++][real];
            Shape s = d;
            s[real] = k;
            expect[flat] = vals[i][offset_of(shapes[i], s)];
        });
        for (int threads : {1, 3}) {
            auto r = run_op("concatenate", {{"axis", std::to_string(axis)}}, ops, 1, threads);
            ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
            EXPECT_EQ(r.shapes[0], out);
            EXPECT_EQ(r.outputs[0], expect);
        }
    }
}
