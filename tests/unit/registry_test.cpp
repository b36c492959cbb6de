// The generated tables are consistent, whatever operators the tree (or a
// CVML_OPERATORS build) holds: the operator and CPU kernel tables are sorted by name
// (their lookup is a binary search) and find every row, every runnable operator has a
// CPU kernel and every CPU kernel a runnable operator of its name, aliases run nowhere,
// left-out operators are absent, and the run-time registrations (serializers, devices)
// name what they register.
#include <gtest/gtest.h>

#include <string.h>

#include <string>

#include "cvml.h"
#include "device/cpu/cpu_kernel.h"
#include "module/registry.h"
#include "module/serializer.h"
#include "operator/op_def.h"

namespace {

TEST(Registry, TablesAreSortedAndFindEveryRow) {
    ASSERT_GT(cvml_operator_table_count, 0);
    for (int32_t i = 0; i < cvml_operator_table_count; ++i) {
        const op_def* op = cvml_operator_table[i];
        ASSERT_NE(op, nullptr);
        if (i > 0) {
            EXPECT_LT(strcmp(cvml_operator_table[i - 1]->name, op->name), 0)
                << "operator table out of order at " << op->name;
        }
        EXPECT_EQ(op_registry_find(op->name), op) << op->name;
        EXPECT_EQ(op_registry_at(i), op);
    }
    EXPECT_EQ(op_registry_count(), cvml_operator_table_count);
    for (int32_t i = 0; i < cvml_cpu_kernel_table_count; ++i) {
        const cpu_kernel* k = cvml_cpu_kernel_table[i];
        ASSERT_NE(k, nullptr);
        ASSERT_NE(k->run, nullptr) << k->op;
        if (i > 0) {
            EXPECT_LT(strcmp(cvml_cpu_kernel_table[i - 1]->op, k->op), 0)
                << "CPU kernel table out of order at " << k->op;
        }
        EXPECT_EQ(cpu_kernel_find(k->op), k) << k->op;
    }
    EXPECT_EQ(op_registry_find("no_such_op"), nullptr);
    EXPECT_EQ(op_registry_find(""), nullptr);
    EXPECT_EQ(cpu_kernel_find("zzz"), nullptr);
    // A left-out operator is not in the table.
    for (int i = 0; i < cvml_left_out_operator_count; ++i)
        EXPECT_EQ(op_registry_find(cvml_left_out_operators[i]), nullptr);
}

TEST(Registry, RunTimeTableNamesWhatItRegisters) {
    ASSERT_EQ(cvml_init(), CVML_OK) << cvml_last_error();
    int serializers = 0;
    for (int i = 0; i < cvml_generated_registry_count; ++i) {
        const registry_entry& e = cvml_generated_registry[i];
        const std::string kind = e.kind, name = e.name;
        EXPECT_TRUE(kind == "serializer" || kind == "device") << kind << " " << name;
        if (kind == "serializer") {
            ++serializers;
            EXPECT_NE(serializer_registry_find(e.name), nullptr) << name;
        }
    }
    EXPECT_GE(serializers, 1);
    ASSERT_EQ(cvml_release(), CVML_OK);
}

TEST(Registry, OperatorsAndCpuKernelsMatch) {
    ASSERT_EQ(cvml_init(), CVML_OK) << cvml_last_error();
    int runnable = 0;
    for (int32_t i = 0; i < op_registry_count(); ++i) {
        const op_def* op = op_registry_at(i);
        ASSERT_NE(op, nullptr);
        if (!op->alias) {
            ++runnable;
            const cpu_kernel* k = cpu_kernel_find(op->name);
            ASSERT_NE(k, nullptr) << "runnable operator without a CPU kernel: " << op->name;
            EXPECT_STREQ(k->op, op->name);
        } else {
            // Upstream's aliases verify and charge gas but no device claims them.
            EXPECT_EQ(cpu_kernel_find(op->name), nullptr) << op->name;
            EXPECT_EQ(op->may_share_input_storage, 0) << op->name;
        }
    }
    // Every kernel belongs to a runnable operator of its name.
    for (int32_t i = 0; i < cpu_kernel_count(); ++i) {
        const op_def* op = op_registry_find(cvml_cpu_kernel_table[i]->op);
        ASSERT_NE(op, nullptr) << "CPU kernel without an operator: "
                               << cvml_cpu_kernel_table[i]->op;
        EXPECT_FALSE(op->alias) << op->name;
    }
    EXPECT_EQ(cpu_kernel_count(), runnable);
    int ops = 0, serializers = 0, devices = 0;
    ASSERT_EQ(cvml_registry_counts(&ops, &serializers, &devices), CVML_OK);
    EXPECT_EQ(ops, op_registry_count());
    EXPECT_GE(serializers, 1);
    EXPECT_GE(devices, 1);
    ASSERT_EQ(cvml_release(), CVML_OK);
    // The tables are constant: a release leaves them as they are.
    EXPECT_EQ(op_registry_count(), ops);
    EXPECT_EQ(cpu_kernel_count(), runnable);
}

/* An alias is its target's definition under its own name, run nowhere. */
TEST(Registry, AliasesCopyTheirTargets) {
    const std::pair<const char*, const char*> aliases[] = {
        {"add", "broadcast_add"}, {"nn.relu", "relu"}, {"__div_symbol__", "broadcast_div"}};
    for (const auto& a : aliases) {
        const op_def* alias = op_registry_find(a.first);
        const op_def* target = op_registry_find(a.second);
        if (!target) {  // a CVML_OPERATORS build without it drops its aliases too
            EXPECT_EQ(alias, nullptr) << a.first;
            continue;
        }
        ASSERT_NE(alias, nullptr) << a.first;
        EXPECT_STREQ(alias->name, a.first);
        EXPECT_TRUE(alias->alias);
        EXPECT_FALSE(target->alias);
        EXPECT_EQ(alias->infer_shape, target->infer_shape) << a.first;
        EXPECT_EQ(alias->infer_precision, target->infer_precision) << a.first;
        EXPECT_EQ(alias->step, target->step) << a.first;
    }
}

/* A model naming an operator that is not registered gets upstream's message; one this
 * build left out gets told so. */
TEST(Registry, MissingOperatorMessage) {
    EXPECT_EQ(op_registry_missing("no_such_op"), CVML_ERR_RUNTIME);
    EXPECT_STREQ(cvml_last_error(), "Operator no_such_op is not registered");
    for (int i = 0; i < cvml_left_out_operator_count; ++i) {
        EXPECT_EQ(op_registry_missing(cvml_left_out_operators[i]), CVML_ERR_RUNTIME);
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
