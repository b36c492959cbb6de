// The upstream API and the byte I/O calls at their edges: NULL arguments, zero and
// wrong lengths, every truncation of a model's files, unsupported devices.
#include <gtest/gtest.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

#include "conformance_util.h"
#include "cvm_api.h"
#include "cvml.h"

namespace {

struct model_files {
    std::string graph, params, input, output;
};

model_files basic_case() {
    std::string dir = conformance::cases_dir() + "/000_conv2d_basic";
    return {
        conformance::read_file(dir + "/model.json"), conformance::read_file(dir + "/model.params"),
        conformance::read_file(dir + "/input.bin"), conformance::read_file(dir + "/output.bin")};
}

int load(const std::string& graph, const std::string& params, void** net, int device = 0) {
    return CVMAPILoadModel(graph.data(), static_cast<int>(graph.size()), params.data(),
                           static_cast<int>(params.size()), net, device, 0);
}

TEST(UpstreamApiEdges, NullArguments) {
    model_files m = basic_case();
    void* net = nullptr;
    // A NULL net is a runtime error, as every other NULL argument (issue 18).
    EXPECT_EQ(CVMAPILoadModel(m.graph.data(), static_cast<int>(m.graph.size()), m.params.data(),
                              static_cast<int>(m.params.size()), nullptr, 0, 0),
              2);
    EXPECT_EQ(CVMAPILoadModel(nullptr, 10, m.params.data(), static_cast<int>(m.params.size()), &net,
                              0, 0),
              1);
    EXPECT_EQ(net, nullptr);
    EXPECT_EQ(
        CVMAPILoadModel(m.graph.data(), static_cast<int>(m.graph.size()), nullptr, 0, &net, 0, 0),
        1)
        << "a missing params blob is upstream's empty-blob logic error";
    EXPECT_EQ(CVMAPILoadModel(m.graph.data(), -1, m.params.data(), 10, &net, 0, 0), 1);
    unsigned long long v = 0;
    char s[32];
    EXPECT_NE(CVMAPIGetGasFromGraphFile(nullptr, &v), 0);
    EXPECT_NE(CVMAPIGetGasFromGraphFile("{}", nullptr), 0);
    EXPECT_NE(CVMAPIGetInputLength(nullptr, &v), 0);
    EXPECT_NE(CVMAPIGetOutputLength(nullptr, &v), 0);
    EXPECT_NE(CVMAPIGetInputTypeSize(nullptr, &v), 0);
    EXPECT_NE(CVMAPIGetOutputTypeSize(nullptr, &v), 0);
    EXPECT_NE(CVMAPIGetStorageSize(nullptr, &v), 0);
    EXPECT_NE(CVMAPIGetGasFromModel(nullptr, &v), 0);
    EXPECT_NE(CVMAPIGetVersion(nullptr, s), 0);
    EXPECT_NE(CVMAPIGetPreprocessMethod(nullptr, s), 0);
    EXPECT_NE(CVMAPIInference(nullptr, s, 1, s), 0);
    EXPECT_EQ(CVMAPIFreeModel(nullptr), 0);

    ASSERT_EQ(load(m.graph, m.params, &net), 0) << cvml_last_error();
    EXPECT_NE(CVMAPIGetInputLength(net, nullptr), 0);
    EXPECT_NE(CVMAPIGetGasFromModel(net, nullptr), 0);
    EXPECT_NE(CVMAPIGetVersion(net, nullptr), 0);
    EXPECT_NE(CVMAPIInference(net, nullptr, 0, s), 0);
    EXPECT_NE(CVMAPIInference(net, s, 1, nullptr), 0);
    EXPECT_EQ(CVMAPIFreeModel(net), 0);
}

TEST(UpstreamApiEdges, Devices) {
    model_files m = basic_case();
    void* net = nullptr;
    EXPECT_EQ(load(m.graph, m.params, &net, 3), 2);
    EXPECT_EQ(load(m.graph, m.params, &net, -1), 2);
    EXPECT_EQ(net, nullptr);
    int ops = 0, sers = 0, devs = 0;
    ASSERT_EQ(cvml_init(), 0);
    cvml_registry_counts(&ops, &sers, &devs);
    cvml_context* ctx = nullptr;
    cvml_context_create(&ctx);
    const char* cuda[1] = {"cuda"};
    bool have_cuda = cvml_context_set_devices(ctx, cuda, 1) == 0;
    cvml_context_release(ctx);
    cvml_release();
    int rc = load(m.graph, m.params, &net, 1);
    if (have_cuda) {
        EXPECT_EQ(rc, 0) << cvml_last_error();
        CVMAPIFreeModel(net);
    } else {
        EXPECT_EQ(rc, 2) << "GPU without a CUDA device is a runtime error";
    }
    // FORMAL runs on the CPU.
    ASSERT_EQ(load(m.graph, m.params, &net, 2), 0) << cvml_last_error();
    std::string out(m.output.size(), '\0');
    ASSERT_EQ(CVMAPIInference(net, &m.input[0], static_cast<int>(m.input.size()), &out[0]), 0);
    EXPECT_TRUE(out == m.output);
    CVMAPIFreeModel(net);
}

TEST(UpstreamApiEdges, LengthsAndEmptyInputs) {
    model_files m = basic_case();
    unsigned long long gas = 0;
    EXPECT_EQ(CVMAPIGetGasFromGraphFile("", &gas), 2) << "empty JSON is a parse error";
    void* net = nullptr;
    EXPECT_EQ(load("", m.params, &net), 2);
    EXPECT_EQ(load(m.graph, "", &net), 1);
    ASSERT_EQ(load(m.graph, m.params, &net), 0);
    std::string out(m.output.size(), '\0');
    std::string in = m.input;
    EXPECT_EQ(CVMAPIInference(net, &in[0], 0, &out[0]), 1);
    EXPECT_EQ(CVMAPIInference(net, &in[0], static_cast<int>(in.size()) - 1, &out[0]), 1);
    EXPECT_EQ(CVMAPIInference(net, &in[0], -5, &out[0]), 1);
    char version[32], method[32];
    EXPECT_EQ(CVMAPIGetVersion(net, version), 0);
    EXPECT_STREQ(version, "cvm_1.0.0");
    EXPECT_EQ(CVMAPIGetPreprocessMethod(net, method), 0);
    EXPECT_STREQ(method, "");
    unsigned long long storage = 0;
    EXPECT_EQ(CVMAPIGetStorageSize(net, &storage), 0);
    EXPECT_EQ(storage, 1896u);  // meta.json upstream.storage_size
    CVMAPIFreeModel(net);
}

TEST(UpstreamApiEdges, EveryTruncatedGraphFails) {
    model_files m = basic_case();
    for (size_t n = 0; n < m.graph.size(); ++n) {
        std::string cut = m.graph.substr(0, n);
        // Trailing whitespace after the closing brace still parses.
        if (cut.find_last_of('}') == cut.size() - 1 && n + 2 >= m.graph.size()) continue;
        void* net = nullptr;
        int rc = load(cut, m.params, &net);
        EXPECT_TRUE(rc == 1 || rc == 2) << "prefix " << n << " rc " << rc;
        if (rc == 0) CVMAPIFreeModel(net);
        unsigned long long gas = 0;
        EXPECT_NE(CVMAPIGetGasFromGraphFile(cut.c_str(), &gas), 0) << "prefix " << n;
    }
}

TEST(UpstreamApiEdges, EveryTruncatedParamsBlobFails) {
    model_files m = basic_case();
    for (size_t n = 0; n < m.params.size(); ++n) {
        void* net = nullptr;
        int rc = load(m.graph, m.params.substr(0, n), &net);
        EXPECT_TRUE(rc == 1 || rc == 2) << "prefix " << n << " rc " << rc;
        if (rc == 0) CVMAPIFreeModel(net);
    }
    // Trailing bytes after the last array are ignored.
    void* net = nullptr;
    EXPECT_EQ(load(m.graph, m.params + std::string(7, '\x5a'), &net), 0) << cvml_last_error();
    CVMAPIFreeModel(net);
}

TEST(ByteIo, ArgumentChecks) {
    model_files m = basic_case();
    ASSERT_EQ(cvml_init(), 0);
    cvml_context* ctx = nullptr;
    ASSERT_EQ(cvml_context_create(&ctx), 0);
    cvml_graph* g = nullptr;
    ASSERT_EQ(cvml_graph_load_memory(ctx, "cvm", m.graph.data(), m.graph.size(), m.params.data(),
                                     m.params.size(), &g),
              0)
        << cvml_last_error();
    size_t len = 0;
    int type = 0;
    EXPECT_NE(cvml_graph_input_bytes(nullptr, &len, &type), 0);
    EXPECT_NE(cvml_graph_output_bytes(g, nullptr, &type), 0);
    ASSERT_EQ(cvml_graph_output_bytes(g, &len, &type), 0);
    EXPECT_EQ(len, m.output.size());
    std::string out(len + 1, '\0');
    EXPECT_EQ(cvml_graph_run_bytes(g, m.input.data(), m.input.size(), &out[0], len + 1), 1)
        << "the output buffer must hold exactly the output length";
    EXPECT_EQ(cvml_graph_run_bytes(g, m.input.data(), m.input.size() + 1, &out[0], len), 1);
    EXPECT_NE(cvml_graph_run_bytes(g, nullptr, 0, &out[0], len), 0);
    EXPECT_EQ(cvml_graph_run_bytes(g, m.input.data(), m.input.size(), &out[0], len), 0);
    EXPECT_EQ(out.substr(0, len), m.output);

    void *gd = nullptr, *pd = nullptr;
    size_t gs = 0, ps = 0;
    EXPECT_NE(cvml_graph_save_memory(nullptr, "cvm", &gd, &gs, &pd, &ps), 0);
    EXPECT_NE(cvml_graph_save_memory(g, "cvm", nullptr, &gs, &pd, &ps), 0);
    EXPECT_EQ(cvml_graph_save_memory(g, "nope", &gd, &gs, &pd, &ps), 1);
    EXPECT_EQ(gd, nullptr);
    EXPECT_NE(cvml_graph_save_file(g, "cvm", nullptr, "x"), 0);
    EXPECT_EQ(
        cvml_graph_save_file(g, "cvm", "/nonexistent-dir/a.json", "/nonexistent-dir/a.params"), 2);
    cvml_free(nullptr);
    cvml_graph_release(g);
    cvml_context_release(ctx);
    cvml_release();
}

/* A graph made with the builder is saved with its own storage plan and loads back. */
TEST(ByteIo, BuiltGraphSavesAndLoads) {
    ASSERT_EQ(cvml_init(), 0);
    cvml_context* ctx = nullptr;
    ASSERT_EQ(cvml_context_create(&ctx), 0);
    cvml_graph* g = nullptr;
    ASSERT_EQ(cvml_graph_create(ctx, &g), 0);
    int32_t dims[2] = {2, 3};
    cvml_tensor *x = nullptr, *y = nullptr;
    ASSERT_EQ(cvml_graph_add_input(g, "data", 2, dims, 8, &x), 0);
    ASSERT_EQ(cvml_graph_add_node(g, "relu", "relu_0", nullptr, nullptr, 0, &x, 1, &y, 1), 0)
        << cvml_last_error();
    ASSERT_EQ(cvml_graph_set_outputs(g, &y, 1), 0);
    ASSERT_EQ(cvml_graph_verify(g), 0) << cvml_last_error();
    std::string dir = ::testing::TempDir();
    // One pair of files per process: ctest runs this binary at several SIMD levels at once.
    const std::string stem = dir + "/cvml_built_" + std::to_string(getpid());
    std::string gp = stem + ".json", pp = stem + ".params";
    ASSERT_EQ(cvml_graph_save_file(g, "cvm", gp.c_str(), pp.c_str()), 0) << cvml_last_error();
    cvml_graph* h = nullptr;
    ASSERT_EQ(cvml_graph_load_file(ctx, "cvm", gp.c_str(), pp.c_str(), &h), 0) << cvml_last_error();
    const signed char in[6] = {-3, 5, -127, 127, 0, 9};
    signed char out[6] = {0};
    ASSERT_EQ(cvml_graph_run_bytes(h, in, 6, out, 6), 0) << cvml_last_error();
    const signed char want[6] = {0, 5, 0, 127, 0, 9};
    for (int i = 0; i < 6; ++i) EXPECT_EQ(out[i], want[i]);
    remove(gp.c_str());
    remove(pp.c_str());
    cvml_graph_release(h);
    cvml_graph_release(g);
    cvml_context_release(ctx);
    cvml_release();
}

#ifndef _WIN32  // named pipes and /dev/null are POSIX
/* cvml_graph_load_file streams a regular params file; anything else is read whole from
 * the one open: a pipe (it cannot be opened twice), a directory (a read error, as it
 * always was), an empty device. */
TEST(UpstreamApiEdges, LoadFileFromPipeDirectoryAndEmptyDevice) {
    const std::string dir = conformance::cases_dir() + "/000_conv2d_basic";
    const std::string graph = dir + "/model.json";
    const std::string params = conformance::read_file(dir + "/model.params");
    ASSERT_EQ(cvml_init(), 0);
    cvml_context* ctx = nullptr;
    ASSERT_EQ(cvml_context_create(&ctx), 0);
    cvml_graph* g = nullptr;

    const std::string fifo = ::testing::TempDir() + "cvml_params_fifo_" + std::to_string(getpid());
    unlink(fifo.c_str());
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    std::thread writer([&] {
        FILE* w = fopen(fifo.c_str(), "wb");
        if (!w) return;
        fwrite(params.data(), 1, params.size(), w);
        fclose(w);
    });
    EXPECT_EQ(cvml_graph_load_file(ctx, "cvm", graph.c_str(), fifo.c_str(), &g), 0)
        << cvml_last_error();
    writer.join();
    unlink(fifo.c_str());
    cvml_graph_release(g);
    g = nullptr;

    EXPECT_EQ(cvml_graph_load_file(ctx, "cvm", graph.c_str(), ::testing::TempDir().c_str(), &g),
              CVML_ERR_RUNTIME);
    EXPECT_NE(std::string(cvml_last_error()).find("cannot read"), std::string::npos)
        << cvml_last_error();
    EXPECT_EQ(cvml_graph_load_file(ctx, "cvm", graph.c_str(), "/dev/null", &g), CVML_ERR_LOGIC);
    EXPECT_NE(std::string(cvml_last_error()).find("empty"), std::string::npos) << cvml_last_error();
    cvml_context_release(ctx);
    cvml_release();
}
#endif

/* A graph whose output is a parameter (found by the load fuzzer): the output bytes are
 * the parameter's values, read from its own int8 storage (not as int32). */
TEST(ByteIo, ParameterAsGraphOutput) {
    std::string dir = conformance::cases_dir() + "/061_slice_like_axis";
    std::string graph = conformance::read_file(dir + "/model.json");
    std::string params = conformance::read_file(dir + "/model.params");
    size_t heads = graph.find("\"heads\"");
    ASSERT_NE(heads, std::string::npos);
    size_t open = graph.find("[[", heads), close = graph.find("]]", heads);
    ASSERT_TRUE(open != std::string::npos && close != std::string::npos);
    graph.replace(open, close + 2 - open, "[[1, 0, 0]]");  // the parameter "like"
    void* net = nullptr;
    ASSERT_EQ(load(graph, params, &net), 0) << cvml_last_error();
    unsigned long long in_len = 0, out_len = 0;
    ASSERT_EQ(CVMAPIGetInputLength(net, &in_len), 0);
    ASSERT_EQ(CVMAPIGetOutputLength(net, &out_len), 0);
    std::string in(in_len, '\0'), out(out_len, '\x55');
    ASSERT_EQ(CVMAPIInference(net, in.data(), static_cast<int>(in_len), &out[0]), 0)
        << cvml_last_error();
    cvml_graph* g = static_cast<cvml_graph*>(net);
    cvml_tensor* y = nullptr;
    ASSERT_EQ(cvml_graph_get_output(g, 0, &y), 0);
    size_t n = 0;
    ASSERT_EQ(cvml_tensor_element_count(y, &n), 0);
    ASSERT_EQ(n, out_len);  // precision 8: one byte a value
    std::vector<int32_t> values(n);
    ASSERT_EQ(cvml_tensor_get_i32(y, values.data(), n), 0);
    for (size_t i = 0; i < n; ++i)
        EXPECT_EQ(static_cast<int8_t>(out[i]), values[i]) << "value " << i;
    CVMAPIFreeModel(net);
}

}  // namespace
