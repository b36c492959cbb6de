/* Test helper: builds a one-operator graph with the builder API, runs it on the CPU
 * and returns the outputs, so operator tests stay short. */
#pragma once

#include <stdint.h>

#include <string>
#include <utility>
#include <vector>

#include "cvml.h"

namespace cvml_test {

struct Operand {
    std::vector<int32_t> shape;
    int precision = 8;
    std::vector<int32_t> values;
    bool is_const = false; /* false: the graph input (only one operand may be) */
};

struct OpResult {
    int verify_rc = CVML_OK;
    int run_rc = CVML_OK;
    std::string error;
    uint64_t gas = 0;
    std::vector<std::vector<int32_t>> shapes;
    std::vector<int> precisions;
    std::vector<std::vector<int32_t>> outputs;
};

/* Runs `op` with `attrs` on `operands` (at most one non-const). `outputs` is the
 * operator's output count. `threads` sets the context's CPU threads. */
OpResult run_op(const std::string& op,
                const std::vector<std::pair<std::string, std::string>>& attrs,
                const std::vector<Operand>& operands, int outputs = 1, int threads = 1);

/* cvml_init(), a context with `threads` CPU threads (in *ctx) and an empty graph on it.
 * The caller releases the graph, the context, and calls cvml_release(). */
cvml_graph* new_graph(int threads, cvml_context** ctx);

/* Finishes a graph built on new_graph's context: unless rc already failed, sets `y` as
 * its output, verifies it, gives each input its values, runs it and returns y's values
 * (empty, with *error set, on a failure); then releases the graph and the context and
 * calls cvml_release(). */
std::vector<int32_t> run_to_output(
    cvml_graph* g, cvml_context* ctx, int rc,
    const std::vector<std::pair<cvml_tensor*, const std::vector<int32_t>*>>& inputs, cvml_tensor* y,
    std::string* error);

/* Deterministic pseudo-random values in [-bound, bound]. */
std::vector<int32_t> random_values(size_t n, int32_t bound, uint32_t seed);

}  // namespace cvml_test
