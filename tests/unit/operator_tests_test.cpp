// Every operator file the build registers (source/operator/NAME.cpp) has its own unit
// tests, tests/unit/NAME_test.cpp, and every alias group its aliases_test.cpp: a new
// operator without tests fails here rather than going unnoticed.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "module/registry.h"

namespace {

bool file_exists(const std::string& path) {
    return std::ifstream(path).good();
}

TEST(OperatorTests, EveryRegisteredOperatorHasItsOwnTestFile) {
    const std::string dir = std::string(CVML_SOURCE_DIR) + "/tests/unit/";
    int operators = 0;
    for (int i = 0; i < cvml_generated_registry_count; ++i) {
        const registry_entry& e = cvml_generated_registry[i];
        const std::string kind = e.kind;
        if (kind == "operator") {
            ++operators;
            EXPECT_TRUE(file_exists(dir + e.name + "_test.cpp"))
                << "operator file " << e.name << ".cpp has no tests/unit/" << e.name << "_test.cpp";
        } else if (kind == "operator alias") {
            EXPECT_TRUE(file_exists(dir + "aliases_test.cpp")) << e.name;
        }
    }
    EXPECT_GT(operators, 0) << "no operator registered";
}

}  // namespace
