#include "op_runner.h"

namespace cvml_test {

cvml_graph* new_graph(int threads, cvml_context** ctx) {
    cvml_init();
    *ctx = nullptr;
    cvml_context_create(ctx);
    cvml_context_set_threads(*ctx, threads);
    cvml_graph* g = nullptr;
    cvml_graph_create(*ctx, &g);
    return g;
}

OpResult run_op(const std::string& op,
                const std::vector<std::pair<std::string, std::string>>& attrs,
                const std::vector<Operand>& operands, int outputs, int threads) {
    OpResult r;
    cvml_context* ctx = nullptr;
    cvml_graph* g = new_graph(threads, &ctx);
    std::vector<cvml_tensor*> ins;
    cvml_tensor* input = nullptr;
    const Operand* input_operand = nullptr;
    int rc = CVML_OK;
    for (size_t i = 0; i < operands.size() && rc == CVML_OK; ++i) {
        const Operand& o = operands[i];
        cvml_tensor* t = nullptr;
        std::string name = o.is_const ? "p" + std::to_string(i) : "data";
        if (o.is_const) {
            rc = cvml_graph_add_const(g, name.c_str(), (int)o.shape.size(), o.shape.data(),
                                      o.precision, o.values.data(), &t);
        } else {
            rc = cvml_graph_add_input(g, name.c_str(), (int)o.shape.size(), o.shape.data(),
                                      o.precision, &t);
            input = t;
            input_operand = &o;
        }
        ins.push_back(t);
    }
    std::vector<const char*> keys, vals;
    for (auto& kv : attrs) {
        keys.push_back(kv.first.c_str());
        vals.push_back(kv.second.c_str());
    }
    std::vector<cvml_tensor*> outs(outputs, nullptr);
    if (rc == CVML_OK)
        rc = cvml_graph_add_node(g, op.c_str(), (op + "_0").c_str(), keys.data(), vals.data(),
                                 (int)keys.size(), ins.data(), (int)ins.size(), outs.data(),
                                 outputs);
    if (rc == CVML_OK) rc = cvml_graph_set_outputs(g, outs.data(), outputs);
    if (rc == CVML_OK) rc = cvml_graph_verify(g);
    r.verify_rc = rc;
    if (rc != CVML_OK) {
        r.error = cvml_last_error();
    } else {
        cvml_graph_gas(g, &r.gas);
        if (input)
            cvml_tensor_set_i32(input, input_operand->values.data(), input_operand->values.size());
        r.run_rc = cvml_graph_run(g);
        if (r.run_rc != CVML_OK) r.error = cvml_last_error();
        for (int k = 0; k < outputs; ++k) {
            int ndim = 0;
            int32_t dims[CVML_MAX_DIMS];
            cvml_tensor_shape(outs[k], &ndim, dims);
            r.shapes.emplace_back(dims, dims + ndim);
            int p = 0;
            cvml_tensor_precision(outs[k], &p);
            r.precisions.push_back(p);
            if (r.run_rc == CVML_OK) {
                size_t n = 0;
                cvml_tensor_element_count(outs[k], &n);
                std::vector<int32_t> v(n);
                cvml_tensor_get_i32(outs[k], v.data(), n);
                r.outputs.push_back(v);
            }
        }
    }
    cvml_graph_release(g);
    cvml_context_release(ctx);
    cvml_release();
    return r;
}

std::vector<int32_t> run_to_output(
    cvml_graph* g, cvml_context* ctx, int rc,
    const std::vector<std::pair<cvml_tensor*, const std::vector<int32_t>*>>& inputs, cvml_tensor* y,
    std::string* error) {
    if (!rc) rc = cvml_graph_set_outputs(g, &y, 1);
    if (!rc) rc = cvml_graph_verify(g);
    for (size_t i = 0; i < inputs.size() && !rc; ++i)
        rc = cvml_tensor_set_i32(inputs[i].first, inputs[i].second->data(),
                                 inputs[i].second->size());
    if (!rc) rc = cvml_graph_run(g);
    std::vector<int32_t> out;
    if (!rc) {
        size_t n = 0;
        cvml_tensor_element_count(y, &n);
        out.resize(n);
        cvml_tensor_get_i32(y, out.data(), n);
    } else {
        *error = cvml_last_error();
    }
    cvml_graph_release(g);
    cvml_context_release(ctx);
    cvml_release();
    return out;
}

std::vector<int32_t> random_values(size_t n, int32_t bound, uint32_t seed) {
    std::vector<int32_t> v(n);
    uint64_t s = seed * 2654435761u + 1;
    for (auto& x : v) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t r = s >> 33;
        x = (int32_t)(r % (uint64_t)(2 * (int64_t)bound + 1)) - bound;
    }
    return v;
}

}  // namespace cvml_test
