// The generated registry is consistent, whatever operators the tree (or a
// CVML_OPERATORS build) holds: every registered file names what it registers, every
// runnable operator has a CPU kernel, every CPU kernel has a runnable operator, aliases
// run nowhere, names are unique, and releasing unregisters everything.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "cvml.h"
#include "device/cpu/cpu_kernel.h"
#include "module/registry.h"
#include "module/serializer.h"
#include "operator/op_def.h"

namespace {

TEST(Registry, GeneratedTableNamesWhatItRegisters) {
    ASSERT_EQ(cvml_init(), CVML_OK) << cvml_last_error();
    std::set<std::string> seen;
    int operators = 0, kernels = 0;
    for (int i = 0; i < cvml_generated_registry_count; ++i) {
        const registry_entry& e = cvml_generated_registry[i];
        const std::string kind = e.kind, name = e.name;
        EXPECT_TRUE(seen.insert(kind + "/" + name).second) << "twice: " << kind << " " << name;
        if (kind == "operator") {
            ++operators;
            const op_def* op = op_registry_find(e.name);
            ASSERT_NE(op, nullptr) << "operator file " << name << " registers another name";
            EXPECT_TRUE(op->runnable) << name;
        } else if (kind == "cpu kernel") {
            ++kernels;
            EXPECT_NE(cpu_kernel_find(e.name), nullptr)
                << "kernel file " << name << " registers another name";
        } else if (kind == "serializer") {
            EXPECT_NE(serializer_registry_find(e.name), nullptr) << name;
        }
    }
    EXPECT_GT(operators, 0);
    EXPECT_EQ(kernels, cpu_kernel_count());
    // A left-out operator is neither registered nor in the table.
    for (int i = 0; i < cvml_left_out_operator_count; ++i)
        EXPECT_EQ(op_registry_find(cvml_left_out_operators[i]), nullptr);
    ASSERT_EQ(cvml_release(), CVML_OK);
}

TEST(Registry, OperatorsAndCpuKernelsMatch) {
    ASSERT_EQ(cvml_init(), CVML_OK) << cvml_last_error();
    std::set<std::string> names;
    int runnable = 0;
    for (int32_t i = 0; i < op_registry_count(); ++i) {
        const op_def* op = op_registry_at(i);
        ASSERT_NE(op, nullptr);
        EXPECT_TRUE(names.insert(op->name).second) << "registered twice: " << op->name;
        if (op->runnable) {
            ++runnable;
            const cpu_kernel* k = cpu_kernel_find(op->name);
            ASSERT_NE(k, nullptr) << "runnable operator without a CPU kernel: " << op->name;
            EXPECT_STREQ(k->op, op->name);
        } else {
            // Upstream's aliases verify and charge gas but no device claims them.
            EXPECT_EQ(cpu_kernel_find(op->name), nullptr) << op->name;
        }
    }
    // Every kernel belongs to a runnable operator: kernels are unique by name and as
    // many as the runnable operators, each of which has one.
    EXPECT_EQ(cpu_kernel_count(), runnable);
    int ops = 0, serializers = 0, devices = 0;
    ASSERT_EQ(cvml_registry_counts(&ops, &serializers, &devices), CVML_OK);
    EXPECT_EQ(ops, op_registry_count());
    EXPECT_GE(serializers, 1);
    EXPECT_GE(devices, 1);
    ASSERT_EQ(cvml_release(), CVML_OK);
    // Released means unregistered.
    EXPECT_EQ(op_registry_count(), 0);
    EXPECT_EQ(cpu_kernel_count(), 0);
}

/* A model naming an operator that is not registered gets upstream's message; one this
 * build left out gets told so. */
TEST(Registry, MissingOperatorMessage) {
    EXPECT_EQ(registry_operator_missing("no_such_op"), CVML_ERR_RUNTIME);
    EXPECT_STREQ(cvml_last_error(), "Operator no_such_op is not registered");
    for (int i = 0; i < cvml_left_out_operator_count; ++i) {
        EXPECT_EQ(registry_operator_missing(cvml_left_out_operators[i]), CVML_ERR_RUNTIME);
        EXPECT_NE(std::string(cvml_last_error()).find("left it out (CVML_OPERATORS)"),
                  std::string::npos);
    }
}

TEST(Registry, SuffixStripFollowsUpstream) {
    char out[64];
    const std::pair<const char*, const char*> cases[] = {
        {"conv2d_0", "conv2d"}, {"relu_7", "relu"},
        {"abs_", "abs"},        {"__add_symbol__", "__add_symbol_"},
        {"relu6", "relu6"},     {"dense_12", "dense"},
    };
    for (const auto& c : cases) {
        op_strip_suffix(c.first, out, sizeof out);
        EXPECT_EQ(std::string(out), c.second) << c.first;
    }
}

}  // namespace

namespace {
int no_load(const void*, size_t, const void*, size_t, ir_graph*) {
    return CVML_ERR_LOGIC;
}
int file_load_a(const void*, size_t, FILE*, size_t, ir_graph*) {
    return 11;
}
int file_load_b(const void*, size_t, FILE*, size_t, ir_graph*) {
    return 12;
}
}  // namespace

/* The params-file loaders kept beside the serializer table follow their serializers when
 * one before them is removed, and leave with them. */
TEST(Registry, ParamsFileLoadersFollowTheirSerializers) {
    ASSERT_EQ(cvml_init(), CVML_OK);
    const cvml_serializer a = {"test_a", no_load, nullptr};
    const cvml_serializer b = {"test_b", no_load, nullptr};
    const cvml_serializer c = {"test_c", no_load, nullptr};
    ASSERT_EQ(serializer_registry_add(&a), CVML_OK);
    ASSERT_EQ(serializer_registry_add(&b), CVML_OK);
    ASSERT_EQ(serializer_registry_add(&c), CVML_OK);
    ASSERT_EQ(serializer_set_params_file_loader(&a, file_load_a), CVML_OK);
    ASSERT_EQ(serializer_set_params_file_loader(&c, file_load_b), CVML_OK);
    EXPECT_NE(serializer_params_file_loader(serializer_registry_find("cvm")), nullptr);
    ASSERT_EQ(serializer_registry_remove(&a), CVML_OK);
    EXPECT_EQ(serializer_params_file_loader(&a), nullptr);
    EXPECT_EQ(serializer_params_file_loader(&b), nullptr);
    EXPECT_EQ(serializer_params_file_loader(&c), file_load_b);
    ASSERT_EQ(serializer_registry_remove(&c), CVML_OK);
    const cvml_serializer d = {"test_d", no_load, nullptr};
    ASSERT_EQ(serializer_registry_add(&d), CVML_OK);  // takes a freed slot: no loader
    EXPECT_EQ(serializer_params_file_loader(&d), nullptr);
    EXPECT_NE(serializer_set_params_file_loader(&c, file_load_a), CVML_OK);  // not registered
    ASSERT_EQ(serializer_registry_remove(&b), CVML_OK);
    ASSERT_EQ(serializer_registry_remove(&d), CVML_OK);
    ASSERT_EQ(cvml_release(), CVML_OK);
}
