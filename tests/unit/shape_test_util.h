/* Test-only helpers for the shape and layout operators: index arithmetic for the
 * independent references and a small random generator for property tests. */
#pragma once

#include <stdint.h>

#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "op_runner.h"

namespace shape_test {

using Shape = std::vector<int32_t>;
using Attrs = std::vector<std::pair<std::string, std::string>>;

inline int64_t size_of(const Shape& s) {
    int64_t n = 1;
    for (int32_t d : s) n *= d;
    return n;
}

inline std::vector<int64_t> strides_of(const Shape& s) {
    std::vector<int64_t> st(s.size());
    int64_t k = 1;
    for (size_t i = s.size(); i-- > 0;) {
        st[i] = k;
        k *= s[i];
    }
    return st;
}

/* Calls fn(index, flat) for every index of `s` in row-major order. */
inline void for_each_index(const Shape& s, const std::function<void(const Shape&, int64_t)>& fn) {
    Shape idx(s.size(), 0);
    const int64_t n = size_of(s);
    for (int64_t flat = 0; flat < n; ++flat) {
        fn(idx, flat);
        for (size_t d = s.size(); d-- > 0;) {
            if (++idx[d] < s[d]) break;
            idx[d] = 0;
        }
    }
}

inline int64_t offset_of(const Shape& s, const Shape& idx) {
    auto st = strides_of(s);
    int64_t off = 0;
    for (size_t d = 0; d < s.size(); ++d) off += idx[d] * st[d];
    return off;
}

/* Distinct values so that any misplaced element shows. */
inline std::vector<int32_t> distinct(int64_t n, int32_t offset = 1) {
    std::vector<int32_t> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<int32_t>(i) + offset;
    return v;
}

inline std::string tuple_str(const std::vector<int64_t>& v) {
    std::string s = "(";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + (v.size() == 1 ? ",)" : ")");
}

inline Shape random_shape(std::mt19937& rng, int min_ndim, int max_ndim, int max_dim) {
    Shape s(std::uniform_int_distribution<int>(min_ndim, max_ndim)(rng));
    for (auto& d : s) d = std::uniform_int_distribution<int>(1, max_dim)(rng);
    return s;
}

inline int rand_int(std::mt19937& rng, int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
}

/* FORMAT.md §8 for one node of base cost 1 (every shape and layout operator): 5 per
 * element of each input variable, and the output's size once plus 5 per element. */
inline uint64_t unit_gas(const std::vector<Shape>& inputs, const Shape& out) {
    uint64_t gas = 0;
    for (const Shape& s : inputs) gas += 5 * static_cast<uint64_t>(size_of(s));
    return gas + 6 * static_cast<uint64_t>(size_of(out));
}

/* One data input of precision 31 (the values are positions, far above int8). */
inline cvml_test::OpResult run1(const std::string& op, const Attrs& attrs, const Shape& shape,
                                const std::vector<int32_t>& values, int threads = 1,
                                int precision = 31) {
    return cvml_test::run_op(op, attrs, {cvml_test::Operand{shape, precision, values, false}}, 1,
                             threads);
}

}  // namespace shape_test
