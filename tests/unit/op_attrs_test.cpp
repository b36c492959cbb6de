/* Hostile attribute texts, for every attribute of every registered operator (aliases
 * included), read from the operators' own attribute tables: each must be refused as
 * upstream's ParamError (CVML_ERR_RUNTIME) with a message naming the attribute, never
 * crash, hang or be taken as some value. The other attributes are given texts that
 * parse, so the refusal is the hostile one's. The operator files' own tests check the
 * value rules (ranges, shapes) that come after parsing. */
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "elem_test_util.h"
#include "operator/op_def.h"

using namespace elem_test;

namespace {

/* A text the attribute's type parses (its values are checked later, at inference). */
std::string parsable_text(const attr_spec& spec) {
    switch (spec.type) {
        case ATTR_INT: {
            const int64_t v = spec.has_lower_bound && spec.lower_bound > 1 ? spec.lower_bound : 1;
            return std::to_string(v);
        }
        case ATTR_BOOL:
            return "true";
        case ATTR_TUPLE:
            return "(1, 1)";
        case ATTR_OPT_INT:
            return "None";
        case ATTR_STRING:
            if (spec.choices) return spec.choices[0];
            return spec.default_value ? spec.default_value : "x";
    }
    return "";
}

std::vector<std::string> hostile_texts(const attr_spec& spec) {
    const std::string non_ascii = "\xc3\xa9\xff";
    switch (spec.type) {
        case ATTR_INT: {
            auto v = hostile_int_texts();
            v.push_back(non_ascii);
            return v;
        }
        case ATTR_OPT_INT: {
            std::vector<std::string> v;
            for (const std::string& t : hostile_int_texts())
                if (t != "None") v.push_back(t);
            v.insert(v.end(), {"none", "NONE", "None1", non_ascii});
            return v;
        }
        case ATTR_BOOL: {
            auto v = hostile_bool_texts();
            v.push_back(non_ascii);
            return v;
        }
        case ATTR_TUPLE: {
            std::string seventeen = "(";
            for (int i = 0; i < ATTR_TUPLE_MAX + 1; ++i) seventeen += i ? ", 1" : "1";
            return {"",
                    "(",
                    "(1,",
                    "(1 2)",
                    "[1,]]",
                    "((1))",
                    "(1, x)",
                    "(1; 2)",
                    "1 2",
                    "(1, 2",
                    "1e3",
                    "(1.5)",
                    "abc",
                    "(,)",
                    "(1,,2)",

                    seventeen + ")",
                    "(99999999999999999999)",
                    std::string(4096, '('),
                    non_ascii};
        }
        case ATTR_STRING: {
            std::vector<std::string> v = {std::string(32, 'N'), std::string(4096, 'N')};
            if (spec.choices) v.insert(v.end(), {"bogus", "", non_ascii});
            return v;
        }
    }
    return {};
}

/* The operator's attributes: every one parsable, `key` given `text`. */
Attrs with_text(const op_def* op, const std::string& key, const std::string& text) {
    Attrs attrs;
    for (int32_t i = 0; i < op->attr_count; ++i) {
        const attr_spec& spec = op->attrs[i];
        attrs.emplace_back(spec.name, spec.name == key ? text : parsable_text(spec));
    }
    return attrs;
}

std::vector<const op_def*> registered_operators() {
    EXPECT_EQ(cvml_init(), CVML_OK);
    std::vector<const op_def*> ops;
    for (int32_t i = 0; i < op_registry_count(); ++i) ops.push_back(op_registry_at(i));
    cvml_release();
    return ops;
}

/* A func_name that names op after upstream's suffix strip ("conv2d_0" -> "conv2d"),
 * so that aliases such as "__add_symbol__" are reached too. */
std::string func_name(const op_def* op) {
    return std::string(op->name) + "_0";
}

const Operand kData{{1, 1, 4, 4}, 8, std::vector<int32_t>(16, 1), false};

}  // namespace

TEST(OperatorAttributes, EveryAttributeRefusesHostileTexts) {
    int checked = 0;
    for (const op_def* op : registered_operators()) {
        for (int32_t i = 0; i < op->attr_count; ++i) {
            const attr_spec& spec = op->attrs[i];
            for (const std::string& text : hostile_texts(spec)) {
                OpResult r = run_op(func_name(op), with_text(op, spec.name, text), {kData});
                EXPECT_EQ(r.verify_rc, CVML_ERR_RUNTIME) << op->name << "." << spec.name << " = '"
                                                         << text.substr(0, 40) << "': " << r.error;
                EXPECT_NE(r.error.find(spec.name), std::string::npos)
                    << op->name << ": '" << r.error << "' does not name " << spec.name;
                ++checked;
            }
        }
    }
    EXPECT_GT(checked, 300);
}

TEST(OperatorAttributes, UnknownKeysAreRefused) {
    for (const op_def* op : registered_operators()) {
        Attrs attrs = with_text(op, "", "");
        attrs.emplace_back("no_such_attribute", "1");
        OpResult r = run_op(func_name(op), attrs, {kData});
        // Upstream: ParamError (runtime) for an operator with a table; an operator
        // without parameters takes no attribute at all (logic).
        EXPECT_EQ(r.verify_rc, op->attr_count ? CVML_ERR_RUNTIME : CVML_ERR_LOGIC) << op->name;
        EXPECT_NE(r.error.find("no_such_attribute"), std::string::npos)
            << op->name << ": " << r.error;
    }
}

TEST(OperatorAttributes, RequiredAttributesAreNamedWhenMissing) {
    for (const op_def* op : registered_operators()) {
        for (int32_t i = 0; i < op->attr_count; ++i) {
            const attr_spec& spec = op->attrs[i];
            if (spec.default_value) continue;
            Attrs attrs;
            for (const auto& kv : with_text(op, "", ""))
                if (kv.first != spec.name) attrs.push_back(kv);
            OpResult r = run_op(func_name(op), attrs, {kData});
            EXPECT_EQ(r.verify_rc, CVML_ERR_RUNTIME) << op->name << "." << spec.name;
            EXPECT_NE(r.error.find(spec.name), std::string::npos) << op->name << ": " << r.error;
        }
    }
}
