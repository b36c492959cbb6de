// The real MRT-quantized CIFAR ResNet-20 (2019 layout) from ../shared/models.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "conformance_util.h"
#include "cvm_api.h"
#include "cvml.h"

namespace {

const std::string kModelDir = std::string(CVML_SHARED_DIR) + "/models/cifar_resnet20_2019";

/* cpu.txt: ndim, then the shape, then one int8 per input byte. */
std::string read_input(const std::string& path, std::vector<long>* shape) {
    std::istringstream in(conformance::read_file(path));
    long ndim = 0;
    in >> ndim;
    for (long i = 0; i < ndim; ++i) {
        long d = 0;
        in >> d;
        shape->push_back(d);
    }
    std::string bytes;
    long v = 0;
    while (in >> v) bytes.push_back(static_cast<char>(static_cast<signed char>(v)));
    return bytes;
}

class RealModel : public ::testing::Test {
  protected:
    void SetUp() override {
        if (!conformance::file_exists(kModelDir + "/symbol"))
            GTEST_SKIP() << "the shared model directory " << kModelDir
                         << " is absent (../shared not mounted); real-model test skipped";
        graph_ = conformance::read_file(kModelDir + "/symbol");
        params_ = conformance::read_file(kModelDir + "/params");
        std::vector<long> shape;
        input_ = read_input(kModelDir + "/cpu.txt", &shape);
        ASSERT_EQ(shape, (std::vector<long>{3, 32, 32}));
        ASSERT_EQ(input_.size(), 3072u);
    }
    std::string graph_, params_, input_;
};

TEST_F(RealModel, GasFromGraphFile) {
    unsigned long long gas = 0;
    ASSERT_EQ(CVMAPIGetGasFromGraphFile(graph_.c_str(), &gas), 0) << cvml_last_error();
    EXPECT_EQ(gas, 137396206ull);
}

TEST_F(RealModel, LoadsAndComputesTheChainResult) {
    void* net = nullptr;
    ASSERT_EQ(CVMAPILoadModel(graph_.data(), static_cast<int>(graph_.size()), params_.data(),
                              static_cast<int>(params_.size()), &net, 0, 0),
              0)
        << cvml_last_error();
    unsigned long long gas = 0, in_len = 0, in_type = 0, out_len = 0, out_type = 0;
    EXPECT_EQ(CVMAPIGetGasFromModel(net, &gas), 0);
    EXPECT_EQ(gas, 137396206ull);
    EXPECT_EQ(CVMAPIGetInputLength(net, &in_len), 0);
    EXPECT_EQ(CVMAPIGetInputTypeSize(net, &in_type), 0);
    EXPECT_EQ(CVMAPIGetOutputLength(net, &out_len), 0);
    EXPECT_EQ(CVMAPIGetOutputTypeSize(net, &out_type), 0);
    EXPECT_EQ(in_len, 3072u);
    EXPECT_EQ(in_type, 1u);
    EXPECT_EQ(out_len, 10u);
    EXPECT_EQ(out_type, 1u);
    char version[32] = {0}, method[32] = {1};
    EXPECT_EQ(CVMAPIGetVersion(net, version), 0);
    EXPECT_STREQ(version, "cvm_1.0.0");  // the 2019 layout has no version key
    EXPECT_EQ(CVMAPIGetPreprocessMethod(net, method), 0);
    EXPECT_STREQ(method, "");
    std::string out(10, '\0');
    ASSERT_EQ(CVMAPIInference(net, &input_[0], 3072, &out[0]), 0) << cvml_last_error();
    const signed char want[10] = {20, 53, -18, -4, -48, -17, -32, -29, -14, 89};
    for (int i = 0; i < 10; ++i) EXPECT_EQ(static_cast<signed char>(out[i]), want[i]) << i;
    EXPECT_EQ(CVMAPIFreeModel(net), 0);
}

TEST_F(RealModel, SaveRoundTripKeepsTheModel) {
    ASSERT_EQ(cvml_init(), 0);
    cvml_context* ctx = nullptr;
    ASSERT_EQ(cvml_context_create(&ctx), 0);
    cvml_graph* g = nullptr;
    ASSERT_EQ(cvml_graph_load_memory(ctx, "cvm", graph_.data(), graph_.size(), params_.data(),
                                     params_.size(), &g),
              0)
        << cvml_last_error();
    void *gd = nullptr, *pd = nullptr;
    size_t gs = 0, ps = 0;
    ASSERT_EQ(cvml_graph_save_memory(g, "cvm", &gd, &gs, &pd, &ps), 0) << cvml_last_error();
    // The params blob keeps every array's bytes: same size as the original file
    // (names, headers and int8/int32 widths included).
    EXPECT_EQ(ps, params_.size());
    cvml_graph* h = nullptr;
    ASSERT_EQ(cvml_graph_load_memory(ctx, "cvm", gd, gs, pd, ps, &h), 0) << cvml_last_error();
    uint64_t gas = 0;
    EXPECT_EQ(cvml_graph_gas(h, &gas), 0);
    EXPECT_EQ(gas, 137396206ull);
    std::string out(10, '\0');
    int rc = cvml_graph_run_bytes(h, input_.data(), input_.size(), &out[0], out.size());
    EXPECT_EQ(rc, 0) << cvml_last_error();
    const signed char want[10] = {20, 53, -18, -4, -48, -17, -32, -29, -14, 89};
    for (int i = 0; rc == 0 && i < 10; ++i) EXPECT_EQ(static_cast<signed char>(out[i]), want[i]);
    cvml_free(gd);
    cvml_free(pd);
    cvml_graph_release(h);
    cvml_graph_release(g);
    cvml_context_release(ctx);
    cvml_release();
}

}  // namespace
