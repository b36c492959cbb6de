/* sum and max on an input stored narrow: graph input -> cvm_clip(precision) -> the
 * reduce, so the clip's output (the reduce's input) is held as int8 (precision 8) or
 * int16 (16), as a convolution's output is in a network. */
#pragma once

#include <stdint.h>

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <string.h>

#include "cvml.h"
#include "graph/graph.h"
#include "op_runner.h"
#include "reduce_ref.h"

namespace reduce_narrow {

struct Run {
    int rc = CVML_OK;
    std::string error;
    int input_storage = 0; /* the reduce's input, enum tensor_storage */
    std::vector<int32_t> values;
};

inline Run run_after_clip(const char* op,
                          const std::vector<std::pair<std::string, std::string>>& attrs,
                          const std::vector<int32_t>& shape, const std::vector<int32_t>& x,
                          int precision, int threads) {
    Run r;
    cvml_context* ctx = nullptr;
    cvml_graph* g = cvml_test::new_graph(threads, &ctx);
    cvml_tensor *in = nullptr, *clipped = nullptr, *y = nullptr;
    const std::string prec = std::to_string(precision);
    const char* ck[] = {"precision"};
    const char* cv[] = {prec.c_str()};
    std::vector<const char*> keys, vals;
    for (auto& kv : attrs) {
        keys.push_back(kv.first.c_str());
        vals.push_back(kv.second.c_str());
    }
    r.rc = cvml_graph_add_input(g, "data", (int)shape.size(), shape.data(), 31, &in);
    if (!r.rc) r.rc = cvml_graph_add_node(g, "cvm_clip", "clip", ck, cv, 1, &in, 1, &clipped, 1);
    if (!r.rc)
        r.rc = cvml_graph_add_node(g, op, "reduce", keys.data(), vals.data(), (int)keys.size(),
                                   &clipped, 1, &y, 1);
    if (!r.rc) r.rc = cvml_graph_set_outputs(g, &y, 1);
    if (!r.rc) r.rc = cvml_graph_verify(g);
    if (!r.rc) r.rc = cvml_tensor_set_i32(in, x.data(), x.size());
    if (!r.rc) r.rc = cvml_graph_run(g);
    if (r.rc) r.error = cvml_last_error();
    if (!r.rc) {
        r.input_storage = reinterpret_cast<const ir_tensor*>(clipped)->storage;
        size_t n = 0;
        cvml_tensor_element_count(y, &n);
        r.values.resize(n);
        r.rc = cvml_tensor_get_i32(y, r.values.data(), n);
    }
    cvml_graph_release(g);
    cvml_context_release(ctx);
    cvml_release();
    return r;
}

inline std::string axes_str(const std::vector<int>& a) {
    std::string s = "(";
    for (size_t i = 0; i < a.size(); ++i) s += (i ? ", " : "") + std::to_string(a[i]);
    return s + (a.size() == 1 ? ",)" : ")");
}

/* Random shapes (a global pool's 7 x 7 and 1 x 1 planes among them), axes, keepdims and
 * exclude, at int8 and int16 storage and 1 and 3 threads, against upstream's reading of
 * the reduction (reduce_ref, mode 0). A build without SIMD kernels keeps the reduces'
 * input int32 (reduce_kernel.h, kReduceNarrowIn); one with them must have read it narrow. */
inline void check_against_reference(const char* op, bool is_sum, uint32_t seed) {
    for (int iter = 0; iter < 40; ++iter) {
        auto rnd = cvml_test::random_values(16, 1000, seed++);
        auto pick = [&](int i, int lo, int hi) { return lo + (rnd[i] + 1000) % (hi - lo + 1); };
        std::vector<int32_t> shape;
        std::vector<int> axis;
        bool keep = pick(12, 0, 1), excl = false;
        if (iter % 2 == 0) {  // a global pool: (n, c, h, w) over (2, 3)
            const int hw = iter % 4 == 0 ? 7 : pick(5, 1, 12);
            shape = {pick(1, 1, 2), pick(2, 1, 70), hw, hw};
            axis = {2, 3};
        } else {
            const int nd = pick(0, 1, 4);
            for (int i = 0; i < nd; ++i) shape.push_back(pick(1 + i, 1, 9));
            for (int i = 0; i < nd; ++i)
                if (pick(6 + i, 0, 2) == 0) axis.push_back(pick(11, 0, 1) ? i : i - nd);
            excl = pick(13, 0, 3) == 0;
        }
        size_t n = 1;
        for (int d : shape) n *= d;
        const int precision = iter % 3 == 2 ? 16 : 8;
        const int32_t bound = (1 << (precision - 1)) - 1;
        auto x = cvml_test::random_values(n, bound, seed++);
        auto want = reduce_ref::reduce(shape, x, axis, keep, excl, is_sum, 0);
        const std::vector<std::pair<std::string, std::string>> attrs = {
            {"axis", axes_str(axis)},
            {"keepdims", keep ? "True" : "False"},
            {"exclude", excl ? "True" : "False"}};
        for (int threads : {1, 3}) {
            Run r = run_after_clip(op, attrs, shape, x, precision, threads);
            ASSERT_EQ(r.rc, CVML_OK) << r.error << " iter " << iter;
            const int narrow = precision == 8 ? STORAGE_INT8 : STORAGE_INT16;
            if (strcmp(cvml_cpu_simd_level(), "scalar") != 0)
                EXPECT_EQ(r.input_storage, narrow) << "iter " << iter;
            else
                EXPECT_TRUE(r.input_storage == narrow || r.input_storage == STORAGE_INT32);
            ASSERT_EQ(r.values, want.values) << "iter " << iter << " threads " << threads;
        }
    }
}

}  // namespace reduce_narrow
