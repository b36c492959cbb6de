// The generated registry: every operator of the CVM set is registered with a CPU
// kernel, upstream's aliases verify but cannot run, and nothing else is there.
#include <gtest/gtest.h>

#include <string>

#include "cvml.h"
#include "device/cpu/cpu_kernel.h"
#include "module/serializer.h"
#include "operator/op_def.h"

namespace {

const char* const kOperators[] = {
    "conv2d",
    "dense",
    "max_pool2d",
    "upsampling",
    "relu",
    "abs",
    "negative",
    "cvm_precision",
    "clip",
    "cvm_clip",
    "cvm_right_shift",
    "cvm_left_shift",
    "elemwise_add",
    "elemwise_sub",
    "broadcast_add",
    "broadcast_sub",
    "broadcast_mul",
    "broadcast_div",
    "broadcast_max",
    "broadcast_greater",
    "sum",
    "max",
    "flatten",
    "reshape",
    "squeeze",
    "expand_dims",
    "transpose",
    "concatenate",
    "repeat",
    "tile",
    "strided_slice",
    "slice_like",
    "take",
    "cvm_lut",
    "where",
    "get_valid_counts",
    "non_max_suppression",
};
const char* const kAliases[] = {
    "__add_symbol__",
    "add",
    "__sub_symbol__",
    "subtract",
    "__mul_symbol__",
    "multiply",
    "__div_symbol__",
    "__max_symbol__",
    "__greater_symbol__",
    "nn.relu",
    "vision.non_max_suppression",
};
constexpr int kOperatorCount = sizeof kOperators / sizeof kOperators[0];
constexpr int kAliasCount = sizeof kAliases / sizeof kAliases[0];

TEST(Registry, EveryOperatorHasADefinitionAndACpuKernel) {
    ASSERT_EQ(cvml_init(), CVML_OK) << cvml_last_error();
    for (const char* name : kOperators) {
        const op_def* op = op_registry_find(name);
        ASSERT_NE(op, nullptr) << name;
        EXPECT_TRUE(op->runnable) << name;
        EXPECT_NE(cpu_kernel_find(name), nullptr) << name;
    }
    for (const char* name : kAliases) {
        const op_def* op = op_registry_find(name);
        ASSERT_NE(op, nullptr) << name;
        EXPECT_FALSE(op->runnable) << name;
        EXPECT_EQ(cpu_kernel_find(name), nullptr) << name;
    }
    // Not registered in upstream's deployed runtime.
    EXPECT_EQ(op_registry_find("pad"), nullptr);
    EXPECT_EQ(op_registry_find("sqrt"), nullptr);
    EXPECT_EQ(op_registry_count(), kOperatorCount + kAliasCount);
    EXPECT_EQ(cpu_kernel_count(), kOperatorCount);
    int ops = 0, serializers = 0, devices = 0;
    ASSERT_EQ(cvml_registry_counts(&ops, &serializers, &devices), CVML_OK);
    EXPECT_EQ(ops, kOperatorCount + kAliasCount);
    EXPECT_EQ(serializers, 1);
    ASSERT_EQ(cvml_release(), CVML_OK);
    // Released means unregistered.
    EXPECT_EQ(op_registry_count(), 0);
    EXPECT_EQ(cpu_kernel_count(), 0);
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
