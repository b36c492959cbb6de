#include <gtest/gtest.h>

#include <stdlib.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "device/cpu/cpu_kernel.h"
#include "device/cpu/cpu_paths.h"
#include "device/cpu/simd/simd.h"
#include "device/cpu/simd/simd_config.h"
#include "nn_case_util.h"
#include "op_runner.h"
#include "operator/conv2d.h"
#include "operator/op_def.h"

using cvml_test::Operand;
using cvml_test::run_op;

namespace {

/* The conv2d paths prepared so far (cpu_paths.h). */
void path_counts(int64_t* dense, int64_t* narrow, int64_t* taps4, int64_t* dw_vnni) {
    *dense = cpu_path_count(CPU_PATH_CONV_DENSE);
    *narrow = cpu_path_count(CPU_PATH_CONV_NARROW);
    *taps4 = cpu_path_count(CPU_PATH_CONV_TAPS4);
    *dw_vnni = cpu_path_count(CPU_PATH_DW_VNNI);
}

struct ConvCfg {
    int n, c, h, w, o, kh, kw, sh, sw, ph, pw, dh, dw, groups;
    bool bias;
};

std::string tup(int a, int b) {
    return "(" + std::to_string(a) + ", " + std::to_string(b) + ")";
}

std::vector<std::pair<std::string, std::string>> attrs_of(const ConvCfg& c) {
    return {{"channels", std::to_string(c.o)},      {"kernel_size", tup(c.kh, c.kw)},
            {"strides", tup(c.sh, c.sw)},           {"padding", tup(c.ph, c.pw)},
            {"dilation", tup(c.dh, c.dw)},          {"groups", std::to_string(c.groups)},
            {"use_bias", c.bias ? "True" : "False"}};
}

/* Independent reference: direct definition, int64 sums wrapped to int32 at the end (the
 * same value as wrapping at every step), with upstream's int8 cast when groups == 1. */
std::vector<int32_t> ref_conv(const ConvCfg& c, std::vector<int32_t> x, std::vector<int32_t> w,
                              const std::vector<int32_t>& b) {
    if (c.groups == 1) {
        for (auto& v : x) v = static_cast<int8_t>(v);
        for (auto& v : w) v = static_cast<int8_t>(v);
    }
    int oh = (c.h + 2 * c.ph - ((c.kh - 1) * c.dh + 1)) / c.sh + 1;
    int ow = (c.w + 2 * c.pw - ((c.kw - 1) * c.dw + 1)) / c.sw + 1;
    int icg = c.c / c.groups, opg = c.o / c.groups;
    std::vector<int32_t> y;
    for (int n = 0; n < c.n; ++n)
        for (int o = 0; o < c.o; ++o)
            for (int p = 0; p < oh; ++p)
                for (int q = 0; q < ow; ++q) {
                    int64_t s = c.bias ? b[o] : 0;
                    for (int i = 0; i < icg; ++i)
                        for (int r = 0; r < c.kh; ++r)
                            for (int t = 0; t < c.kw; ++t) {
                                int ih = p * c.sh + r * c.dh - c.ph;
                                int iw = q * c.sw + t * c.dw - c.pw;
                                if (ih < 0 || ih >= c.h || iw < 0 || iw >= c.w) continue;
                                int ci = (o / opg) * icg + i;
                                s += static_cast<int64_t>(
                                         x[((n * c.c + ci) * c.h + ih) * c.w + iw]) *
                                     w[((o * icg + i) * c.kh + r) * c.kw + t];
                            }
                    y.push_back(static_cast<int32_t>(static_cast<uint32_t>(s)));
                }
    return y;
}

}  // namespace

TEST(Conv2d, HandChecked) {
    // 3x3 input 1..9, 2x2 kernel [[1,0],[0,1]]: each output is x[i][j] + x[i+1][j+1].
    Operand x{{1, 1, 3, 3}, 8, {1, 2, 3, 4, 5, 6, 7, 8, 9}, false};
    Operand w{{1, 1, 2, 2}, 8, {1, 0, 0, 1}, true};
    Operand b{{1}, 8, {10}, true};
    auto r = run_op("conv2d", {{"channels", "1"}, {"kernel_size", "(2, 2)"}}, {x, w, b});
    ASSERT_EQ(r.verify_rc, CVML_OK) << r.error;
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (std::vector<int32_t>{1, 1, 2, 2}));
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{16, 18, 22, 24}));
    // 8 + 8 + bits(1*2*2) = 19, then max(19, 8) + 1 with the bias.
    EXPECT_EQ(r.precisions[0], 20);
    // ops: (3*4/1 + 1) * 4 = 52; mem: 5 * (9 + 4 + 1) + 5 * 4 = 90.
    EXPECT_EQ(r.gas, 142u);
}

TEST(Conv2d, HandCheckedPaddingStrideNoBias) {
    // 2x2 input, pad 1, stride 2, 2x2 ones kernel: windows see one corner each.
    Operand x{{1, 1, 2, 2}, 8, {1, 2, 3, 4}, false};
    Operand w{{1, 1, 2, 2}, 8, {1, 1, 1, 1}, true};
    auto r = run_op("conv2d",
                    {{"channels", "1"},
                     {"kernel_size", "(2, 2)"},
                     {"padding", "(1, 1)"},
                     {"strides", "(2, 2)"},
                     {"use_bias", "False"}},
                    {x, w});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (std::vector<int32_t>{1, 1, 2, 2}));
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{1, 2, 3, 4}));
    EXPECT_EQ(r.precisions[0], 8 + 8 + 3);
}

TEST(Conv2d, DepthwiseHandChecked) {
    // groups == C: each channel with its own 1x1 weight.
    Operand x{{1, 2, 1, 2}, 8, {1, 2, 3, 4}, false};
    Operand w{{2, 1, 1, 1}, 8, {2, -3}, true};
    auto r = run_op(
        "conv2d",
        {{"channels", "2"}, {"kernel_size", "(1, 1)"}, {"groups", "2"}, {"use_bias", "false"}},
        {x, w});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{2, 4, -9, -12}));
}

TEST(Conv2d, AcceptsEveryUpstreamAttribute) {
    Operand x{{1, 1, 2, 2}, 8, {1, 2, 3, 4}, false};
    Operand w{{1, 1, 1, 1}, 8, {3}, true};
    auto r = run_op("conv2d",
                    {{"channels", "1"},
                     {"kernel_size", "[1,1]"},
                     {"strides", "(1, 1)"},
                     {"padding", "(0, 0)"},
                     {"dilation", "(1, 1)"},
                     {"groups", "1"},
                     {"layout", "NCHW"},
                     {"kernel_layout", "OIHW"},
                     {"out_layout", "NCHW"},
                     {"out_dtype", "int32"},
                     {"use_bias", "0"}},
                    {x, w});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{3, 6, 9, 12}));
}

TEST(Conv2d, ErrorClasses) {
    Operand x{{1, 2, 5, 5}, 8, std::vector<int32_t>(50, 1), false};
    Operand w{{3, 2, 3, 3}, 8, std::vector<int32_t>(54, 1), true};
    Operand b{{3}, 8, {1, 2, 3}, true};
    using A = std::vector<std::pair<std::string, std::string>>;
    A base = {{"channels", "3"}, {"kernel_size", "(3, 3)"}};
    auto with = [&](const std::string& k, const std::string& v) {
        A a = base;
        bool found = false;
        for (auto& kv : a)
            if (kv.first == k) kv.second = v, found = true;
        if (!found) a.push_back({k, v});
        return a;
    };
    auto rc = [&](const A& a, std::vector<Operand> ops) {
        return run_op("conv2d", a, ops).verify_rc;
    };
    std::vector<Operand> xwb = {x, w, b};
    EXPECT_EQ(rc(base, xwb), CVML_OK);
    // ParamError: runtime.
    EXPECT_EQ(rc(with("foo", "1"), xwb), CVML_ERR_RUNTIME);
    EXPECT_EQ(rc(with("out_dtype", "float128"), xwb), CVML_ERR_RUNTIME);
    EXPECT_EQ(rc(with("groups", "x"), xwb), CVML_ERR_RUNTIME);
    EXPECT_EQ(rc({{"kernel_size", "(3, 3)"}}, xwb), CVML_ERR_RUNTIME);
    // VERIFY and VerifyAttrRange: logic.
    EXPECT_EQ(rc(with("layout", "NHWC"), xwb), CVML_ERR_LOGIC);
    EXPECT_EQ(rc(with("kernel_layout", "HWIO"), xwb), CVML_ERR_LOGIC);
    EXPECT_EQ(rc(with("out_layout", "NHWC"), xwb), CVML_ERR_LOGIC);
    EXPECT_EQ(rc(with("padding", "(4097, 0)"), xwb), CVML_ERR_LOGIC);
    EXPECT_EQ(rc(with("padding", "(-1, 0)"), xwb), CVML_ERR_LOGIC);
    EXPECT_EQ(rc(with("padding", "(1,)"), xwb), CVML_ERR_LOGIC);
    EXPECT_EQ(rc(with("strides", "(0, 1)"), xwb), CVML_ERR_LOGIC);
    EXPECT_EQ(rc(with("strides", "(1, 4097)"), xwb), CVML_ERR_LOGIC);
    EXPECT_EQ(rc(with("dilation", "(1, 0)"), xwb), CVML_ERR_LOGIC);
    EXPECT_EQ(rc(with("kernel_size", "(3, 3, 1)"), xwb), CVML_ERR_LOGIC);
    EXPECT_EQ(rc(with("groups", "0"), xwb), CVML_ERR_LOGIC);
    EXPECT_EQ(rc(with("groups", "3"), xwb), CVML_ERR_LOGIC);  // does not divide C = 2
    // Kernel (dilated) larger than the padded input (case 126).
    EXPECT_EQ(rc(with("dilation", "(4, 4)"), xwb), CVML_ERR_LOGIC);
    // Wrong input count for use_bias.
    EXPECT_EQ(rc(base, {x, w}), CVML_ERR_LOGIC);
    EXPECT_EQ(rc(with("use_bias", "False"), xwb), CVML_ERR_LOGIC);
    // Data not 4-D.
    EXPECT_EQ(rc(base, {Operand{{2, 5, 5}, 8, std::vector<int32_t>(50, 1), false}, w, b}),
              CVML_ERR_LOGIC);
    // Bias of the wrong shape: upstream CVM_ASSIGN_INPUT_SHAPE, a runtime error.
    EXPECT_EQ(rc(base, {x, w, Operand{{4}, 8, {1, 2, 3, 4}, true}}), CVML_ERR_RUNTIME);
    // Precision: data and weight must be at most 8 bits (case 092).
    EXPECT_EQ(rc(base, {Operand{{1, 2, 5, 5}, 9, std::vector<int32_t>(50, 1), false}, w, b}),
              CVML_ERR_LOGIC);
    EXPECT_EQ(rc(base, {x, Operand{{3, 2, 3, 3}, 9, std::vector<int32_t>(54, 1), true}, b}),
              CVML_ERR_LOGIC);
}

TEST(Conv2d, D5WeightShapeMustAgree) {
    Operand x{{1, 2, 5, 5}, 8, std::vector<int32_t>(50, 1), false};
    using A = std::vector<std::pair<std::string, std::string>>;
    A a = {{"channels", "3"}, {"kernel_size", "(3, 3)"}, {"use_bias", "False"}};
    // Case 127: a 1x1 weight with kernel_size (3, 3).
    auto r = run_op("conv2d", a, {x, Operand{{3, 2, 1, 1}, 8, std::vector<int32_t>(6, 1), true}});
    EXPECT_EQ(r.verify_rc, CVML_ERR_LOGIC) << r.error;
    // Case 128: more output channels than `channels`.
    r = run_op("conv2d", a, {x, Operand{{4, 2, 3, 3}, 8, std::vector<int32_t>(72, 1), true}});
    EXPECT_EQ(r.verify_rc, CVML_ERR_LOGIC) << r.error;
    // Input channels that disagree with C / groups.
    r = run_op("conv2d", a, {x, Operand{{3, 1, 3, 3}, 8, std::vector<int32_t>(27, 1), true}});
    EXPECT_EQ(r.verify_rc, CVML_ERR_LOGIC) << r.error;
    // A 3-D weight.
    r = run_op("conv2d", a, {x, Operand{{3, 2, 9}, 8, std::vector<int32_t>(54, 1), true}});
    EXPECT_EQ(r.verify_rc, CVML_ERR_LOGIC) << r.error;
}

TEST(Conv2d, PropertyAgainstReference) {
    uint32_t seed = 1;
    for (int iter = 0; iter < 60; ++iter) {
        auto rnd = cvml_test::random_values(20, 1000, seed++);
        auto pick = [&](int i, int lo, int hi) { return lo + (rnd[i] + 1000) % (hi - lo + 1); };
        ConvCfg c;
        c.groups = pick(0, 1, 3);
        if (iter % 3 == 0) c.groups = 1;
        c.n = pick(1, 1, 2);
        c.c = c.groups * pick(2, 1, 3);
        c.o = c.groups * pick(3, 1, 3);
        c.kh = pick(4, 1, 3);
        c.kw = pick(5, 1, 3);
        c.sh = pick(6, 1, 3);
        c.sw = pick(7, 1, 3);
        c.ph = pick(8, 0, 2);
        c.pw = pick(9, 0, 2);
        c.dh = pick(10, 1, 2);
        c.dw = pick(11, 1, 2);
        c.h = (c.kh - 1) * c.dh + 1 + pick(12, 0, 6);
        c.w = (c.kw - 1) * c.dw + 1 + pick(13, 0, 6);
        c.bias = pick(14, 0, 1) == 1;
        auto x = cvml_test::random_values(c.n * c.c * c.h * c.w, 127, seed++);
        auto w = cvml_test::random_values(c.o * (c.c / c.groups) * c.kh * c.kw, 127, seed++);
        auto b = cvml_test::random_values(c.o, 100000, seed++);
        std::vector<Operand> ops = {Operand{{c.n, c.c, c.h, c.w}, 8, x, false},
                                    Operand{{c.o, c.c / c.groups, c.kh, c.kw}, 8, w, true}};
        if (c.bias) ops.push_back(Operand{{c.o}, 18, b, true});
        auto expect = ref_conv(c, x, w, b);
        for (int threads : {1, 3}) {
            auto r = run_op("conv2d", attrs_of(c), ops, 1, threads);
            ASSERT_EQ(r.verify_rc, CVML_OK) << r.error << " iter " << iter;
            ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
            ASSERT_EQ(r.outputs[0], expect) << "iter " << iter << " threads " << threads;
        }
    }
}

/* Shapes that reach the fast path's edges: several GEMM strips with dropped columns at
 * each row end, strips split over channel blocks, K and output channels off the packing
 * multiples, stride-phase images, dilation. */
TEST(Conv2d, PropertyAgainstReferenceLarge) {
    uint32_t seed = 1000;
    for (int iter = 0; iter < 16; ++iter) {
        auto rnd = cvml_test::random_values(20, 1000, seed++);
        auto pick = [&](int i, int lo, int hi) { return lo + (rnd[i] + 1000) % (hi - lo + 1); };
        ConvCfg c;
        c.groups = 1;
        c.n = pick(1, 1, 2);
        c.c = pick(2, 1, 37);
        c.o = pick(3, 1, 41);
        c.kh = pick(4, 1, 5);
        c.kw = pick(5, 1, 5);
        c.sh = pick(6, 1, 2);
        c.sw = pick(7, 1, 3);
        c.ph = pick(8, 0, 3);
        c.pw = pick(9, 0, 3);
        c.dh = pick(10, 1, 2);
        c.dw = pick(11, 1, 2);
        if (c.ph >= c.kh) c.ph = c.kh - 1;
        if (c.pw >= c.kw) c.pw = c.kw - 1;
        c.h = (c.kh - 1) * c.dh + 1 + pick(12, 0, 30);
        c.w = (c.kw - 1) * c.dw + 1 + pick(13, 0, 40);
        if (iter % 4 == 1) c.w += 100;  // image rows longer than one 64-byte vector
        c.bias = pick(14, 0, 1) == 1;
        if (iter % 4 == 0) {  // 1x1, stride 1, no padding: the input is used in place
            c.kh = c.kw = c.sh = c.sw = c.dh = c.dw = 1;
            c.ph = c.pw = 0;
        }
        auto x = cvml_test::random_values(c.n * c.c * c.h * c.w, 127, seed++);
        auto w = cvml_test::random_values(c.o * c.c * c.kh * c.kw, 127, seed++);
        auto b = cvml_test::random_values(c.o, 100000, seed++);
        std::vector<Operand> ops = {Operand{{c.n, c.c, c.h, c.w}, 8, x, false},
                                    Operand{{c.o, c.c, c.kh, c.kw}, 8, w, true}};
        if (c.bias) ops.push_back(Operand{{c.o}, 18, b, true});
        auto expect = ref_conv(c, x, w, b);
        for (int threads : {1, 2, 3}) {
            auto r = run_op("conv2d", attrs_of(c), ops, 1, threads);
            ASSERT_EQ(r.verify_rc, CVML_OK) << r.error << " iter " << iter;
            ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
            ASSERT_EQ(r.outputs[0], expect) << "iter " << iter << " threads " << threads;
        }
    }
}

/* Shapes whose flat columns would waste work (small outputs, wide padding), with output
 * channels a multiple of 8: at avx512 they take dense strips, and a last strip of 1 to 4
 * columns (N % 48, dense or flat) is done by dot products, block by block with the strip
 * before it when there is one. At the other levels the same shapes check the flat path. */
TEST(Conv2d, DenseStripsAndNarrowTailsAgainstReference) {
    struct Shape {
        int c, o, h, w, k, s, p;
        bool dense, narrow, taps; /* the path at avx512 */
    };
    // Dense strips where they save 5% of the vectors, and where taps mode could run
    // instead (small weights, stride 1) only if output channels * saved share >= 6.4.
    const Shape shapes[] = {
        {64, 520, 7, 7, 3, 1, 1, true, true, false},   // 49 = 48 + 1; weights past taps mode
                                                       // (520 channels: not broadcast mode)
        {5, 16, 7, 7, 3, 1, 1, false, false, true},    // the same with small weights: taps
        {3, 8, 14, 14, 3, 1, 1, false, false, true},   // 196 (flat 224 saves 11%)
        {4, 8, 28, 28, 3, 1, 1, false, false, true},   // 784 (flat 840)
        {6, 16, 14, 14, 3, 2, 1, true, true, false},   // stride 2 down to 7 x 7
        {2, 8, 9, 11, 3, 1, 1, false, false, true},    // 99: taps (8 channels save 19%)
        {9, 32, 5, 5, 3, 1, 1, true, false, false},    // 25: a single partial strip
        {3, 8, 8, 20, 3, 1, 1, false, false, true},    // 160
        {3, 24, 10, 10, 5, 1, 2, false, false, true},  // a strip spans > 64 flat columns
        {7, 8, 12, 6, 3, 1, 0, false, false, true},    // a third panel past the 64 columns
        {2, 8, 6, 2, 7, 1, 3, false, false, true},     // 12 pixels in rows of 8 columns
        {3, 8, 4, 47, 3, 1, 1, false, false, true},    // flat 4 x 49 = 196
        {6, 16, 5, 37, 3, 1, 1, false, false, true},   // flat 5 x 39 = 195, 6 channels: 2 groups
        {5, 16, 7, 7, 1, 1, 0, false, true, false},    // 1x1 in place: 49 = 48 + a 1-column tail
        {4, 8, 10, 5, 1, 1, 0, false, true, false},    // 1x1: 50 = 48 + 2
        {3, 8, 4, 49, 3, 2, 1, false, true, false},    // stride 2, flat 2 x 26 = 52: 48 + 4
        {2, 8, 20, 20, 3, 1, 1, false, false, true},   // 400
        {6, 16, 2, 2, 3, 1, 1, true, true, false},     // 4 pixels: the narrow tail alone
        {9, 64, 3, 17, 3, 1, 1, true, true, false},    // 51 = 48 + a 3-column tail, 8 row blocks
    };
    int dense_shapes = 0, narrow_shapes = 0, taps_shapes = 0;
    for (const Shape& sh : shapes) {
        dense_shapes += sh.dense ? 1 : 0;
        narrow_shapes += sh.narrow ? 1 : 0;
        taps_shapes += sh.taps ? 1 : 0;
    }
    int64_t dense0, narrow0, taps0, dwv0;
    path_counts(&dense0, &narrow0, &taps0, &dwv0);
    uint32_t seed = 77;
    for (const Shape& sh : shapes) {
        ConvCfg c;
        c.groups = 1;
        c.n = 1;
        c.c = sh.c;
        c.o = sh.o;
        c.h = sh.h;
        c.w = sh.w;
        c.kh = c.kw = sh.k;
        c.sh = c.sw = sh.s;
        c.ph = c.pw = sh.p;
        c.dh = c.dw = 1;
        c.bias = true;
        auto x = cvml_test::random_values(c.c * c.h * c.w, 127, seed++);
        auto w = cvml_test::random_values(c.o * c.c * c.kh * c.kw, 127, seed++);
        auto b = cvml_test::random_values(c.o, 100000, seed++);
        std::vector<Operand> ops = {Operand{{1, c.c, c.h, c.w}, 8, x, false},
                                    Operand{{c.o, c.c, c.kh, c.kw}, 8, w, true},
                                    Operand{{c.o}, 18, b, true}};
        auto expect = ref_conv(c, x, w, b);
        for (int threads : {1, 2, 3}) {
            auto r = run_op("conv2d", attrs_of(c), ops, 1, threads);
            ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
            ASSERT_EQ(r.outputs[0], expect) << sh.h << "x" << sh.w << " threads " << threads;
        }
    }
    if (cpu_simd_level() == CPU_SIMD_AVX512) {
        int64_t dense1, narrow1, taps1, dwv1;
        path_counts(&dense1, &narrow1, &taps1, &dwv1);
        EXPECT_EQ(dense1 - dense0, 3 * dense_shapes) << "dense strips not used where they pay";
        EXPECT_EQ(narrow1 - narrow0, 3 * narrow_shapes) << "narrow tails not used";
        EXPECT_EQ(taps1 - taps0, 3 * taps_shapes) << "taps mode not used";
    }
    if (cpu_simd_level() == CPU_SIMD_AVX2) {
        // No taps mode there: the shapes whose strips (flat or dense) leave 1 or 2
        // columns (gemm_narrow_max_cols) end in a narrow tail, 6 of them (a 49-pixel
        // output's single column among them).
        int64_t dense1, narrow1, taps1, dwv1;
        path_counts(&dense1, &narrow1, &taps1, &dwv1);
        EXPECT_EQ(narrow1 - narrow0, 3 * 6) << "narrow tails not used at avx2";
    }
}

/* Random shapes biased towards dense strips and narrow tails (output channels a
 * multiple of 8, small outputs, any stride, padding and dilation), against the
 * reference at 1, 2 and 3 threads; at avx512 most of them must take those paths. */
TEST(Conv2d, DenseAndNarrowRandomShapes) {
    uint32_t seed = 5000;
    int64_t dense0, narrow0, taps0, dwv0;
    path_counts(&dense0, &narrow0, &taps0, &dwv0);
    const int iters = 150;
    for (int iter = 0; iter < iters; ++iter) {
        auto rnd = cvml_test::random_values(20, 1000, seed++);
        auto pick = [&](int i, int lo, int hi) { return lo + (rnd[i] + 1000) % (hi - lo + 1); };
        ConvCfg c;
        c.groups = 1;
        c.n = pick(1, 1, 2);
        c.c = pick(2, 1, 20);
        c.o = 8 * pick(3, 1, 4);
        c.kh = pick(4, 1, 5);
        c.kw = pick(5, 1, 5);
        c.sh = pick(6, 1, 2);
        c.sw = pick(7, 1, 2);
        c.ph = pick(8, 0, c.kh - 1);
        c.pw = pick(9, 0, c.kw - 1);
        c.dh = pick(10, 1, 2);
        c.dw = pick(11, 1, 2);
        c.h = (c.kh - 1) * c.dh + 1 + pick(12, 0, 16);
        c.w = (c.kw - 1) * c.dw + 1 + pick(13, 0, 16);
        c.bias = pick(14, 0, 1) == 1;
        auto x = cvml_test::random_values(c.n * c.c * c.h * c.w, 127, seed++);
        auto w = cvml_test::random_values(c.o * c.c * c.kh * c.kw, 127, seed++);
        auto b = cvml_test::random_values(c.o, 100000, seed++);
        std::vector<Operand> ops = {Operand{{c.n, c.c, c.h, c.w}, 8, x, false},
                                    Operand{{c.o, c.c, c.kh, c.kw}, 8, w, true}};
        if (c.bias) ops.push_back(Operand{{c.o}, 18, b, true});
        auto expect = ref_conv(c, x, w, b);
        for (int threads : {1, 2, 3}) {
            auto r = run_op("conv2d", attrs_of(c), ops, 1, threads);
            ASSERT_EQ(r.verify_rc, CVML_OK) << r.error << " iter " << iter;
            ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
            ASSERT_EQ(r.outputs[0], expect) << "iter " << iter << " threads " << threads;
        }
    }
    if (cpu_simd_level() == CPU_SIMD_AVX512) {
        int64_t dense1, narrow1, taps1, dwv1;
        path_counts(&dense1, &narrow1, &taps1, &dwv1);
        EXPECT_GE(dense1 - dense0, 3 * iters / 3)
            << "too few shapes took dense strips " << dense1 - dense0;
        EXPECT_GE(narrow1 - narrow0, 3 * 10)
            << "too few shapes took a narrow tail " << narrow1 - narrow0;
    }
}

namespace {

/* input -> cvm_clip(precision 8) -> conv2d: the clip's output is stored as int8, which is
 * what sends a depthwise conv2d down its int8 path (a graph input stays int32). */
std::vector<int32_t> run_after_clip(const ConvCfg& c, const std::vector<int32_t>& x,
                                    const std::vector<int32_t>& w, const std::vector<int32_t>& b,
                                    int threads, std::string* error, bool bias_input = false) {
    cvml_context* ctx = nullptr;
    cvml_graph* g = cvml_test::new_graph(threads, &ctx);
    std::vector<int32_t> xs = {c.n, c.c, c.h, c.w}, ws = {c.o, c.c / c.groups, c.kh, c.kw},
                         bs = {c.o};
    cvml_tensor *in = nullptr, *clipped = nullptr, *wt = nullptr, *bt = nullptr, *y = nullptr;
    int rc = cvml_graph_add_input(g, "data", 4, xs.data(), 8, &in);
    if (!rc) rc = cvml_graph_add_const(g, "w", 4, ws.data(), 8, w.data(), &wt);
    // A bias that is a graph input is not folded into the sums: the tail adds it.
    if (!rc && c.bias)
        rc = bias_input ? cvml_graph_add_input(g, "b", 1, bs.data(), 18, &bt)
                        : cvml_graph_add_const(g, "b", 1, bs.data(), 18, b.data(), &bt);
    const char* ck[] = {"precision"};
    const char* cv[] = {"8"};
    if (!rc) rc = cvml_graph_add_node(g, "cvm_clip", "clip", ck, cv, 1, &in, 1, &clipped, 1);
    auto attrs = attrs_of(c);
    std::vector<const char*> keys, vals;
    for (auto& kv : attrs) {
        keys.push_back(kv.first.c_str());
        vals.push_back(kv.second.c_str());
    }
    cvml_tensor* conv_in[3] = {clipped, wt, bt};
    if (!rc)
        rc = cvml_graph_add_node(g, "conv2d", "conv", keys.data(), vals.data(), (int)keys.size(),
                                 conv_in, c.bias ? 3 : 2, &y, 1);
    std::vector<std::pair<cvml_tensor*, const std::vector<int32_t>*>> inputs = {{in, &x}};
    if (bias_input) inputs.push_back({bt, &b});
    return cvml_test::run_to_output(g, ctx, rc, inputs, y, error);
}

/* Random int8 input and weights and a bias for c, drawn from seed on, through
 * run_after_clip at each thread count against the reference; `what` names the case. */
void check_after_clip(const ConvCfg& c, uint32_t* seed, std::initializer_list<int> threads,
                      const std::string& what) {
    auto x = cvml_test::random_values(c.n * c.c * c.h * c.w, 127, (*seed)++);
    auto w = cvml_test::random_values(c.o * (c.c / c.groups) * c.kh * c.kw, 127, (*seed)++);
    auto b = cvml_test::random_values(c.o, 100000, (*seed)++);
    auto expect = ref_conv(c, x, w, b);
    for (int t : threads) {
        std::string error;
        auto got = run_after_clip(c, x, w, b, t, &error);
        ASSERT_EQ(got, expect) << what << " threads " << t << " " << error;
    }
}

}  // namespace

/* Depthwise (one input channel per output channel) on an int8-stored input, rows
 * longer than a vector, every stride phase and dilation. */
TEST(Conv2d, DepthwisePropertyAgainstReference) {
    uint32_t seed = 2000;
    for (int iter = 0; iter < 24; ++iter) {
        auto rnd = cvml_test::random_values(20, 1000, seed++);
        auto pick = [&](int i, int lo, int hi) { return lo + (rnd[i] + 1000) % (hi - lo + 1); };
        ConvCfg c;
        c.n = pick(1, 1, 2);
        c.c = c.groups = pick(2, 1, 9);
        c.o = c.c * pick(3, 1, 2);
        c.kh = pick(4, 1, 5);
        c.kw = pick(5, 1, 5);
        c.sh = pick(6, 1, 3);
        c.sw = pick(7, 1, 3);
        c.ph = pick(8, 0, c.kh - 1);
        c.pw = pick(9, 0, c.kw - 1);
        c.dh = pick(10, 1, 2);
        c.dw = pick(11, 1, 2);
        c.h = (c.kh - 1) * c.dh + 1 + pick(12, 0, 20);
        c.w = (c.kw - 1) * c.dw + 1 + pick(13, 0, 45);
        c.bias = pick(14, 0, 1) == 1;
        auto x = cvml_test::random_values(c.n * c.c * c.h * c.w, 127, seed++);
        auto w = cvml_test::random_values(c.o * c.kh * c.kw, 127, seed++);
        auto b = cvml_test::random_values(c.o, 100000, seed++);
        auto expect = ref_conv(c, x, w, b);
        for (int threads : {1, 2, 3}) {
            std::string error;
            auto got = run_after_clip(c, x, w, b, threads, &error);
            ASSERT_EQ(got, expect) << "iter " << iter << " threads " << threads << " " << error;
        }
    }
}

/* The direct depthwise (avx512's vpdpbusd: column stride <= 2, 3 * sw + 3 * dw <= 15,
 * kernels up to 16 wide; avx2's vpmaddwd: 3 * sw + 3 * dw <= 9, kernels up to 8 wide;
 * every weight within int8): any row stride and dilation, padding up to the kernel, rows
 * of 1 to 150 pixels (1 to 10 chunks of 16, 1 to 19 of 8, so every block of chunks and
 * both edges), 1 to 4 groups (pairs) of taps and channel multipliers. Shapes outside
 * the level's domain (column stride 3, wide dilations) take the other kernels, and the
 * direct one must have been chosen exactly for the others, as the level's record says.
 * (conv2d's weights are verified to precision 8, so the kernel's int8 check on them
 * always passes in a verified graph.) */
TEST(Conv2d, DepthwiseDirectAgainstReference) {
    uint32_t seed = 2500;
    int64_t dense0, narrow0, taps0, dwv0;
    path_counts(&dense0, &narrow0, &taps0, &dwv0);
    const int iters = 48;
    const cpu_simd_config* cfg = cpu_simd_config_of(cpu_simd_level());
    int direct = 0, level_direct = 0;
    for (int iter = 0; iter < iters; ++iter) {
        auto rnd = cvml_test::random_values(20, 1000, seed++);
        auto pick = [&](int i, int lo, int hi) { return lo + (rnd[i] + 1000) % (hi - lo + 1); };
        ConvCfg c;
        c.n = pick(1, 1, 2);
        c.c = c.groups = pick(2, 2, 6);  // groups == 1 would be an ordinary conv
        c.o = c.c * pick(3, 1, 2);
        c.kh = pick(4, 1, 5);
        c.kw = pick(15, 0, 5) == 0 ? pick(5, 5, 16) : pick(5, 1, 4);
        c.sh = pick(6, 1, 3);
        c.sw = pick(7, 0, 5) == 0 ? 3 : pick(7, 1, 2);
        c.ph = pick(8, 0, c.kh - 1);
        c.pw = pick(9, 0, c.kw - 1);
        c.dh = pick(10, 1, 3);
        c.dw = pick(11, 1, c.kw > 4 ? 2 : 4);
        c.h = (c.kh - 1) * c.dh + 1 + pick(12, 0, 12);
        const int ow = pick(13, 1, 150);
        c.w = (c.kw - 1) * c.dw + 1 + (ow - 1) * c.sw - 2 * c.pw;
        if (c.w < (c.kw - 1) * c.dw + 1) c.w = (c.kw - 1) * c.dw + 1 + (ow - 1) * c.sw;
        c.bias = pick(14, 0, 1) == 1;
        auto x = cvml_test::random_values(c.n * c.c * c.h * c.w, 127, seed++);
        auto w = cvml_test::random_values(c.o * c.kh * c.kw, 127, seed++);
        auto b = cvml_test::random_values(c.o, 100000, seed++);
        if (c.sw <= 2 && 3 * c.sw + 3 * c.dw <= 15) ++direct;
        if (cfg->dw_direct && c.sw <= cfg->dw_direct_max_sw &&
            3 * c.sw + 3 * c.dw <= cfg->dw_direct_window && c.kw <= cfg->dw_direct_max_kw &&
            (c.kh - 1) * c.dh + 1 <= cfg->dw_direct_max_rows)
            ++level_direct;
        auto expect = ref_conv(c, x, w, b);
        for (int threads : {1, 2, 3}) {
            std::string error;
            auto got = run_after_clip(c, x, w, b, threads, &error);
            ASSERT_EQ(got, expect) << "iter " << iter << " threads " << threads << " " << error;
        }
    }
    EXPECT_GE(direct, iters / 2);
    EXPECT_LT(direct, iters);
    int64_t dense1, narrow1, taps1, dwv1;
    path_counts(&dense1, &narrow1, &taps1, &dwv1);
    EXPECT_EQ(dwv1 - dwv0, 3 * level_direct) << "the direct depthwise was not chosen as expected";
    if (cfg->dw_direct) {
        EXPECT_GT(level_direct, 0);
        EXPECT_LT(level_direct, iters);
    }
}

/* The direct depthwise on larger planes: more sums than avx2's kernel puts through the
 * tail at once (4096), rows wider than its ring's block of chunks (so blocks of columns),
 * odd widths, 7- and 8-wide kernels, and a kernel spanning 33 input rows (past avx2's
 * 32: the phase-image kernels take it). */
TEST(Conv2d, DepthwiseDirectLargePlanes) {
    // n, c, h, w, o, kh, kw, sh, sw, ph, pw, dh, dw, groups, bias
    const ConvCfg cases[] = {
        {1, 3, 70, 101, 3, 3, 3, 1, 1, 1, 1, 1, 1, 3, true},
        {1, 2, 61, 123, 4, 3, 3, 2, 2, 1, 1, 1, 1, 2, false},
        {1, 2, 9, 701, 2, 3, 3, 1, 1, 1, 1, 1, 1, 2, true},
        {1, 2, 8, 1203, 2, 3, 3, 2, 2, 0, 1, 1, 1, 2, true},
        {1, 3, 20, 45, 3, 7, 7, 1, 1, 3, 3, 1, 1, 3, true},
        {1, 2, 17, 67, 2, 5, 8, 2, 1, 2, 4, 1, 2, 2, false},
        {1, 2, 40, 33, 2, 17, 3, 1, 1, 8, 1, 2, 1, 2, true},
    };
    uint32_t seed = 2900;
    for (const ConvCfg& c : cases) {
        auto x = cvml_test::random_values(c.n * c.c * c.h * c.w, 127, seed++);
        auto w = cvml_test::random_values(c.o * c.kh * c.kw, 127, seed++);
        auto b = cvml_test::random_values(c.o, 100000, seed++);
        auto expect = ref_conv(c, x, w, b);
        for (int threads : {1, 2}) {
            std::string error;
            auto got = run_after_clip(c, x, w, b, threads, &error);
            ASSERT_EQ(got, expect) << "h " << c.h << " w " << c.w << " kh " << c.kh << " kw "
                                   << c.kw << " threads " << threads << " " << error;
        }
    }
}

/* The direct depthwise's sliding rows (row stride 1 or 2, row dilation 1, 3 or 5 kernel
 * rows, at most 4 wide): padding up to the kernel, planes fewer rows high than the
 * kernel, rows of 1 to 150 pixels and column strides 1 and 2. */
TEST(Conv2d, DepthwiseSlidingRowsAgainstReference) {
    uint32_t seed = 2700;
    for (int iter = 0; iter < 40; ++iter) {
        auto rnd = cvml_test::random_values(20, 1000, seed++);
        auto pick = [&](int i, int lo, int hi) { return lo + (rnd[i] + 1000) % (hi - lo + 1); };
        ConvCfg c;
        c.n = 1;
        c.c = c.groups = pick(2, 1, 5);
        c.o = c.c * pick(3, 1, 2);
        c.kh = pick(4, 0, 1) ? 3 : 5;
        c.kw = pick(5, 1, 4);
        c.sh = pick(6, 1, 2);
        c.dh = 1;
        c.sw = pick(7, 1, 2);
        c.dw = pick(11, 1, 3);
        c.ph = pick(8, 0, c.kh - 1);
        c.pw = pick(9, 0, c.kw - 1);
        c.h = c.kh - 2 * c.ph + pick(12, 0, 20);
        if (c.h < 1) c.h = 1;
        c.w = (c.kw - 1) * c.dw + 1 + (pick(13, 1, 150) - 1) * c.sw;
        c.bias = pick(14, 0, 1) == 1;
        ASSERT_NO_FATAL_FAILURE(check_after_clip(c, &seed, {1, 3}, "iter " + std::to_string(iter)));
    }
}

/* The sliding depthwise's planes (at avx2 those of rows up to 32 pixels copied with their
 * padding into a buffer first): every row width 1-40 and wider ones; row and column
 * strides 1 and 2, column dilation 1 and 2, padding up to 3, several planes and images
 * (the last rows lie at the input tensor's end), at 1 and 2 threads. */
TEST(Conv2d, DepthwisePaddedPlanesAgainstReference) {
    uint32_t seed = 2900;
    std::vector<int32_t> widths;
    for (int32_t width = 1; width <= 40; ++width) widths.push_back(width);
    for (int32_t width : {47, 56, 63, 64, 65, 97, 112, 130, 200}) widths.push_back(width);
    for (int32_t width : widths) {
        auto rnd = cvml_test::random_values(20, 1000, seed++);
        auto pick = [&](int i, int lo, int hi) { return lo + (rnd[i] + 1000) % (hi - lo + 1); };
        ConvCfg c;
        c.n = pick(1, 1, 2);
        c.c = c.groups = pick(2, 1, 4);
        c.o = c.c;
        c.kh = 3;
        c.kw = pick(5, 3, 4);
        c.sh = pick(6, 1, 2);
        c.sw = pick(7, 1, 2);
        c.dh = 1;
        c.dw = c.sw == 2 ? 1 : pick(11, 1, 2);
        c.ph = pick(8, 0, 2);
        c.pw = pick(9, 0, 3);
        c.w = width;
        c.h = width > 100 ? pick(12, 100, 150) : pick(12, 1, 36);
        if ((c.kw - 1) * c.dw + 1 > c.w + 2 * c.pw) c.pw = ((c.kw - 1) * c.dw + 1 - c.w + 1) / 2;
        if (c.kh > c.h + 2 * c.ph) c.ph = (c.kh - c.h + 1) / 2;
        c.bias = pick(14, 0, 1) == 1;
        const std::string what = "width " + std::to_string(width) + " h " + std::to_string(c.h) +
                                 " pads " + std::to_string(c.ph) + "," + std::to_string(c.pw) +
                                 " strides " + std::to_string(c.sh) + "," + std::to_string(c.sw);
        ASSERT_NO_FATAL_FAILURE(check_after_clip(c, &seed, {1, 2}, what));
    }
}

/* Taps mode on an int8-stored input (the output of a clip, as inside a network): the
 * vector interleave of 4 channel rows, with padding, wide rows (more than 64 pixels),
 * channel counts off a multiple of 4 and dilation; and the mode must have been used. */
TEST(Conv2d, TapsModeOnInt8Input) {
    uint32_t seed = 3000;
    int64_t dense0, narrow0, taps0, dwv0;
    path_counts(&dense0, &narrow0, &taps0, &dwv0);
    const int iters = 24;
    for (int iter = 0; iter < iters; ++iter) {
        auto rnd = cvml_test::random_values(20, 1000, seed++);
        auto pick = [&](int i, int lo, int hi) { return lo + (rnd[i] + 1000) % (hi - lo + 1); };
        ConvCfg c;
        c.groups = 1;
        c.n = pick(1, 1, 2);
        c.c = pick(2, 1, 11);
        c.o = 8 * pick(3, 1, 3);
        c.kh = pick(4, 2, 3);
        c.kw = pick(5, 2, 3);
        c.sh = c.sw = 1;
        c.ph = pick(8, 0, c.kh - 1);
        c.pw = pick(9, 0, c.kw - 1);
        c.dh = pick(10, 1, 2);
        c.dw = pick(11, 1, 2);
        c.h = (c.kh - 1) * c.dh + 1 + pick(12, 8, 30);
        c.w = (c.kw - 1) * c.dw + 1 + pick(13, 40, 140);
        c.bias = pick(14, 0, 1) == 1;
        auto x = cvml_test::random_values(c.n * c.c * c.h * c.w, 127, seed++);
        auto w = cvml_test::random_values(c.o * c.c * c.kh * c.kw, 127, seed++);
        auto b = cvml_test::random_values(c.o, 100000, seed++);
        auto expect = ref_conv(c, x, w, b);
        for (int threads : {1, 2, 3}) {
            std::string error;
            auto got = run_after_clip(c, x, w, b, threads, &error);
            ASSERT_EQ(got, expect) << "iter " << iter << " threads " << threads << " " << error;
        }
    }
    // The levels with taps-mode kernels (avx512, the aarch64 levels) take it.
    if (cpu_simd_config_of(cpu_simd_level())->gemm_tile_taps) {
        int64_t dense1, narrow1, taps1, dwv1;
        path_counts(&dense1, &narrow1, &taps1, &dwv1);
        EXPECT_GE(taps1 - taps0, 3 * iters / 2) << "taps mode was not used " << taps1 - taps0;
    }
}

/* conv2d's kernel driven directly, one thread, int32 tensors (no graph, so no
 * verification of the values), without bias; the output, or empty on a failure. fast:
 * on this CPU's level with the weights a constant (its fast paths), else the scalar
 * loops that read every operand per run. */
std::vector<int32_t> run_kernel(const ConvCfg& c, std::vector<int32_t> x, std::vector<int32_t> w,
                                bool fast) {
    const cpu_kernel* k = cpu_kernel_find("conv2d");
    if (!k) {
        ADD_FAILURE() << "no conv2d kernel";
        return {};
    }
    const int oh = (c.h + 2 * c.ph - c.dh * (c.kh - 1) - 1) / c.sh + 1;
    const int ow = (c.w + 2 * c.pw - c.dw * (c.kw - 1) - 1) / c.sw + 1;
    std::vector<int32_t> y(static_cast<size_t>(c.n) * c.o * oh * ow, 0x55555555);
    conv2d_param p{};
    p.channels = c.o;
    p.kernel_size = {2, {c.kh, c.kw}};
    p.strides = {2, {c.sh, c.sw}};
    p.padding = {2, {c.ph, c.pw}};
    p.dilation = {2, {c.dh, c.dw}};
    p.groups = c.groups;
    p.use_bias = 0;
    ir_tensor tx{}, tw{}, ty{};
    tx.ndim = ty.ndim = tw.ndim = 4;
    const int64_t xd[4] = {c.n, c.c, c.h, c.w}, wd[4] = {c.o, c.c / c.groups, c.kh, c.kw},
                  yd[4] = {c.n, c.o, oh, ow};
    for (int i = 0; i < 4; ++i) tx.dims[i] = xd[i], tw.dims[i] = wd[i], ty.dims[i] = yd[i];
    tx.data = x.data();
    tw.data = w.data();
    cpu_runtime rt{};
    rt.simd_level = cpu_simd_level();
    rt.simd = cpu_simd_config_of(rt.simd_level);
    rt.fusion = 1;
    ty.data = y.data();
    ir_tensor* ins[2] = {&tx, &tw};
    ir_tensor* outs[1] = {&ty};
    cpu_node_ctx ctx{};
    ctx.param = &p;
    ctx.input_count = 2;
    ctx.inputs = ins;
    ctx.output_count = 1;
    ctx.outputs = outs;
    if (fast) {
        tw.kind = TENSOR_CONST;
        ctx.rt = &rt;
    }
    size_t scratch = 0;
    if (k->prerun(&ctx, &scratch) != CVML_OK) {
        ADD_FAILURE() << "prerun: " << cvml_last_error();
        return {};
    }
    std::vector<uint8_t> buf(scratch + 1);
    ctx.scratch = buf.data();
    ctx.scratch_size = scratch;
    const int rc = k->run(&ctx);
    if (k->postrun) k->postrun(&ctx);
    if (rc != CVML_OK) {
        ADD_FAILURE() << "run: " << cvml_last_error();
        return {};
    }
    return y;
}

/* Broadcast mode's path counts since construction: all of it, split by rows, and pairs of
 * 7-wide rows; `expect` checks how many conv2d preruns took each, at the levels that have
 * the mode (avx512, avx2); pairs only where the level's segments reach 14 pixels. */
struct BcastPaths {
    int64_t all0 = cpu_path_count(CPU_PATH_CONV_BCAST);
    int64_t rows0 = cpu_path_count(CPU_PATH_CONV_BCAST_ROWS);
    int64_t pairs0 = cpu_path_count(CPU_PATH_CONV_BCAST_PAIRS);
    void expect(int64_t all, int64_t rows, int64_t pairs) const {
        const cpu_simd_config* cfg = cpu_simd_config_of(cpu_simd_level());
        if (!cfg->bcast_items) return;
        if (cfg->bcast_max_pixels < 14) pairs = 0;
        EXPECT_EQ(cpu_path_count(CPU_PATH_CONV_BCAST) - all0, all)
            << "broadcast mode not taken exactly where it applies";
        EXPECT_EQ(cpu_path_count(CPU_PATH_CONV_BCAST_ROWS) - rows0, rows)
            << "broadcast mode's split by rows not taken exactly where it applies";
        EXPECT_EQ(cpu_path_count(CPU_PATH_CONV_BCAST_PAIRS) - pairs0, pairs)
            << "broadcast mode's pairs of 7-wide rows not taken exactly where they apply";
    }
};

/* A broadcast-mode case at 1 to 3 threads against the reference: after a clip (the input
 * int8-stored; the bias a graph input when bias_input) or on the graph's input itself
 * (stored as int32). */
void expect_bcast_case(const ConvCfg& c, const std::vector<int32_t>& x,
                       const std::vector<int32_t>& w, const std::vector<int32_t>& b, bool clipped,
                       bool bias_input, int iter) {
    const auto expect = ref_conv(c, x, w, b);
    for (int threads : {1, 2, 3}) {
        std::string error;
        std::vector<int32_t> got;
        if (clipped) {
            got = run_after_clip(c, x, w, b, threads, &error, bias_input);
        } else {
            std::vector<Operand> ops = {Operand{{c.n, c.c, c.h, c.w}, 8, x, false},
                                        Operand{{c.o, c.c, c.kh, c.kw}, 8, w, true}};
            if (c.bias) ops.push_back(Operand{{c.o}, 18, b, true});
            auto r = run_op("conv2d", attrs_of(c), ops, 1, threads);
            got = r.outputs.empty() ? std::vector<int32_t>{} : r.outputs[0];
            error = r.error;
        }
        ASSERT_EQ(got, expect) << "iter " << iter << " " << c.c << "->" << c.o << " " << c.kh << "x"
                               << c.kw << " kernel on " << c.h << "x" << c.w << " threads "
                               << threads << " " << error;
    }
}

/* Broadcast mode (avx512 and avx2: 3x3, stride 1 or 2, padding 1, output widths a multiple of 7 up
 * to 56, output channels a multiple of 32): every border class of pixel (first and last
 * row and column, one-segment and many-segment rows, planes of 2 rows, 7-wide planes of
 * odd and even heights (two rows a segment), strided outputs
 * whose last row and column do or do not read padding), channel counts off a
 * multiple of 4, int8-stored inputs and int32-stored ones (a graph input), inputs with
 * and without negative values (avx2's two forms), a bias that is a graph input (added by
 * the tile function, not folded), 1 to 3 threads; and the mode must
 * have been taken exactly where it applies. Several threads split small weights by output
 * rows and large ones (over 256 KiB, the last cases) by blocks of output channels. */
TEST(Conv2d, BroadcastModeAgainstReference) {
    uint32_t seed = 4200;
    const BcastPaths paths;
    int expected = 0, expected_rows = 0, expected_pairs = 0;
    std::set<int> pair_heights;
    const int iters = 20;
    for (int iter = 0; iter < iters; ++iter) {
        auto rnd = cvml_test::random_values(20, 1000, seed++);
        auto pick = [&](int i, int lo, int hi) { return lo + (rnd[i] + 1000) % (hi - lo + 1); };
        ConvCfg c;
        c.groups = 1;
        c.n = pick(1, 1, 2);
        c.c = pick(2, 1, 37);
        c.o = 32 * pick(3, 1, 3) + (iter % 7 == 6 ? 8 : 0);  // some not whole blocks
        c.kh = c.kw = 3;
        c.sh = c.sw = pick(7, 1, 2);
        c.ph = c.pw = 1;
        c.dh = c.dw = 1;
        c.h = pick(4, 1, 11);
        int ow = iter % 4 == 1 ? 7 : 7 * pick(5, 1, 8);  // 7 wide: pairs of rows
        if (iter >= iters - 2) {  // a weight copy over 256 KiB: split by blocks
            c.c = iter == iters - 1 ? 300 : 260;
            c.o = 128;
            c.h = 5;
            ow = 14;
        }
        c.w = c.sw == 1 ? ow : 2 * ow - pick(8, 0, 1);  // an even or odd input width
        const int oh = (c.h - 1) / c.sh + 1;
        c.bias = pick(6, 0, 1) == 1;
        const bool clipped = iter % 3 != 2;  // else the graph's input itself, stored as int32
        auto x = cvml_test::random_values(c.n * c.c * c.h * c.w, 127, seed++);
        // Half the inputs without negative values (a relu's output): avx2's unsigned form.
        if (iter % 2 == 0)
            for (int32_t& v : x) v = abs(v);
        auto w = cvml_test::random_values(c.o * c.c * 9, 127, seed++);
        auto b = cvml_test::random_values(c.o, 100000, seed++);
        expect_bcast_case(c, x, w, b, clipped, c.bias && iter % 2 == 1, iter);
        const bool taken = oh >= 2 && c.o % 32 == 0;
        expected += taken ? 3 : 0;
        expected_rows += taken && c.c < 256 ? 2 : 0;  // threads 2 and 3
        expected_pairs += taken && ow == 7 ? 3 : 0;
        if (taken && ow == 7) pair_heights.insert(oh % 2);
    }
    EXPECT_EQ(pair_heights.size(), 2u) << "pairs of rows need planes of odd and even heights";
    paths.expect(expected, expected_rows, expected_pairs);
}

/* avx2's broadcast mode picks its form (for inputs with or without negative values) per
 * thread, from the input rows that thread's output rows read: an input whose only
 * negative values lie in one row, for every row, at strides 1 and 2 and 1 to 3 threads
 * (split by output rows), against the reference. A thread that missed the rows just
 * above or below its own (the kernel's first and last rows read them) would run the
 * unsigned form on negative values. */
TEST(Conv2d, BroadcastModeOneNegativeRow) {
    uint32_t seed = 4600;
    for (int stride : {1, 2}) {
        ConvCfg c;
        c.groups = 1;
        c.n = 1;
        c.c = 8;
        c.o = 32;
        c.kh = c.kw = 3;
        c.sh = c.sw = stride;
        c.ph = c.pw = 1;
        c.dh = c.dw = 1;
        c.h = stride == 1 ? 14 : 27;
        c.w = stride == 1 ? 14 : 27;
        c.bias = true;
        const auto w = cvml_test::random_values(c.o * c.c * 9, 127, seed++);
        const auto b = cvml_test::random_values(c.o, 100000, seed++);
        for (int row = 0; row < c.h; ++row) {
            auto x = cvml_test::random_values(c.c * c.h * c.w, 127, seed++);
            for (int64_t ch = 0; ch < c.c; ++ch)
                for (int64_t i = 0; i < c.h * c.w; ++i) {
                    int32_t& v = x[static_cast<size_t>(ch * c.h * c.w + i)];
                    v = i / c.w == row ? -1 - abs(v) % 127 : abs(v);
                }
            expect_bcast_case(c, x, w, b, true, false, row);
        }
    }
}

/* Broadcast mode for 1x1 kernels (avx512 and avx2: stride 1, no padding, outputs 7 or 14
 * wide, output channels a multiple of 32): planes of one row and many, 7-wide planes of
 * odd and even heights (two rows a segment at avx512), channel counts off a multiple of
 * 4, int8-stored inputs and int32-stored ones (a graph input), inputs with and without
 * negative values (avx2's two forms), a bias that is a graph input (added by the
 * tile function), 1 to 3 threads (always split by blocks of channels); and the mode taken
 * exactly where it applies (not on wider outputs, widths that are not a multiple of 7, or
 * channels off whole blocks). */
TEST(Conv2d, BroadcastMode1x1AgainstReference) {
    uint32_t seed = 4700;
    const BcastPaths paths;
    int expected = 0, expected_pairs = 0;
    std::set<int> pair_heights;
    const int widths[] = {7, 14, 7, 14, 21, 8, 7, 14};
    const int iters = 16;
    for (int iter = 0; iter < iters; ++iter) {
        auto rnd = cvml_test::random_values(20, 1000, seed++);
        auto pick = [&](int i, int lo, int hi) { return lo + (rnd[i] + 1000) % (hi - lo + 1); };
        ConvCfg c;
        c.groups = 1;
        c.n = pick(1, 1, 2);
        c.c = pick(2, 1, 70);
        c.o = 32 * pick(3, 1, 3) + (iter % 7 == 6 ? 16 : 0);  // some not whole blocks
        c.kh = c.kw = 1;
        c.sh = c.sw = 1;
        c.ph = c.pw = 0;
        c.dh = c.dw = 1;
        c.h = iter % 5 == 0 ? 1 : pick(4, 2, 9);
        c.w = widths[iter % 8];
        c.bias = pick(6, 0, 1) == 1;
        const bool clipped = iter % 3 != 2;  // else the graph's input itself, stored as int32
        auto x = cvml_test::random_values(c.n * c.c * c.h * c.w, 127, seed++);
        // Half the inputs without negative values (a relu's output): avx2's unsigned form.
        if (iter % 2 == 0)
            for (int32_t& v : x) v = abs(v);
        auto w = cvml_test::random_values(c.o * c.c, 127, seed++);
        auto b = cvml_test::random_values(c.o, 100000, seed++);
        expect_bcast_case(c, x, w, b, clipped, c.bias && iter % 2 == 1, iter);
        const bool fits = (c.w == 7 || c.w == 14) && c.o % 32 == 0;
        const bool taken = fits && cpu_simd_config_of(cpu_simd_level())->bcast_1x1;
        expected += taken ? 3 : 0;
        expected_pairs += taken && c.w == 7 ? 3 : 0;
        if (fits && c.w == 7) pair_heights.insert(c.h % 2);
    }
    EXPECT_EQ(pair_heights.size(), 2u) << "pairs of rows need planes of odd and even heights";
    paths.expect(expected, 0, expected_pairs);  // 1x1: always by blocks of channels
}

/* Weights that cast to -128 (128 or -128 itself) in a convolution broadcast mode would
 * take: avx2's form for an input with negative values negates weights, which -128 does
 * not survive, so there the GEMM (its exact fallback) runs instead; with inputs with and
 * without negative values, 3x3 and 1x1 kernels, against the reference. */
TEST(Conv2d, BroadcastModeWeightsOfMinus128) {
    cvml_init();
    const BcastPaths paths;
    uint32_t seed = 4900;
    int expected = 0;
    for (int k : {3, 1})
        for (bool negative : {true, false}) {
            ConvCfg c{1, 6, 7, 14, 32, k, k, 1, 1, k / 2, k / 2, 1, 1, 1, false};
            auto x = cvml_test::random_values(c.c * c.h * c.w, 127, seed++);
            if (!negative)
                for (int32_t& v : x) v = abs(v);
            auto w = cvml_test::random_values(c.o * c.c * k * k, 127, seed++);
            for (size_t i = 0; i < w.size(); i += 5) w[i] = i % 2 ? 128 : -128;
            EXPECT_EQ(run_kernel(c, x, w, true), ref_conv(c, x, w, {}))
                << k << "x" << k << (negative ? " with" : " without") << " negative inputs";
            const cpu_simd_config* cfg = cpu_simd_config_of(cpu_simd_level());
            expected += !cfg->gemm_notes_min && (k == 3 || cfg->bcast_1x1) ? 1 : 0;
        }
    paths.expect(expected, 0, 0);
    cvml_release();
}

namespace {

/* Convolutions (groups == 1) on an int8-stored input against the reference, at 1, 2 and 3
 * threads; stride_one: row and column stride 1 with widths around the avx2 rows' 16-byte
 * chunks, else mostly stride 2. */
void check_image_on_int8_input(uint32_t seed, int iters, bool stride_one) {
    for (int iter = 0; iter < iters; ++iter) {
        auto rnd = cvml_test::random_values(20, 1000, seed++);
        auto pick = [&](int i, int lo, int hi) { return lo + (rnd[i] + 1000) % (hi - lo + 1); };
        ConvCfg c;
        c.groups = 1;
        c.n = pick(1, 1, 2);
        c.c = pick(2, 1, 9);
        c.o = 8 * pick(3, 1, 2);
        c.kh = pick(4, 1, 3);
        c.kw = pick(5, 1, 3);
        c.sh = stride_one ? 1 : (iter % 4 == 3 ? pick(6, 1, 3) : 2);
        c.sw = stride_one ? 1 : (iter % 4 == 3 ? pick(7, 1, 3) : 2);
        c.ph = pick(8, 0, c.kh - 1);
        c.pw = stride_one ? pick(9, 0, 3) : pick(9, 0, c.kw - 1);
        c.dh = pick(10, 1, 2);
        c.dw = pick(11, 1, 2);
        c.h = (c.kh - 1) * c.dh + 1 + pick(12, 2, 20);
        c.w = (c.kw - 1) * c.dw + 1 + (stride_one ? pick(13, 0, 40) : pick(13, 1, 300));
        c.bias = pick(14, 0, 1) == 1;
        auto x = cvml_test::random_values(c.n * c.c * c.h * c.w, 127, seed++);
        auto w = cvml_test::random_values(c.o * c.c * c.kh * c.kw, 127, seed++);
        auto b = cvml_test::random_values(c.o, 100000, seed++);
        auto expect = ref_conv(c, x, w, b);
        for (int threads : {1, 2, 3}) {
            std::string error;
            auto got = run_after_clip(c, x, w, b, threads, &error);
            ASSERT_EQ(got, expect) << "iter " << iter << " threads " << threads << " " << error;
        }
    }
}

}  // namespace

/* Strided convolutions on an int8-stored input: at avx512 the image rows of column stride 2
 * are split into phases in registers (rows over 64 columns span several vectors), and rows
 * no tap reads are skipped (1x1 stride 2, or a row dilation that is a multiple of the row
 * stride); strides 3 and unequal strides take the generic rows. */
TEST(Conv2d, StridedImageOnInt8Input) {
    check_image_on_int8_input(3500, 40, false);
}

/* Stride 1 on an int8-stored input: at avx2 each padded row is written in 16-byte chunks,
 * the last one overlapping (rows under 16 bytes, and the image's first and last rows,
 * whose chunks would read outside the input, take the generic copy). */
TEST(Conv2d, StrideOneImageOnInt8Input) {
    check_image_on_int8_input(3700, 40, true);
}

/* The int8 cast (groups == 1) and int32 wrap-around (groups > 1) only show with values
 * outside int8, which verified graphs reach through an unclipped cvm_right_shift (case
 * 006); here the kernel is driven directly with such values. */
TEST(Conv2d, KernelInt8CastAndWrap) {
    cvml_init();
    for (int groups : {1, 2}) {
        ConvCfg c{1, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 1, 1, groups, false};
        std::vector<int32_t> x = {128, 200, -129, 5, 0x40000000, -7, 300, 1};
        std::vector<int32_t> w =
            groups == 1 ? std::vector<int32_t>{1, 129, -2, 256} : std::vector<int32_t>{4, 129};
        const std::vector<int32_t> y = run_kernel(c, x, w, false);
        EXPECT_EQ(y, ref_conv(c, x, w, {})) << "groups " << groups;
        ASSERT_EQ(y.size(), 8u);
        if (groups == 1) {
            // 128 -> -128 and 129 -> -127 before the product: y[0] = 1*(-128) + (-127)*0.
            EXPECT_EQ(y[0], -128);
        } else {
            // No cast: 4 * 128, and 129 * 2^30 wraps.
            EXPECT_EQ(y[0], 512);
            EXPECT_EQ(y[4], static_cast<int32_t>(129u * 0x40000000u));
        }
    }
    cvml_release();
}

namespace {

void replay(const std::string& name, const std::vector<std::pair<std::string, std::string>>& attrs,
            const std::vector<int32_t>& data_shape, int data_prec,
            const std::vector<std::pair<std::string, int>>& params, uint64_t gas) {
    std::string dir = nn_case::case_dir(name);
    auto pm = nn_case::read_params(dir);
    std::vector<Operand> ops;
    ops.push_back(Operand{data_shape, data_prec,
                          nn_case::read_values(dir + "/input.bin", nn_case::count_of(data_shape)),
                          false});
    for (auto& pp : params) {
        ASSERT_TRUE(pm.count(pp.first)) << name << " lacks " << pp.first;
        ops.push_back(Operand{pm[pp.first].shape, pp.second, pm[pp.first].values, true});
    }
    auto r = run_op("conv2d", attrs, ops);
    ASSERT_EQ(r.verify_rc, CVML_OK) << name << ": " << r.error;
    ASSERT_EQ(r.run_rc, CVML_OK) << name << ": " << r.error;
    EXPECT_EQ(r.gas, gas) << name;
    auto want = nn_case::read_values(dir + "/output.bin", r.outputs[0].size());
    ASSERT_FALSE(want.empty()) << name;
    EXPECT_EQ(nn_case::as_written(r.outputs[0], nn_case::read_file(dir + "/output.bin").size()),
              want)
        << name;
}

}  // namespace

TEST(Conv2d, ConformanceCases) {
    replay("000_conv2d_basic",
           {{"use_bias", "True"},
            {"groups", "1"},
            {"dilation", "(1, 1)"},
            {"padding", "(2, 1)"},
            {"strides", "(2, 2)"},
            {"kernel_size", "(1, 2)"},
            {"channels", "6"}},
           {1, 4, 9, 7}, 8, {{"w", 8}, {"b", 12}}, 6570);
    replay("001_conv2d_dilate_batch2_nobias",
           {{"use_bias", "False"},
            {"groups", "1"},
            {"dilation", "(2, 3)"},
            {"padding", "(1, 0)"},
            {"strides", "(2, 2)"},
            {"kernel_size", "(3, 3)"},
            {"channels", "4"}},
           {2, 2, 10, 7}, 8, {{"w", 8}}, 3648);
    replay("002_conv2d_grouped",
           {{"use_bias", "False"},
            {"groups", "3"},
            {"dilation", "(1, 1)"},
            {"padding", "(1, 1)"},
            {"strides", "(1, 1)"},
            {"kernel_size", "(3, 3)"},
            {"channels", "6"}},
           {1, 3, 8, 8}, 8, {{"w", 8}}, 13518);
    replay("003_conv2d_depthwise",
           {{"use_bias", "True"},
            {"groups", "2"},
            {"dilation", "(1, 1)"},
            {"padding", "(1, 1)"},
            {"strides", "(2, 2)"},
            {"kernel_size", "(3, 3)"},
            {"channels", "2"}},
           {1, 2, 7, 7}, 8, {{"w", 8}, {"b", 14}}, 1646);
    replay("004_conv2d_depthwise_multiplier2",
           {{"use_bias", "False"},
            {"groups", "3"},
            {"dilation", "(2, 2)"},
            {"padding", "(2, 2)"},
            {"strides", "(1, 1)"},
            {"kernel_size", "(3, 3)"},
            {"channels", "6"}},
           {1, 3, 8, 7}, 8, {{"w", 8}}, 11862);
    replay("005_conv2d_kernel_eq_input_extremes",
           {{"use_bias", "False"}, {"kernel_size", "(5, 5)"}, {"channels", "3"}}, {1, 10, 5, 5}, 8,
           {{"w", 8}}, 7265);
}
