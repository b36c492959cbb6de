#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "nn_case_util.h"
#include "op_runner.h"

using cvml_test::Operand;
using cvml_test::run_op;

namespace {

using Attrs = std::vector<std::pair<std::string, std::string>>;

/* Independent reference of upstream's CPU algorithm (FORMAT.md §7), on std containers. */
int64_t ref_iou(const int32_t* a, const int32_t* b) {
    auto sub = [](int32_t p, int32_t q) {
        return static_cast<int32_t>(static_cast<uint32_t>(p) - static_cast<uint32_t>(q));
    };
    __int128 s = static_cast<__int128>(sub(a[2], a[0])) * sub(a[3], a[1]) +
                 static_cast<__int128>(sub(b[2], b[0])) * sub(b[3], b[1]);
    s = static_cast<int64_t>(static_cast<uint64_t>(s));  // upstream's int64 sum
    if (s <= 0) return 0;
    int64_t w = std::max<int32_t>(0, sub(std::min(a[2], b[2]), std::max(a[0], b[0])));
    int64_t h = std::max<int32_t>(0, sub(std::min(a[3], b[3]), std::max(a[1], b[1])));
    __int128 ov = static_cast<__int128>(w) * h, t = s - ov;
    if (t <= 0) return 0;
    if (ov * 100 > INT64_MAX)
        t /= 100;
    else
        ov *= 100;
    return static_cast<int64_t>(ov / t);
}

std::vector<int32_t> ref_nms(std::vector<int32_t>& x, const std::vector<int32_t>& vcount, int B,
                             int N, int topk, int mos, int thr, bool force) {
    std::vector<int32_t> y(x.size(), -1);
    for (int b = 0; b < B; ++b) {
        int vc = std::max(std::min(vcount[b], N), 0);
        if (vc <= 0) break;  // the rest stays -1 (upstream: stale)
        int32_t* xb = &x[b * N * 6];
        int32_t* yb = &y[b * N * 6];
        std::vector<int> rows(vc);
        for (int i = 0; i < vc; ++i) rows[i] = i;
        std::stable_sort(rows.begin(), rows.end(),
                         [&](int p, int q) { return xb[p * 6 + 1] > xb[q * 6 + 1]; });
        if (topk > 0 && topk < vc)
            for (int i = topk; i < vc; ++i) std::fill(xb + rows[i] * 6, xb + rows[i] * 6 + 6, -1);
        int keep = (topk >= 0 && topk < vc) ? topk : vc;
        std::vector<bool> removed(N, false);
        int yi = 0;
        for (int i = 0; i < keep; ++i) {
            const int32_t* r1 = xb + rows[i] * 6;
            if (!removed[i] && r1[0] >= 0) std::copy(r1, r1 + 6, yb + 6 * yi++);
            for (int j = i + 1; j < keep && !removed[i] && xb[rows[j] * 6] >= 0; ++j) {
                const int32_t* r2 = xb + rows[j] * 6;
                if ((force || r1[0] == r2[0]) && ref_iou(r1 + 2, r2 + 2) >= thr) removed[j] = true;
            }
        }
        if (mos > 0) {
            int j = 0;
            for (int i = 0; i < vc; ++i)
                if (yb[i * 6] >= 0) {
                    if (j == mos)
                        std::fill(yb + i * 6, yb + i * 6 + 6, -1);
                    else
                        ++j;
                }
        }
    }
    return y;
}

Attrs nms_attrs(int topk, int mos, int thr, bool force) {
    return {{"top_k", std::to_string(topk)},
            {"max_output_size", std::to_string(mos)},
            {"iou_threshold", std::to_string(thr)},
            {"force_suppress", force ? "True" : "False"}};
}

std::vector<int32_t> rows(std::vector<std::vector<int32_t>> r) {
    std::vector<int32_t> v;
    for (auto& x : r) v.insert(v.end(), x.begin(), x.end());
    return v;
}

const std::vector<int32_t> kNone = {-1, -1, -1, -1, -1, -1};

/* get_valid_counts -> non_max_suppression, as the compiler emits it. Outputs: the NMS
 * result, then get_valid_counts' boxes (so the top_k mutation of NMS's input shows). */
struct Chain {
    int verify_rc = CVML_OK, run_rc = CVML_OK;
    uint64_t gas = 0;
    std::vector<int32_t> nms, boxes;
};

Chain run_chain(const std::vector<int32_t>& shape, int prec, const std::vector<int32_t>& data,
                const Attrs& gvc, const Attrs& nms, int threads = 1) {
    Chain c;
    cvml_init();
    cvml_context* ctx = nullptr;
    cvml_context_create(&ctx);
    cvml_context_set_threads(ctx, threads);
    cvml_graph* g = nullptr;
    cvml_graph_create(ctx, &g);
    cvml_tensor* in = nullptr;
    int rc = cvml_graph_add_input(g, "data", 3, shape.data(), prec, &in);
    auto add = [&](const char* op, const char* name, const Attrs& a, cvml_tensor** ins, int nin,
                   cvml_tensor** outs, int nout) {
        std::vector<const char*> k, v;
        for (auto& kv : a) k.push_back(kv.first.c_str()), v.push_back(kv.second.c_str());
        return cvml_graph_add_node(g, op, name, k.data(), v.data(), (int)k.size(), ins, nin, outs,
                                   nout);
    };
    cvml_tensor* gv[2] = {nullptr, nullptr};
    cvml_tensor* nm[1] = {nullptr};
    if (!rc) rc = add("get_valid_counts", "get_valid_counts_0", gvc, &in, 1, gv, 2);
    cvml_tensor* nin[2] = {gv[1], gv[0]};
    if (!rc) rc = add("non_max_suppression", "non_max_suppression_0", nms, nin, 2, nm, 1);
    cvml_tensor* heads[2] = {nm[0], gv[1]};
    if (!rc) rc = cvml_graph_set_outputs(g, heads, 2);
    if (!rc) rc = cvml_graph_verify(g);
    c.verify_rc = rc;
    if (!rc) {
        cvml_graph_gas(g, &c.gas);
        cvml_tensor_set_i32(in, data.data(), data.size());
        c.run_rc = cvml_graph_run(g);
        c.nms.resize(data.size());
        c.boxes.resize(data.size());
        cvml_tensor_get_i32(nm[0], c.nms.data(), c.nms.size());
        cvml_tensor_get_i32(gv[1], c.boxes.data(), c.boxes.size());
    }
    cvml_graph_release(g);
    cvml_context_release(ctx);
    cvml_release();
    return c;
}

}  // namespace

TEST(NonMaxSuppression, HandChecked) {
    // Sorted by score: A (id 0), B (id 0, iou(A, B) = 81*100/119 = 68), C (id 1, = A), D.
    std::vector<int32_t> x = rows({{0, 80, 1, 1, 11, 11},
                                   {1, 70, 0, 0, 10, 10},
                                   {0, 90, 0, 0, 10, 10},
                                   {0, 60, 20, 20, 30, 30}});
    Operand vc{{1}, 8, {4}, true};
    auto r = run_op("non_max_suppression", nms_attrs(-1, -1, 50, false),
                    {Operand{{1, 4, 6}, 8, x, false}, vc});
    ASSERT_EQ(r.verify_rc, CVML_OK) << r.error;
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0],
              rows({{0, 90, 0, 0, 10, 10}, {1, 70, 0, 0, 10, 10}, {0, 60, 20, 20, 30, 30}, kNone}));
    EXPECT_EQ(r.precisions[0], 8);
    // ops 20 * B * 24; mem 5 * (24 + 1) + 5 * 24.
    EXPECT_EQ(r.gas, 20u * 24 + 125 + 120);
    // force_suppress: C (other class, iou 100) goes too.
    r = run_op("non_max_suppression", nms_attrs(-1, -1, 50, true),
               {Operand{{1, 4, 6}, 8, x, false}, vc});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], rows({{0, 90, 0, 0, 10, 10}, {0, 60, 20, 20, 30, 30}, kNone, kNone}));
    // iou 68 < 70: B survives.
    r = run_op("non_max_suppression", nms_attrs(-1, -1, 70, false),
               {Operand{{1, 4, 6}, 8, x, false}, vc});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], rows({{0, 90, 0, 0, 10, 10},
                                  {0, 80, 1, 1, 11, 11},
                                  {1, 70, 0, 0, 10, 10},
                                  {0, 60, 20, 20, 30, 30}}));
    // max_output_size 0 is no limit; 1 keeps the first; top_k 0 keeps none.
    r = run_op("non_max_suppression", nms_attrs(-1, 0, 50, false),
               {Operand{{1, 4, 6}, 8, x, false}, vc});
    EXPECT_EQ(r.outputs[0],
              rows({{0, 90, 0, 0, 10, 10}, {1, 70, 0, 0, 10, 10}, {0, 60, 20, 20, 30, 30}, kNone}));
    r = run_op("non_max_suppression", nms_attrs(-1, 1, 50, false),
               {Operand{{1, 4, 6}, 8, x, false}, vc});
    EXPECT_EQ(r.outputs[0], rows({{0, 90, 0, 0, 10, 10}, kNone, kNone, kNone}));
    r = run_op("non_max_suppression", nms_attrs(0, -1, 50, false),
               {Operand{{1, 4, 6}, 8, x, false}, vc});
    EXPECT_EQ(r.outputs[0], rows({kNone, kNone, kNone, kNone}));
}

TEST(NonMaxSuppression, NegativeIdStopsTheScan) {
    // A (id 0), N (id -1, same box), A' (id 0, same box). The scan from A stops at N, so
    // A' survives A; N is never output but suppresses A' under force_suppress.
    std::vector<int32_t> x =
        rows({{0, 90, 0, 0, 10, 10}, {-1, 80, 0, 0, 10, 10}, {0, 70, 0, 0, 10, 10}});
    Operand vc{{1}, 8, {3}, true};
    auto r = run_op("non_max_suppression", nms_attrs(-1, -1, 50, false),
                    {Operand{{1, 3, 6}, 8, x, false}, vc});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], rows({{0, 90, 0, 0, 10, 10}, {0, 70, 0, 0, 10, 10}, kNone}));
    r = run_op("non_max_suppression", nms_attrs(-1, -1, 50, true),
               {Operand{{1, 3, 6}, 8, x, false}, vc});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], rows({{0, 90, 0, 0, 10, 10}, kNone, kNone}));
}

TEST(NonMaxSuppression, StableTiesAndValidCountClamp) {
    // Equal scores keep input order; valid_count beyond N is clamped to N.
    std::vector<int32_t> x =
        rows({{2, 50, 0, 0, 1, 1}, {1, 50, 5, 5, 6, 6}, {3, 60, 9, 9, 10, 10}});
    auto r = run_op("non_max_suppression", nms_attrs(-1, -1, 50, false),
                    {Operand{{1, 3, 6}, 8, x, false}, Operand{{1}, 8, {100}, true}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0],
              rows({{3, 60, 9, 9, 10, 10}, {2, 50, 0, 0, 1, 1}, {1, 50, 5, 5, 6, 6}}));
}

TEST(NonMaxSuppression, ZeroValidCountEndsTheKernel) {
    // Batch 1 has no valid box: upstream returns, leaving batch 2 stale; here it is -1.
    std::vector<int32_t> one = rows({{0, 9, 0, 0, 2, 2}, {0, 8, 5, 5, 7, 7}});
    std::vector<int32_t> x;
    for (int b = 0; b < 3; ++b) x.insert(x.end(), one.begin(), one.end());
    auto r = run_op("non_max_suppression", nms_attrs(-1, -1, 50, false),
                    {Operand{{3, 2, 6}, 8, x, false}, Operand{{3}, 8, {2, 0, 2}, true}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    std::vector<int32_t> want = one;
    for (int i = 0; i < 24; ++i) want.push_back(-1);
    EXPECT_EQ(r.outputs[0], want);
    r = run_op("non_max_suppression", nms_attrs(-1, -1, 50, false),
               {Operand{{3, 2, 6}, 8, x, false}, Operand{{3}, 8, {-3, 2, 2}, true}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], std::vector<int32_t>(36, -1));
}

TEST(NonMaxSuppression, IouLargeAreas) {
    // Areas near 2^60: I * 100 would overflow int64, so upstream divides the union by 100
    // instead. Identical boxes still give 100, a one-row-shorter box 99.
    const int32_t big = 1 << 30;
    std::vector<int32_t> a = {0, 9, 0, 0, big, big};
    for (int32_t y2 : {big, big - 1}) {
        std::vector<int32_t> x = a;
        for (int32_t v : {0, 8, 0, 0, big, y2}) x.push_back(v);
        const int64_t iou = ref_iou(&x[2], &x[8]);
        EXPECT_EQ(iou, y2 == big ? 100 : 99);
        for (int thr : {99, 100, 101}) {
            auto r = run_op("non_max_suppression", nms_attrs(-1, -1, thr, false),
                            {Operand{{1, 2, 6}, 32, x, false}, Operand{{1}, 8, {2}, true}});
            ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
            std::vector<int32_t> keep_one(x.begin(), x.begin() + 6);
            keep_one.insert(keep_one.end(), kNone.begin(), kNone.end());
            EXPECT_EQ(r.outputs[0], thr <= iou ? keep_one : x) << thr;
        }
    }
}

TEST(NonMaxSuppression, TopKOverwritesTheInput) {
    // get_valid_counts' boxes feed NMS and are also a graph output: with top_k = 1 the
    // rows ranked >= 1 are set to -1 in that buffer, as upstream does.
    std::vector<int32_t> x = rows({{0, 5, 0, 0, 1, 1}, {0, 9, 4, 4, 5, 5}, {1, 7, 8, 8, 9, 9}});
    auto c = run_chain({1, 3, 6}, 8, x, {{"score_threshold", "0"}}, nms_attrs(1, -1, 50, false));
    ASSERT_EQ(c.verify_rc, CVML_OK);
    ASSERT_EQ(c.run_rc, CVML_OK);
    EXPECT_EQ(c.nms, rows({{0, 9, 4, 4, 5, 5}, kNone, kNone}));
    EXPECT_EQ(c.boxes, rows({kNone, {0, 9, 4, 4, 5, 5}, kNone}));
}

TEST(NonMaxSuppression, ErrorClasses) {
    std::vector<int32_t> x(36, 1);
    auto rc = [&](const Attrs& a, std::vector<int32_t> xs = {1, 6, 6},
                  std::vector<int32_t> vs = {1}) {
        size_t n = 1, m = 1;
        for (int d : xs) n *= d;
        for (int d : vs) m *= d;
        return run_op("non_max_suppression", a,
                      {Operand{xs, 8, std::vector<int32_t>(n, 1), false},
                       Operand{vs, 8, std::vector<int32_t>(m, 1), true}})
            .verify_rc;
    };
    EXPECT_EQ(rc({}), CVML_OK);
    EXPECT_EQ(rc({{"coord_start", "2"},
                  {"score_index", "1"},
                  {"id_index", "0"},
                  {"return_indices", "false"},
                  {"invalid_to_bottom", "true"}}),
              CVML_OK);
    EXPECT_EQ(rc({{"nms_threshold", "1"}}), CVML_ERR_RUNTIME);
    EXPECT_EQ(rc({{"iou_threshold", "0.5"}}), CVML_ERR_RUNTIME);
    EXPECT_EQ(rc({{"return_indices", "True"}}), CVML_ERR_LOGIC);  // case 132
    EXPECT_EQ(rc({{"invalid_to_bottom", "False"}}), CVML_ERR_LOGIC);
    EXPECT_EQ(rc({{"coord_start", "1"}}), CVML_ERR_LOGIC);
    EXPECT_EQ(rc({{"score_index", "0"}}), CVML_ERR_LOGIC);
    EXPECT_EQ(rc({{"id_index", "-1"}}), CVML_ERR_LOGIC);
    EXPECT_EQ(rc({{"iou_threshold", "0"}}), CVML_ERR_LOGIC);
    EXPECT_EQ(rc({}, {1, 6, 5}), CVML_ERR_LOGIC);
    EXPECT_EQ(rc({}, {6, 6}), CVML_ERR_LOGIC);
    EXPECT_EQ(rc({}, {1, 6, 6}, {1, 1}), CVML_ERR_LOGIC);
    EXPECT_EQ(rc({}, {1, 6, 6}, {2}), CVML_ERR_LOGIC);
}

TEST(NonMaxSuppression, PropertyAgainstReference) {
    uint32_t seed = 1300;
    for (int iter = 0; iter < 80; ++iter) {
        auto rnd = cvml_test::random_values(8, 1000, seed++);
        auto pick = [&](int i, int lo, int hi) { return lo + (rnd[i] + 1000) % (hi - lo + 1); };
        int B = pick(0, 1, 3), N = pick(1, 1, 12);
        int topk = pick(2, -1, N + 1), mos = pick(3, -1, N), thr = pick(4, 1, 101);
        bool force = pick(5, 0, 1);
        std::vector<int32_t> x;
        auto vals = cvml_test::random_values(B * N * 6, 20, seed++);
        for (int i = 0; i < B * N; ++i) {
            int32_t* v = &vals[i * 6];
            int32_t id = v[0] % 3, score = v[1] % 5, x1 = v[2], y1 = v[3];
            int32_t x2 = x1 + (v[4] + 20) % 12 - 1, y2 = y1 + (v[5] + 20) % 12 - 1;
            for (int32_t e : {id, score, x1, y1, x2, y2}) x.push_back(e);
        }
        std::vector<int32_t> vcount;
        auto vr = cvml_test::random_values(B, N + 2, seed++);
        for (int b = 0; b < B; ++b) vcount.push_back(pick(6, 0, 5) == 0 ? vr[b] : std::abs(vr[b]));
        std::vector<int32_t> xm = x;
        auto want = ref_nms(xm, vcount, B, N, topk, mos, thr, force);
        for (int threads : {1, 3}) {
            auto r = run_op("non_max_suppression", nms_attrs(topk, mos, thr, force),
                            {Operand{{B, N, 6}, 8, x, false}, Operand{{B}, 8, vcount, true}}, 1,
                            threads);
            ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
            ASSERT_EQ(r.outputs[0], want) << "iter " << iter;
        }
    }
}

TEST(NonMaxSuppression, ConformanceCases) {
    struct Case {
        const char* name;
        int n, thr_gvc, topk, mos, iou;
        bool force;
        uint64_t gas;
    };
    const Case cases[] = {
        {"067_nms_basic", 12, 11, -1, -1, 70, false, 2526},
        {"068_nms_force_topk", 8, 14, 4, -1, 30, true, 1686},
        {"069_nms_maxout", 11, 6, -1, 3, 50, false, 2316},
        {"070_nms_maxout0_topk0", 14, 15, -1, 0, 70, false, 2946},
        {"071_nms_ties_negid", 6, 4, -1, -1, 50, true, 1266},
        {"072_nms_iou101", 13, 16, -1, -1, 101, false, 2736},
    };
    for (const Case& cs : cases) {
        std::string dir = nn_case::case_dir(cs.name);
        std::vector<int32_t> shape = {1, cs.n, 6};
        auto data = nn_case::read_values(dir + "/input.bin", nn_case::count_of(shape));
        ASSERT_FALSE(data.empty()) << cs.name;
        for (int threads : {1, 3}) {
            auto c = run_chain(shape, 8, data, {{"score_threshold", std::to_string(cs.thr_gvc)}},
                               nms_attrs(cs.topk, cs.mos, cs.iou, cs.force), threads);
            ASSERT_EQ(c.verify_rc, CVML_OK) << cs.name;
            ASSERT_EQ(c.run_rc, CVML_OK) << cs.name;
            // The graph here has two heads; upstream's has one (the NMS output), so its
            // gas lacks nothing: heads do not change gas.
            EXPECT_EQ(c.gas, cs.gas) << cs.name;
            auto bytes = nn_case::read_file(dir + "/output.bin").size();
            auto want = nn_case::read_values(dir + "/output.bin", c.nms.size());
            EXPECT_EQ(nn_case::as_written(c.nms, bytes), want) << cs.name;
        }
    }
    nn_case::replay("non_max_suppression", "073_nms_batch_vc_param",
                    {{"top_k", "-1"},
                     {"max_output_size", "-1"},
                     {"force_suppress", "False"},
                     {"iou_threshold", "50"}},
                    {2, 6, 6}, 8, {{"vc", 8}}, 3610);
}
