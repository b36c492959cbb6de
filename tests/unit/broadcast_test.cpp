/* broadcast_* operators: the formalization's worked example, shape rules, precision
 * rules, division quirks, and random broadcast shapes against a plain index loop. */
#include <gtest/gtest.h>

#include "op_runner.h"

using cvml_test::Operand;
using cvml_test::random_values;
using cvml_test::run_op;

namespace {

/* Plain NumPy-style reference: for each output multi-index, read both operands. */
int64_t ref_apply(const std::string& op, int64_t a, int64_t b) {
    if (op == "broadcast_add") return static_cast<int32_t>(static_cast<uint32_t>(a + b));
    if (op == "broadcast_sub") return static_cast<int32_t>(static_cast<uint32_t>(a - b));
    if (op == "broadcast_mul") return static_cast<int32_t>(static_cast<uint32_t>(a * b));
    if (op == "broadcast_max") return a > b ? a : b;
    if (op == "broadcast_greater") return a > b;
    if (b == 0) return 0;
    int64_t q = (a < 0 ? -a : a) / (b < 0 ? -b : b);
    return (a < 0) != (b < 0) ? -q : q;
}

std::vector<int32_t> ref_broadcast(const std::string& op, const std::vector<int32_t>& sa,
                                   const std::vector<int32_t>& a, const std::vector<int32_t>& sb,
                                   const std::vector<int32_t>& b, std::vector<int32_t>* so) {
    size_t nd = std::max(sa.size(), sb.size());
    std::vector<int32_t> pa(nd - sa.size(), 1), pb(nd - sb.size(), 1);
    pa.insert(pa.end(), sa.begin(), sa.end());
    pb.insert(pb.end(), sb.begin(), sb.end());
    so->assign(nd, 0);
    size_t total = 1;
    for (size_t d = 0; d < nd; ++d) total *= (*so)[d] = std::max(pa[d], pb[d]);
    std::vector<int32_t> out(total);
    for (size_t i = 0; i < total; ++i) {
        size_t rem = i, ia = 0, ib = 0, ma = 1, mb = 1;
        for (size_t d = nd; d-- > 0;) {
            size_t k = rem % (*so)[d];
            rem /= (*so)[d];
            ia += (pa[d] == 1 ? 0 : k) * ma;
            ib += (pb[d] == 1 ? 0 : k) * mb;
            ma *= pa[d];
            mb *= pb[d];
        }
        out[i] = static_cast<int32_t>(ref_apply(op, a[ia], b[ib]));
    }
    return out;
}

const char* const kOps[] = {"broadcast_add", "broadcast_sub", "broadcast_mul",
                            "broadcast_div", "broadcast_max", "broadcast_greater"};

}  // namespace

TEST(Broadcast, FormalizationExample) {
    auto r =
        run_op("broadcast_add", {},
               {Operand{{2, 3}, 8, {1, 1, 1, 1, 1, 1}, false}, Operand{{2, 1}, 8, {0, 1}, true}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.shapes[0], (std::vector<int32_t>{2, 3}));
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{1, 1, 1, 2, 2, 2}));
}

TEST(Broadcast, Precisions) {
    auto prec = [](const char* op) {
        auto r = run_op(op, {}, {Operand{{2}, 7, {1, 2}, false}, Operand{{1}, 12, {3}, true}});
        EXPECT_EQ(r.verify_rc, CVML_OK) << r.error;
        return r.precisions.empty() ? -1 : r.precisions[0];
    };
    EXPECT_EQ(prec("broadcast_add"), 13);
    EXPECT_EQ(prec("broadcast_sub"), 13);
    EXPECT_EQ(prec("broadcast_mul"), 19);
    EXPECT_EQ(prec("broadcast_max"), 12);
    EXPECT_EQ(prec("broadcast_div"), 7);      // input 0's, upstream SamePrecision
    EXPECT_EQ(prec("broadcast_greater"), 7);  // input 0's, not 1
}

TEST(Broadcast, DivisionAndGreater) {
    auto r = run_op("broadcast_div", {},
                    {Operand{{6}, 8, {7, -7, 7, -7, 5, 0}, false},
                     Operand{{6}, 8, {2, 2, -2, -2, 0, 3}, true}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{3, -3, -3, 3, 0, 0}));
    r = run_op("broadcast_greater", {},
               {Operand{{4}, 8, {1, 2, 3, -1}, false}, Operand{{1}, 8, {2}, true}});
    ASSERT_EQ(r.run_rc, CVML_OK) << r.error;
    EXPECT_EQ(r.outputs[0], (std::vector<int32_t>{0, 0, 1, 0}));
}

TEST(Broadcast, ShapeErrors) {
    for (const char* op : kOps) {
        EXPECT_EQ(
            run_op(op, {},
                   {Operand{{2, 3}, 8, {1, 2, 3, 4, 5, 6}, false}, Operand{{2}, 8, {1, 2}, true}})
                .verify_rc,
            CVML_ERR_LOGIC)
            << op;
        EXPECT_EQ(
            run_op(op, {{"axis", "1"}}, {Operand{{1}, 8, {1}, false}, Operand{{1}, 8, {1}, true}})
                .verify_rc,
            CVML_ERR_LOGIC)
            << op;
    }
}

TEST(BroadcastProperty, RandomShapesAgainstReference) {
    uint32_t seed = 1;
    for (int trial = 0; trial < 24; ++trial) {
        // A random output shape of 1..5 dims; each operand drops leading dims and sets
        // some dims to 1.
        auto dimsv = random_values(12, 1000, ++seed);
        size_t nd = 1 + static_cast<size_t>(dimsv[0] + 1000) % 5;
        std::vector<int32_t> so(nd), sa, sb;
        for (size_t d = 0; d < nd; ++d) so[d] = 1 + (dimsv[1 + d] + 1000) % 5;
        size_t da = static_cast<size_t>(dimsv[7] + 1000) % (nd + 1);
        size_t db = static_cast<size_t>(dimsv[8] + 1000) % (nd + 1);
        for (size_t d = da; d < nd; ++d) sa.push_back((dimsv[9] >> d) & 1 ? 1 : so[d]);
        for (size_t d = db; d < nd; ++d) sb.push_back((dimsv[10] >> d) & 1 ? 1 : so[d]);
        if (sa.empty()) sa.push_back(1);
        if (sb.empty()) sb.push_back(1);
        size_t na = 1, nb = 1;
        for (int32_t v : sa) na *= v;
        for (int32_t v : sb) nb *= v;
        auto a = random_values(na, 32767, ++seed);
        auto b = random_values(nb, 32767, ++seed);
        if (trial % 3 == 0) b[0] = 0;  // exercise division by zero
        for (const char* op : kOps) {
            std::vector<int32_t> want_shape;
            auto want = ref_broadcast(op, sa, a, sb, b, &want_shape);
            for (int threads : {1, 3}) {
                bool a_input = trial % 2 == 0;
                auto r = run_op(op, {}, {Operand{sa, 16, a, !a_input}, Operand{sb, 16, b, a_input}},
                                1, threads);
                ASSERT_EQ(r.run_rc, CVML_OK) << op << ": " << r.error;
                ASSERT_EQ(r.shapes[0], want_shape) << op;
                ASSERT_EQ(r.outputs[0], want) << op << " trial " << trial << " threads " << threads;
            }
        }
    }
}
