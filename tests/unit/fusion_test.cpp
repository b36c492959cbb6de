/* Prerun fusion, views and int8 storage never change a result: graphs built around the
 * cases where they could (cvm_right_shift without clip feeding conv2d with and without
 * upstream's int8 cast, intermediates that are graph outputs or read twice, an add
 * whose operand comes later, copies that are outputs) give the bytes of the scalar
 * reference without fusion, at every SIMD level and 1..3 threads. */
#include <gtest/gtest.h>
#include <stdlib.h>
#include <string.h>

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "cvml.h"
#include "device/cpu/cpu_paths.h"
#include "graph/graph.h"

namespace {

using Attrs = std::vector<std::pair<std::string, std::string>>;

struct G {
    cvml_graph* g = nullptr;
    std::mt19937 rng{7};
    int n = 0;
    cvml_tensor* in = nullptr;
    std::vector<int32_t> input;

    cvml_tensor* data(std::vector<int32_t> dims) {
        cvml_tensor* t = nullptr;
        EXPECT_EQ(cvml_graph_add_input(g, "data", (int)dims.size(), dims.data(), 8, &t), CVML_OK);
        size_t count = 1;
        for (int32_t d : dims) count *= (size_t)d;
        std::uniform_int_distribution<int32_t> u(-127, 127);
        input.resize(count);
        for (auto& v : input) v = u(rng);
        in = t;
        return t;
    }
    cvml_tensor* weight(std::vector<int32_t> dims, int bound, int prec) {
        size_t count = 1;
        for (int32_t d : dims) count *= (size_t)d;
        std::uniform_int_distribution<int32_t> u(-bound, bound);
        std::vector<int32_t> v(count);
        for (auto& x : v) x = u(rng);
        cvml_tensor* t = nullptr;
        std::string name = "w" + std::to_string(n++);
        EXPECT_EQ(cvml_graph_add_const(g, name.c_str(), (int)dims.size(), dims.data(), prec,
                                       v.data(), &t),
                  CVML_OK);
        return t;
    }
    cvml_tensor* op(const std::string& o, const Attrs& attrs, std::vector<cvml_tensor*> ins) {
        std::vector<const char*> k, v;
        for (auto& a : attrs) {
            k.push_back(a.first.c_str());
            v.push_back(a.second.c_str());
        }
        cvml_tensor* out = nullptr;
        std::string name = o + std::to_string(n++);
        EXPECT_EQ(cvml_graph_add_node(g, o.c_str(), name.c_str(), k.data(), v.data(), (int)k.size(),
                                      ins.data(), (int)ins.size(), &out, 1),
                  CVML_OK)
            << cvml_last_error();
        return out;
    }
    cvml_tensor* conv(cvml_tensor* x, int ic, int oc, int groups) {
        cvml_tensor* w = weight({oc, ic / groups, 3, 3}, 127, 8);
        cvml_tensor* b = weight({oc}, 1000, 12);
        return op("conv2d",
                  {{"channels", std::to_string(oc)},
                   {"kernel_size", "(3, 3)"},
                   {"padding", "(1, 1)"},
                   {"groups", std::to_string(groups)}},
                  {x, w, b});
    }
    cvml_tensor* rshift(cvml_tensor* x, int p, int b) {
        return op("cvm_right_shift",
                  {{"precision", std::to_string(p)}, {"shift_bit", std::to_string(b)}}, {x});
    }
};

using Builder = std::function<std::vector<cvml_tensor*>(G&)>;

std::vector<std::vector<int32_t>> run(const Builder& build, const char* simd, int threads,
                                      bool fusion) {
    setenv("CVML_SIMD", simd, 1);
    if (fusion)
        unsetenv("CVML_NO_FUSION");
    else
        setenv("CVML_NO_FUSION", "1", 1);
    cvml_init();
    cvml_context* ctx = nullptr;
    cvml_context_create(&ctx);
    cvml_context_set_threads(ctx, threads);
    G g;
    cvml_graph_create(ctx, &g.g);
    std::vector<cvml_tensor*> outs = build(g);
    std::vector<std::vector<int32_t>> result;
    EXPECT_EQ(cvml_graph_set_outputs(g.g, outs.data(), (int)outs.size()), CVML_OK);
    EXPECT_EQ(cvml_graph_verify(g.g), CVML_OK) << cvml_last_error();
    EXPECT_EQ(cvml_tensor_set_i32(g.in, g.input.data(), g.input.size()), CVML_OK);
    EXPECT_EQ(cvml_graph_run(g.g), CVML_OK) << cvml_last_error();
    for (cvml_tensor* t : outs) {
        size_t n = 0;
        cvml_tensor_element_count(t, &n);
        std::vector<int32_t> v(n);
        EXPECT_EQ(cvml_tensor_get_i32(t, v.data(), n), CVML_OK);
        result.push_back(v);
    }
    cvml_graph_release(g.g);
    cvml_context_release(ctx);
    cvml_release();
    unsetenv("CVML_SIMD");
    unsetenv("CVML_NO_FUSION");
    return result;
}

void check_all(const Builder& build) {
    auto ref = run(build, "scalar", 1, false);
    for (const char* simd : {"scalar", "avx2", "avx512"})
        for (int threads = 1; threads <= 3; ++threads)
            for (int fusion = 0; fusion <= 1; ++fusion)
                EXPECT_EQ(run(build, simd, threads, fusion), ref)
                    << simd << " threads=" << threads << " fusion=" << fusion;
}

TEST(Fusion, UnclippedShiftFeedsCastAndGroupedConv) {
    // p + b >= 32: no clip, so values beyond int8 reach conv2d: groups == 1 casts them
    // to int8, groups == 2 does not; neither may see a narrowed tensor.
    check_all([](G& g) {
        cvml_tensor* x = g.data({1, 4, 9, 11});
        cvml_tensor* y = g.rshift(g.conv(x, 4, 4, 1), 8, 24);
        cvml_tensor* a = g.rshift(g.conv(y, 4, 6, 1), 8, 8);
        cvml_tensor* b = g.rshift(g.conv(y, 4, 6, 2), 8, 8);
        return std::vector<cvml_tensor*>{a, b};
    });
}

TEST(Fusion, ShiftQuirksInTails) {
    check_all([](G& g) {
        cvml_tensor* x = g.data({1, 3, 8, 8});
        cvml_tensor* c = g.conv(x, 3, 8, 1);
        cvml_tensor* a = g.rshift(c, 1, 4);  // p == 1: zeros
        cvml_tensor* c2 = g.conv(x, 3, 8, 1);
        cvml_tensor* b = g.rshift(c2, 8, 31);  // b >= 31: x >> 31
        cvml_tensor* c3 = g.conv(x, 3, 8, 1);
        cvml_tensor* d = g.op("clip", {{"a_min", "-300"}, {"a_max", "200"}}, {g.rshift(c3, 16, 3)});
        cvml_tensor* e = g.op("relu", {}, {d});  // d is not int8-bounded
        return std::vector<cvml_tensor*>{a, b, e};
    });
}

TEST(Fusion, ClipRangeAwayFromZero) {
    // A clip to [200, 300] fused after values bounded by 127 gives 200..300: its bound is
    // the clipped range, not its input's, so the tensor the two readers share (they
    // keep it from being fused further) is int16, never int8.
    check_all([](G& g) {
        cvml_tensor* x = g.data({1, 3, 6, 6});
        cvml_tensor* c = g.rshift(g.conv(x, 3, 4, 1), 8, 8);
        cvml_tensor* d = g.op("clip", {{"a_min", "200"}, {"a_max", "300"}}, {c});
        return std::vector<cvml_tensor*>{g.op("relu", {}, {d}),
                                         g.op("cvm_clip", {{"precision", "16"}}, {d})};
    });
}

TEST(Fusion, IntermediateOutputsAndSharedTensors) {
    check_all([](G& g) {
        cvml_tensor* x = g.data({2, 4, 7, 7});
        cvml_tensor* c = g.conv(x, 4, 8, 1);
        cvml_tensor* s = g.rshift(c, 8, 9);  // graph output and read again
        cvml_tensor* r = g.op("relu", {}, {s});
        cvml_tensor* t = g.rshift(g.conv(r, 8, 8, 8), 8, 6);  // depthwise
        cvml_tensor* twice = g.op("elemwise_add", {}, {t, t});
        return std::vector<cvml_tensor*>{s, twice, c};
    });
}

TEST(Fusion, ResidualOperandOrder) {
    // The add's operand is produced after the conv that heads the chain: no fusion of
    // the add into that conv; the other order fuses.
    check_all([](G& g) {
        cvml_tensor* x = g.data({1, 4, 6, 6});
        cvml_tensor* a = g.rshift(g.conv(x, 4, 4, 1), 8, 8);
        cvml_tensor* b = g.op("relu", {}, {g.rshift(g.conv(x, 4, 4, 1), 8, 8)});
        cvml_tensor* s1 =
            g.op("cvm_clip", {{"precision", "8"}}, {g.op("elemwise_add", {}, {a, b})});
        cvml_tensor* c = g.rshift(g.conv(s1, 4, 4, 1), 8, 8);
        cvml_tensor* s2 = g.op("relu", {}, {g.op("elemwise_add", {}, {b, c})});
        return std::vector<cvml_tensor*>{s2};
    });
}

/* max_pool2d between convolutions reads and writes int8 storage; at avx512 a column
 * stride of 2 splits each row into phases in registers, and each thread pools a band of
 * output rows of every plane, building only the rows its band reads. Rows past one
 * 64-byte vector, rows of 16 to 31 and of 32 to 64 (avx2's overlapping blocks), odd
 * widths, padding, ceil_mode, strides 1 and 3 and a 9x9 window around it; bands of one
 * row and empty ones (5 threads for 4 output rows). */
TEST(Fusion, Int8PoolsBetweenConvs) {
    const Attrs pools[] = {
        {{"pool_size", "(3, 3)"}, {"strides", "(2, 2)"}, {"padding", "(1, 1)"}},
        {{"pool_size", "(2, 2)"}, {"strides", "(2, 2)"}},
        {{"pool_size", "(3, 3)"}, {"strides", "(2, 2)"}, {"ceil_mode", "True"}},
        {{"pool_size", "(3, 2)"}, {"strides", "(1, 2)"}, {"padding", "(1, 1)"}},
        {{"pool_size", "(3, 3)"}, {"strides", "(3, 3)"}, {"padding", "(1, 1)"}},
        {{"pool_size", "(9, 9)"}, {"strides", "(1, 1)"}, {"padding", "(4, 4)"}},
    };
    for (const Attrs& pool : pools)
        for (int h : {7, 30})
            for (int w : {9, 24, 40, 70, 131}) {
                const auto build = [&](G& g) {
                    cvml_tensor* x = g.data({1, 3, h, w});
                    cvml_tensor* a = g.rshift(g.conv(x, 3, 4, 1), 8, 8);  // negatives: -128 pads
                    cvml_tensor* p = g.op("max_pool2d", pool, {a});
                    return std::vector<cvml_tensor*>{g.rshift(g.conv(p, 4, 2, 1), 8, 8)};
                };
                check_all(build);
                EXPECT_EQ(run(build, "avx512", 5, true), run(build, "scalar", 1, false))
                    << h << "x" << w << " at 5 threads";
            }
}

/* Values proven within int16 (but not int8) between kernels that take int16: stored as
 * int16; a maxpool, element-wise kernels, a residual add and a view read them. */
std::vector<cvml_tensor*> int16_graph(G& g, std::vector<cvml_tensor*>* narrow) {
    cvml_tensor* x = g.data({1, 4, 10, 12});
    cvml_tensor* a = g.op("relu", {}, {g.rshift(g.conv(x, 4, 6, 1), 16, 3)});  // <= 32767
    cvml_tensor* p = g.op("max_pool2d", {{"pool_size", "(2, 2)"}, {"strides", "(1, 1)"}}, {a});
    cvml_tensor* q = g.op("cvm_clip", {{"precision", "12"}}, {p});  // <= 2047
    cvml_tensor* b =
        g.op("cvm_clip", {{"precision", "11"}}, {g.rshift(g.conv(x, 4, 6, 1), 16, 2)});  // <= 1023
    cvml_tensor* b2 = g.op("max_pool2d", {{"pool_size", "(2, 2)"}, {"strides", "(1, 1)"}}, {b});
    cvml_tensor* r = g.op("elemwise_add", {}, {q, b2});  // <= 3070
    cvml_tensor* f = g.op("flatten", {}, {r});
    cvml_tensor* w = g.weight({7, 6 * 9 * 11}, 127, 8);
    cvml_tensor* d = g.rshift(
        g.op("dense", {{"units", "7"}, {"use_bias", "False"}}, {g.rshift(f, 8, 4), w}), 10, 9);
    cvml_tensor* s = g.rshift(r, 8, 5);
    cvml_tensor* c = g.rshift(g.conv(s, 6, 3, 1), 8, 6);
    if (narrow) *narrow = {p, q, b2, r};
    return std::vector<cvml_tensor*>{d, c};
}

TEST(Fusion, Int16Intermediates) {
    check_all([](G& g) { return int16_graph(g, nullptr); });
    for (const char* simd : {"avx2", "avx512"}) {
        setenv("CVML_SIMD", simd, 1);
        cvml_init();
        cvml_context* ctx = nullptr;
        cvml_context_create(&ctx);
        G g;
        cvml_graph_create(ctx, &g.g);
        std::vector<cvml_tensor*> narrow;
        std::vector<cvml_tensor*> outs = int16_graph(g, &narrow);
        ASSERT_EQ(cvml_graph_set_outputs(g.g, outs.data(), (int)outs.size()), CVML_OK);
        ASSERT_EQ(cvml_graph_verify(g.g), CVML_OK) << cvml_last_error();
        ASSERT_EQ(cvml_tensor_set_i32(g.in, g.input.data(), g.input.size()), CVML_OK);
        ASSERT_EQ(cvml_graph_run(g.g), CVML_OK) << cvml_last_error();
        // A CPU or build without the level (an aarch64 build has neither) runs the
        // scalar kernels, which narrow some of these tensors and not others (max_pool2d
        // keeps int32 there): only the level's own choice is checked.
        const bool has_level = strcmp(cvml_cpu_simd_level(), simd) == 0;
        for (cvml_tensor* t : narrow) {
            if (!has_level) continue;
            EXPECT_EQ(reinterpret_cast<const ir_tensor*>(t)->storage, STORAGE_INT16)
                << simd << " " << reinterpret_cast<const ir_tensor*>(t)->name;
        }
        for (cvml_tensor* t : outs)  // graph outputs stay int32
            EXPECT_EQ(reinterpret_cast<const ir_tensor*>(t)->storage, STORAGE_INT32) << simd;
        cvml_graph_release(g.g);
        cvml_context_release(ctx);
        cvml_release();
        unsetenv("CVML_SIMD");
    }
}

TEST(Fusion, CopiesAsViews) {
    check_all([](G& g) {
        cvml_tensor* x = g.data({1, 4, 5, 5});
        cvml_tensor* c = g.op("relu", {}, {g.rshift(g.conv(x, 4, 4, 1), 8, 8)});
        cvml_tensor* f = g.op("flatten", {}, {c});
        cvml_tensor* e = g.op("expand_dims", {{"axis", "1"}}, {f});
        cvml_tensor* q = g.op("squeeze", {{"axis", "(1,)"}}, {e});
        cvml_tensor* w = g.weight({10, 100}, 127, 8);
        cvml_tensor* d =
            g.rshift(g.op("dense", {{"units", "10"}, {"use_bias", "False"}}, {q, w}), 8, 9);
        cvml_tensor* r = g.op("reshape", {{"shape", "(1, 4, 25)"}}, {c});
        return std::vector<cvml_tensor*>{d, f, r};
    });
}

}  // namespace

namespace {

/* conv2d and dense whose weights are the graph input rather than constants (possible
 * with the builder API): the fast paths pack constant weights at prerun, so these
 * must take the paths that read weights at run time, at every level. */
TEST(Fusion, WeightsThatAreNotConstants) {
    for (const char* simd : {"scalar", "avx2", "avx512"}) {
        setenv("CVML_SIMD", simd, 1);
        for (const char* op : {"conv2d", "dense"}) {
            cvml_init();
            cvml_context* ctx = nullptr;
            cvml_context_create(&ctx);
            cvml_graph* g = nullptr;
            cvml_graph_create(ctx, &g);
            const bool conv = strcmp(op, "conv2d") == 0;
            std::vector<int32_t> wdims =
                conv ? std::vector<int32_t>{2, 1, 1, 1} : std::vector<int32_t>{2, 3};
            std::vector<int32_t> xdims =
                conv ? std::vector<int32_t>{1, 1, 2, 2} : std::vector<int32_t>{1, 3};
            std::vector<int32_t> xv =
                conv ? std::vector<int32_t>{1, 2, 3, 4} : std::vector<int32_t>{1, 2, 3};
            cvml_tensor *w = nullptr, *x = nullptr, *y = nullptr;
            ASSERT_EQ(cvml_graph_add_input(g, "data", (int)wdims.size(), wdims.data(), 8, &w),
                      CVML_OK);
            ASSERT_EQ(
                cvml_graph_add_const(g, "x", (int)xdims.size(), xdims.data(), 8, xv.data(), &x),
                CVML_OK);
            const char* ck[] = {"channels", "kernel_size", "use_bias"};
            const char* cv[] = {"2", "(1, 1)", "False"};
            const char* dk[] = {"units", "use_bias"};
            const char* dv[] = {"2", "False"};
            cvml_tensor* ins[2] = {x, w};
            ASSERT_EQ(cvml_graph_add_node(g, op, "n", conv ? ck : dk, conv ? cv : dv, conv ? 3 : 2,
                                          ins, 2, &y, 1),
                      CVML_OK)
                << cvml_last_error();
            ASSERT_EQ(cvml_graph_set_outputs(g, &y, 1), CVML_OK);
            ASSERT_EQ(cvml_graph_verify(g), CVML_OK)
                << simd << " " << op << ": " << cvml_last_error();
            // Prepared before the weights are set, then run with two sets of them.
            ASSERT_EQ(cvml_graph_prerun(g), CVML_OK)
                << simd << " " << op << ": " << cvml_last_error();
            for (int pass = 0; pass < 2; ++pass) {
                std::vector<int32_t> wv =
                    conv ? std::vector<int32_t>{3, -2} : std::vector<int32_t>{1, 1, 1, -1, 0, 2};
                std::vector<int32_t> want = conv ? std::vector<int32_t>{3, 6, 9, 12, -2, -4, -6, -8}
                                                 : std::vector<int32_t>{6, 5};
                if (pass == 1) {
                    for (auto& v : wv) v = -v;
                    for (auto& v : want) v = -v;
                }
                ASSERT_EQ(cvml_tensor_set_i32(w, wv.data(), wv.size()), CVML_OK);
                ASSERT_EQ(cvml_graph_run(g), CVML_OK)
                    << simd << " " << op << ": " << cvml_last_error();
                std::vector<int32_t> got(want.size());
                ASSERT_EQ(cvml_tensor_get_i32(y, got.data(), got.size()), CVML_OK);
                EXPECT_EQ(got, want) << simd << " " << op << " pass " << pass;
            }
            cvml_graph_release(g);
            cvml_context_release(ctx);
            cvml_release();
        }
        unsetenv("CVML_SIMD");
    }
}

}  // namespace

/* The depthwise conv2d on an int8-stored input puts its sums through the fused tail in
 * registers at avx512: every kind of chain (cvm_right_shift and clip, with a residual
 * add, without the clip when p + b >= 32, b >= 31, relu alone, no tail at all), rows of
 * one chunk, several and a partial one, column strides 1 and 2. */
TEST(Fusion, DepthwiseTails) {
    for (int w : {7, 40, 131})
        for (int stride : {1, 2})
            check_all([&](G& g) {
                cvml_tensor* x = g.data({1, 3, 6, w});
                cvml_tensor* r = g.rshift(g.conv(x, 3, 4, 1), 8, 8);  // int8, 4 channels
                const std::string s =
                    "(" + std::to_string(stride) + ", " + std::to_string(stride) + ")";
                auto dw = [&](cvml_tensor* in) {
                    cvml_tensor* wt = g.weight({4, 1, 3, 3}, 127, 8);
                    cvml_tensor* b = g.weight({4}, 1000, 12);
                    return g.op("conv2d",
                                {{"channels", "4"},
                                 {"kernel_size", "(3, 3)"},
                                 {"padding", "(1, 1)"},
                                 {"strides", s},
                                 {"groups", "4"}},
                                {in, wt, b});
                };
                cvml_tensor* a = g.rshift(dw(r), 8, 8);
                cvml_tensor* res = g.rshift(dw(r), 8, 8);
                cvml_tensor* sum =
                    g.op("cvm_clip", {{"precision", "8"}}, {g.op("elemwise_add", {}, {res, a})});
                cvml_tensor* wide = g.rshift(dw(r), 16, 20);  // p + b >= 32: no clip
                cvml_tensor* sra = g.rshift(dw(r), 8, 31);
                cvml_tensor* relu = g.op("relu", {}, {dw(r)});
                cvml_tensor* bare = dw(r);
                return std::vector<cvml_tensor*>{sum, wide, sra, relu, bare};
            });
}

/* At avx512 the rounding addend of a cvm_right_shift that ends a conv2d is added to the
 * GEMM's start (its bias is there already) and the round becomes a plain shift. Sums at
 * the extremes verification allows (a bias of +-(2^30 - 1), full int8 products), shifts
 * 1, 8 and 30, with the clip (a matched chain, int8 output) and without it (p + b >= 32:
 * the generic chain, int32 output). */
TEST(Fusion, RoundFoldAtExtremes) {
    for (int shift : {1, 8, 30})
        check_all([&](G& g) {
            cvml_tensor* x = g.data({1, 8, 5, 7});
            std::vector<int32_t> wv(16 * 8 * 9), wdims = {16, 8, 3, 3}, bdims = {16};
            for (size_t i = 0; i < wv.size(); ++i) wv[i] = i % 5 == 0 ? -127 : 127;
            std::vector<int32_t> bias(16);
            for (int i = 0; i < 16; ++i) bias[i] = i % 2 ? (1 << 30) - 1 : -((1 << 30) - 1) + i;
            cvml_tensor *w = nullptr, *b = nullptr;
            EXPECT_EQ(cvml_graph_add_const(g.g, "w_edge", 4, wdims.data(), 8, wv.data(), &w),
                      CVML_OK);
            EXPECT_EQ(cvml_graph_add_const(g.g, "b_edge", 1, bdims.data(), 31, bias.data(), &b),
                      CVML_OK);
            const Attrs conv = {
                {"channels", "16"}, {"kernel_size", "(3, 3)"}, {"padding", "(1, 1)"}};
            cvml_tensor* clipped = g.rshift(g.op("conv2d", conv, {x, w, b}), 8, shift);
            cvml_tensor* wide = g.rshift(g.op("conv2d", conv, {x, w, b}), 32 - shift, shift);
            return std::vector<cvml_tensor*>{g.op("relu", {}, {clipped}), wide};
        });
}

/* A convolution and the chain nearly every one ends in: conv2d (k x k, padding k / 2)
 * -> cvm_right_shift to 8 bits, then optionally a residual add (a 1x1 conv of the same
 * input at the same stride, shifted) clipped to int8, then optionally relu; and a 1x1
 * conv after it, so its output is stored as int8 (the tails that saturate to int8). */
struct TailCase {
    int c, h, w, o, k, stride;
    bool add, relu;
};

std::vector<cvml_tensor*> conv_tail_chain(G& g, const TailCase& k) {
    const std::string st = "(" + std::to_string(k.stride) + ", " + std::to_string(k.stride) + ")";
    cvml_tensor* x = g.data({1, k.c, k.h, k.w});
    // The residual first, so that it is ready when the main conv runs and the add joins
    // the main conv's tail (in file order, as a network's block input is).
    cvml_tensor* r = nullptr;
    if (k.add) {
        cvml_tensor* wr = g.weight({k.o, k.c, 1, 1}, 127, 8);
        cvml_tensor* br = g.weight({k.o}, 100, 8);
        r = g.rshift(
            g.op("conv2d",
                 {{"channels", std::to_string(k.o)}, {"kernel_size", "(1, 1)"}, {"strides", st}},
                 {x, wr, br}),
            8, 6);
    }
    cvml_tensor* w = g.weight({k.o, k.c, k.k, k.k}, 127, 8);
    cvml_tensor* b = g.weight({k.o}, 1000, 12);
    const std::string ks = "(" + std::to_string(k.k) + ", " + std::to_string(k.k) + ")";
    const std::string pad = "(" + std::to_string(k.k / 2) + ", " + std::to_string(k.k / 2) + ")";
    cvml_tensor* y = g.rshift(g.op("conv2d",
                                   {{"channels", std::to_string(k.o)},
                                    {"kernel_size", ks},
                                    {"strides", st},
                                    {"padding", pad}},
                                   {x, w, b}),
                              8, 8);
    if (k.add) y = g.op("cvm_clip", {{"precision", "8"}}, {g.op("elemwise_add", {}, {y, r})});
    if (k.relu) y = g.op("relu", {}, {y});
    cvml_tensor* w2 = g.weight({4, k.o, 1, 1}, 127, 8);
    cvml_tensor* b2 = g.weight({4}, 100, 8);
    return {g.rshift(g.op("conv2d", {{"channels", "4"}, {"kernel_size", "(1, 1)"}}, {y, w2, b2}), 8,
                     8)};
}

/* Whether this CPU runs the avx512 level. */
bool has_avx512() {
    setenv("CVML_SIMD", "avx512", 1);
    cvml_init();
    const bool avx512 = strcmp(cvml_cpu_simd_level(), "avx512") == 0;
    cvml_release();
    unsetenv("CVML_SIMD");
    return avx512;
}

/* Outputs at most 8 wide with the saturating int8 tail: at avx512 the direct depthwise
 * runs two planes in one vector (dw_slide_pair). Widths 1 to 8 (stride 1) and 2 to 8
 * (stride 2, odd and even inputs), an odd channel count (a plane left for the one-plane
 * kernel), two images (a pair across them), padding 1 and 0; and the mode must run. */
TEST(Fusion, DepthwisePairsOfSmallPlanes) {
    const int64_t before = cpu_path_count(CPU_PATH_DW_PAIRS);
    for (int w : {1, 3, 7, 8, 15, 16})
        for (int stride : {1, 2})
            for (int pad : {0, 1}) {
                if (w + 2 * pad < 3) continue;
                check_all([&](G& g) {
                    cvml_tensor* x = g.data({2, 5, 5, w});
                    const std::string s =
                        "(" + std::to_string(stride) + ", " + std::to_string(stride) + ")";
                    const std::string p =
                        "(" + std::to_string(pad) + ", " + std::to_string(pad) + ")";
                    cvml_tensor* wt = g.weight({5, 1, 3, 3}, 127, 8);
                    cvml_tensor* b = g.weight({5}, 1000, 12);
                    cvml_tensor* clipped = g.op("cvm_clip", {{"precision", "8"}}, {x});
                    cvml_tensor* dw = g.op("conv2d",
                                           {{"channels", "5"},
                                            {"kernel_size", "(3, 3)"},
                                            {"padding", p},
                                            {"strides", s},
                                            {"groups", "5"}},
                                           {clipped, wt, b});
                    // relu after the int8 shift (a clip of [0, 127], saturating) into a
                    // conv that reads it as int8 (a graph output would stay int32).
                    cvml_tensor* y = g.op("relu", {}, {g.rshift(dw, 8, 6)});
                    return std::vector<cvml_tensor*>{g.rshift(g.conv(y, 5, 4, 1), 8, 8)};
                });
            }
    if (has_avx512()) {
        EXPECT_GT(cpu_path_count(CPU_PATH_DW_PAIRS), before);
    }
}

/* The direct depthwise's saturating int8 tail on rows of more than two 8-column chunks
 * (avx2 slides them chunk by chunk, the last one partial): widths 17 to 57, strides 1
 * and 2, padding 1 and 0, against the scalar level. */
TEST(Fusion, DepthwiseSaturatingTailWideRows) {
    for (int w : {17, 23, 29, 40, 57})
        for (int stride : {1, 2})
            for (int pad : {0, 1}) {
                check_all([&](G& g) {
                    cvml_tensor* x = g.data({1, 3, 6, w});
                    const std::string s =
                        "(" + std::to_string(stride) + ", " + std::to_string(stride) + ")";
                    const std::string p =
                        "(" + std::to_string(pad) + ", " + std::to_string(pad) + ")";
                    cvml_tensor* wt = g.weight({3, 1, 3, 3}, 127, 8);
                    cvml_tensor* b = g.weight({3}, 1000, 12);
                    cvml_tensor* clipped = g.op("cvm_clip", {{"precision", "8"}}, {x});
                    cvml_tensor* dw = g.op("conv2d",
                                           {{"channels", "3"},
                                            {"kernel_size", "(3, 3)"},
                                            {"padding", p},
                                            {"strides", s},
                                            {"groups", "3"}},
                                           {clipped, wt, b});
                    cvml_tensor* y = g.op("relu", {}, {g.rshift(dw, 8, 6)});
                    return std::vector<cvml_tensor*>{g.rshift(g.conv(y, 3, 4, 1), 8, 8)};
                });
            }
}

/* At avx512 the GEMM micro-kernel puts whole tiles (8 output channels, 33..48 columns)
 * through the tail in registers and stores int8 (gemm_tail): with and without a residual
 * add, relu or the plain int8 clip; flat strips whose columns skip the padding (a 3x3
 * stride-2 conv whose output is too wide for broadcast mode), taps mode (stride 1), a
 * 1x1 conv on the input itself, and channel counts with a partial last block, whose rows
 * take the tile function. */
TEST(Fusion, TailInGemmMicroKernel) {
    const TailCase cases[] = {
        {8, 13, 29, 16, 3, 2, false, true},  {8, 13, 29, 12, 3, 2, true, false},
        {8, 9, 20, 16, 3, 1, true, true},    {4, 9, 20, 24, 3, 1, false, false},
        {16, 10, 10, 16, 1, 1, false, true}, {16, 10, 10, 8, 1, 1, true, true},
    };
    const int64_t before = cpu_path_count(CPU_PATH_CONV_FUSED_TAIL);
    for (const TailCase& k : cases) check_all([&](G& g) { return conv_tail_chain(g, k); });
    // Where the CPU has avx512, the runs at that level took the fused tail.
    if (has_avx512()) {
        EXPECT_GT(cpu_path_count(CPU_PATH_CONV_FUSED_TAIL), before);
    }
}

/* The same chains after broadcast mode's convolutions (3x3, stride 1 or 2, padding 1,
 * output widths a multiple of 7; or 1x1, stride 1, outputs 7 or 14 wide; 32-channel
 * blocks), whose tail runs on each channel's pixels once its sums are transposed: with and
 * without a residual add, one and many segments a row, an int8 output (the matched chain)
 * and, where the conv's output is the graph's, int32 (the tile function). */
TEST(Fusion, TailInBroadcastMode) {
    const TailCase cases[] = {
        {8, 7, 7, 32, 3, 1, false, true},   {5, 7, 7, 64, 3, 1, true, false},
        {16, 3, 14, 32, 3, 1, true, true},  {4, 9, 28, 32, 3, 1, false, false},
        {12, 2, 21, 64, 3, 1, true, true},  {8, 14, 14, 32, 3, 2, true, true},
        {6, 13, 27, 32, 3, 2, false, true}, {16, 7, 7, 32, 1, 1, true, true},
        {9, 5, 7, 64, 1, 1, false, true},   {20, 14, 14, 32, 1, 1, true, false},
    };
    const int64_t before = cpu_path_count(CPU_PATH_CONV_BCAST);
    for (const TailCase& k : cases) {
        check_all([&](G& g) { return conv_tail_chain(g, k); });
        check_all([&](G& g) {
            // The conv's own output as the graph's: stored as int32.
            cvml_tensor* x = g.data({1, k.c, k.h, k.w});
            cvml_tensor* w = g.weight({k.o, k.c, k.k, k.k}, 127, 8);
            cvml_tensor* b = g.weight({k.o}, 1000, 12);
            auto pair = [](int v) {
                return "(" + std::to_string(v) + ", " + std::to_string(v) + ")";
            };
            return std::vector<cvml_tensor*>{g.rshift(g.op("conv2d",
                                                           {{"channels", std::to_string(k.o)},
                                                            {"kernel_size", pair(k.k)},
                                                            {"strides", pair(k.stride)},
                                                            {"padding", pair(k.k / 2)}},
                                                           {x, w, b}),
                                                      8, 8)};
        });
    }
    if (has_avx512()) {
        EXPECT_GT(cpu_path_count(CPU_PATH_CONV_BCAST), before);
    }
}

/* MRT's requantization: conv2d -> cvm_right_shift -> broadcast_mul by a one-element
 * constant -> cvm_right_shift -> relu becomes one fused conv2d (EP_MUL), and a
 * broadcast_mul that heads a chain runs as an element-wise kernel on any storage. The
 * constant first or second, of shape [1] or [1, 1, 1, 1], negative or large (products
 * up to the 32 bits verification allows); products that must stay separate (a constant that adds a
 * dimension, a scale that is not a constant) give the same bytes too. */
TEST(Fusion, ScalarMultipliesFuse) {
    check_all([](G& g) {
        cvml_tensor* x = g.data({1, 4, 6, 7});
        auto scalar = [&](std::vector<int32_t> dims, int32_t v, int prec) {
            cvml_tensor* t = nullptr;
            std::string name = "s" + std::to_string(g.n++);
            EXPECT_EQ(cvml_graph_add_const(g.g, name.c_str(), (int)dims.size(), dims.data(), prec,
                                           &v, &t),
                      CVML_OK)
                << cvml_last_error();
            return t;
        };
        cvml_tensor* c1 = g.rshift(g.conv(x, 4, 8, 1), 16, 1);
        cvml_tensor* m1 = g.op("broadcast_mul", {}, {c1, scalar({1}, 23456, 16)});
        cvml_tensor* a = g.op("relu", {}, {g.rshift(m1, 8, 22)});
        cvml_tensor* c2 = g.op("cvm_clip", {{"precision", "16"}}, {g.conv(x, 4, 8, 1)});
        cvml_tensor* m2 = g.op("broadcast_mul", {}, {scalar({1, 1, 1, 1}, -30000, 16), c2});
        cvml_tensor* b = g.rshift(m2, 8, 21);
        // int8 in, element-wise head with a tail of its own, int8 out for the next conv.
        cvml_tensor* m3 = g.op("broadcast_mul", {}, {a, scalar({1}, 70000, 18)});
        cvml_tensor* d = g.rshift(g.conv(g.rshift(m3, 8, 16), 8, 4, 1), 8, 10);
        // Unfused: the constant adds a dimension; the scale is computed, not a constant.
        cvml_tensor* m4 = g.op("broadcast_mul", {}, {b, scalar({1, 1, 1, 1, 1}, 7, 4)});
        cvml_tensor* m5 =
            g.op("broadcast_mul", {},
                 {b, g.op("sum", {{"axis", "(1, 2, 3)"}, {"keepdims", "True"}}, {b})});
        // A large factor: products up to precision 32.
        cvml_tensor* c3 = g.rshift(g.conv(x, 4, 8, 1), 10, 1);
        cvml_tensor* m6 = g.op("broadcast_mul", {}, {c3, scalar({1}, 2000000, 22)});
        // Read twice, so stored: its bound (3 * 127) makes it int16.
        cvml_tensor* m7 = g.op("broadcast_mul", {}, {a, scalar({1}, 3, 3)});
        cvml_tensor* e = g.op("elemwise_add", {}, {g.op("relu", {}, {m7}), m7});
        return std::vector<cvml_tensor*>{a, b, d, m4, m5, g.rshift(m6, 8, 20), e};
    });
}

/* MRT folds batch norms into depthwise 1x1 convolutions: at avx512 on an int8 input each
 * plane is one flat run (w * x + b), through any tail; planes of 1 to 17 x 21 values,
 * channel multipliers 1 and 2, with and without a bias. */
TEST(Fusion, DepthwisePointwiseScales) {
    for (int h : {1, 3, 17})
        check_all([&](G& g) {
            cvml_tensor* x = g.data({1, 4, h, 21});
            cvml_tensor* r = g.rshift(g.conv(x, 4, 4, 1), 8, 8);  // int8
            auto dw = [&](int mult, bool bias) {
                std::vector<cvml_tensor*> in = {r, g.weight({4 * mult, 1, 1, 1}, 127, 8)};
                if (bias) in.push_back(g.weight({4 * mult}, 100000, 18));
                return g.op("conv2d",
                            {{"channels", std::to_string(4 * mult)},
                             {"kernel_size", "(1, 1)"},
                             {"groups", "4"},
                             {"use_bias", bias ? "True" : "False"}},
                            in);
            };
            cvml_tensor* scale = nullptr;
            int32_t one = 1, s = 1234;
            EXPECT_EQ(cvml_graph_add_const(g.g, "scale", 1, &one, 12, &s, &scale), CVML_OK);
            cvml_tensor* a = g.op("relu", {}, {g.rshift(dw(1, true), 8, 6)});
            cvml_tensor* m = g.op("broadcast_mul", {},
                                  {g.op("cvm_clip", {{"precision", "16"}}, {dw(2, true)}), scale});
            cvml_tensor* b = g.rshift(m, 8, 14);
            cvml_tensor* c = dw(2, false);  // no tail: int32 output
            return std::vector<cvml_tensor*>{a, b, c};
        });
}

/* The arena bytes of the graph `build` makes, prepared at the scalar level on 1 thread. */
size_t scalar_arena_bytes(const Builder& build) {
    setenv("CVML_SIMD", "scalar", 1);
    cvml_init();
    cvml_context* ctx = nullptr;
    EXPECT_EQ(cvml_context_create(&ctx), CVML_OK);
    G g;
    EXPECT_EQ(cvml_graph_create(ctx, &g.g), CVML_OK);
    std::vector<cvml_tensor*> outs = build(g);
    EXPECT_EQ(cvml_graph_set_outputs(g.g, outs.data(), static_cast<int>(outs.size())), CVML_OK);
    EXPECT_EQ(cvml_graph_verify(g.g), CVML_OK) << cvml_last_error();
    size_t arena = 0;
    EXPECT_EQ(cvml_graph_arena_bytes(g.g, &arena), CVML_OK) << cvml_last_error();
    cvml_graph_release(g.g);
    cvml_context_release(ctx);
    cvml_release();
    unsetenv("CVML_SIMD");
    return arena;
}

/* A residual block's last node adds the block's input, read there for the last time:
 * its output takes that buffer (cpu.cpp, share_buffers). Blocks in a chain (each
 * output taking the buffer its input took), an input read again after the add, an
 * input that is also the conv's own image, and an add headed by an element-wise node
 * (the vector levels split the chain there) must all keep the reference's bytes. */
cvml_tensor* residual_block(G& g, cvml_tensor* x, int c) {
    cvml_tensor* h = g.op("relu", {}, {g.rshift(g.conv(x, c, c, 1), 8, 8)});
    cvml_tensor* s = g.rshift(g.conv(h, c, c, 1), 8, 8);
    return g.rshift(g.op("elemwise_add", {}, {s, x}), 8, 1);
}

TEST(Fusion, OutputsTakeBuffersReadLast) {
    check_all([](G& g) {
        cvml_tensor* x = g.data({1, 4, 7, 9});
        cvml_tensor* y =
            residual_block(g, residual_block(g, g.rshift(g.conv(x, 4, 4, 1), 8, 8), 4), 4);
        // Read again after the add: no sharing for z's block.
        cvml_tensor* z = residual_block(g, y, 4);
        cvml_tensor* again = g.rshift(g.conv(y, 4, 4, 1), 8, 8);
        // The conv's own image added: its output must not take it.
        cvml_tensor* own = g.rshift(
            g.op("elemwise_add", {}, {g.rshift(g.conv(again, 4, 4, 1), 8, 8), again}), 8, 1);
        // An element-wise head (clip then a long chain) adding the block input.
        cvml_tensor* m = g.op("cvm_clip", {{"precision", "8"}}, {g.conv(own, 4, 4, 1)});
        cvml_tensor* t = g.rshift(g.rshift(g.rshift(m, 8, 1), 8, 1), 8, 1);
        cvml_tensor* w = g.rshift(g.op("elemwise_add", {}, {t, own}), 8, 1);
        return std::vector<cvml_tensor*>{z, g.op("elemwise_add", {}, {w, again})};
    });
}

/* The arena of a chain of residual blocks at the scalar level holds two int8
 * activations at its peak (the block's input, taken over by its output, and the
 * conv's), not three. */
TEST(Fusion, ResidualChainArenaHoldsTwoActivations) {
    const int c = 16, h = 16, w = 16;
    const size_t arena = scalar_arena_bytes([&](G& g) {
        cvml_tensor* x = g.rshift(g.conv(g.data({1, c, h, w}), c, c, 1), 8, 8);
        for (int k = 0; k < 3; ++k) x = residual_block(g, x, c);
        // Reads int8; a small int32 output.
        return std::vector<cvml_tensor*>{g.conv(x, c, 1, 1)};
    });
    const size_t activation = size_t{c} * h * w;  // int8
    EXPECT_LT(arena, 3 * activation);
    EXPECT_GE(arena, 2 * activation);
}

/* The steps run in an order that keeps fewer activations alive (cpu.cpp,
 * order_for_memory): of a block whose input x feeds a main branch (relu, then a strided
 * conv) and, later in the file, a strided projection, the projection runs first, so
 * that relu can write over x. Peak: relu's output, the projection's and the strided
 * conv's (8 KB), not x beside both of the main branch's (10 KB). */
TEST(Fusion, StepsOrderedForMemory) {
    auto build = [](G& g) {
        const int c = 16, hw = 16;
        cvml_tensor* x = g.rshift(g.conv(g.data({1, c, hw, hw}), c, c, 1), 8, 8);
        auto strided = [&](cvml_tensor* in, int k, int pad) {
            cvml_tensor* w = g.weight({2 * c, c, k, k}, 127, 8);
            return g.rshift(
                g.op("conv2d",
                     {{"channels", std::to_string(2 * c)},
                      {"kernel_size", "(" + std::to_string(k) + ", " + std::to_string(k) + ")"},
                      {"strides", "(2, 2)"},
                      {"padding", "(" + std::to_string(pad) + ", " + std::to_string(pad) + ")"},
                      {"use_bias", "False"}},
                     {in, w}),
                8, 8);
        };
        cvml_tensor* main = strided(g.op("relu", {}, {x}), 3, 1);
        cvml_tensor* projection = strided(x, 1, 0);
        cvml_tensor* y = g.rshift(g.op("elemwise_add", {}, {main, projection}), 8, 1);
        return std::vector<cvml_tensor*>{g.conv(y, 2 * c, 1, 1)};
    };
    check_all(build);
    const size_t arena = scalar_arena_bytes(build);
    EXPECT_LT(arena, size_t{10240});
    EXPECT_GE(arena, size_t{8192});
}
