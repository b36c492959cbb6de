/* The CUDA plugin's own code run through its host emulation (the cvml_cuda_emu build
 * of source/device/cuda): random graphs of every operator it has a kernel for, sizes
 * past the grid limit, repeated runs with new inputs, several graphs at once, and the
 * plugin's fallbacks. Every graph runs on the CPU alone and with the CUDA device first;
 * the bytes must agree and every node must have run on "cuda". The conformance cases
 * and the real model are checked by gpu_check (tests/cuda_emu.cmake). */
#include <dirent.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cuda_emu.h"
#include "emu_setup.h"
#include "cvml.h"

namespace {

const std::string kPluginDir = emu_setup::plugin_dir();

/* Device memory and streams the emulated plugin holds now (its cuda_emu.h counters). */
struct DeviceUse {
    uint64_t allocations = 0, bytes = 0, streams = 0;
    bool operator==(const DeviceUse& o) const {
        return allocations == o.allocations && bytes == o.bytes && streams == o.streams;
    }
};

DeviceUse device_use() {
    DeviceUse u;
    void* h = dlopen((kPluginDir + "/libcvml_cuda.so").c_str(), RTLD_NOW | RTLD_NOLOAD);
    EXPECT_NE(h, nullptr) << "the emulated plugin is not loaded";
    if (!h) return u;
    auto memory = reinterpret_cast<void (*)(uint64_t*, uint64_t*, uint64_t*, uint64_t*)>(
        dlsym(h, "cvml_cuda_emu_memory"));
    uint64_t peak = 0;
    if (memory) memory(&u.allocations, &u.bytes, &peak, &u.streams);
    EXPECT_NE(memory, nullptr);
    dlclose(h);
    return u;
}

::std::ostream& operator<<(::std::ostream& os, const DeviceUse& u) {
    return os << u.allocations << " allocations (" << u.bytes << " bytes), " << u.streams
              << " streams";
}

/* ---- graphs ------------------------------------------------------------------------- */

struct Operand {
    std::vector<int32_t> shape;
    int precision = 8;
    bool is_const = false;
};

struct Node {
    std::string op;
    std::vector<std::pair<std::string, std::string>> attrs;
    std::vector<int> inputs; /* operand index, or out(k, j) */
    int outputs = 1;
};

/* An input reference to output j of node k. */
constexpr int out(int k, int j = 0) {
    return -(k * 4 + j + 1);
}

/* A small graph: operands (graph inputs or constants), then nodes in order; the last
 * node's first output is the graph's. */
struct Graph {
    std::vector<Operand> operands;
    std::vector<Node> nodes;
    std::string describe() const {
        std::string s;
        for (const auto& n : nodes) {
            s += n.op + "(";
            for (const auto& a : n.attrs) s += a.first + "=" + a.second + " ";
            s += ") ";
        }
        for (const auto& o : operands) {
            s += o.is_const ? "const[" : "input[";
            for (int32_t d : o.shape) s += std::to_string(d) + " ";
            s += "p" + std::to_string(o.precision) + "] ";
        }
        return s;
    }
};

int64_t count(const std::vector<int32_t>& shape) {
    int64_t n = 1;
    for (int32_t d : shape) n *= d;
    return n;
}

struct Rng {
    uint64_t s;
    explicit Rng(uint64_t seed) : s(seed * 0x9e3779b97f4a7c15ull + 1) {}
    uint32_t next() {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return static_cast<uint32_t>(s >> 11);
    }
    int32_t in(int32_t lo, int32_t hi) {  // inclusive
        return lo + static_cast<int32_t>(next() % static_cast<uint32_t>(hi - lo + 1));
    }
    bool coin() { return next() & 1; }
    /* A value inside precision p, often at the bounds (where wrap-around lives). */
    int32_t value(int p) {
        const int32_t bound = p >= 32 ? INT32_MAX : static_cast<int32_t>((1ll << (p - 1)) - 1);
        switch (next() % 8) {
            case 0:
                return bound;
            case 1:
                return -bound;
            case 2:
                return 0;
            default:
                return static_cast<int32_t>(static_cast<int64_t>(next()) % (2ll * bound + 1) -
                                            bound);
        }
    }
    std::vector<int32_t> shape(int rank, int max_dim) {
        std::vector<int32_t> s(static_cast<size_t>(rank));
        for (auto& d : s) d = in(1, max_dim);
        return s;
    }
};

std::vector<int32_t> values_for(const Operand& o, Rng& rng) {
    std::vector<int32_t> v(static_cast<size_t>(count(o.shape)));
    for (auto& x : v) x = rng.value(o.precision);
    return v;
}

struct Outcome {
    int rc = CVML_OK; /* the first failure: build, verify, prerun or run */
    std::string error;
    std::vector<std::vector<int32_t>> outputs; /* per run */
    std::vector<std::string> off_cuda;
};

/* Builds `g` in a context of `devices`, runs it once per input set, and reads the
 * output after each run. */
Outcome run(const Graph& g, const std::vector<const char*>& devices,
            const std::vector<std::vector<std::vector<int32_t>>>& inputs_per_run,
            const std::vector<std::vector<int32_t>>& const_values) {
    Outcome o;
    cvml_context* ctx = nullptr;
    cvml_graph* graph = nullptr;
    o.rc = cvml_context_create(&ctx);
    if (!o.rc)
        o.rc = cvml_context_set_devices(ctx, devices.data(), static_cast<int>(devices.size()));
    if (!o.rc) o.rc = cvml_graph_create(ctx, &graph);
    std::vector<cvml_tensor*> operands, inputs;
    std::vector<std::vector<cvml_tensor*>> outs;
    for (size_t i = 0; i < g.operands.size() && !o.rc; ++i) {
        const Operand& op = g.operands[i];
        cvml_tensor* t = nullptr;
        const std::string name = "t" + std::to_string(i);
        const int ndim = static_cast<int>(op.shape.size());
        o.rc = op.is_const ? cvml_graph_add_const(graph, name.c_str(), ndim, op.shape.data(),
                                                  op.precision, const_values[i].data(), &t)
                           : cvml_graph_add_input(graph, name.c_str(), ndim, op.shape.data(),
                                                  op.precision, &t);
        operands.push_back(t);
        if (!op.is_const) inputs.push_back(t);
    }
    for (size_t k = 0; k < g.nodes.size() && !o.rc; ++k) {
        const Node& n = g.nodes[k];
        std::vector<const char*> keys, vals;
        for (const auto& a : n.attrs) {
            keys.push_back(a.first.c_str());
            vals.push_back(a.second.c_str());
        }
        std::vector<cvml_tensor*> in;
        for (int i : n.inputs)
            in.push_back(
                i >= 0
                    ? operands[static_cast<size_t>(i)]
                    : outs[static_cast<size_t>((-i - 1) / 4)][static_cast<size_t>((-i - 1) % 4)]);
        outs.emplace_back(static_cast<size_t>(n.outputs), nullptr);
        const std::string name = n.op + "_" + std::to_string(k);
        o.rc = cvml_graph_add_node(graph, n.op.c_str(), name.c_str(), keys.data(), vals.data(),
                                   static_cast<int>(keys.size()), in.data(),
                                   static_cast<int>(in.size()), outs.back().data(), n.outputs);
    }
    cvml_tensor* result = o.rc ? nullptr : outs.back()[0];
    if (!o.rc) o.rc = cvml_graph_set_outputs(graph, &result, 1);
    if (!o.rc) o.rc = cvml_graph_verify(graph);
    if (!o.rc) o.rc = cvml_graph_prerun(graph);
    if (!o.rc) {
        int nodes = 0;
        cvml_graph_node_count(graph, &nodes);
        for (int i = 0; i < nodes; ++i) {
            const char *d = "", *name = "", *op = "";
            cvml_graph_node_device(graph, i, &d);
            cvml_graph_node_info(graph, i, &name, &op);
            if (strcmp(op, "null") != 0 && strcmp(d, "cuda") != 0) o.off_cuda.push_back(name);
        }
    }
    for (const auto& set : inputs_per_run) {
        for (size_t i = 0; i < inputs.size() && !o.rc; ++i)
            o.rc = cvml_tensor_set_i32(inputs[i], set[i].data(), set[i].size());
        if (!o.rc) o.rc = cvml_graph_run(graph);
        if (o.rc) break;
        size_t n = 0;
        cvml_tensor_element_count(result, &n);
        std::vector<int32_t> v(n);
        o.rc = cvml_tensor_get_i32(result, v.data(), n);
        o.outputs.push_back(v);
    }
    if (o.rc) o.error = cvml_last_error();
    cvml_graph_release(graph);
    cvml_context_release(ctx);
    return o;
}

enum class Verdict { kSame, kRefused };

/* Runs `g` on the CPU alone and with CUDA first, `runs` times with fresh inputs (the
 * CUDA device runs the first directly and captures the second into a CUDA graph that
 * it launches; cuda_emu.device tests the replays after):
 * kRefused when the CPU refuses the graph (and CUDA refuses it alike), else the bytes
 * must match and every node must be on cuda (but those named in `cpu_nodes`). */
Verdict check(const Graph& g, Rng& rng, int runs = 2,
              const std::vector<std::string>& cpu_nodes = {}) {
    std::vector<std::vector<int32_t>> consts(g.operands.size());
    for (size_t i = 0; i < g.operands.size(); ++i)
        if (g.operands[i].is_const) consts[i] = values_for(g.operands[i], rng);
    std::vector<std::vector<std::vector<int32_t>>> sets(static_cast<size_t>(runs));
    for (auto& set : sets)
        for (const auto& op : g.operands)
            if (!op.is_const) set.push_back(values_for(op, rng));
    const Outcome cpu = run(g, {"cpu"}, sets, consts);
    const Outcome cuda = run(g, {"cuda"}, sets, consts);
    EXPECT_EQ(cuda.rc, cpu.rc) << g.describe() << "\ncpu: " << cpu.error
                               << "\ncuda: " << cuda.error;
    if (cpu.rc && getenv("CVML_CUDA_EMU_SHOW_REFUSED")) printf("refused: %s\n", cpu.error.c_str());
    if (cpu.rc) return Verdict::kRefused;
    EXPECT_TRUE(cuda.outputs == cpu.outputs) << "bytes differ: " << g.describe();
    EXPECT_EQ(cuda.off_cuda, cpu_nodes) << "on cuda: every node but these: " << g.describe();
    return Verdict::kSame;
}

std::string tuple(const std::vector<int32_t>& v) {
    std::string s = "(";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + (v.size() == 1 ? ",)" : ")");
}

Graph one_node(const std::string& op, std::vector<Operand> operands,
               std::vector<std::pair<std::string, std::string>> attrs = {}) {
    Graph g;
    g.operands = std::move(operands);
    Node n{op, std::move(attrs), {}};
    for (size_t i = 0; i < g.operands.size(); ++i) n.inputs.push_back(static_cast<int>(i));
    g.nodes.push_back(n);
    return g;
}

/* ---- the fixture: the emulated plugin, every island kept on it ------------------------ */

struct CudaEmu : ::testing::Test {
    void SetUp() override { emu_setup::init_with_emulated_plugin(); }
    void TearDown() override {
        EXPECT_EQ(cvml_release(), CVML_OK);
        unsetenv("CVML_PLUGIN_PATH");
        unsetenv("CVML_CUDA_ISLAND_WORK");
        unsetenv("CVML_CUDA_EMU_MEMORY");
        unsetenv("CVML_CUDA_EMU_DEVICES");
    }
};

/* Random graphs of one operator: `make` draws one; at least half must verify, so the
 * test cannot pass by drawing only graphs that both devices refuse. */
void fuzz(const char* what, int cases, uint64_t seed, const std::function<Graph(Rng&)>& make) {
    // CVML_CUDA_EMU_FUZZ=N draws N times as many graphs, from other seeds (a longer hunt).
    if (const char* scale = getenv("CVML_CUDA_EMU_FUZZ")) {
        cases *= std::max(1, atoi(scale));
        seed += static_cast<uint64_t>(atoi(scale)) << 32;
    }
    Rng rng(seed);
    int same = 0;
    for (int i = 0; i < cases && !::testing::Test::HasFailure(); ++i) {
        SCOPED_TRACE(std::string(what) + " case " + std::to_string(i));
        same += check(make(rng), rng) == Verdict::kSame;
    }
    printf("%s: %d of %d random graphs verified and matched\n", what, same, cases);
    EXPECT_GE(same * 2, cases) << what << ": only " << same << " of " << cases << " verified";
}

/* ---- element-wise and broadcast ---------------------------------------------------------- */

TEST_F(CudaEmu, ElementwiseOperatorsMatchTheCpu) {
    fuzz("unary", 120, 1, [](Rng& r) {
        const int p = r.in(1, 32);
        Operand x{r.shape(r.in(1, 6), 5), p, false};
        switch (r.in(0, 7)) {
            case 0:
                return one_node("relu", {x});
            case 1:
                return one_node("abs", {x});
            case 2:
                return one_node("negative", {x});
            case 3:
                return one_node("cvm_precision", {x});
            case 4: {
                const int32_t lo = r.value(32), hi = r.value(32);
                return one_node("clip", {x},
                                {{"a_min", std::to_string(std::min(lo, hi))},
                                 {"a_max", std::to_string(std::max(lo, hi))}});
            }
            case 5:
                return one_node("cvm_clip", {x}, {{"precision", std::to_string(r.in(1, 32))}});
            case 6:
                return one_node("cvm_right_shift", {x},
                                {{"precision", std::to_string(r.in(1, 32))},
                                 {"shift_bit", std::to_string(r.in(1, 33))}});
            default:
                x.precision = r.in(1, 16);
                return one_node("cvm_left_shift", {x},
                                {{"precision", std::to_string(r.in(1, 32))},
                                 {"shift_bit", std::to_string(r.in(1, 32 - x.precision))}});
        }
    });
}

TEST_F(CudaEmu, BinaryAndBroadcastOperatorsMatchTheCpu) {
    const char* const ops[] = {"elemwise_add",      "elemwise_sub",  "broadcast_add",
                               "broadcast_sub",     "broadcast_mul", "broadcast_div",
                               "broadcast_greater", "broadcast_max"};
    fuzz("binary", 160, 2, [&](Rng& r) {
        const std::string op = ops[r.in(0, 7)];
        const bool elemwise = op.compare(0, 8, "elemwise") == 0;
        std::vector<int32_t> out = r.shape(r.in(1, 6), 4), a = out, b = out;
        if (!elemwise) {
            // Each side drops leading dims or sets some to 1.
            a.erase(a.begin(), a.begin() + r.in(0, static_cast<int32_t>(a.size()) - 1));
            b.erase(b.begin(), b.begin() + r.in(0, static_cast<int32_t>(b.size()) - 1));
            for (auto& d : a) d = r.in(0, 2) ? d : 1;
            for (auto& d : b) d = r.in(0, 2) ? d : 1;
            if (r.in(0, 4) == 0) b = {1};
        }
        const int pa = op == "broadcast_mul" ? r.in(1, 16) : r.in(1, 31);
        const int pb = op == "broadcast_mul" ? r.in(1, 16) : r.in(1, 31);
        return one_node(op, {{a, pa, r.coin()}, {b, pb, r.coin()}});
    });
}

/* ---- reductions ------------------------------------------------------------------------- */

TEST_F(CudaEmu, ReductionsMatchTheCpu) {
    fuzz("reduce", 160, 3, [](Rng& r) {
        const int rank = r.in(1, 5);
        Operand x{r.shape(rank, 6), r.in(1, 16), r.coin()};
        std::vector<int32_t> axes;
        for (int d = 0; d < rank; ++d)
            if (r.in(0, 2) == 0) axes.push_back(r.coin() ? d : d - rank);
        std::vector<std::pair<std::string, std::string>> attrs;
        if (!axes.empty() || r.coin()) attrs.push_back({"axis", tuple(axes)});
        if (axes.empty() && !attrs.empty()) attrs.back().second = "()";
        if (r.coin()) attrs.push_back({"keepdims", r.coin() ? "True" : "False"});
        if (r.in(0, 3) == 0) attrs.push_back({"exclude", "True"});
        return one_node(r.coin() ? "sum" : "max", {x}, attrs);
    });
}

/* ---- layout ------------------------------------------------------------------------------ */

TEST_F(CudaEmu, LayoutOperatorsMatchTheCpu) {
    fuzz("layout", 240, 4, [](Rng& r) {
        const int rank = r.in(1, 5);
        Operand x{r.shape(rank, 5), r.in(1, 32), r.coin()};
        switch (r.in(0, 9)) {
            case 0: {
                std::vector<int32_t> axes(static_cast<size_t>(rank));
                for (int d = 0; d < rank; ++d) axes[static_cast<size_t>(d)] = d;
                for (int d = rank - 1; d > 0; --d)
                    std::swap(axes[static_cast<size_t>(d)], axes[static_cast<size_t>(r.in(0, d))]);
                for (auto& a : axes) a -= r.coin() ? rank : 0;
                return one_node(
                    "transpose", {x},
                    r.in(0, 3)
                        ? std::vector<std::pair<std::string, std::string>>{{"axes", tuple(axes)}}
                        : std::vector<std::pair<std::string, std::string>>{});
            }
            case 1: {
                std::vector<Operand> parts;
                const int axis = r.in(-rank, rank - 1), a = axis < 0 ? axis + rank : axis;
                for (int k = r.in(1, 4); k > 0; --k) {
                    Operand p = x;
                    p.shape[static_cast<size_t>(a)] = r.in(1, 4);
                    p.is_const = r.coin();
                    parts.push_back(p);
                }
                return one_node("concatenate", parts, {{"axis", std::to_string(axis)}});
            }
            case 2:
                return one_node("repeat", {x},
                                {{"repeats", std::to_string(r.in(1, 3))},
                                 {"axis", std::to_string(r.in(-rank, rank - 1))}});
            case 3: {
                std::vector<int32_t> reps = r.shape(r.in(1, std::min(6, rank + 2)), 3);
                return one_node("tile", {x}, {{"reps", tuple(reps)}});
            }
            case 4: {
                std::vector<int32_t> begin, end, stride;
                const int axes = r.in(1, rank);
                for (int d = 0; d < axes; ++d) {
                    const int32_t n = x.shape[static_cast<size_t>(d)];
                    begin.push_back(r.in(-n - 1, n + 1));
                    end.push_back(r.in(-n - 1, n + 1));
                    stride.push_back(r.coin() ? r.in(1, 3) : -r.in(1, 3));
                }
                std::vector<std::pair<std::string, std::string>> attrs = {{"begin", tuple(begin)},
                                                                          {"end", tuple(end)}};
                if (r.in(0, 3)) attrs.push_back({"stride", tuple(stride)});
                return one_node("strided_slice", {x}, attrs);
            }
            case 5: {
                Operand like{x.shape, 8, true};
                for (auto& d : like.shape) d = r.in(1, d);
                std::vector<int32_t> axes;
                for (int d = 0; d < rank; ++d)
                    if (r.coin()) axes.push_back(r.coin() ? d : d - rank);
                return one_node("slice_like", {x, like},
                                axes.empty() ? std::vector<std::pair<std::string, std::string>>{}
                                             : std::vector<std::pair<std::string, std::string>>{
                                                   {"axis", tuple(axes)}});
            }
            case 6:
                return one_node("flatten", {x});
            case 7:
                return one_node("reshape", {x}, {{"shape", "(-1,)"}});
            case 8:
                return one_node("expand_dims", {x},
                                {{"axis", std::to_string(r.in(-rank - 1, rank))}});
            default: {
                x.shape.insert(x.shape.begin() + r.in(0, rank), 1);
                return one_node("squeeze", {x});
            }
        }
    });
}

/* ---- indexing ---------------------------------------------------------------------------- */

TEST_F(CudaEmu, IndexingOperatorsMatchTheCpu) {
    fuzz("index", 160, 5, [](Rng& r) {
        const int rank = r.in(1, 4);
        Operand data{r.shape(rank, 6), r.in(1, 32), r.coin()};
        Operand idx{r.shape(r.in(1, 3), 5), r.in(2, 5),
                    r.coin()};  // small indices, some out of range
        switch (r.in(0, 3)) {
            case 0:
                return one_node("take", {data, idx});
            case 1:
                return one_node("take", {data, idx},
                                {{"axis", std::to_string(r.in(-rank, rank - 1))}});
            case 2: {
                Operand table{{static_cast<int32_t>(r.in(1, 20))}, r.in(1, 32), r.coin()};
                return one_node("cvm_lut", {idx, table},
                                {{"in_dim", std::to_string(table.shape[0])}});
            }
            default: {
                Operand cond{data.shape, r.in(1, 4), r.coin()};
                if (r.coin()) cond.shape = {data.shape[0]};
                return one_node("where",
                                {cond, data, Operand{data.shape, data.precision, r.coin()}});
            }
        }
    });
}

/* ---- nn ---------------------------------------------------------------------------------- */

/* Weights are constants here: the CPU device packs them at prerun, and a conv2d or dense
 * weight fed as a graph input makes its prerun crash (a CPU device bug, outside the
 * CUDA plugin). */
TEST_F(CudaEmu, ConvolutionsMatchTheCpu) {
    fuzz("conv2d", 120, 6, [](Rng& r) {
        const int32_t n = r.in(1, 3), groups = r.in(0, 2) ? 1 : r.in(2, 3);
        const int32_t c = groups * r.in(1, 5), o = groups * r.in(1, 4);
        const int32_t h = r.in(1, 9), w = r.in(1, 9), kh = r.in(1, 3), kw = r.in(1, 3);
        const bool bias = r.coin();
        std::vector<Operand> in = {{{n, c, h, w}, r.in(1, 8), r.in(0, 3) == 0},
                                   {{o, c / groups, kh, kw}, r.in(1, 8), true}};
        if (bias) in.push_back({{o}, r.in(1, 20), r.coin()});
        const std::string pad = tuple({r.in(0, 2), r.in(0, 2)});
        return one_node("conv2d", in,
                        {{"channels", std::to_string(o)},
                         {"kernel_size", tuple({kh, kw})},
                         {"strides", tuple({r.in(1, 3), r.in(1, 3)})},
                         {"padding", pad},
                         {"dilation", tuple({r.in(1, 2), r.in(1, 2)})},
                         {"groups", std::to_string(groups)},
                         {"use_bias", bias ? "True" : "False"}});
    });
}

TEST_F(CudaEmu, DenseAndPoolingMatchTheCpu) {
    fuzz("dense/pool/upsampling", 120, 7, [](Rng& r) {
        switch (r.in(0, 2)) {
            case 0: {
                const int32_t n = r.in(1, 5), k = r.in(1, 300), units = r.in(1, 40);
                const bool bias = r.coin();
                std::vector<Operand> in = {{{n, k}, r.in(1, 8), r.in(0, 3) == 0},
                                           {{units, k}, r.in(1, 8), true}};
                if (bias) in.push_back({{units}, r.in(1, 20), r.coin()});
                return one_node(
                    "dense", in,
                    {{"units", std::to_string(units)}, {"use_bias", bias ? "True" : "False"}});
            }
            case 1: {
                const int32_t k = r.in(1, 4);
                Operand x{{r.in(1, 3), r.in(1, 3), r.in(k, 9), r.in(k, 9)}, r.in(1, 32), r.coin()};
                std::vector<std::pair<std::string, std::string>> attrs = {
                    {"pool_size", tuple({k, k})},
                    {"strides", tuple({r.in(1, 3), r.in(1, 3)})},
                    {"ceil_mode", r.coin() ? "True" : "False"}};
                const int32_t p = r.in(0, k - 1);
                attrs.push_back(
                    {"padding", r.coin() ? std::to_string(p) : tuple({p, r.in(0, k - 1)})});
                return one_node("max_pool2d", {x}, attrs);
            }
            default: {
                Operand x{r.shape(4, 4), r.in(1, 32), r.coin()};
                return one_node("upsampling", {x}, {{"scale", std::to_string(r.in(1, 4))}});
            }
        }
    });
}

/* The int8 tensor-core GEMM (igemm.cuh) at its tile edges: M (pixels), N (output
 * channels, units) and K (taps x channels) below, at and past its 64 x 64 x 64 tiles,
 * channels not a multiple of 4 (4-byte copies) or of 16 (16-byte), K long enough to be
 * split over blocks; dense inputs and weights past int8 take its exact int32 path, the
 * same bytes. */
TEST_F(CudaEmu, TensorCoreGemmTileEdgesMatchTheCpu) {
    fuzz("igemm", 60, 21, [](Rng& r) {
        if (r.coin()) {
            // Channels past 64 with 3x3 taps give K tiles enough to split K.
            const int32_t n = r.in(1, 2), c = r.in(0, 3) ? r.in(1, 40) : r.in(60, 90);
            const int32_t o = r.in(1, 70);
            const int32_t h = r.in(3, 12), w = r.in(3, 12), kh = r.in(1, 3), kw = r.in(1, 3);
            const bool bias = r.coin();
            std::vector<Operand> in = {{{n, c, h, w}, r.in(1, 12), r.in(0, 3) == 0},
                                       {{o, c, kh, kw}, r.in(1, 12), true}};
            if (bias) in.push_back({{o}, r.in(1, 32), r.coin()});
            return one_node("conv2d", in,
                            {{"channels", std::to_string(o)},
                             {"kernel_size", tuple({kh, kw})},
                             {"strides", tuple({r.in(1, 2), r.in(1, 2)})},
                             {"padding", tuple({r.in(0, 1), r.in(0, 1)})},
                             {"dilation", r.in(0, 3) ? "(1, 1)" : "(2, 1)"},
                             {"groups", "1"},
                             {"use_bias", bias ? "True" : "False"}});
        }
        const int32_t n = r.in(1, 70), k = r.in(0, 2) ? r.in(1, 200) : r.in(256, 700);
        const int32_t units = r.in(1, 70);
        const bool bias = r.coin();
        std::vector<Operand> in = {{{n, k}, r.in(0, 2) ? r.in(1, 8) : r.in(9, 20), r.in(0, 3) == 0},
                                   {{units, k}, r.in(0, 3) ? r.in(1, 8) : r.in(9, 12), true}};
        if (bias) in.push_back({{units}, r.in(1, 32), r.coin()});
        return one_node("dense", in,
                        {{"units", std::to_string(units)}, {"use_bias", bias ? "True" : "False"}});
    });
}

/* Warp-wide mma.sync operations the emulated plugin has run so far, over all kernels. */
uint64_t mma_launches() {
    void* h = dlopen((kPluginDir + "/libcvml_cuda.so").c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (!h) return 0;
    using stat_fn = int (*)(int, const char**, uint64_t*, uint64_t*, uint64_t*);
    using mma_fn = int (*)(int, uint64_t*, uint64_t*);
    auto stat = reinterpret_cast<stat_fn>(dlsym(h, "cvml_cuda_emu_kernel_stat"));
    auto mma = reinterpret_cast<mma_fn>(dlsym(h, "cvml_cuda_emu_kernel_mma"));
    uint64_t total = 0, launches, threads, coop, on_mma, ops;
    const char* name;
    for (int i = 0; stat && mma && stat(i, &name, &launches, &threads, &coop); ++i)
        if (mma(i, &on_mma, &ops)) total += on_mma;
    dlclose(h);
    return total;
}

/* A dense input declared 8-bit can still hold 128: cvm_right_shift skips its clip when
 * precision + shift_bit >= 32 (docs/cpu.md), so 2^31 - 1 >> 24, rounded, is 128. The
 * GEMM then sees its input does not fit int8 and computes in int32 (no mma.sync), with
 * the CPU's bytes; an input that fits stays on the tensor cores. */
TEST_F(CudaEmu, DenseInputPastInt8TakesTheExactInt32Path) {
    for (bool wide : {true, false}) {
        Rng rng(31);
        Graph g;
        g.operands = {{{3, 70}, 32, false}, {{20, 70}, 8, true}};
        g.nodes = {
            {"cvm_right_shift", {{"precision", "8"}, {"shift_bit", wide ? "24" : "25"}}, {0}},
            {"dense", {{"units", "20"}, {"use_bias", "False"}}, {out(0), 1}}};
        const uint64_t before = mma_launches();
        EXPECT_EQ(check(g, rng, 2), Verdict::kSame);
        // The fuzzer draws the bound 2^31 - 1 for one value in 8: every run has some.
        if (wide)
            EXPECT_EQ(mma_launches(), before) << "a wide input ran on the tensor cores";
        else
            EXPECT_GT(mma_launches(), before);
    }
}

/* Launches per kernel the emulated plugin has run so far. */
std::map<std::string, uint64_t> kernel_launches() {
    std::map<std::string, uint64_t> out;
    void* h = dlopen((kPluginDir + "/libcvml_cuda.so").c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (!h) return out;
    using stat_fn = int (*)(int, const char**, uint64_t*, uint64_t*, uint64_t*);
    auto stat = reinterpret_cast<stat_fn>(dlsym(h, "cvml_cuda_emu_kernel_stat"));
    uint64_t launches, threads, coop;
    const char* name;
    for (int i = 0; stat && stat(i, &name, &launches, &threads, &coop); ++i) out[name] = launches;
    dlclose(h);
    return out;
}

/* The kernels that launched between two kernel_launches() snapshots. */
std::set<std::string> launched_between(const std::map<std::string, uint64_t>& before,
                                       const std::map<std::string, uint64_t>& after) {
    std::set<std::string> names;
    for (const auto& k : after)
        if (k.second > (before.count(k.first) ? before.at(k.first) : 0)) names.insert(k.first);
    names.erase("widen_kernel");  // the device's own: a narrow input widened to int32
    return names;
}

std::vector<std::pair<std::string, std::string>> conv_attrs(int32_t channels, int32_t groups,
                                                            int32_t k) {
    return {{"channels", std::to_string(channels)},
            {"kernel_size", tuple({k, k})},
            {"padding", tuple({k / 2, k / 2})},
            {"groups", std::to_string(groups)},
            {"use_bias", "True"}};
}

/* conv2d -> cvm_right_shift -> relu -> elemwise_add -> cvm_clip, the chain a quantized
 * residual block ends with: the element-wise nodes run inside the convolution's stores
 * (no kernel of theirs launches), with the CPU's bytes; with groups == 1 (tensor cores)
 * and groups == channels (the grouped kernel). */
TEST_F(CudaEmu, ElementWiseTailsFuseIntoTheConvolution) {
    for (int32_t groups : {1, 8}) {
        Rng rng(40 + groups);
        Graph g;
        g.operands = {{{1, 8, 6, 6}, 8, false},
                      {{16, 8 / groups, 3, 3}, 8, true},
                      {{16}, 12, true},
                      {{1, 16, 6, 6}, 8, false}};
        g.nodes = {{"conv2d", conv_attrs(16, groups, 3), {0, 1, 2}},
                   {"cvm_right_shift", {{"precision", "8"}, {"shift_bit", "5"}}, {out(0)}},
                   {"relu", {}, {out(1)}},
                   {"elemwise_add", {}, {3, out(2)}},
                   {"cvm_clip", {{"precision", "8"}}, {out(3)}}};
        const auto before = kernel_launches();
        EXPECT_EQ(check(g, rng, 2), Verdict::kSame);
        const std::set<std::string> ran = launched_between(before, kernel_launches());
        const std::set<std::string> want = groups == 1
                                               ? std::set<std::string>{"gather_rows", "igemm_s8"}
                                               : std::set<std::string>{"conv_grouped"};
        EXPECT_EQ(ran, want) << "groups " << groups;
    }
}

/* Every case of every step a GEMM's tail decodes once per batch (cuda_step_decode):
 * right shifts with precision 1 (zero), shift_bit 31 and 32 (the sign), precision +
 * shift_bit >= 32 (no clip) and below (clipped), a clip, a multiply by a one-element
 * constant, after a plain and a split-K convolution, with the CPU's bytes; the
 * element-wise nodes run inside the GEMM (no kernel of theirs launches). */
TEST_F(CudaEmu, EveryTailStepCaseFusesBitExactly) {
    const std::vector<std::pair<int, int>> shifts = {{1, 4},   {8, 31}, {8, 32}, {24, 8},
                                                     {16, 16}, {8, 6},  {4, 1},  {2, 30}};
    int same = 0;
    for (int32_t c : {8, 96})  // 96 channels: K is split (TailsFuseIntoASplitKConvolution)
        for (const auto& ps : shifts) {
            Rng rng(70 + c + ps.first * 40 + ps.second);
            Graph g;
            g.operands = {
                {{1, c, 4, 4}, 8, false}, {{8, c, 3, 3}, 8, true}, {{8}, 12, true}, {{1}, 4, true}};
            g.nodes = {{"conv2d", conv_attrs(8, 1, 3), {0, 1, 2}},
                       {"broadcast_mul", {}, {out(0), 3}},
                       {"cvm_right_shift",
                        {{"precision", std::to_string(ps.first)},
                         {"shift_bit", std::to_string(ps.second)}},
                        {out(1)}},
                       {"clip", {{"a_min", "-1000"}, {"a_max", "100"}}, {out(2)}}};
            const auto before = kernel_launches();
            const Verdict v = check(g, rng, 2);
            same += v == Verdict::kSame;
            if (v == Verdict::kSame) {
                // 8 channels (2 words, 3x3 window): the input is gathered into rows.
                const char* gather = c == 8 ? "gather_rows" : "pack_input";
                EXPECT_EQ(launched_between(before, kernel_launches()),
                          (std::set<std::string>{gather, "igemm_s8"}))
                    << "c " << c << " precision " << ps.first << " shift_bit " << ps.second;
            }
        }
    EXPECT_GE(same, 12) << "most of these graphs must verify";
}

/* No fusion where it would be wrong: the convolution's output read twice. */
TEST_F(CudaEmu, TailsStayApartWhereTheyCannotFuse) {
    Rng rng(50);
    Graph g;
    g.operands = {{{1, 8, 6, 6}, 8, false}, {{16, 8, 3, 3}, 8, true}, {{16}, 12, true}};
    g.nodes = {{"conv2d", conv_attrs(16, 1, 3), {0, 1, 2}},
               {"relu", {}, {out(0)}},
               {"elemwise_add", {}, {out(1), out(0)}}};
    const auto before = kernel_launches();
    EXPECT_EQ(check(g, rng, 2), Verdict::kSame);
    EXPECT_EQ(launched_between(before, kernel_launches()).size(), 4u)
        << "gather_rows (8 channels), igemm_s8, relu's and elemwise_add's kernels";
}

/* K split over blocks (96 channels x 3 x 3 = 216 words: 14 K tiles for one output
 * tile): the splits add partial sums by atomics and the last one of each tile applies
 * the tail to the whole sums; forward and reverse block order pick different last
 * ones. */
TEST_F(CudaEmu, TailsFuseIntoASplitKConvolution) {
    for (const char* order : {"forward", "reverse"}) {
        setenv("CVML_CUDA_EMU_ORDER", order, 1);
        Rng rng(51);
        Graph g;
        g.operands = {{{1, 96, 4, 4}, 8, false},
                      {{8, 96, 3, 3}, 8, true},
                      {{8}, 12, true},
                      {{1, 8, 4, 4}, 8, false}};
        g.nodes = {{"conv2d", conv_attrs(8, 1, 3), {0, 1, 2}},
                   {"cvm_right_shift", {{"precision", "8"}, {"shift_bit", "6"}}, {out(0)}},
                   {"elemwise_add", {}, {out(1), 3}},
                   {"relu", {}, {out(2)}}};
        const auto before = kernel_launches();
        EXPECT_EQ(check(g, rng, 3), Verdict::kSame) << order;
        EXPECT_EQ(launched_between(before, kernel_launches()),
                  (std::set<std::string>{"pack_input", "igemm_s8"}))
            << order;
    }
    unsetenv("CVML_CUDA_EMU_ORDER");
}

/* The names of every CUDA_PATH mark in the plugin's sources (cuda_kernel.h). */
std::set<std::string> marked_paths() {
    std::set<std::string> names;
    const std::string src = CVML_CUDA_SRC;
    for (const std::string& dir : {src, src + "/op"}) {
        DIR* d = opendir(dir.c_str());
        if (!d) continue;
        while (const dirent* e = readdir(d)) {
            const std::string file = e->d_name;
            auto ends = [&file](const std::string& suffix) {
                return file.size() >= suffix.size() &&
                       file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0;
            };
            if (!ends(".cu") && !ends(".cuh") && !ends(".h")) continue;
            std::ifstream in(dir + "/" + file);
            const std::string text((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
            const std::string key = "CUDA_PATH(\"";
            for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
                const size_t end = text.find('"', at + key.size());
                if (end != std::string::npos)
                    names.insert(text.substr(at + key.size(), end - at - key.size()));
            }
        }
        closedir(d);
    }
    return names;
}

/* The marked paths the emulated plugin has passed so far. */
std::set<std::string> passed_paths() {
    std::set<std::string> names;
    void* h = dlopen((kPluginDir + "/libcvml_cuda.so").c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (!h) return names;
    auto stat = reinterpret_cast<int (*)(int, const char**, uint64_t*)>(
        dlsym(h, "cvml_cuda_emu_path_stat"));
    const char* name = nullptr;
    uint64_t passes = 0;
    for (int i = 0; stat && stat(i, &name, &passes); ++i)
        if (passes) names.insert(name);
    dlclose(h);
    return names;
}

/* Every code path the kernels mark (CUDA_PATH) runs, with the CPU's bytes: the GEMM's
 * 4- and 16-byte copies, split K, fused tails (whole and after split K), dense operands
 * past int8, the grouped kernel's tail, and a convolution weight computed by the graph
 * (packed at each run; the CPU device cannot take such a weight, so the reference is
 * the same graph with the weight constant), and a large input narrowed on several host
 * threads. */
TEST_F(CudaEmu, EveryMarkedPathRuns) {
    Rng rng(60);
    Graph wide;
    wide.operands = {{{3, 70}, 32, false}, {{20, 70}, 8, true}};
    wide.nodes = {{"cvm_right_shift", {{"precision", "8"}, {"shift_bit", "24"}}, {0}},
                  {"dense", {{"units", "20"}, {"use_bias", "False"}}, {out(0), 1}}};
    EXPECT_EQ(check(wide, rng, 1), Verdict::kSame);
    for (int32_t c : {3, 16, 96})
        for (int32_t groups : {1, 8}) {
            if (groups > 1 && c % groups) continue;
            Graph g;
            g.operands = {
                {{1, c, 5, 5}, 8, false}, {{8, c / groups, 3, 3}, 8, true}, {{8}, 12, true}};
            g.nodes = {{"conv2d", conv_attrs(8, groups, 3), {0, 1, 2}},
                       {"cvm_right_shift", {{"precision", "8"}, {"shift_bit", "6"}}, {out(0)}},
                       {"relu", {}, {out(1)}}};
            EXPECT_EQ(check(g, rng, 1), Verdict::kSame) << "c " << c << " groups " << groups;
        }
    Graph computed;  // the weight as an input: CUDA only
    computed.operands = {{{1, 6, 5, 5}, 8, false}, {{4, 6, 3, 3}, 8, false}};
    computed.nodes = {
        {"conv2d", {{"channels", "4"}, {"kernel_size", "(3, 3)"}, {"use_bias", "False"}}, {0, 1}}};
    Graph constant = computed;
    constant.operands[1].is_const = true;
    const std::vector<int32_t> x = values_for(computed.operands[0], rng);
    const std::vector<int32_t> w = values_for(computed.operands[1], rng);
    const Outcome want = run(constant, {"cpu"}, {{x}}, {{}, w});
    const Outcome got = run(computed, {"cuda"}, {{x, w}}, {{}, {}});
    ASSERT_EQ(want.rc, CVML_OK) << want.error;
    ASSERT_EQ(got.rc, CVML_OK) << got.error;
    EXPECT_TRUE(got.outputs == want.outputs) << "a computed conv2d weight";

    // A convolution reading another's output gets it packed by the writer's GEMM, as it
    // stores it (96 channels: after split K, by the last split of each tile).
    for (int32_t c : {16, 96}) {
        Graph chain;
        chain.operands = {{{1, c, 4, 4}, 8, false},
                          {{16, c, 3, 3}, 8, true},
                          {{16}, 12, true},
                          {{8, 16, 3, 3}, 8, true},
                          {{8}, 12, true}};
        chain.nodes = {{"conv2d", conv_attrs(16, 1, 3), {0, 1, 2}},
                       {"cvm_right_shift", {{"precision", "8"}, {"shift_bit", "8"}}, {out(0)}},
                       {"conv2d", conv_attrs(8, 1, 3), {out(1), 3, 4}}};
        auto before = kernel_launches();
        EXPECT_EQ(check(chain, rng, 2), Verdict::kSame) << "chain c " << c;
        EXPECT_EQ(kernel_launches()["pack_input"] - before["pack_input"], 2u)
            << "the first convolution's input packed at each of the 2 runs, the second's "
               "never: c "
            << c;
    }
    // Inputs past kNarrowPart values (int8 and int16 staging) are narrowed on several
    // threads; the values of every part reach the GPU.
    for (int32_t precision : {8, 16}) {
        Graph big;
        big.operands = {{{1, 4, 256, 300}, precision, false}};
        big.nodes = {{"negative", {}, {0}}};
        EXPECT_EQ(check(big, rng, 2), Verdict::kSame) << "precision " << precision;
    }

    const std::set<std::string> marked = marked_paths(), passed = passed_paths();
    EXPECT_GE(marked.size(), 8u) << "the sources' marks were not found in " << CVML_CUDA_SRC;
    for (const std::string& name : marked) EXPECT_TRUE(passed.count(name)) << "never ran: " << name;
}

/* ---- chains: intermediates in the plugin's arena ------------------------------------------ */

/* Random chains of same-shape operators, each reading one or two earlier results, so
 * the intermediates live in the subgraph's arena with lifetimes that overlap in many
 * ways (the plugin's memory plan places them by lifetime and size). */
TEST_F(CudaEmu, ChainsSharingTheArenaMatchTheCpu) {
    fuzz("chain", 80, 12, [](Rng& r) {
        Graph g;
        const std::vector<int32_t> shape = r.shape(r.in(1, 4), 6);
        g.operands = {{shape, 8, false}, {shape, 8, true}};
        std::vector<int> values = {0, 1};  // what a node may read
        const int nodes = r.in(2, 10);
        for (int k = 0; k < nodes; ++k) {
            const int a =
                values[static_cast<size_t>(r.in(0, static_cast<int32_t>(values.size()) - 1))];
            const int b =
                values[static_cast<size_t>(r.in(0, static_cast<int32_t>(values.size()) - 1))];
            switch (r.in(0, 6)) {
                case 0:
                    g.nodes.push_back({"relu", {}, {a}});
                    break;
                case 1:
                    g.nodes.push_back({"negative", {}, {a}});
                    break;
                case 2:
                    g.nodes.push_back({"cvm_clip", {{"precision", "8"}}, {a}});
                    break;
                case 3:
                    g.nodes.push_back({"elemwise_add", {}, {a, b}});
                    break;
                case 4:
                    g.nodes.push_back({"broadcast_max", {}, {a, b}});
                    break;
                case 5:
                    g.nodes.push_back({"where", {}, {a, b, a}});
                    break;
                default:
                    g.nodes.push_back(
                        {"cvm_right_shift", {{"precision", "8"}, {"shift_bit", "1"}}, {a}});
            }
            values.push_back(out(k));
        }
        // The last node reads from far back too, so early results stay live.
        g.nodes.push_back(
            {"elemwise_sub", {}, {out(nodes - 1), values[static_cast<size_t>(r.in(0, nodes))]}});
        return g;
    });
}

/* ---- sizes, chains, threads, fallbacks ------------------------------------------------------ */

/* More elements than 65535 blocks of 256 threads: the grid-stride loops go round more
 * than once (the element-wise, broadcast, gather, pooling and reduce kernels). */
TEST_F(CudaEmu, TensorsPastTheGridLimitMatchTheCpu) {
    Rng rng(8);
    Graph g;
    g.operands = {{{1, 1, 64, 64}, 8, false}, {{1}, 8, true}};
    g.nodes = {{"upsampling", {{"scale", "64"}}, {0}},               // (1, 1, 4096, 4096): 16.8M
               {"broadcast_add", {}, {out(0), 1}},                   // bcast_kernel
               {"relu", {}, {out(1)}},                               // relu_kernel
               {"elemwise_sub", {}, {out(2), out(1)}},               // same_kernel
               {"max_pool2d", {{"pool_size", "(2, 2)"}}, {out(3)}},  // 4.2M
               {"sum", {{"axis", "(2,)"}}, {out(4)}}};               // reduce, 2048 outputs
    EXPECT_EQ(check(g, rng, 1), Verdict::kSame);
}

/* A chain of many operators on one stream, and a CPU-only operator in the middle so
 * the graph is cut into two CUDA islands with copies both ways. */
TEST_F(CudaEmu, IslandsAroundACpuOnlyOperatorMatchTheCpu) {
    Rng rng(9);
    Graph g;
    g.operands = {{{1, 6, 6}, 8, false}};
    g.nodes = {{"relu", {}, {0}},
               {"get_valid_counts", {{"score_threshold", "0"}}, {out(0)}, 2},
               {"abs", {}, {out(1, 1)}},
               {"negative", {}, {out(2)}}};
    EXPECT_EQ(check(g, rng, 3, {"get_valid_counts_1"}), Verdict::kSame);
}

/* Issue 17: an input that another CUDA island produced is copied device to device from
 * that island's buffer, not from the host copy the CPU island in between reads. */
TEST_F(CudaEmu, AnInputFromAnotherCudaIslandIsCopiedOnTheDevice) {
    void* h = dlopen((kPluginDir + "/libcvml_cuda.so").c_str(), RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(h, nullptr);
    auto counts =
        reinterpret_cast<void (*)(cvml_cuda_emu_counts*)>(dlsym(h, "cvml_cuda_emu_counts_get"));
    dlclose(h);
    ASSERT_NE(counts, nullptr);
    Rng rng(10);
    Graph g;
    g.operands = {{{1, 6, 6}, 8, false}};
    g.nodes = {{"relu", {}, {0}},
               {"get_valid_counts", {{"score_threshold", "0"}}, {out(0)}, 2},
               {"elemwise_add", {}, {out(0), out(1, 1)}}};
    cvml_cuda_emu_counts before = {}, after = {};
    counts(&before);
    EXPECT_EQ(check(g, rng, 3, {"get_valid_counts_1"}), Verdict::kSame);
    counts(&after);
    EXPECT_EQ(after.device_to_device - before.device_to_device, 3u)
        << "relu's output into the add's island once a run";
}

/* Graphs built, run and released on several threads at once: each graph takes and
 * gives back a stream of the plugin's table, and nothing may be lost on the way. */
TEST_F(CudaEmu, GraphsOnSeveralThreadsAtOnceMatchTheCpu) {
    std::vector<std::thread> threads;
    std::vector<int> failures(4, 0);
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([t, &failures] {
            Rng rng(100 + static_cast<uint64_t>(t));
            for (int i = 0; i < 40; ++i) {
                Graph g = one_node(
                    "conv2d", {{{2, 4, 8, 8}, 8, false}, {{4, 4, 3, 3}, 8, true}, {{4}, 12, true}},
                    {{"channels", "4"}, {"kernel_size", "(3, 3)"}, {"padding", "(1, 1)"}});
                if (check(g, rng, 2) != Verdict::kSame) ++failures[static_cast<size_t>(t)];
            }
        });
    for (auto& th : threads) th.join();
    EXPECT_EQ(failures, std::vector<int>(4, 0));
    EXPECT_EQ(device_use(), DeviceUse()) << "left on the device after every graph was released";
}

/* The island policy as on a GPU: without CVML_CUDA_ISLAND_WORK a lone relu costs more
 * to copy than it computes and goes back to the CPU. */
TEST_F(CudaEmu, TheDefaultIslandPolicyKeepsTinyIslandsOnTheCpu) {
    ASSERT_EQ(cvml_release(), CVML_OK);
    unsetenv("CVML_CUDA_ISLAND_WORK");
    ASSERT_EQ(cvml_init(), CVML_OK);
    Rng rng(10);
    Graph g = one_node("relu", {{{4, 4}, 8, false}});
    const Outcome o = run(g, {"cuda"}, {{values_for(g.operands[0], rng)}}, {{}});
    ASSERT_EQ(o.rc, CVML_OK) << o.error;
    EXPECT_EQ(o.off_cuda, std::vector<std::string>{"relu_0"});
}

TEST_F(CudaEmu, OutOfDeviceMemoryLeavesTheGraphToTheCpu) {
    setenv("CVML_CUDA_EMU_MEMORY", "4096", 1);
    Rng rng(11);
    Graph g = one_node("relu", {{{64, 64}, 8, false}});  // 16 KiB a buffer
    std::vector<std::vector<std::vector<int32_t>>> sets = {{values_for(g.operands[0], rng)}};
    const Outcome cuda = run(g, {"cuda"}, sets, {{}});
    const Outcome cpu = run(g, {"cpu"}, sets, {{}});
    ASSERT_EQ(cuda.rc, CVML_OK) << cuda.error;
    EXPECT_EQ(cuda.outputs, cpu.outputs);
    EXPECT_EQ(cuda.off_cuda, std::vector<std::string>{"relu_0"});
}

TEST(CudaEmuPlugin, WithoutADeviceThePluginIsAbsentWithTheReason) {
    setenv("CVML_PLUGIN_PATH", kPluginDir.c_str(), 1);
    setenv("CVML_CUDA_EMU_DEVICES", "0", 1);
    ASSERT_EQ(cvml_init(), CVML_OK) << cvml_last_error();
    int n = 0;
    cvml_plugin_count(&n);
    bool listed = false;
    for (int i = 0; i < n; ++i) {
        const char *name, *version, *path, *reason;
        int loaded = 1;
        cvml_plugin_info(i, &name, &version, &path, &loaded, &reason);
        if (strcmp(name, "cuda") != 0) continue;
        listed = true;
        EXPECT_EQ(loaded, 0);
        EXPECT_NE(std::string(reason).find("no usable CUDA device"), std::string::npos) << reason;
    }
    EXPECT_TRUE(listed);
    const char *dev = "", *version = "";
    ASSERT_EQ(cvml_device_info(0, &dev, &version), CVML_OK);
    EXPECT_STREQ(dev, "cpu");
    EXPECT_EQ(cvml_release(), CVML_OK);
    unsetenv("CVML_CUDA_EMU_DEVICES");
    unsetenv("CVML_PLUGIN_PATH");
}

TEST(CudaEmuPlugin, ABadIslandWorkSettingIsRefused) {
    setenv("CVML_PLUGIN_PATH", kPluginDir.c_str(), 1);
    setenv("CVML_CUDA_ISLAND_WORK", "lots", 1);
    ASSERT_EQ(cvml_init(), CVML_OK) << cvml_last_error();
    const char *dev = "", *version = "";
    ASSERT_EQ(cvml_device_info(0, &dev, &version), CVML_OK);
    EXPECT_STREQ(dev, "cpu");
    EXPECT_EQ(cvml_release(), CVML_OK);
    unsetenv("CVML_CUDA_ISLAND_WORK");
    unsetenv("CVML_PLUGIN_PATH");
}

}  // namespace
