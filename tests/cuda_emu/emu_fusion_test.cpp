/* Fusion agreement: the CPU and the CUDA device call the core's one fusion walk
 * (source/module/plan/fusion.cpp), each with its own rules (which kernels take a tail,
 * how long), so for every conformance case and every benchmark model each tail the CUDA
 * device fuses is exactly the tail the CPU fuses into the same head. The graph is
 * loaded twice: on the CPU alone, and with the emulated CUDA device first (every island
 * kept on it); cvml_graph_node_fused_into tells what each device fused. */
#include <dirent.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "cvml.h"
#include "emu_setup.h"
#include "models.h"

namespace {

/* What a prepared graph says of its nodes. */
struct Placement {
    std::vector<int> fused_into;     /* cvml_graph_node_fused_into */
    std::vector<std::string> device; /* "" for variables */
};

using Loaded = emu_setup::LoadedGraph;

using emu_setup::use_devices;

Placement placement(cvml_graph* g) {
    Placement p;
    int count = 0;
    EXPECT_EQ(cvml_graph_node_count(g, &count), CVML_OK);
    for (int i = 0; i < count; ++i) {
        int into = -1;
        const char* device = "";
        EXPECT_EQ(cvml_graph_node_fused_into(g, i, &into), CVML_OK);
        EXPECT_EQ(cvml_graph_node_device(g, i, &device), CVML_OK);
        p.fused_into.push_back(into);
        p.device.push_back(device);
    }
    return p;
}

/* A conformance case on the CPU alone or with the CUDA device first; false when the case
 * does not load or prepare (a case of a refused model). */
bool load_case(const std::string& dir, bool cuda, Placement* out) {
    Loaded m;
    use_devices(cuda, &m);
    if (cvml_graph_load_file(m.ctx, "cvm", (dir + "/model.json").c_str(),
                             (dir + "/model.params").c_str(), &m.graph) != CVML_OK ||
        cvml_graph_prerun(m.graph) != CVML_OK)
        return false;
    *out = placement(m.graph);
    return true;
}

Placement load_model(const std::string& name, bool cuda) {
    Loaded m;
    use_devices(cuda, &m);
    bench::ModelSpec spec;
    spec.name = name;
    spec.size = 32;
    std::string err;
    EXPECT_EQ(bench::build_model(m.ctx, spec, &m.graph, &err), CVML_OK) << err;
    if (m.graph) {
        EXPECT_EQ(cvml_graph_prerun(m.graph), CVML_OK) << cvml_last_error();
    }
    return m.graph ? placement(m.graph) : Placement{};
}

/* Each head's tail, by head: the nodes fused into it, in node order. */
std::map<int, std::vector<int>> tails(const Placement& p) {
    std::map<int, std::vector<int>> t;
    for (size_t n = 0; n < p.fused_into.size(); ++n)
        if (p.fused_into[n] >= 0) t[p.fused_into[n]].push_back(static_cast<int>(n));
    return t;
}

/* Every tail the CUDA device fused is the CPU's tail of that head; returns how many
 * nodes the CUDA device fused. */
int expect_agreement(const std::string& what, const Placement& cpu, const Placement& cuda) {
    EXPECT_EQ(cpu.fused_into.size(), cuda.fused_into.size()) << what;
    const std::map<int, std::vector<int>> on_cpu = tails(cpu);
    int fused = 0;
    for (const auto& [head, nodes] : tails(cuda)) {
        EXPECT_EQ(cuda.device[head], "cuda") << what << ": head " << head;
        const auto it = on_cpu.find(head);
        EXPECT_TRUE(it != on_cpu.end() && it->second == nodes)
            << what << ": node " << head << " fused " << nodes.size() << " nodes on cuda, "
            << (it == on_cpu.end() ? 0 : it->second.size()) << " on the CPU";
        fused += static_cast<int>(nodes.size());
    }
    return fused;
}

class FusionAgreement : public ::testing::Test {
  protected:
    static void SetUpTestSuite() { emu_setup::init_with_emulated_plugin(); }
    static void TearDownTestSuite() { cvml_release(); }
};

TEST_F(FusionAgreement, EveryConformanceCase) {
    const std::string root = CVML_CONFORMANCE_CASES;
    DIR* d = opendir(root.c_str());
    ASSERT_NE(d, nullptr) << root;
    std::vector<std::string> cases;
    while (dirent* e = readdir(d))
        if (e->d_name[0] != '.') cases.push_back(root + "/" + e->d_name);
    closedir(d);
    std::sort(cases.begin(), cases.end());
    int loaded = 0, fused = 0, fused_cases = 0;
    for (const std::string& dir : cases) {
        Placement cpu, cuda;
        const bool ok = load_case(dir, false, &cpu);
        ASSERT_EQ(load_case(dir, true, &cuda), ok) << dir << ": loads on one device only";
        if (!ok) continue;
        ++loaded;
        const int f = expect_agreement(dir, cpu, cuda);
        fused += f;
        fused_cases += f > 0;
    }
    printf("%d cases prepared, %d fuse on cuda (%d nodes), each tail as the CPU's\n", loaded,
           fused_cases, fused);
    EXPECT_GT(loaded, static_cast<int>(cases.size()) / 2);
    EXPECT_GT(fused_cases, 10);  // the agreement is not vacuous
}

TEST_F(FusionAgreement, EveryBenchmarkModel) {
    for (const std::string& name : bench::model_names()) {
        const Placement cpu = load_model(name, false), cuda = load_model(name, true);
        const int fused = expect_agreement(name, cpu, cuda);
        printf("%s: %d nodes fused on cuda, each tail as the CPU's\n", name.c_str(), fused);
        EXPECT_GT(fused, 0) << name;
    }
}

}  // namespace
