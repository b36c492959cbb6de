// Compiled plans (docs/compiled-plan.md) against the CVM path: every conformance case
// and the real model, saved compiled for the scalar target at 1 and 2 threads, loaded
// from a read-only copy into an arena of exactly the size asked, must give the CVM
// path's output bytes, gas and error class; and every truncation and single-byte change
// of a real plan is refused with a message or loads into a plan that runs within its
// buffers (ASan and valgrind watch).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "conformance_util.h"
#include "cvml.h"
#include "serializer/plan/plan_file.h"

namespace {

struct Context {
    cvml_context* ctx = nullptr;
    explicit Context(int threads) {
        cvml_init();
        cvml_context_create(&ctx);
        cvml_context_set_threads(ctx, threads);
    }
    ~Context() {
        cvml_context_release(ctx);
        cvml_release();
    }
};

struct Outcome {
    int rc = 0;
    std::string output;
    uint64_t gas = 0;
};

Outcome run(cvml_graph* g, const std::string& input) {
    Outcome o;
    size_t len = 0;
    int type = 0;
    o.rc = cvml_graph_output_bytes(g, &len, &type);
    if (o.rc) return o;
    o.output.assign(len, '\0');
    o.rc = cvml_graph_run_bytes(g, input.data(), input.size(),
                                o.output.empty() ? nullptr : &o.output[0], len);
    cvml_graph_gas(g, &o.gas);
    return o;
}

/* A plan in 8-aligned memory, as it would lie in flash. */
struct Plan {
    std::vector<uint64_t> words;
    size_t size = 0;
    const void* data() const { return words.data(); }
    void assign(const void* p, size_t n) {
        words.assign((n + 7) / 8, 0);
        if (n) memcpy(words.data(), p, n);
        size = n;
    }
    uint8_t* bytes() { return reinterpret_cast<uint8_t*>(words.data()); }
};

/* Loads a model and saves it compiled for `target`: the load's status, or the save's. */
int compile(Context& c, const std::string& json, const std::string& params, Plan* plan,
            const char* target = "scalar") {
    cvml_graph* g = nullptr;
    int rc = cvml_graph_load_memory(c.ctx, "cvm", json.data(), json.size(), params.data(),
                                    params.size(), &g);
    if (rc) return rc;
    void* data = nullptr;
    size_t size = 0;
    rc = cvml_graph_save_compiled(g, target, &data, &size);
    if (!rc) plan->assign(data, size);
    cvml_free(data);
    cvml_graph_release(g);
    return rc;
}

Outcome run_compiled(Context& c, const Plan& plan, const std::string& input, int* load_rc) {
    size_t need = 0;
    *load_rc = cvml_graph_compiled_arena_bytes(plan.data(), plan.size, &need);
    if (*load_rc) return {};
    // A hostile plan may ask for any arena; past 16 MB it gets less, and must say so.
    std::vector<uint8_t> arena(need < (size_t{1} << 24) ? need : size_t{1} << 24);
    cvml_graph* g = nullptr;
    *load_rc =
        cvml_graph_load_compiled(c.ctx, plan.data(), plan.size, arena.data(), arena.size(), &g);
    if (*load_rc) return {};
    Outcome o = run(g, input);
    cvml_graph_release(g);
    return o;
}

void expect_same(const std::string& dir, int threads) {
    const std::string json = conformance::read_file(dir + "/model.json");
    const std::string params = conformance::read_file(dir + "/model.params");
    const std::string input = conformance::read_file(dir + "/input.bin");
    Context c(threads);
    cvml_graph* g = nullptr;
    if (cvml_graph_load_memory(c.ctx, "cvm", json.data(), json.size(), params.data(), params.size(),
                               &g) != CVML_OK)
        return;  // the CVM path refuses the model: there is nothing to compile
    const Outcome want = run(g, input);
    cvml_graph_release(g);
    Plan plan;
    ASSERT_EQ(compile(c, json, params, &plan), CVML_OK) << cvml_last_error();
    int load_rc = 0;
    const Outcome got = run_compiled(c, plan, input, &load_rc);
    ASSERT_EQ(load_rc, CVML_OK) << cvml_last_error();
    EXPECT_EQ(got.rc, want.rc) << cvml_last_error();
    EXPECT_EQ(got.gas, want.gas);
    EXPECT_TRUE(got.output == want.output) << "output bytes differ";
}

class Compiled : public ::testing::TestWithParam<std::string> {};

TEST_P(Compiled, SameBytesGasAndErrors) {
    const std::string dir = conformance::cases_dir() + "/" + GetParam();
    expect_same(dir, 1);
#if CVML_WITH_THREADS
    expect_same(dir, 2);
#endif
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
    std::string s = info.param;
    for (char& ch : s)
        if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
    return s;
}

INSTANTIATE_TEST_SUITE_P(Cases, Compiled, ::testing::ValuesIn(conformance::case_names()),
                         test_name);

TEST(CompiledModel, CifarResnet20) {
    const std::string dir = std::string(CVML_SHARED_DIR) + "/models/cifar_resnet20_2019/case";
    if (!conformance::file_exists(dir + "/model.json"))
        GTEST_SKIP() << "no " << dir << " (../shared is not beside the checkout)";
    expect_same(dir, 1);
}

/* A Cortex-M target is planned here (with those kernels' figures) and refused by a
 * build that does not run it; an unknown target and a threaded Cortex-M one are refused
 * when saving. */
TEST(CompiledTargets, CortexMPlannedHereRunThere) {
    const std::string dir = conformance::cases_dir() + "/075_net_resnet_block_chain";
    const std::string json = conformance::read_file(dir + "/model.json");
    const std::string params = conformance::read_file(dir + "/model.params");
    Context c(1);
    for (const char* target : {"cortex-m55", "cortex-m7", "cortex-m4f"}) {
        Plan plan;
        ASSERT_EQ(compile(c, json, params, &plan, target), CVML_OK) << cvml_last_error();
        size_t activations = 0, bound = 0, need = 0;
        EXPECT_EQ(cvml_compiled_plan_arena(plan.data(), plan.size, &activations, &bound), CVML_OK);
        EXPECT_GE(activations, bound);
        EXPECT_EQ(cvml_graph_compiled_arena_bytes(plan.data(), plan.size, &need), CVML_ERR_RUNTIME);
        EXPECT_NE(strstr(cvml_last_error(), "plan for cortex-m"), nullptr) << cvml_last_error();
    }
    Plan refused;
    EXPECT_EQ(compile(c, json, params, &refused, "cortex-m0"), CVML_ERR_LOGIC);
    EXPECT_NE(strstr(cvml_last_error(), "unknown target"), nullptr) << cvml_last_error();
    Context two(2);
    EXPECT_EQ(compile(two, json, params, &refused, "cortex-m55"), CVML_ERR_LOGIC);
    EXPECT_EQ(refused.size, 0u);
}

/* A plan of a case with a convolution, a fused tail and a broadcast. */
Plan small_plan(Context& c) {
    Plan plan;
    for (const char* name : {"075_net_resnet_block_chain", "000_conv2d_basic"}) {
        const std::string dir = conformance::cases_dir() + "/" + name;
        if (!conformance::file_exists(dir + "/model.json")) continue;
        if (compile(c, conformance::read_file(dir + "/model.json"),
                    conformance::read_file(dir + "/model.params"), &plan) == CVML_OK)
            return plan;
    }
    return plan;
}

void fix_checksum(Plan* p) {
    memset(p->bytes() + 20, 0, 4);
    const uint32_t crc = plan_crc32(0, p->bytes(), p->size);
    for (int i = 0; i < 4; ++i) p->bytes()[20 + i] = static_cast<uint8_t>(crc >> (8 * i));
}

/* Loads (and, when it loads, runs) a plan; a refusal must say what is wrong. */
void load_hostile(Context& c, const Plan& p, const std::string& input, const char* what,
                  size_t at) {
    int load_rc = 0;
    const Outcome o = run_compiled(c, p, input, &load_rc);
    if (load_rc) {
        EXPECT_NE(strstr(cvml_last_error(), "compiled plan"), nullptr)
            << what << " at " << at << ": " << cvml_last_error();
    }
    (void)o;
}

size_t section_start(Plan& p, const char* tag);

TEST(CompiledHostile, EveryTruncationAndByteChange) {
    Context c(1);
    Plan plan = small_plan(c);
    ASSERT_GT(plan.size, 0u) << "no conformance case compiled";
    const std::string input(4096, '\x05');
    for (size_t n = 0; n < plan.size; n += (n < 256 ? 1 : 61)) {
        Plan cut;
        cut.assign(plan.bytes(), n);
        int load_rc = 0;
        run_compiled(c, cut, input, &load_rc);
        EXPECT_NE(load_rc, CVML_OK) << "a plan cut to " << n << " bytes loaded";
    }
    // Past the constants' start a change is a value (checked against its precision, or
    // harmless), so the walk samples them.
    const size_t constants = section_start(plan, "CNST");
    for (size_t at = 0; at < plan.size; at += at < constants ? 1 : 16) {
        for (uint8_t flip : {uint8_t{0x01}, uint8_t{0xff}}) {
            Plan changed = plan;
            changed.bytes()[at] ^= flip;
            int load_rc = 0;
            if (at % 13 == 0) {  // the container's test walks the checksum itself
                run_compiled(c, changed, input, &load_rc);
                EXPECT_NE(load_rc, CVML_OK) << "a change at " << at << " passed the checksum";
            }
            if (at >= 20 && at < 24) continue;
            fix_checksum(&changed);
            load_hostile(c, changed, input, "a change", at);
        }
    }
}

/* The offset of section `tag` ("KERN") in a plan. */
size_t section_start(Plan& p, const char* tag) {
    const uint8_t* b = p.bytes();
    const uint32_t count = b[32] | (b[33] << 8);
    for (uint32_t i = 0; i < count; ++i) {
        const uint8_t* e = b + PLAN_HEADER_SIZE + PLAN_ENTRY_SIZE * i;
        if (memcmp(e, tag, 4) == 0)
            return e[4] | (e[5] << 8) | (e[6] << 16) | (static_cast<uint32_t>(e[7]) << 24);
    }
    return 0;
}

/* A kernel this build does not have (left out with CVML_OPERATORS), a newer format and
 * a plan for another family: each refused with a message saying so. */
TEST(CompiledHostile, KernelVersionAndTargetRefusals) {
    Context c(1);
    Plan plan = small_plan(c);
    ASSERT_GT(plan.size, 0u);
    const std::string input(4096, '\x05');
    const struct {
        size_t at;
        std::vector<uint8_t> bytes;
        const char* message;
    } edits[] = {
        {section_start(plan, "KERN"), {'n', 'o', '_', 's', 'u', 'c', 'h', 0}, "not in this build"},
        {10, {9, 0}, "newer than this build"},
        {24, {3, PLAN_LEVEL_CM_MVE}, "is not one of family"},
        {24, {4, PLAN_LEVEL_CM_MVE}, "plan for cortex-m55"},
    };
    for (const auto& e : edits) {
        Plan changed = plan;
        memcpy(changed.bytes() + e.at, e.bytes.data(), e.bytes.size());
        fix_checksum(&changed);
        int load_rc = 0;
        run_compiled(c, changed, input, &load_rc);
        EXPECT_NE(load_rc, CVML_OK) << e.message;
        EXPECT_NE(strstr(cvml_last_error(), e.message), nullptr) << cvml_last_error();
    }
}

TEST(CompiledHostile, SmallArenaAndNulls) {
    Context c(1);
    Plan plan = small_plan(c);
    ASSERT_GT(plan.size, 0u);
    size_t need = 0;
    ASSERT_EQ(cvml_graph_compiled_arena_bytes(plan.data(), plan.size, &need), CVML_OK);
    std::vector<uint8_t> arena(need);
    cvml_graph* g = nullptr;
    EXPECT_EQ(cvml_graph_load_compiled(c.ctx, plan.data(), plan.size, arena.data(), need / 2, &g),
              CVML_ERR_LOGIC);
    EXPECT_NE(strstr(cvml_last_error(), "bytes of arena"), nullptr) << cvml_last_error();
    EXPECT_EQ(cvml_graph_load_compiled(c.ctx, nullptr, plan.size, arena.data(), need, &g),
              CVML_ERR_LOGIC);
    EXPECT_EQ(cvml_graph_load_compiled(c.ctx, plan.data(), plan.size, arena.data(), need, nullptr),
              CVML_ERR_LOGIC);
    // Misaligned plans are refused, not misread.
    std::vector<uint8_t> shifted(plan.size + 1);
    memcpy(shifted.data() + 1, plan.data(), plan.size);
    EXPECT_EQ(
        cvml_graph_load_compiled(c.ctx, shifted.data() + 1, plan.size, arena.data(), need, &g),
        CVML_ERR_LOGIC);
    // A compiled graph has no nodes to save.
    ASSERT_EQ(cvml_graph_load_compiled(c.ctx, plan.data(), plan.size, arena.data(), need, &g),
              CVML_OK)
        << cvml_last_error();
    void *gd = nullptr, *pd = nullptr;
    size_t gs = 0, ps = 0;
    EXPECT_EQ(cvml_graph_save_memory(g, "cvm", &gd, &gs, &pd, &ps), CVML_ERR_LOGIC);
    void* again = nullptr;
    size_t again_size = 0;
    EXPECT_EQ(cvml_graph_save_compiled(g, "scalar", &again, &again_size), CVML_ERR_LOGIC);
    EXPECT_EQ(cvml_graph_release(g), CVML_OK);
}

}  // namespace
