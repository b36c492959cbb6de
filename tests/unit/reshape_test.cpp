#include <gtest/gtest.h>

#include "shape_test_util.h"

using namespace shape_test;

namespace {

Shape reshape_of(const Shape& in, const std::string& target, int* rc = nullptr) {
    auto r = run1("reshape", {{"shape", target}}, in, distinct(size_of(in)));
    if (rc) *rc = r.verify_rc;
    if (r.verify_rc != CVML_OK) return {};
    EXPECT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], distinct(size_of(in))) << target;
    return r.shapes[0];
}

}  // namespace

/* The examples of upstream's reshape documentation. */
TEST(Reshape, MxnetCodesDocumentedExamples) {
    EXPECT_EQ(reshape_of({2, 3, 4}, "(4,0,2)"), (Shape{4, 3, 2}));
    EXPECT_EQ(reshape_of({2, 3, 4}, "(2,0,0)"), (Shape{2, 3, 4}));
    EXPECT_EQ(reshape_of({2, 3, 4}, "(6,1,-1)"), (Shape{6, 1, 4}));
    EXPECT_EQ(reshape_of({2, 3, 4}, "(3,-1,8)"), (Shape{3, 1, 8}));
    EXPECT_EQ(reshape_of({2, 3, 4}, "(-1,)"), (Shape{24}));
    EXPECT_EQ(reshape_of({2, 3, 4}, "(-2,)"), (Shape{2, 3, 4}));
    EXPECT_EQ(reshape_of({2, 3, 4}, "(2,-2)"), (Shape{2, 3, 4}));
    EXPECT_EQ(reshape_of({2, 3, 4}, "(-2,1,1)"), (Shape{2, 3, 4, 1, 1}));
    EXPECT_EQ(reshape_of({2, 3, 4}, "(-3,4)"), (Shape{6, 4}));
    EXPECT_EQ(reshape_of({2, 3, 4, 5}, "(-3,-3)"), (Shape{6, 20}));
    EXPECT_EQ(reshape_of({2, 3, 4}, "(0,-3)"), (Shape{2, 12}));
    EXPECT_EQ(reshape_of({2, 3, 4}, "(-3,-2)"), (Shape{6, 4}));
    EXPECT_EQ(reshape_of({2, 3, 4}, "(-4,1,2,-2)"), (Shape{1, 2, 3, 4}));
    EXPECT_EQ(reshape_of({2, 3, 4}, "(2,-4,-1,3,-2)"), (Shape{2, 1, 3, 4}));
    EXPECT_EQ(reshape_of({2, 3, 4}, "24"), (Shape{24}));
}

TEST(Reshape, UpstreamQuirks) {
    // codes below -4 have no branch upstream: skipped without consuming an input dim
    EXPECT_EQ(reshape_of({2, 3, 4}, "(-5, 24)"), (Shape{24}));
    EXPECT_EQ(reshape_of({2, 3, 4}, "(-7, 0, -9, 12)"), (Shape{2, 12}));
    // a positive value consumes an input position, so a later 0 copies the next dim
    EXPECT_EQ(reshape_of({2, 3, 4}, "(2, 0, -1)"), (Shape{2, 3, 4}));
    // -1 also consumes a position
    EXPECT_EQ(reshape_of({2, 3, 4}, "(-1, 0)"), (Shape{8, 3}));
    // -4 operands are read into `int`: 2^32 + 2 is 2
    EXPECT_EQ(reshape_of({6}, "(-4, 4294967298, -1)"), (Shape{2, 3}));
}

/* (-2,) copies every remaining input dim: the input unchanged, gas base 1. */
TEST(Reshape, MinusTwoAloneCopiesTheShape) {
    auto r = run1("reshape", {{"shape", "(-2,)"}}, {2, 4, 2, 2}, distinct(32, -16), 1, 8);
    ASSERT_EQ(r.verify_rc, CVML_OK) << r.error;
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (Shape{2, 4, 2, 2}));
    EXPECT_EQ(r.outputs[0], distinct(32, -16));
    EXPECT_EQ(r.precisions[0], 8);
    EXPECT_EQ(r.gas, unit_gas({{2, 4, 2, 2}}, {2, 4, 2, 2}));
}

TEST(Reshape, Errors) {
    int rc = 0;
    // 129_invalid_reshape_size_mismatch
    reshape_of({2, 3, 4}, "(5, 5)", &rc);
    EXPECT_EQ(rc, CVML_ERR_LOGIC);
    reshape_of({2, 3, 4}, "(-1, -1)", &rc);
    EXPECT_EQ(rc, CVML_ERR_LOGIC);
    reshape_of({2, 3, 4}, "()", &rc);
    EXPECT_EQ(rc, CVML_ERR_LOGIC);
    reshape_of({2, 3, 4}, "(0, 0, 0, 0)", &rc);
    EXPECT_EQ(rc, CVML_ERR_LOGIC);
    reshape_of({2, 3, 4}, "(-3, -3)", &rc);
    EXPECT_EQ(rc, CVML_ERR_LOGIC);
    reshape_of({6}, "(-4, -1, -1)", &rc);
    EXPECT_EQ(rc, CVML_ERR_LOGIC);
    reshape_of({6}, "(-4, 4, -1)", &rc);
    EXPECT_EQ(rc, CVML_ERR_LOGIC);
    reshape_of({6}, "(-4, 0, -1)", &rc);  // upstream divides by zero here
    EXPECT_EQ(rc, CVML_ERR_LOGIC);
    reshape_of({6}, "(-4, -1, 0)", &rc);
    EXPECT_EQ(rc, CVML_ERR_LOGIC);
    reshape_of({6}, "(-4, -2, -3)", &rc);  // negative dims pass the split check only
    EXPECT_EQ(rc, CVML_ERR_LOGIC);
    reshape_of({6}, "(-4, 2)", &rc);
    EXPECT_EQ(rc, CVML_ERR_LOGIC);
    reshape_of({24}, "(1,1,1,1,1,1,-1)", &rc);  // 7 dims
    EXPECT_EQ(rc, CVML_ERR_LOGIC);
    reshape_of({4}, "(4294967296, 4294967296, -1)", &rc);  // no overflow in the product
    EXPECT_EQ(rc, CVML_ERR_LOGIC);
    reshape_of({4}, "(9223372036854775807, 9223372036854775807)", &rc);
    EXPECT_EQ(rc, CVML_ERR_LOGIC);
    // ParamError: runtime
    EXPECT_EQ(run1("reshape", {}, {4}, distinct(4)).verify_rc, CVML_ERR_RUNTIME);
    EXPECT_EQ(run1("reshape", {{"shape", "(2,x)"}}, {4}, distinct(4)).verify_rc, CVML_ERR_RUNTIME);
    EXPECT_EQ(run1("reshape", {{"shape", "(4,)"}, {"reverse", "1"}}, {4}, distinct(4)).verify_rc,
              CVML_ERR_RUNTIME);
}

/* Property: a random regrouping of a random shape keeps every value in place. */
TEST(Reshape, RandomRegroupings) {
    std::mt19937 rng(47);
    for (int iter = 0; iter < 60; ++iter) {
        Shape in = random_shape(rng, 1, 5, 4);
        // split the flat size into random factors via -1 plus copies of leading dims
        std::vector<int64_t> target;
        int keep = rand_int(rng, 0, static_cast<int>(in.size()) - 1);
        for (int i = 0; i < keep; ++i) target.push_back(rand_int(rng, 0, 1) ? 0 : in[i]);
        target.push_back(-1);
        for (int threads : {1, 3}) {
            auto r = run1("reshape", {{"shape", tuple_str(target)}}, in, distinct(size_of(in), -7),
                          threads);
            ASSERT_EQ(r.verify_rc, CVML_OK) << r.error;
            ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
            Shape expect(in.begin(), in.begin() + keep);
            int64_t rest = 1;
            for (size_t i = keep; i < in.size(); ++i) rest *= in[i];
            expect.push_back(static_cast<int32_t>(rest));
            EXPECT_EQ(r.shapes[0], expect);
            EXPECT_EQ(r.outputs[0], distinct(size_of(in), -7));
        }
    }
}
