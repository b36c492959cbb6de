// The conformance vectors (tests/conformance/cases, copied from the shared set) run
// through the upstream-compatible API, each case as one parameterised test.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "conformance_util.h"
#include "cvm_api.h"
#include "cvml.h"

using conformance::case_meta;

namespace {

struct loaded_case {
    case_meta meta;
    std::string graph, params, input, expected;
};

bool load_case(const std::string& name, loaded_case* c, std::string* error) {
    if (!conformance::load_meta(name, &c->meta, error)) return false;
    c->graph = conformance::read_file(c->meta.dir + "/model.json");
    c->params = conformance::read_file(c->meta.dir + "/model.params");
    c->input = conformance::read_file(c->meta.dir + "/input.bin");
    if (!c->meta.output.empty())
        c->expected = conformance::read_file(c->meta.dir + "/" + c->meta.output);
    return true;
}

/* Loads, runs once; returns the load rc, the inference rc and the output bytes. */
struct run_result {
    int load_rc = -1;
    int infer_rc = -1;
    std::string output;
};

run_result run_once(const loaded_case& c, void** keep = nullptr) {
    run_result r;
    void* net = nullptr;
    r.load_rc = CVMAPILoadModel(c.graph.data(), static_cast<int>(c.graph.size()), c.params.data(),
                                static_cast<int>(c.params.size()), &net, 0, 0);
    if (r.load_rc != 0) return r;
    unsigned long long out_len = 0;
    if (CVMAPIGetOutputLength(net, &out_len) == 0) {
        std::string in = c.input;
        r.output.assign(out_len, '\0');
        r.infer_rc = CVMAPIInference(net, in.empty() ? const_cast<char*>("") : &in[0],
                                     static_cast<int>(in.size()), &r.output[0]);
    }
    if (keep)
        *keep = net;
    else
        CVMAPIFreeModel(net);
    return r;
}

class Conformance : public ::testing::TestWithParam<std::string> {};

TEST_P(Conformance, UpstreamApi) {
    loaded_case c;
    std::string error;
    ASSERT_TRUE(load_case(GetParam(), &c, &error)) << error;
    const case_meta& m = c.meta;

    // Gas from the graph alone, before anything is loaded.
    unsigned long long graph_gas = 0;
    int grc = CVMAPIGetGasFromGraphFile(c.graph.c_str(), &graph_gas);
    EXPECT_EQ(grc, m.graph_gas_rc) << cvml_last_error();
    if (grc == 0 && m.graph_gas_rc == 0) {
        EXPECT_EQ(graph_gas, m.graph_gas);
    }

    void* net = nullptr;
    int lrc = CVMAPILoadModel(c.graph.data(), static_cast<int>(c.graph.size()), c.params.data(),
                              static_cast<int>(c.params.size()), &net, 0, 0);
    if (m.outcome == "load_error") {
        EXPECT_EQ(lrc, m.error_class) << cvml_last_error();
        EXPECT_EQ(net, nullptr);
        if (net) CVMAPIFreeModel(net);
        return;
    }
    if (m.outcome == "clean" && lrc != 0) {
        EXPECT_EQ(lrc, 1) << "a clean case may refuse only with a logic error: "
                          << cvml_last_error();
        return;
    }
    ASSERT_EQ(lrc, 0) << cvml_last_error();
    ASSERT_NE(net, nullptr);

    unsigned long long gas = 0, in_len = 0, out_len = 0, in_type = 0, out_type = 0;
    EXPECT_EQ(CVMAPIGetGasFromModel(net, &gas), 0);
    if (m.has_gas) {
        EXPECT_EQ(gas, m.gas);
    }
    ASSERT_EQ(CVMAPIGetInputLength(net, &in_len), 0) << cvml_last_error();
    ASSERT_EQ(CVMAPIGetOutputLength(net, &out_len), 0) << cvml_last_error();
    ASSERT_EQ(CVMAPIGetInputTypeSize(net, &in_type), 0);
    ASSERT_EQ(CVMAPIGetOutputTypeSize(net, &out_type), 0);
    if (m.has_upstream_io) {
        EXPECT_EQ(in_len, m.input_length);
        EXPECT_EQ(out_len, m.output_length);
        EXPECT_EQ(in_type, m.input_type_size);
        EXPECT_EQ(out_type, m.output_type_size);
    }

    // Inference twice on one model, and once more on a second model in this process:
    // the bytes never change (no state carried across calls).
    std::string first;
    for (int round = 0; round < 2; ++round) {
        std::string in = c.input;
        std::string out(out_len, '\0');
        int irc = CVMAPIInference(net, in.empty() ? const_cast<char*>("") : &in[0],
                                  static_cast<int>(in.size()), out.empty() ? nullptr : &out[0]);
        if (m.outcome == "inference_error") {
            EXPECT_EQ(irc, m.error_class) << cvml_last_error();
            continue;
        }
        if (m.outcome == "clean") {
            EXPECT_TRUE(irc == 0 || irc == 1) << cvml_last_error();
            continue;
        }
        ASSERT_EQ(irc, 0) << cvml_last_error();
        if (round == 0) {
            first = out;
            EXPECT_EQ(out.size(), c.expected.size());
            EXPECT_TRUE(out == c.expected) << "output bytes differ from " << m.output;
        } else {
            EXPECT_TRUE(out == first) << "the second inference differs from the first";
        }
    }
    EXPECT_EQ(CVMAPIFreeModel(net), 0);
    if (m.outcome == "ok") {
        run_result again = run_once(c);
        EXPECT_EQ(again.load_rc, 0);
        EXPECT_TRUE(again.output == c.expected) << "a second model gives other bytes";
    }
}

/* load -> save -> load keeps the model: the second save is byte-identical to the
 * first, gas and byte I/O facts are kept, and the reloaded model computes the same
 * bytes. */
TEST_P(Conformance, SaveRoundTrip) {
    loaded_case c;
    std::string error;
    ASSERT_TRUE(load_case(GetParam(), &c, &error)) << error;
    ASSERT_EQ(cvml_init(), 0);
    cvml_context* ctx = nullptr;
    ASSERT_EQ(cvml_context_create(&ctx), 0);
    cvml_graph* g = nullptr;
    int rc = cvml_graph_load_memory(ctx, "cvm", c.graph.data(), c.graph.size(), c.params.data(),
                                    c.params.size(), &g);
    if (rc != 0) {
        cvml_context_release(ctx);
        cvml_release();
        GTEST_SKIP() << "the model does not load (" << c.meta.outcome << ")";
    }
    void *g1 = nullptr, *p1 = nullptr, *g2 = nullptr, *p2 = nullptr;
    size_t gs1 = 0, ps1 = 0, gs2 = 0, ps2 = 0;
    ASSERT_EQ(cvml_graph_save_memory(g, "cvm", &g1, &gs1, &p1, &ps1), 0) << cvml_last_error();
    cvml_graph* h = nullptr;
    ASSERT_EQ(cvml_graph_load_memory(ctx, "cvm", g1, gs1, p1, ps1, &h), 0) << cvml_last_error();
    ASSERT_EQ(cvml_graph_save_memory(h, "cvm", &g2, &gs2, &p2, &ps2), 0) << cvml_last_error();
    EXPECT_EQ(std::string(static_cast<char*>(g1), gs1), std::string(static_cast<char*>(g2), gs2));
    EXPECT_EQ(std::string(static_cast<char*>(p1), ps1), std::string(static_cast<char*>(p2), ps2));
    uint64_t gas_a = 0, gas_b = 0;
    EXPECT_EQ(cvml_graph_gas(g, &gas_a), 0);
    EXPECT_EQ(cvml_graph_gas(h, &gas_b), 0);
    EXPECT_EQ(gas_a, gas_b);
    const char *va = nullptr, *vb = nullptr, *pa = nullptr, *pb = nullptr;
    cvml_graph_version(g, &va);
    cvml_graph_version(h, &vb);
    cvml_graph_postprocess(g, &pa);
    cvml_graph_postprocess(h, &pb);
    EXPECT_STREQ(va, vb);
    EXPECT_STREQ(pa, pb);
    // Every parameter keeps its bytes and element width.
    int count = 0;
    ASSERT_EQ(cvml_graph_tensor_count(g, &count), 0);
    for (int i = 0; i < count; ++i) {
        cvml_tensor *ta = nullptr, *tb = nullptr;
        cvml_graph_get_tensor(g, i, &ta);
        ASSERT_EQ(cvml_graph_get_tensor(h, i, &tb), 0);
        int ca = 0, cb = 0, pra = 0, prb = 0, na = 0, nb = 0;
        int32_t da[CVML_MAX_DIMS], db[CVML_MAX_DIMS];
        cvml_tensor_is_const(ta, &ca);
        cvml_tensor_is_const(tb, &cb);
        EXPECT_EQ(ca, cb);
        cvml_tensor_precision(ta, &pra);
        cvml_tensor_precision(tb, &prb);
        EXPECT_EQ(pra, prb) << "tensor " << i;
        cvml_tensor_shape(ta, &na, da);
        cvml_tensor_shape(tb, &nb, db);
        ASSERT_EQ(na, nb);
        for (int d = 0; d < na; ++d) EXPECT_EQ(da[d], db[d]);
    }
    if (c.meta.outcome == "ok") {
        size_t in_len = 0, out_len = 0;
        int it = 0, ot = 0;
        ASSERT_EQ(cvml_graph_input_bytes(h, &in_len, &it), 0);
        ASSERT_EQ(cvml_graph_output_bytes(h, &out_len, &ot), 0);
        std::string out(out_len, '\0');
        rc = cvml_graph_run_bytes(h, c.input.data(), c.input.size(), &out[0], out.size());
        if (rc == 0)
            EXPECT_TRUE(out == c.expected) << "the saved model computes other bytes";
        else
            ADD_FAILURE() << "the saved model does not run: " << cvml_last_error();
    }
    cvml_free(g1);
    cvml_free(p1);
    cvml_free(g2);
    cvml_free(p2);
    cvml_graph_release(h);
    cvml_graph_release(g);
    cvml_context_release(ctx);
    cvml_release();
}

/* cvml_graph_load_file parses the params from the file as it reads it (so a large blob
 * is never in memory twice); it must accept and refuse exactly what
 * cvml_graph_load_memory does, with the same error class and message. */
struct load_outcome {
    int rc;
    std::string error;
    uint64_t gas;
    std::string saved_params;
};

load_outcome outcome_of(cvml_context* ctx, int rc, cvml_graph* g) {
    load_outcome o = {rc, rc ? cvml_last_error() : "", 0, ""};
    if (rc) return o;
    cvml_graph_gas(g, &o.gas);
    void *gd = nullptr, *pd = nullptr;
    size_t gs = 0, ps = 0;
    if (cvml_graph_save_memory(g, "cvm", &gd, &gs, &pd, &ps) == 0)
        o.saved_params.assign(static_cast<char*>(pd), ps);
    cvml_free(gd);
    cvml_free(pd);
    cvml_graph_release(g);
    (void)ctx;
    return o;
}

load_outcome load_from_memory(cvml_context* ctx, const std::string& graph,
                              const std::string& params) {
    cvml_graph* g = nullptr;
    int rc = cvml_graph_load_memory(ctx, "cvm", graph.data(), graph.size(), params.data(),
                                    params.size(), &g);
    return outcome_of(ctx, rc, g);
}

load_outcome load_from_files(cvml_context* ctx, const std::string& graph_path,
                             const std::string& params_path) {
    cvml_graph* g = nullptr;
    int rc = cvml_graph_load_file(ctx, "cvm", graph_path.c_str(), params_path.c_str(), &g);
    return outcome_of(ctx, rc, g);
}

void expect_same(const load_outcome& mem, const load_outcome& file, const std::string& what) {
    EXPECT_EQ(mem.rc, file.rc) << what << ": memory said '" << mem.error << "', file said '"
                               << file.error << "'";
    EXPECT_EQ(mem.error, file.error) << what;
    EXPECT_EQ(mem.gas, file.gas) << what;
    EXPECT_TRUE(mem.saved_params == file.saved_params) << what << ": other constants";
}

TEST_P(Conformance, LoadFileMatchesLoadMemory) {
    loaded_case c;
    std::string error;
    ASSERT_TRUE(load_case(GetParam(), &c, &error)) << error;
    ASSERT_EQ(cvml_init(), 0);
    cvml_context* ctx = nullptr;
    ASSERT_EQ(cvml_context_create(&ctx), 0);
    expect_same(load_from_memory(ctx, c.graph, c.params),
                load_from_files(ctx, c.meta.dir + "/model.json", c.meta.dir + "/model.params"),
                GetParam());
    cvml_context_release(ctx);
    cvml_release();
}

/* The same for every truncation of a model's params (each byte of the headers, then
 * steps through the data): the file reader must stop where the memory reader does. */
TEST(ConformanceSet, TruncatedParamsFileMatchesMemory) {
    loaded_case c;
    std::string error;
    ASSERT_TRUE(load_case("075_net_resnet_block_chain", &c, &error)) << error;
    ASSERT_EQ(cvml_init(), 0);
    cvml_context* ctx = nullptr;
    ASSERT_EQ(cvml_context_create(&ctx), 0);
    // One file per process: ctest runs this binary at several SIMD levels at once.
    const std::string path =
        ::testing::TempDir() + "cvml_truncated_" + std::to_string(getpid()) + ".params";
    size_t checked = 0;
    for (size_t len = 0; len <= c.params.size(); len += len < 600 ? 1 : 97) {
        const std::string cut = c.params.substr(0, len);
        FILE* f = fopen(path.c_str(), "wb");
        ASSERT_NE(f, nullptr);
        ASSERT_EQ(fwrite(cut.data(), 1, cut.size(), f), cut.size());
        fclose(f);
        expect_same(load_from_memory(ctx, c.graph, cut),
                    load_from_files(ctx, c.meta.dir + "/model.json", path),
                    "params cut to " + std::to_string(len) + " bytes");
        ++checked;
    }
    remove(path.c_str());
    EXPECT_GT(checked, 800u);
    cvml_context_release(ctx);
    cvml_release();
}

/* A params list whose names are all empty (found by the differential fuzzer: the file
 * reader then had no name block and copied from a null pointer). */
TEST(ConformanceSet, EmptyParamNamesFromFileMatchMemory) {
    loaded_case c;
    std::string error;
    ASSERT_TRUE(load_case("000_conv2d_basic", &c, &error)) << error;
    std::string params;
    auto u64 = [&params](uint64_t v) {
        for (int i = 0; i < 8; ++i) params.push_back(static_cast<char>(v >> (8 * i)));
    };
    u64(0xF7E58D4F05049CB7ull);  // list magic
    u64(0);                      // reserved
    u64(2);                      // two names, both empty
    u64(0);
    u64(0);
    u64(2);  // two arrays (never reached: the first name is not found)
    ASSERT_EQ(cvml_init(), 0);
    cvml_context* ctx = nullptr;
    ASSERT_EQ(cvml_context_create(&ctx), 0);
    const std::string path =
        ::testing::TempDir() + "cvml_empty_names_" + std::to_string(getpid()) + ".params";
    FILE* f = fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(fwrite(params.data(), 1, params.size(), f), params.size());
    fclose(f);
    const load_outcome mem = load_from_memory(ctx, c.graph, params);
    EXPECT_NE(mem.rc, 0);
    expect_same(mem, load_from_files(ctx, c.meta.dir + "/model.json", path), "empty names");
    remove(path.c_str());
    cvml_context_release(ctx);
    cvml_release();
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
    std::string s = "c" + info.param;
    for (char& ch : s)
        if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
    return s;
}

INSTANTIATE_TEST_SUITE_P(Cases, Conformance, ::testing::ValuesIn(conformance::case_names()),
                         test_name);

TEST(ConformanceSet, HasTheVectors) {
    EXPECT_GE(conformance::case_names().size(), 149u) << "cases under " << conformance::cases_dir();
}

/* Every ok case computed by two threads at once, each on its own models. */
#ifndef CVML_WITH_THREADS
#error \
    "tests/conformance.cmake passes CVML_WITH_THREADS (0 or 1): without it the test below would skip"
#endif
TEST(ConformanceSet, TwoThreadsGiveTheSameBytes) {
#if !CVML_WITH_THREADS
    GTEST_SKIP() << "built without threads (CVML_WITH_THREADS=OFF): the library takes no "
                    "locks, so calls from several threads must be serialized by the caller";
#endif
    std::vector<loaded_case> cases;
    for (const std::string& name : conformance::case_names()) {
        loaded_case c;
        std::string error;
        ASSERT_TRUE(load_case(name, &c, &error)) << error;
        if (c.meta.outcome == "ok") cases.push_back(c);
    }
    std::vector<std::vector<run_result>> results(2);
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t)
        threads.emplace_back([&, t] {
            for (const loaded_case& c : cases) results[t].push_back(run_once(c));
        });
    for (auto& th : threads) th.join();
    for (size_t i = 0; i < cases.size(); ++i) {
        EXPECT_EQ(results[0][i].load_rc, results[1][i].load_rc) << cases[i].meta.name;
        EXPECT_TRUE(results[0][i].output == results[1][i].output) << cases[i].meta.name;
        if (results[0][i].load_rc == 0 && results[0][i].infer_rc == 0) {
            EXPECT_TRUE(results[0][i].output == cases[i].expected) << cases[i].meta.name;
        }
    }
}

}  // namespace
