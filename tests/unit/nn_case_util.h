/* Test helper for the nn/reduction operator tests: reads a conformance case's
 * model.params, input.bin and output.bin (the attributes are written by hand in each
 * test), so that a single-operator case can be replayed through run_op(). */
#pragma once

#include <stdint.h>
#include <string.h>

#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "op_runner.h"

namespace nn_case {

struct Array {
    std::vector<int32_t> shape;
    std::vector<int32_t> values;
};

inline std::string case_dir(const std::string& name) {
    // The vectors are copied into the repository so these tests run without ../shared.
    return std::string(CVML_SOURCE_DIR) + "/tests/conformance/cases/" + name;
}

inline std::vector<uint8_t> read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(f),
                                std::istreambuf_iterator<char>());
}

/* The params blob (FORMAT.md §4.2): int8 or int32 arrays, little-endian. */
inline std::map<std::string, Array> read_params(const std::string& dir) {
    std::vector<uint8_t> b = read_file(dir + "/model.params");
    size_t off = 0;
    auto u64 = [&]() {
        uint64_t v = 0;
        if (off + 8 <= b.size()) memcpy(&v, &b[off], 8);
        off += 8;
        return v;
    };
    auto i32 = [&]() {
        int32_t v = 0;
        if (off + 4 <= b.size()) memcpy(&v, &b[off], 4);
        off += 4;
        return v;
    };
    std::map<std::string, Array> out;
    u64();
    u64();
    uint64_t n = u64();
    std::vector<std::string> names;
    for (uint64_t i = 0; i < n && off < b.size(); ++i) {
        uint64_t len = u64();
        names.emplace_back(reinterpret_cast<const char*>(&b[off]), len);
        off += len;
    }
    u64();
    for (const auto& name : names) {
        u64();
        u64();
        i32();
        i32();
        int32_t ndim = i32();
        uint8_t bits = b[off + 1];
        off += 4;
        Array a;
        for (int32_t d = 0; d < ndim; ++d) a.shape.push_back(static_cast<int32_t>(u64()));
        uint64_t bytes = u64();
        size_t count = bits == 8 ? bytes : bytes / 4;
        for (size_t i = 0; i < count; ++i) {
            if (bits == 8) {
                a.values.push_back(static_cast<int8_t>(b[off + i]));
            } else {
                int32_t v;
                memcpy(&v, &b[off + 4 * i], 4);
                a.values.push_back(v);
            }
        }
        off += bytes;
        out[name] = a;
    }
    return out;
}

/* int8 when the file holds one byte per element, int32 otherwise. */
inline std::vector<int32_t> read_values(const std::string& path, size_t count) {
    std::vector<uint8_t> b = read_file(path);
    std::vector<int32_t> v(count);
    if (b.size() == count) {
        for (size_t i = 0; i < count; ++i) v[i] = static_cast<int8_t>(b[i]);
    } else if (b.size() == 4 * count) {
        memcpy(v.data(), b.data(), 4 * count);
    } else {
        v.clear();
    }
    return v;
}

inline size_t count_of(const std::vector<int32_t>& shape) {
    size_t n = 1;
    for (int32_t d : shape) n *= static_cast<size_t>(d);
    return n;
}

/* What upstream's CVMAPIInference writes for one output: int8-truncated values when the
 * output bytes are one per element. */
inline std::vector<int32_t> as_written(const std::vector<int32_t>& out, size_t file_bytes) {
    std::vector<int32_t> v(out);
    if (file_bytes == out.size())
        for (auto& x : v) x = static_cast<int8_t>(x);
    return v;
}

/* Replays a one-operator conformance case: `data` from input.bin (precision
 * `data_prec`), then the named params with their precisions; compares output `head`
 * with output.bin and the gas with the case's figure. */
inline void replay(const std::string& op, const std::string& name,
                   const std::vector<std::pair<std::string, std::string>>& attrs,
                   const std::vector<int32_t>& data_shape, int data_prec,
                   const std::vector<std::pair<std::string, int>>& params, uint64_t gas,
                   int outputs = 1, int head = 0, int threads = 1) {
    std::string dir = case_dir(name);
    auto pm = read_params(dir);
    std::vector<cvml_test::Operand> ops;
    ops.push_back(cvml_test::Operand{data_shape, data_prec,
                                     read_values(dir + "/input.bin", count_of(data_shape)), false});
    ASSERT_EQ(ops[0].values.size(), count_of(data_shape)) << name;
    for (auto& pp : params) {
        ASSERT_TRUE(pm.count(pp.first)) << name << " lacks " << pp.first;
        ops.push_back(cvml_test::Operand{pm[pp.first].shape, pp.second, pm[pp.first].values, true});
    }
    auto r = cvml_test::run_op(op, attrs, ops, outputs, threads);
    ASSERT_EQ(r.verify_rc, CVML_OK) << name << ": " << r.error;
    ASSERT_EQ(r.run_rc, CVML_OK) << name << ": " << r.error;
    EXPECT_EQ(r.gas, gas) << name;
    auto bytes = read_file(dir + "/output.bin").size();
    auto want = read_values(dir + "/output.bin", r.outputs[head].size());
    ASSERT_FALSE(want.empty()) << name;
    EXPECT_EQ(as_written(r.outputs[head], bytes), want) << name;
}

}  // namespace nn_case
