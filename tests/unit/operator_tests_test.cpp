// Every operator file the build tables (source/operator/NAME.cpp) has its own unit
// tests, tests/unit/NAME_test.cpp, and the aliases their aliases_test.cpp: a new
// operator without tests fails here rather than going unnoticed.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "operator/op_def.h"

namespace {

bool file_exists(const std::string& path) {
    return std::ifstream(path).good();
}

TEST(OperatorTests, EveryRegisteredOperatorHasItsOwnTestFile) {
    const std::string dir = std::string(CVML_SOURCE_DIR) + "/tests/unit/";
    int operators = 0;
    for (int32_t i = 0; i < cvml_operator_table_count; ++i) {
        const op_def* op = cvml_operator_table[i];
        if (!op->alias) {
            ++operators;
            EXPECT_TRUE(file_exists(dir + op->name + "_test.cpp"))
                << "operator " << op->name << " has no tests/unit/" << op->name << "_test.cpp";
        } else {
            EXPECT_TRUE(file_exists(dir + "aliases_test.cpp")) << op->name;
        }
    }
    EXPECT_GT(operators, 0) << "no operator registered";
}

}  // namespace
