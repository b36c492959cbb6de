// The plugin ABI's model accessors (cvml_ir_api, source/module/plugin_ir.cpp) on a real
// graph: what a C plugin reads of nodes, tensors and parsed parameters, defaults
// included, and NULL / 0 / -1 for indices and names that do not exist.
#include <gtest/gtest.h>

#include <string>

#include "cvml.h"
#include "cvml_plugin.h"
#include "module/device.h"
#include "module/graph_handle.h"

#include "module/plugin_ir.h"

namespace {

const std::string kCases = std::string(CVML_SOURCE_DIR) + "/tests/conformance/cases/";

struct Loaded {
    cvml_context* ctx = nullptr;
    cvml_graph* g = nullptr;
    explicit Loaded(const std::string& name) {
        EXPECT_EQ(cvml_context_create(&ctx), CVML_OK);
        const std::string dir = kCases + name;
        EXPECT_EQ(cvml_graph_load_file(ctx, "cvm", (dir + "/model.json").c_str(),
                                       (dir + "/model.params").c_str(), &g),
                  CVML_OK)
            << cvml_last_error();
    }
    ~Loaded() {
        cvml_graph_release(g);
        cvml_context_release(ctx);
    }
    const cvml_ir_node* node(const char* op) const {
        const cvml_ir_api* ir = plugin_ir_api();
        for (int32_t i = 0; i < ir->graph_node_count(g->ir); ++i) {
            const cvml_ir_node* n = ir->graph_node(g->ir, i);
            if (ir->node_op(n) && std::string(ir->node_op(n)) == op) return n;
        }
        return nullptr;
    }
};

class PluginIr : public ::testing::Test {
  protected:
    void SetUp() override { ASSERT_EQ(cvml_init(), CVML_OK); }
    void TearDown() override { EXPECT_EQ(cvml_release(), CVML_OK); }
    const cvml_ir_api* ir = plugin_ir_api();
};

TEST_F(PluginIr, TableIsVersioned) {
    EXPECT_EQ(ir->struct_size, sizeof(cvml_ir_api));
    EXPECT_EQ(ir->abi_version, CVML_PLUGIN_ABI_VERSION);
    EXPECT_TRUE(CVML_PLUGIN_HAS(cvml_ir_api, ir, tensor_storage));
}

TEST_F(PluginIr, ConvolutionNodeTensorsAndParameters) {
    Loaded m("000_conv2d_basic");
    ASSERT_NE(m.g, nullptr);
    const cvml_ir_node* conv = m.node("conv2d");
    ASSERT_NE(conv, nullptr);
    EXPECT_STREQ(ir->node_name(conv), "conv2d_0");
    ASSERT_EQ(ir->node_input_count(conv), 3);
    ASSERT_EQ(ir->node_output_count(conv), 1);
    const cvml_ir_tensor* x = ir->node_input(m.g->ir, conv, 0);
    const cvml_ir_tensor* w = ir->node_input(m.g->ir, conv, 1);
    const cvml_ir_tensor* y = ir->node_output(m.g->ir, conv, 0);
    ASSERT_TRUE(x && w && y);
    EXPECT_EQ(ir->tensor_ndim(x), 4);
    EXPECT_EQ(ir->tensor_dim(x, 2), 9);
    EXPECT_EQ(ir->tensor_dim(x, 6), 0);  // past ndim
    EXPECT_EQ(ir->tensor_element_count(w), 6 * 4 * 1 * 2);
    EXPECT_EQ(ir->tensor_precision(x), 8);
    EXPECT_FALSE(ir->tensor_is_const(x));
    EXPECT_TRUE(ir->tensor_is_const(w));
    EXPECT_EQ(ir->graph_tensor(m.g->ir, ir->tensor_index(y)), y);
    EXPECT_STREQ(ir->tensor_name(y), "conv2d_0");

    int64_t v[4] = {0, 0, 0, 0};
    EXPECT_EQ(ir->node_param_ints(conv, "padding", v, 4), 2);
    EXPECT_EQ(v[0], 2);
    EXPECT_EQ(v[1], 1);
    EXPECT_EQ(ir->node_param_ints(conv, "channels", v, 4), 1);
    EXPECT_EQ(v[0], 6);
    EXPECT_EQ(ir->node_param_ints(conv, "use_bias", v, 4), 1);
    EXPECT_EQ(v[0], 1);
    // Not in the file: the definition's default.
    EXPECT_EQ(ir->node_param_ints(conv, "groups", v, 4), 1);
    EXPECT_EQ(v[0], 1);
    EXPECT_STREQ(ir->node_param_string(conv, "layout"), "NCHW");
    // A capacity smaller than the tuple: the count, and only what fits is written.
    v[1] = -7;
    EXPECT_EQ(ir->node_param_ints(conv, "strides", v, 1), 2);
    EXPECT_EQ(v[1], -7);
    EXPECT_EQ(ir->node_param_ints(conv, "no_such", v, 4), -1);
    EXPECT_EQ(ir->node_param_ints(conv, "layout", v, 4), -1);  // a string
    EXPECT_EQ(ir->node_param_string(conv, "channels"), nullptr);
    cvml_step step;
    EXPECT_EQ(ir->node_step(m.g->ir, conv, 0, &step), 0);  // not an element-wise step
    // Indices out of range.
    EXPECT_EQ(ir->node_input(m.g->ir, conv, 3), nullptr);
    EXPECT_EQ(ir->node_output(m.g->ir, conv, -1), nullptr);
    EXPECT_EQ(ir->graph_node(m.g->ir, ir->graph_node_count(m.g->ir)), nullptr);
    EXPECT_EQ(ir->tensor_const_value(x, 0), 0);   // not a constant
    EXPECT_EQ(ir->tensor_const_value(w, 48), 0);  // past its end
}

TEST_F(PluginIr, StepsAndOptionalParameters) {
    Loaded clip("013_clip");
    const cvml_ir_node* c = clip.node("clip");
    ASSERT_NE(c, nullptr);
    cvml_step step;
    ASSERT_EQ(ir->node_step(clip.g->ir, c, 0, &step), 1);
    EXPECT_EQ(step.kind, CVML_STEP_CLIP);
    int64_t lo = 0, hi = 0;
    ASSERT_EQ(ir->node_param_ints(c, "a_min", &lo, 1), 1);
    ASSERT_EQ(ir->node_param_ints(c, "a_max", &hi, 1), 1);
    EXPECT_EQ(step.a, lo);
    EXPECT_EQ(step.b, hi);
    // The variable node has no operator and no parameters.
    const cvml_ir_node* data = ir->graph_node(clip.g->ir, 0);
    EXPECT_EQ(ir->node_op(data), nullptr);
    EXPECT_EQ(ir->node_param_ints(data, "a_min", &lo, 1), -1);
}

int no_supports(cvml_device*, const cvml_ir_graph*, const cvml_ir_node*) {
    return 0;
}
int no_prerun(cvml_device*, cvml_ir_graph*, cvml_ir_subgraph*, const cvml_device_options*) {
    return CVML_OK;
}
int no_run(cvml_device*, cvml_ir_graph*, cvml_ir_subgraph*) {
    return CVML_OK;
}
void no_postrun(cvml_device*, cvml_ir_graph*, cvml_ir_subgraph*) {}

/* A device struct as a plugin of ABI `major.minor` with `size` bytes would register it;
 * island_work_per_element holds 7 whether or not `size` reaches it. */
cvml_device device_of(uint32_t major, uint32_t minor, size_t size) {
    cvml_device d = {};
    d.struct_size = static_cast<uint32_t>(size);
    d.abi_version = CVML_PLUGIN_ABI_MAKE(major, minor);
    d.name = "abi_probe";
    d.version = "0";
    d.supports = no_supports;
    d.prerun = no_prerun;
    d.run = no_run;
    d.postrun = no_postrun;
    d.island_work_per_element = 7;
    return d;
}

/* The minor-version rules of cvml_plugin.h, on the device registry. */
TEST_F(PluginIr, DeviceStructsFollowTheVersionRules) {
    const size_t v20 = offsetof(cvml_device, island_work_per_element);
    // An older minor (2.0's layout): accepted, the field it lacks reads as absent.
    cvml_device old = device_of(CVML_PLUGIN_ABI_MAJOR, 0, v20);
    ASSERT_EQ(device_registry_add(&old), CVML_OK) << cvml_last_error();
    EXPECT_EQ(device_island_work(device_registry_find("abi_probe")), 0u);
    ASSERT_EQ(device_registry_remove(&old), CVML_OK);
    // The current layout, and a newer minor with a longer struct: accepted, read.
    cvml_device now = device_of(CVML_PLUGIN_ABI_MAJOR, CVML_PLUGIN_ABI_MINOR, sizeof(cvml_device));
    ASSERT_EQ(device_registry_add(&now), CVML_OK) << cvml_last_error();
    EXPECT_EQ(device_island_work(&now), 7u);
    ASSERT_EQ(device_registry_remove(&now), CVML_OK);
    struct longer {
        cvml_device base;
        uint64_t appended;
    } next = {device_of(CVML_PLUGIN_ABI_MAJOR, CVML_PLUGIN_ABI_MINOR + 1, sizeof(longer)), 1};
    ASSERT_EQ(device_registry_add(&next.base), CVML_OK) << cvml_last_error();
    EXPECT_EQ(device_island_work(&next.base), 7u);
    ASSERT_EQ(device_registry_remove(&next.base), CVML_OK);
    // Another major, or a struct shorter than 2.0's: refused, saying which.
    cvml_device major = device_of(CVML_PLUGIN_ABI_MAJOR + 1, 0, sizeof(cvml_device));
    EXPECT_EQ(device_registry_add(&major), CVML_ERR_RUNTIME);
    EXPECT_NE(std::string(cvml_last_error()).find("ABI 3.0"), std::string::npos)
        << cvml_last_error();
    cvml_device shorter = device_of(CVML_PLUGIN_ABI_MAJOR, 0, v20 - sizeof(void*));
    EXPECT_EQ(device_registry_add(&shorter), CVML_ERR_RUNTIME);
    EXPECT_EQ(device_registry_find("abi_probe"), nullptr);
}

}  // namespace
