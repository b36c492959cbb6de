/* Independent references for the sum/max tests: the true reduction, and upstream's CPU
 * reading of it (FORMAT.md §7: output dims of size 1 dropped, the rest paired
 * right-to-left with the kept input axes; axis=() starts from 0). */
#pragma once

#include <stdint.h>

#include <algorithm>
#include <set>
#include <vector>

namespace reduce_ref {

struct Result {
    std::vector<int32_t> shape;
    std::vector<int32_t> values;
};

inline int32_t fold(bool is_sum, int32_t t, int32_t v) {
    return is_sum ? static_cast<int32_t>(static_cast<uint32_t>(t) + static_cast<uint32_t>(v))
                  : std::max(t, v);
}

inline std::vector<int64_t> strides(const std::vector<int32_t>& s) {
    std::vector<int64_t> st(s.size(), 1);
    for (int i = static_cast<int>(s.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * s[i + 1];
    return st;
}

/* Mode: 0 = upstream CPU, 1 = mathematically true (numpy) reduction. */
inline Result reduce(const std::vector<int32_t>& shape, const std::vector<int32_t>& x,
                     std::vector<int> axis, bool keepdims, bool exclude, bool is_sum, int mode) {
    int nd = static_cast<int>(shape.size());
    std::set<int> listed;
    for (int a : axis) listed.insert(a < 0 ? a + nd : a);
    std::vector<int> red;
    if (axis.empty()) {
        for (int i = 0; i < nd; ++i) red.push_back(i);
    } else {
        for (int i = 0; i < nd; ++i)
            if (listed.count(i) != (exclude ? 1u : 0u)) red.push_back(i);
    }
    Result r;
    if (red.empty()) {  // exclude with every axis listed
        r.shape = shape;
        r.values = x;
        return r;
    }
    std::vector<int> kept;
    for (int i = 0; i < nd; ++i)
        if (!std::count(red.begin(), red.end(), i)) kept.push_back(i);
    if (kept.empty()) {
        r.shape = std::vector<int32_t>(keepdims ? nd : 1, 1);
    } else {
        for (int i = 0; i < nd; ++i) {
            bool isr = std::count(red.begin(), red.end(), i) > 0;
            if (isr && !keepdims) continue;
            r.shape.push_back(isr ? 1 : shape[i]);
        }
    }
    auto st = strides(shape);
    int64_t nred = 1;
    for (int a : red) nred *= shape[a];
    int64_t nout = 1;
    for (int d : r.shape) nout *= d;
    // The accumulator for axis=() without exclude starts at 0 on upstream's CPU.
    bool from_zero = mode == 0 && axis.empty() && !exclude;
    for (int64_t o = 0; o < nout; ++o) {
        int64_t base = 0;
        if (mode == 1) {
            // unravel o over the kept axes (in order)
            int64_t rem = o;
            for (int k = static_cast<int>(kept.size()) - 1; k >= 0; --k) {
                base += (rem % shape[kept[k]]) * st[kept[k]];
                rem /= shape[kept[k]];
            }
        } else {
            std::vector<int32_t> ysh;
            for (int d : r.shape)
                if (d != 1) ysh.push_back(d);
            int64_t rem = o;
            for (int k = 0; k < static_cast<int>(ysh.size()); ++k) {
                int yk = static_cast<int>(ysh.size()) - 1 - k;
                int xk = kept[kept.size() - 1 - k];
                base += (rem % ysh[yk]) * st[xk];
                rem /= ysh[yk];
            }
        }
        int32_t t = 0;
        for (int64_t e = 0; e < nred; ++e) {
            int64_t rem = e, off = 0;
            for (int k = static_cast<int>(red.size()) - 1; k >= 0; --k) {
                off += (rem % shape[red[k]]) * st[red[k]];
                rem /= shape[red[k]];
            }
            int32_t v = x[base + off];
            t = (e == 0 && !from_zero) ? v : fold(is_sum, t, v);
        }
        r.values.push_back(t);
    }
    return r;
}

}  // namespace reduce_ref
