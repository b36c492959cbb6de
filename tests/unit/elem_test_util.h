/* Test-only helpers for the element-wise, clipping, shift and broadcast operator tests
 * (abs_test.cpp, clip_test.cpp, broadcast_add_test.cpp, ...): running one operator on
 * one input, the gas figure of FORMAT.md §8 for an operator whose base cost is 1, and
 * the hostile attribute texts every integer or boolean attribute must refuse. */
#pragma once

#include <stdint.h>

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "op_runner.h"

namespace elem_test {

using Attrs = std::vector<std::pair<std::string, std::string>>;
using Shape = std::vector<int32_t>;
using cvml_test::Operand;
using cvml_test::OpResult;
using cvml_test::random_values;
using cvml_test::run_op;

inline size_t count_of(const Shape& s) {
    size_t n = 1;
    for (int32_t d : s) n *= static_cast<size_t>(d);
    return n;
}

/* The largest value of precision p: 2^(p-1) - 1. */
inline int64_t precision_max(int p) {
    return (int64_t{1} << (p - 1)) - 1;
}

/* Runs a one-input operator and expects it to verify and run. */
inline OpResult run_unary(const std::string& op, const Attrs& attrs, const Shape& shape, int prec,
                          const std::vector<int32_t>& x, int threads = 1) {
    OpResult r = run_op(op, attrs, {Operand{shape, prec, x, false}}, 1, threads);
    EXPECT_EQ(r.verify_rc, CVML_OK) << op << ": " << r.error;
    EXPECT_EQ(r.run_rc, CVML_OK) << op << ": " << r.error;
    return r;
}

/* The values of a one-input operator's output (empty when it failed). */
inline std::vector<int32_t> unary_values(const std::string& op, const Attrs& attrs,
                                         const Shape& shape, int prec,
                                         const std::vector<int32_t>& x, int threads = 1) {
    OpResult r = run_unary(op, attrs, shape, prec, x, threads);
    return r.outputs.empty() ? std::vector<int32_t>{} : r.outputs[0];
}

/* FORMAT.md §8 for one node of base cost 1: every input variable costs 5 per element,
 * the node its output size once plus 5 per output element. */
inline uint64_t unit_base_gas(const std::vector<Operand>& operands, const Shape& out_shape) {
    uint64_t gas = 0;
    for (const Operand& o : operands) gas += 5 * count_of(o.shape);
    return gas + 6 * count_of(out_shape);
}

/* Texts that are not an int32 in upstream's encoding (`istream >> int` reading the
 * whole string): each must be a parameter error (CVML_ERR_RUNTIME) naming the
 * attribute, never a crash or a silent value. */
inline const std::vector<std::string>& hostile_int_texts() {
    static const std::vector<std::string> k = {
        "",
        " ",
        "x",
        "8x",
        "0x10",
        "1e3",
        "8.5",
        "+",
        "-",
        "--1",
        "2147483648",
        "-2147483649",
        "99999999999999999999999",
        "(8)",
        "None",
        std::string(4096, '9'),
    };
    return k;
}

/* Texts that are not one of True/true/1/False/false/0. */
inline const std::vector<std::string>& hostile_bool_texts() {
    static const std::vector<std::string> k = {"",    "maybe",     "2", "-1",
                                               "yes", "truefalse", "t", std::string(4096, 'T')};
    return k;
}

/* Expects the operator to refuse `attrs` with `rc` and a message containing `names`. */
inline void expect_refused(const std::string& op, const Attrs& attrs,
                           const std::vector<Operand>& operands, int rc, const std::string& names) {
    OpResult r = run_op(op, attrs, operands);
    EXPECT_EQ(r.verify_rc, rc) << op << " "
                               << (attrs.empty() ? "" : attrs.back().second.substr(0, 40)) << ": "
                               << r.error;
    EXPECT_NE(r.error.find(names), std::string::npos)
        << op << ": the message '" << r.error << "' does not name '" << names << "'";
}

/* Every hostile text in attribute `key` (the other attributes valid) is refused as a
 * parameter error naming the attribute. */
inline void expect_int_attr_refuses_hostile_text(const std::string& op, const Attrs& valid,
                                                 const std::string& key,
                                                 const std::vector<Operand>& operands) {
    for (const std::string& text : hostile_int_texts()) {
        Attrs attrs;
        for (const auto& kv : valid)
            if (kv.first != key) attrs.push_back(kv);
        attrs.emplace_back(key, text);
        expect_refused(op, attrs, operands, CVML_ERR_RUNTIME, key);
    }
}

inline void expect_bool_attr_refuses_hostile_text(const std::string& op, const Attrs& valid,
                                                  const std::string& key,
                                                  const std::vector<Operand>& operands) {
    for (const std::string& text : hostile_bool_texts()) {
        Attrs attrs;
        for (const auto& kv : valid)
            if (kv.first != key) attrs.push_back(kv);
        attrs.emplace_back(key, text);
        expect_refused(op, attrs, operands, CVML_ERR_RUNTIME, key);
    }
}

/* An operator with no parameters refuses any attribute (upstream: logic error), and
 * one with a table refuses an unknown key (upstream ParamError: runtime). */
inline void expect_no_attributes(const std::string& op, const std::vector<Operand>& operands) {
    expect_refused(op, {{"axis", "1"}}, operands, CVML_ERR_LOGIC, "axis");
    expect_refused(op, {{"", ""}}, operands, CVML_ERR_LOGIC, op);
    expect_refused(op, {{std::string(300, 'k'), "1"}}, operands, CVML_ERR_LOGIC, op);
}

}  // namespace elem_test
