/* Test-only helpers for the broadcast_* operator tests: the formalization's
 * broadcast ("Broadcast Operator" in cvm-formalization.md) as a plain index loop, and
 * the checks every broadcast operator shares (shape rule, attributes, gas, random
 * shapes at several thread counts). Each operator's own file adds its function,
 * precision rule and quirks. */
#pragma once

#include <stdint.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "elem_test_util.h"

namespace broadcast_test {

using cvml_test::Operand;
using cvml_test::OpResult;
using cvml_test::random_values;
using cvml_test::run_op;
using elem_test::count_of;
using elem_test::Shape;

using BinaryFn = std::function<int64_t(int64_t, int64_t)>;

/* Two's-complement wrap to int32, as upstream's -O3 build computes. */
inline int64_t wrap32(int64_t v) {
    return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
}

/* Y[d] = op(A[a], B[b]) with K = max(M, N), a_i = min(d_{K-M+i}, m_i - 1) and
 * b_j = min(d_{K-N+j}, n_j - 1), over every d of the output shape max(SA, SB). */
inline std::vector<int32_t> ref_broadcast(const BinaryFn& op, const Shape& sa,
                                          const std::vector<int32_t>& a, const Shape& sb,
                                          const std::vector<int32_t>& b, Shape* out_shape) {
    const size_t k = std::max(sa.size(), sb.size());
    const size_t m = sa.size(), n = sb.size();
    Shape so(k);
    for (size_t p = 0; p < k; ++p) {
        int32_t ea = p >= k - m ? sa[p - (k - m)] : 1;
        int32_t eb = p >= k - n ? sb[p - (k - n)] : 1;
        so[p] = std::max(ea, eb);
    }
    *out_shape = so;
    std::vector<int32_t> y(count_of(so));
    Shape d(k, 0);
    for (size_t flat = 0; flat < y.size(); ++flat) {
        size_t ia = 0, ib = 0;
        for (size_t i = 0; i < m; ++i) ia = ia * sa[i] + std::min(d[k - m + i], sa[i] - 1);
        for (size_t j = 0; j < n; ++j) ib = ib * sb[j] + std::min(d[k - n + j], sb[j] - 1);
        y[flat] = static_cast<int32_t>(op(a[ia], b[ib]));
        for (size_t p = k; p-- > 0;) {
            if (++d[p] < so[p]) break;
            d[p] = 0;
        }
    }
    return y;
}

/* Runs op on A and B and compares with the reference; one of them is the graph input. */
inline void expect_matches_reference(const std::string& op, const BinaryFn& fn, const Operand& a,
                                     const Operand& b, int threads = 1) {
    Shape want_shape;
    auto want = ref_broadcast(fn, a.shape, a.values, b.shape, b.values, &want_shape);
    OpResult r = run_op(op, {}, {a, b}, 1, threads);
    ASSERT_EQ(r.verify_rc, CVML_OK) << op << ": " << r.error;
    ASSERT_EQ(r.run_rc, CVML_OK) << op << ": " << r.error;
    ASSERT_EQ(r.shapes[0], want_shape) << op;
    ASSERT_EQ(r.outputs[0], want) << op << " threads " << threads;
    EXPECT_EQ(r.gas, elem_test::unit_base_gas({a, b}, want_shape)) << op;
}

/* The output precision for inputs of precisions pa and pb (0 expected: refused). */
inline int output_precision(const std::string& op, int pa, int pb) {
    OpResult r = run_op(op, {}, {Operand{{2}, pa, {0, 0}, false}, Operand{{1}, pb, {0}, true}});
    return r.verify_rc == CVML_OK ? r.precisions[0] : (r.verify_rc == CVML_ERR_LOGIC ? 0 : -1);
}

/* The shape rule: a dim pair must be equal or contain a 1; the operators take no
 * attributes and exactly two inputs. */
inline void expect_refusals(const std::string& op) {
    Operand a{{2, 3}, 8, {1, 2, 3, 4, 5, 6}, false};
    EXPECT_EQ(run_op(op, {}, {a, Operand{{2}, 8, {1, 2}, true}}).verify_rc, CVML_ERR_LOGIC);
    EXPECT_EQ(run_op(op, {}, {a, Operand{{3, 1}, 8, {1, 2, 3}, true}}).verify_rc, CVML_ERR_LOGIC);
    EXPECT_EQ(
        run_op(op, {}, {a, Operand{{4, 2, 2}, 8, std::vector<int32_t>(16, 1), true}}).verify_rc,
        CVML_ERR_LOGIC);
    EXPECT_EQ(run_op(op, {}, {a}).verify_rc, CVML_ERR_LOGIC);
    EXPECT_EQ(run_op(op, {}, {a, Operand{{1}, 8, {1}, true}, Operand{{1}, 8, {1}, true}}).verify_rc,
              CVML_ERR_LOGIC);
    elem_test::expect_no_attributes(op, {a, Operand{{1}, 8, {1}, true}});
}

/* Random output shapes of 1..5 dims; each operand drops some leading dims and sets
 * some dims to 1, so every broadcast pattern (scalar, row, column, inner, outer) and
 * either operand as the graph input are reached, at one and three threads. */
inline void expect_random_shapes_match_reference(const std::string& op, const BinaryFn& fn,
                                                 int32_t bound, int precision,
                                                 bool zero_in_b = false) {
    uint32_t seed = 1;
    for (int trial = 0; trial < 24; ++trial) {
        auto r = random_values(12, 1000, ++seed);
        size_t nd = 1 + static_cast<size_t>(r[0] + 1000) % 5;
        Shape so(nd), sa, sb;
        for (size_t d = 0; d < nd; ++d) so[d] = 1 + (r[1 + d] + 1000) % 5;
        size_t da = static_cast<size_t>(r[7] + 1000) % (nd + 1);
        size_t db = static_cast<size_t>(r[8] + 1000) % (nd + 1);
        for (size_t d = da; d < nd; ++d) sa.push_back((r[9] >> d) & 1 ? 1 : so[d]);
        for (size_t d = db; d < nd; ++d) sb.push_back((r[10] >> d) & 1 ? 1 : so[d]);
        if (sa.empty()) sa.push_back(1);
        if (sb.empty()) sb.push_back(1);
        auto a = random_values(count_of(sa), bound, ++seed);
        auto b = random_values(count_of(sb), bound, ++seed);
        if (zero_in_b && trial % 3 == 0) b[0] = 0;
        bool a_input = trial % 2 == 0;
        for (int threads : {1, 3})
            expect_matches_reference(op, fn, Operand{sa, precision, a, !a_input},
                                     Operand{sb, precision, b, a_input}, threads);
    }
}

/* Larger operands, so that the vector paths and their tails run: same shape, a
 * scalar, a row, a column and an inner broadcast. */
inline void expect_large_patterns_match_reference(const std::string& op, const BinaryFn& fn,
                                                  int32_t bound, int precision) {
    const Shape big = {3, 37, 67};
    const Shape patterns[] = {{3, 37, 67}, {1}, {67}, {37, 1}, {3, 1, 67}, {3, 37, 1}};
    uint32_t seed = 500;
    for (const Shape& sb : patterns) {
        auto a = random_values(count_of(big), bound, ++seed);
        auto b = random_values(count_of(sb), bound, ++seed);
        for (int threads : {1, 3}) {
            expect_matches_reference(op, fn, Operand{big, precision, a, false},
                                     Operand{sb, precision, b, true}, threads);
            expect_matches_reference(op, fn, Operand{sb, precision, b, true},
                                     Operand{big, precision, a, false}, threads);
        }
    }
}

}  // namespace broadcast_test
