// Issue 18: for every operator, the nanoseconds per unit of gas on hostile shapes (large
// but legal shapes chosen to maximise work per gas: a 1-element operand broadcast against
// a big tensor, reductions and pools over a big axis, big repeat/tile factors, indexing
// ops with big inputs and tiny outputs, O(N^2) non_max_suppression). Prints a table and
// fails when one exceeds a generous bound (docs/reliability.md).
// non_max_suppression, whose gas (20 x batch, upstream's) does not grow with its boxes^2
// work, has its own bound, for the D10 cap of 2^28 box pairs (16,384 boxes).
//   cvml_ns_per_gas [--bound NS] [--nms-bound NS]
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "cvml.h"

namespace {

struct operand {
    std::vector<int32_t> shape;
    int precision;
    std::vector<int32_t> values;  // empty: the graph input (filled with `fill`)
    int32_t fill;
};

struct op_case {
    const char* op;
    const char* shape;  // for the table
    std::vector<std::pair<std::string, std::string>> attrs;
    std::vector<operand> operands;
    int outputs;
};

size_t count(const std::vector<int32_t>& s) {
    size_t n = 1;
    for (int32_t d : s) n *= static_cast<size_t>(d);
    return n;
}

operand in(std::vector<int32_t> s, int p = 8, int32_t fill = 3) {
    return operand{std::move(s), p, {}, fill};
}

operand cst(std::vector<int32_t> s, int p, int32_t v) {
    size_t n = count(s);
    return operand{std::move(s), p, std::vector<int32_t>(n, v), 0};
}

std::vector<op_case> cases() {
    const int32_t M = 1 << 20;
    std::vector<op_case> c;
    for (const char* op : {"abs", "negative", "relu", "cvm_precision"})
        c.push_back({op, "(1M)", {}, {in({M})}, 1});
    c.push_back({"clip", "(1M)", {{"a_min", "-5"}, {"a_max", "5"}}, {in({M})}, 1});
    c.push_back({"cvm_clip", "(1M)", {{"precision", "4"}}, {in({M})}, 1});
    c.push_back(
        {"cvm_right_shift", "(1M)", {{"precision", "8"}, {"shift_bit", "3"}}, {in({M})}, 1});
    c.push_back(
        {"cvm_left_shift", "(1M)", {{"precision", "16"}, {"shift_bit", "3"}}, {in({M})}, 1});
    for (const char* op : {"elemwise_add", "elemwise_sub"})
        c.push_back({op, "(1M) (1M)", {}, {in({M}), cst({M}, 8, 2)}, 1});
    for (const char* op : {"broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div",
                           "broadcast_max", "broadcast_greater"})
        c.push_back({op, "(1024,1024) (1)", {}, {in({1024, 1024}), cst({1}, 8, 3)}, 1});
    c.push_back({"sum", "(1,1M) axis 1", {{"axis", "(1,)"}}, {in({1, M})}, 1});
    c.push_back({"max", "(1,1M) axis 1", {{"axis", "(1,)"}}, {in({1, M})}, 1});
    c.push_back({"conv2d",
                 "(1,1,256,256) k 256",
                 {{"channels", "1"}, {"kernel_size", "(256, 256)"}, {"use_bias", "False"}},
                 {in({1, 1, 256, 256}, 4), cst({1, 1, 256, 256}, 4, 1)},
                 1});
    c.push_back({"dense",
                 "(1,1M) units 1",
                 {{"units", "1"}, {"use_bias", "False"}},
                 {in({1, M}, 4), cst({1, M}, 4, 1)},
                 1});
    c.push_back({"max_pool2d",
                 "(1,1,1024,1024) pool 1024",
                 {{"pool_size", "(1024, 1024)"}},
                 {in({1, 1, 1024, 1024})},
                 1});
    c.push_back({"upsampling", "(1,1,1,1) scale 1024", {{"scale", "1024"}}, {in({1, 1, 1, 1})}, 1});
    c.push_back({"flatten", "(1024,1024)", {}, {in({1024, 1024})}, 1});
    c.push_back({"reshape", "(1024,1024)", {{"shape", "(-1,)"}}, {in({1024, 1024})}, 1});
    c.push_back({"squeeze", "(1,1M)", {}, {in({1, M})}, 1});
    c.push_back({"expand_dims", "(1M)", {{"axis", "0"}}, {in({M})}, 1});
    c.push_back({"transpose", "(1024,1024)", {}, {in({1024, 1024})}, 1});
    c.push_back(
        {"concatenate", "(1,1M) (1,1)", {{"axis", "1"}}, {in({1, M}), cst({1, 1}, 8, 1)}, 1});
    c.push_back({"repeat", "(1) x1M", {{"repeats", std::to_string(M)}}, {in({1})}, 1});
    c.push_back({"tile", "(1,1) x(1024,1024)", {{"reps", "(1024, 1024)"}}, {in({1, 1})}, 1});
    c.push_back({"strided_slice", "(1M) -> 1", {{"begin", "(0,)"}, {"end", "(1,)"}}, {in({M})}, 1});
    c.push_back({"slice_like", "(1M) like (1)", {}, {in({M}), cst({1}, 8, 0)}, 1});
    c.push_back({"take", "(1M) idx (1)", {}, {in({M}), cst({1}, 8, 7)}, 1});
    c.push_back(
        {"cvm_lut", "(1M) table 256", {{"in_dim", "256"}}, {in({M}, 8, 5), cst({256}, 8, 1)}, 1});
    c.push_back({"where", "(1M) x3", {}, {in({M}), cst({M}, 8, 1), cst({M}, 8, 2)}, 1});
    c.push_back({"get_valid_counts", "(1,64K,6)", {}, {in({1, 1 << 16, 6})}, 2});
    return c;
}

/* non_max_suppression: N boxes that never overlap (each kept: the O(N^2) worst case). */
op_case nms_case(int32_t n) {
    std::vector<int32_t> boxes(static_cast<size_t>(n) * 6);
    for (int32_t i = 0; i < n; ++i) {
        int32_t* b = &boxes[static_cast<size_t>(i) * 6];
        b[0] = 0;
        b[1] = n - i;  // descending scores
        b[2] = i * 4;
        b[3] = 0;
        b[4] = i * 4 + 2;
        b[5] = 2;
    }
    return {"non_max_suppression",
            "(1,N,6) disjoint",
            {},
            {operand{{1, n, 6}, 16, boxes, 0}, cst({1}, 16, n)},
            1};
}

struct measured {
    uint64_t gas = 0;
    double ns = 0;
    std::string error;
};

measured measure(const op_case& k, int runs) {
    measured m;
    cvml_context* ctx = nullptr;
    cvml_context_create(&ctx);
    cvml_context_set_threads(ctx, 1);
    cvml_graph* g = nullptr;
    cvml_graph_create(ctx, &g);
    std::vector<cvml_tensor*> ins;
    cvml_tensor* input = nullptr;
    std::vector<int32_t> input_values;
    int rc = CVML_OK;
    for (size_t i = 0; i < k.operands.size() && rc == CVML_OK; ++i) {
        const operand& o = k.operands[i];
        cvml_tensor* t = nullptr;
        if (!o.values.empty() && i > 0) {
            std::string name = "p" + std::to_string(i);
            rc = cvml_graph_add_const(g, name.c_str(), static_cast<int>(o.shape.size()),
                                      o.shape.data(), o.precision, o.values.data(), &t);
        } else {
            rc = cvml_graph_add_input(g, "data", static_cast<int>(o.shape.size()), o.shape.data(),
                                      o.precision, &t);
            input = t;
            input_values =
                o.values.empty() ? std::vector<int32_t>(count(o.shape), o.fill) : o.values;
        }
        ins.push_back(t);
    }
    std::vector<const char*> keys, vals;
    for (const auto& kv : k.attrs) {
        keys.push_back(kv.first.c_str());
        vals.push_back(kv.second.c_str());
    }
    std::vector<cvml_tensor*> outs(static_cast<size_t>(k.outputs), nullptr);
    if (rc == CVML_OK)
        rc = cvml_graph_add_node(g, k.op, "n0", keys.data(), vals.data(),
                                 static_cast<int>(keys.size()), ins.data(),
                                 static_cast<int>(ins.size()), outs.data(), k.outputs);
    if (rc == CVML_OK) rc = cvml_graph_set_outputs(g, outs.data(), k.outputs);
    if (rc == CVML_OK) rc = cvml_graph_verify(g);
    if (rc == CVML_OK) rc = cvml_graph_gas(g, &m.gas);
    if (rc == CVML_OK) rc = cvml_tensor_set_i32(input, input_values.data(), input_values.size());
    if (rc == CVML_OK) rc = cvml_graph_run(g);  // warm-up (first run plans memory)
    double best = -1;
    for (int r = 0; r < runs && rc == CVML_OK; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        rc = cvml_graph_run(g);
        double ns =
            std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
        if (best < 0 || ns < best) best = ns;
    }
    if (rc != CVML_OK) m.error = cvml_last_error();
    m.ns = best;
    cvml_graph_release(g);
    cvml_context_release(ctx);
    return m;
}

}  // namespace

int main(int argc, char** argv) {
    double bound = 20;        // ns per gas, every operator but NMS (docs/reliability.md)
    double nms_bound = 2000;  // non_max_suppression at the D10 cap
    for (int i = 1; i + 1 < argc; ++i) {
        if (!strcmp(argv[i], "--bound")) bound = atof(argv[i + 1]);
        if (!strcmp(argv[i], "--nms-bound")) nms_bound = atof(argv[i + 1]);
    }
    cvml_init();
    std::vector<op_case> all = cases();
    all.push_back(nms_case(16384));
    int failures = 0;
    double worst = 0;
    printf("%-20s %-28s %12s %14s %12s\n", "op", "shape", "gas", "ns", "ns_per_gas");
    for (const op_case& k : all) {
        measured m = measure(k, 3);
        if (!m.error.empty()) {
            printf("%-20s %-28s FAILED: %s\n", k.op, k.shape, m.error.c_str());
            ++failures;
            continue;
        }
        double per = m.gas ? m.ns / static_cast<double>(m.gas) : m.ns;
        bool nms = !strcmp(k.op, "non_max_suppression");
        bool over = per > (nms ? nms_bound : bound);
        printf("%-20s %-28s %12llu %14.0f %12.3f%s\n", k.op, k.shape,
               static_cast<unsigned long long>(m.gas), m.ns, per, over ? "  OVER BOUND" : "");
        if (!nms && per > worst) worst = per;
        failures += over;
    }
    printf("worst %.3f ns/gas except non_max_suppression (bound %.0f); NMS bound %.0f\n", worst,
           bound, nms_bound);
    cvml_release();
    return failures ? 1 : 0;
}
