/* Extreme attribute values on a valid node of every operator that has attributes:
 * for each attribute in the operator's table, texts that parse but sit at or past the
 * edges of the attribute's domain (0, -1, +-2^31, 2^24 + 1, 64-bit tuple entries,
 * tuples of the wrong length). Whatever upstream decides for each, cvm-lite must give
 * a logic or runtime error, or verify and then run to an output of the inferred size:
 * never a crash, a hang, a wrapped size or an out-of-bounds access (the sanitizer and
 * valgrind runs of this binary watch the last). */
#include <gtest/gtest.h>

#include <climits>
#include <string>
#include <vector>

#include "elem_test_util.h"
#include "operator/op_def.h"

using namespace elem_test;

namespace {

/* A node that verifies and runs, to vary one attribute of at a time. */
struct Baseline {
    const char* op;
    Attrs attrs;
    std::vector<Operand> operands;
    int outputs = 1;
};

Operand data(Shape shape, int precision = 8) {
    return Operand{shape, precision, random_values(count_of(shape), 3, 7), false};
}

Operand constant(Shape shape, int precision = 8, int32_t bound = 3) {
    return Operand{shape, precision, random_values(count_of(shape), bound, 9), true};
}

/* Boxes [id, score, x1, y1, x2, y2] for the detection operators. */
Operand boxes() {
    return Operand{
        {1, 4, 6},
        8,
        {0, 90, 0, 0, 10, 10, 0, 80, 1, 1, 11, 11, 1, 70, 20, 20, 30, 30, -1, 60, 5, 5, 9, 9},
        false};
}

const std::vector<Baseline>& baselines() {
    static const std::vector<Baseline> k = {
        {"clip", {{"a_min", "-2"}, {"a_max", "2"}}, {data({1, 2, 4, 4})}},
        {"concatenate", {{"axis", "1"}}, {data({1, 2, 4, 4}), constant({1, 3, 4, 4})}},
        {"conv2d",
         {{"channels", "2"},
          {"kernel_size", "(3, 3)"},
          {"strides", "(1, 1)"},
          {"padding", "(1, 1)"},
          {"dilation", "(1, 1)"},
          {"groups", "1"},
          {"use_bias", "True"}},
         {data({1, 2, 5, 5}), constant({2, 2, 3, 3}), constant({2})}},
        {"conv2d",
         {{"channels", "2"}, {"kernel_size", "(3, 3)"}, {"groups", "2"}, {"use_bias", "False"}},
         {data({1, 2, 5, 5}), constant({2, 1, 3, 3})}},
        {"cvm_clip", {{"precision", "4"}}, {data({1, 2, 4, 4})}},
        {"cvm_left_shift", {{"precision", "8"}, {"shift_bit", "2"}}, {data({1, 2, 4, 4}, 6)}},
        {"cvm_lut", {{"in_dim", "8"}}, {data({1, 2, 4, 4}), constant({8}, 12, 2000)}},
        {"cvm_right_shift", {{"precision", "4"}, {"shift_bit", "2"}}, {data({1, 2, 4, 4})}},
        {"dense",
         {{"units", "3"}, {"use_bias", "True"}},
         {data({2, 4}), constant({3, 4}), constant({3})}},
        {"expand_dims", {{"axis", "1"}, {"num_newaxis", "2"}}, {data({2, 3})}},
        {"get_valid_counts", {{"score_threshold", "65"}}, {boxes()}, 2},
        {"max", {{"axis", "(1,)"}, {"keepdims", "True"}, {"exclude", "False"}}, {data({2, 3, 4})}},
        {"sum", {{"axis", "(1,)"}, {"keepdims", "True"}, {"exclude", "False"}}, {data({2, 3, 4})}},
        {"max_pool2d",
         {{"pool_size", "(2, 2)"},
          {"strides", "(2, 2)"},
          {"padding", "(0, 0)"},
          {"ceil_mode", "True"}},
         {data({1, 2, 5, 5})}},
        {"non_max_suppression",
         {{"max_output_size", "-1"},
          {"iou_threshold", "50"},
          {"force_suppress", "False"},
          {"top_k", "-1"},
          {"coord_start", "2"},
          {"score_index", "1"},
          {"id_index", "0"},
          {"return_indices", "False"},
          {"invalid_to_bottom", "True"}},
         {boxes(), constant({1}, 8, 0)}},
        {"repeat", {{"repeats", "2"}, {"axis", "1"}}, {data({2, 3})}},
        {"reshape", {{"shape", "(3, -1)"}}, {data({2, 3, 2})}},
        {"slice_like", {{"axis", "(1, 2)"}}, {data({2, 3, 4}), constant({1, 2, 3})}},
        {"squeeze", {{"axis", "(1,)"}}, {data({2, 1, 3})}},
        {"strided_slice",
         {{"begin", "(0, 1)"}, {"end", "(2, 3)"}, {"stride", "(1, 1)"}},
         {data({2, 3, 4})}},
        {"take", {{"axis", "1"}}, {data({2, 3, 4}), constant({2}, 8, 5)}},
        {"tile", {{"reps", "(2, 1, 2)"}}, {data({2, 3})}},
        {"transpose", {{"axes", "(2, 0, 1)"}}, {data({2, 3, 4})}},
        {"upsampling",
         {{"scale", "2"}, {"layout", "NCHW"}, {"method", "NEAREST_NEIGHBOR"}},
         {data({1, 2, 3, 3})}},
    };
    return k;
}

std::vector<std::string> extreme_texts(const attr_spec& spec) {
    switch (spec.type) {
        case ATTR_INT:
        case ATTR_OPT_INT:
            return {"0",          "-1",          "1",          "2",
                    "-2",         "64",          "16777217",   "-16777217",
                    "2147483647", "-2147483648", "2147483646", "-2147483647"};
        case ATTR_TUPLE:
            return {"()",
                    "(0,)",
                    "(-1,)",
                    "(0, 0)",
                    "(-1, -1)",
                    "(1, 0)",
                    "(0, 1)",
                    "(-2147483648, -2147483648)",
                    "(2147483647, 2147483647)",
                    "(2147483648, 1)",
                    "(1, 4294967297)",
                    "(9223372036854775807, 9223372036854775807)",
                    "(-9223372036854775808, 1)",
                    "(16777217, 16777217)",
                    "(1, 1, 1)",
                    "(1, 1, 1, 1, 1, 1, 1)",
                    "(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1)"};
        case ATTR_BOOL:
            return {"0", "1"};
        case ATTR_STRING:
            return {"", "NHWC", "HWIO", "int8", "BILINEAR", "__undef__", "same"};
    }
    return {};
}

Attrs with_value(const Attrs& base, const std::string& key, const std::string& text) {
    Attrs attrs;
    for (const auto& kv : base)
        if (kv.first != key) attrs.push_back(kv);
    attrs.emplace_back(key, text);
    return attrs;
}

const op_def* definition(const char* name) {
    EXPECT_EQ(cvml_init(), CVML_OK);
    const op_def* op = op_registry_find(name);
    cvml_release();
    return op;
}

}  // namespace

TEST(OperatorAttributeValues, BaselinesVerifyAndRun) {
    for (const Baseline& b : baselines()) {
        OpResult r = run_op(b.op, b.attrs, b.operands, b.outputs);
        EXPECT_EQ(r.verify_rc, CVML_OK) << b.op << ": " << r.error;
        EXPECT_EQ(r.run_rc, CVML_OK) << b.op << ": " << r.error;
    }
}

TEST(OperatorAttributeValues, EveryOperatorWithAttributesHasABaseline) {
    ASSERT_EQ(cvml_init(), CVML_OK);
    for (int32_t i = 0; i < op_registry_count(); ++i) {
        const op_def* op = op_registry_at(i);
        if (op->alias || op->attr_count == 0) continue;
        bool found = false;
        for (const Baseline& b : baselines()) found = found || op->name == std::string(b.op);
        EXPECT_TRUE(found) << op->name << " has attributes but no baseline here";
    }
    cvml_release();
}

TEST(OperatorAttributeValues, ExtremesAreRefusedOrRunToTheInferredSize) {
    int refused = 0, ran = 0;
    for (const Baseline& b : baselines()) {
        const op_def* op = definition(b.op);
        ASSERT_NE(op, nullptr) << b.op;
        for (int32_t i = 0; i < op->attr_count; ++i) {
            const attr_spec& spec = op->attrs[i];
            for (const std::string& text : extreme_texts(spec)) {
                for (int threads : {1, 3}) {
                    OpResult r = run_op(b.op, with_value(b.attrs, spec.name, text), b.operands,
                                        b.outputs, threads);
                    const std::string what = std::string(b.op) + "." + spec.name + " = " + text;
                    if (r.verify_rc != CVML_OK) {
                        EXPECT_TRUE(r.verify_rc == CVML_ERR_LOGIC ||
                                    r.verify_rc == CVML_ERR_RUNTIME)
                            << what << ": rc " << r.verify_rc;
                        EXPECT_FALSE(r.error.empty()) << what;
                        ++refused;
                        continue;
                    }
                    ASSERT_EQ(r.run_rc, CVML_OK) << what << ": " << r.error;
                    ASSERT_EQ(r.outputs.size(), static_cast<size_t>(b.outputs)) << what;
                    for (int k = 0; k < b.outputs; ++k)
                        EXPECT_EQ(r.outputs[k].size(), count_of(r.shapes[k])) << what;
                    ++ran;
                }
            }
        }
    }
    EXPECT_GT(refused, 100);
    EXPECT_GT(ran, 20);
}
