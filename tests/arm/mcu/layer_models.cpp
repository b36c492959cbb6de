/* Writes issue 16's four CIFAR ResNet-20 layers as single-conv CVM models, for the
 * per-layer instruction counts on the Cortex-M cores beside CMSIS-NN's
 * (scripts/test_arm.sh, step 5), and with CASEDIR small conv2d models in the
 * conformance cases' layout for the shapes those layers leave out (step 4):
 *   layer_models OUTDIR [CASEDIR]
 * Each OUTDIR/NAME/ gets model.json, model.params, input.bin, output.bin (the host
 * library's output, which the image checks) and meta.json (expect.gas, the output's
 * element size, the MACs), the files tests/mcu/main.c's images embed. A layer is
 * conv2d (int8 input, int8 weights, a bias) then cvm_right_shift to 8 bits, the
 * requantization CVM models end their convolutions with, then a strided_slice of 64
 * of its values as the model's output; before the conv, a cvm_clip to 8 bits stores the
 * input as int8. NAME_base is the same without the conv and the shift: the layer's
 * figure is NAME's instructions minus NAME_base's. Built for the host against the
 * host's library. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "cvm_api.h"
#include "cvml.h"

namespace {

struct layer {
    const char* name;
    int32_t c, o, hw, k, pad;
};

const layer kLayers[] = {
    {"conv3x3_16_32x32", 16, 16, 32, 3, 1},
    {"conv3x3_32_16x16", 32, 32, 16, 3, 1},
    {"conv3x3_64_8x8", 64, 64, 8, 3, 1},
    {"conv1x1_64_8x8", 64, 64, 8, 1, 0},
};

/* Deterministic values in [-bound, bound]. */
std::vector<int32_t> values(size_t n, int32_t bound, uint32_t seed) {
    std::vector<int32_t> v(n);
    for (auto& x : v) {
        seed = seed * 1664525u + 1013904223u;
        x = static_cast<int32_t>((seed >> 8) % static_cast<uint32_t>(2 * bound + 1)) - bound;
    }
    return v;
}

bool write_file(const std::string& path, const void* data, size_t size) {
    FILE* f = fopen(path.c_str(), "wb");
    if (!f) return false;
    const bool ok = fwrite(data, 1, size, f) == size;
    return fclose(f) == 0 && ok;
}

#define CHECK(call)                                                             \
    do {                                                                        \
        if ((call) != 0) {                                                      \
            fprintf(stderr, "layer_models: %s: %s failed: %s\n", l.name, #call, \
                    cvml_last_error());                                         \
            return false;                                                       \
        }                                                                       \
    } while (0)

/* The layer (with_conv) or its base: the same model without the conv2d and its
 * requantization, whose instructions the per-layer figure leaves out. */
bool write_layer(cvml_context* ctx, const layer& l, const std::string& dir, bool with_conv) {
    cvml_graph* g = nullptr;
    CHECK(cvml_graph_create(ctx, &g));
    const int32_t xdims[4] = {1, l.c, l.hw, l.hw}, wdims[4] = {l.o, l.c, l.k, l.k};
    const int32_t bdims[1] = {l.o};
    const auto w = values(static_cast<size_t>(l.o) * l.c * l.k * l.k, 127, 7);
    const auto b = values(static_cast<size_t>(l.o), 50000, 11);
    cvml_tensor *x = nullptr, *wt = nullptr, *bt = nullptr, *conv = nullptr, *y = nullptr;
    CHECK(cvml_graph_add_input(g, "data", 4, xdims, 8, &x));
    // A graph input is stored as int32; the clip's output as int8, like the output of
    // the layer before inside a network, which is what the Cortex-M conv kernels take.
    const char* pk[] = {"precision"};
    const char* pv[] = {"8"};
    cvml_tensor* x8 = nullptr;
    CHECK(cvml_graph_add_node(g, "cvm_clip", "int8", pk, pv, 1, &x, 1, &x8, 1));
    CHECK(cvml_graph_add_const(g, "w", 4, wdims, 8, w.data(), &wt));
    CHECK(cvml_graph_add_const(g, "b", 1, bdims, 18, b.data(), &bt));
    const std::string k = "(" + std::to_string(l.k) + ", " + std::to_string(l.k) + ")";
    const std::string p = "(" + std::to_string(l.pad) + ", " + std::to_string(l.pad) + ")";
    const std::string ch = std::to_string(l.o);
    const char* ck[] = {"channels", "kernel_size", "strides", "padding",
                        "dilation", "groups",      "use_bias"};
    const char* cv[] = {ch.c_str(), k.c_str(), "(1, 1)", p.c_str(), "(1, 1)", "1", "True"};
    cvml_tensor* conv_in[3] = {x8, wt, bt};
    const char* sk[] = {"precision", "shift_bit"};
    const char* sv[] = {"8", "10"};
    cvml_tensor* requant = x8;
    if (with_conv) {
        CHECK(cvml_graph_add_node(g, "conv2d", "conv", ck, cv, 7, conv_in, 3, &conv, 1));
        CHECK(
            cvml_graph_add_node(g, "cvm_right_shift", "requant", sk, sv, 2, &conv, 1, &requant, 1));
    }
    // The harness prints every output value on one line of 1 KiB: the model's output is
    // the first 8 values of each of the first 8 channels (a slice copies only those).
    const char* tk[] = {"begin", "end"};
    const char* tv[] = {"(0, 0, 0, 0)", "(1, 8, 1, 8)"};
    CHECK(cvml_graph_add_node(g, "strided_slice", "out", tk, tv, 2, &requant, 1, &y, 1));
    CHECK(cvml_graph_set_outputs(g, &y, 1));
    CHECK(cvml_graph_verify(g));
    size_t in_len = 0, out_len = 0;
    int in_type = 0, out_type = 0;
    CHECK(cvml_graph_input_bytes(g, &in_len, &in_type));
    CHECK(cvml_graph_output_bytes(g, &out_len, &out_type));
    std::vector<int8_t> input(in_len);
    const auto xv = values(in_len, 127, 3);
    for (size_t i = 0; i < in_len; ++i) input[i] = static_cast<int8_t>(xv[i]);
    std::vector<uint8_t> output(out_len);
    CHECK(cvml_graph_run_bytes(g, input.data(), in_len, output.data(), out_len));
    uint64_t gas = 0;
    CHECK(cvml_graph_gas(g, &gas));
    mkdir(dir.c_str(), 0755);
    CHECK(cvml_graph_save_file(g, "cvm", (dir + "/model.json").c_str(),
                               (dir + "/model.params").c_str()));
    const long long macs = with_conv ? 1LL * l.o * l.hw * l.hw * l.c * l.k * l.k : 0;
    char meta[512];
    snprintf(meta, sizeof meta,
             "{\"description\": \"%s: conv2d %dx%d, %d -> %d channels, %dx%d, pad %d, then "
             "cvm_right_shift, a 64-value slice\", \"macs\": %lld, \"expect\": {\"gas\": %llu, "
             "\"outcome\": "
             "\"ok\", \"output\": \"output.bin\"}, \"upstream\": {\"output_type_size\": %d}}\n",
             l.name, l.k, l.k, l.c, l.o, l.hw, l.hw, l.pad, macs,
             static_cast<unsigned long long>(gas), out_type);
    const bool ok = write_file(dir + "/input.bin", input.data(), in_len) &&
                    write_file(dir + "/output.bin", output.data(), out_len) &&
                    write_file(dir + "/meta.json", meta, strlen(meta));
    cvml_graph_release(g);
    if (!ok) fprintf(stderr, "layer_models: cannot write %s\n", dir.c_str());
    return ok;
}

/* A conv2d the Cortex-M kernels take (int8 image from a cvm_clip, int8 weights) whose
 * shape reaches their edges: output widths not a multiple of 4 and under 4, channel
 * counts odd, K under 16 and not a multiple of 16, no bias, strides, dilations,
 * uneven padding, and the sums stored as int32 (no shift after the conv). */
struct kernel_case {
    const char* name;
    int32_t c, o, h, w, kh, kw, sh, sw, ph, pw, dh, dw;
    bool bias, requant;
    /* A 1x1 conv2d reads the output, so that it stays in the arena (a graph output is
     * int32 and owns its buffer): the conv under test then writes over its image. */
    bool then_conv = false;
};

const kernel_case kKernelCases[] = {
    {"k27_o5_w7_nobias_int32", 3, 5, 6, 7, 3, 3, 1, 1, 1, 1, 1, 1, false, false},
    {"k18_o6_w3_narrow", 2, 6, 5, 3, 3, 3, 1, 1, 1, 1, 1, 1, true, true},
    {"k9_o4_w2_under16", 1, 4, 4, 2, 3, 3, 1, 1, 1, 1, 1, 1, true, true},
    {"k16_o7_stride2_dilate2_1x2", 8, 7, 9, 11, 1, 2, 2, 2, 2, 1, 2, 2, true, true},
    {"k16_o32_1x1_stride2", 16, 32, 8, 8, 1, 1, 2, 2, 0, 0, 1, 1, true, true},
    {"k297_o10_w5", 33, 10, 5, 5, 3, 3, 1, 1, 1, 1, 1, 1, true, true},
    {"k576_o64_w6_int32", 64, 64, 6, 6, 3, 3, 1, 1, 1, 1, 1, 1, true, false},
    {"k75_o3_w9_stride2_pad2", 3, 3, 13, 17, 5, 5, 2, 2, 2, 2, 1, 1, true, true},
    // Same shape in and out, int8 both: the output is written over the image, rows
    // waiting ph behind (conv_cm_in_place): no wait, one row, two rows, a dilation.
    {"inplace_1x1_c6", 6, 6, 5, 5, 1, 1, 1, 1, 0, 0, 1, 1, true, true, true},
    {"inplace_3x3_c8_w7", 8, 8, 6, 7, 3, 3, 1, 1, 1, 1, 1, 1, true, true, true},
    {"inplace_5x5_c4_pad2", 4, 4, 7, 9, 5, 5, 1, 1, 2, 2, 1, 1, false, true, true},
    {"inplace_3x3_c5_dilate2", 5, 5, 8, 6, 3, 3, 1, 1, 2, 2, 2, 2, true, true, true},
};

std::string tuple2(int32_t a, int32_t b) {
    return "(" + std::to_string(a) + ", " + std::to_string(b) + ")";
}

/* The case's model, input, output (the host library's) and meta.json as
 * tests/arm/mcu/manifest.py reads them. */
bool write_kernel_case(cvml_context* ctx, const kernel_case& l, const std::string& dir) {
    cvml_graph* g = nullptr;
    CHECK(cvml_graph_create(ctx, &g));
    const int32_t xdims[4] = {1, l.c, l.h, l.w}, wdims[4] = {l.o, l.c, l.kh, l.kw};
    const int32_t bdims[1] = {l.o};
    const auto w = values(static_cast<size_t>(l.o) * l.c * l.kh * l.kw, 127, 5);
    const auto b = values(static_cast<size_t>(l.o), 50000, 13);
    cvml_tensor *x = nullptr, *x8 = nullptr, *wt = nullptr, *bt = nullptr, *conv = nullptr;
    CHECK(cvml_graph_add_input(g, "data", 4, xdims, 8, &x));
    const char* pk[] = {"precision"};
    const char* pv[] = {"8"};
    CHECK(cvml_graph_add_node(g, "cvm_clip", "int8", pk, pv, 1, &x, 1, &x8, 1));
    CHECK(cvml_graph_add_const(g, "w", 4, wdims, 8, w.data(), &wt));
    if (l.bias) CHECK(cvml_graph_add_const(g, "b", 1, bdims, 18, b.data(), &bt));
    const std::string ch = std::to_string(l.o), k = tuple2(l.kh, l.kw), st = tuple2(l.sh, l.sw),
                      pd = tuple2(l.ph, l.pw), dl = tuple2(l.dh, l.dw);
    const char* ck[] = {"channels", "kernel_size", "strides", "padding",
                        "dilation", "groups",      "use_bias"};
    const char* cv[] = {
        ch.c_str(), k.c_str(), st.c_str(), pd.c_str(), dl.c_str(), "1", l.bias ? "True" : "False"};
    cvml_tensor* conv_in[3] = {x8, wt, bt};
    CHECK(cvml_graph_add_node(g, "conv2d", "conv", ck, cv, 7, conv_in, l.bias ? 3 : 2, &conv, 1));
    cvml_tensor* y = conv;
    if (l.requant) {
        const char* sk[] = {"precision", "shift_bit"};
        const char* sv[] = {"8", "9"};
        CHECK(cvml_graph_add_node(g, "cvm_right_shift", "requant", sk, sv, 2, &conv, 1, &y, 1));
    }
    if (l.then_conv) {
        const int32_t odims[4] = {l.o, l.o, 1, 1};
        const auto w2 = values(static_cast<size_t>(l.o) * l.o, 127, 29);
        cvml_tensor *w2t = nullptr, *z = nullptr;
        CHECK(cvml_graph_add_const(g, "w2", 4, odims, 8, w2.data(), &w2t));
        const char* k2[] = {"channels", "kernel_size", "use_bias"};
        const char* v2[] = {ch.c_str(), "(1, 1)", "False"};
        cvml_tensor* in2[2] = {y, w2t};
        CHECK(cvml_graph_add_node(g, "conv2d", "reader", k2, v2, 3, in2, 2, &z, 1));
        y = z;
    }
    CHECK(cvml_graph_set_outputs(g, &y, 1));
    CHECK(cvml_graph_verify(g));
    size_t in_len = 0, out_len = 0;
    int in_type = 0, out_type = 0;
    CHECK(cvml_graph_input_bytes(g, &in_len, &in_type));
    CHECK(cvml_graph_output_bytes(g, &out_len, &out_type));
    const auto xv = values(in_len / static_cast<size_t>(in_type), 127, 17);
    std::vector<int8_t> input(in_len);
    for (size_t i = 0; i < xv.size(); ++i) input[i] = static_cast<int8_t>(xv[i]);
    std::vector<uint8_t> output(out_len);
    CHECK(cvml_graph_run_bytes(g, input.data(), in_len, output.data(), out_len));
    uint64_t gas = 0;
    CHECK(cvml_graph_gas(g, &gas));
    mkdir(dir.c_str(), 0755);
    CHECK(cvml_graph_save_file(g, "cvm", (dir + "/model.json").c_str(),
                               (dir + "/model.params").c_str()));
    cvml_graph_release(g);
    std::string json;
    if (FILE* f = fopen((dir + "/model.json").c_str(), "rb")) {
        char buf[4096];
        for (size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;) json.append(buf, n);
        fclose(f);
    }
    unsigned long long graph_gas = 0;
    if (CVMAPIGetGasFromGraphFile(json.c_str(), &graph_gas) != 0) {
        fprintf(stderr, "layer_models: %s: no gas from the saved graph\n", l.name);
        return false;
    }
    char meta[512];
    snprintf(meta, sizeof meta,
             "{\"description\": \"%s: conv2d for the Cortex-M kernels' edges\", \"expect\": "
             "{\"outcome\": \"ok\", \"graph_gas_rc\": 0, \"graph_gas\": %llu, \"gas\": %llu, "
             "\"output\": \"output.bin\"}}\n",
             l.name, graph_gas, static_cast<unsigned long long>(gas));
    const bool ok = write_file(dir + "/input.bin", input.data(), in_len) &&
                    write_file(dir + "/output.bin", output.data(), out_len) &&
                    write_file(dir + "/meta.json", meta, strlen(meta));
    if (!ok) fprintf(stderr, "layer_models: cannot write %s\n", dir.c_str());
    return ok;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: layer_models OUTDIR [CASEDIR]\n");
        return 2;
    }
    mkdir(argv[1], 0755);
    if (cvml_init() != 0) return 1;
    cvml_context* ctx = nullptr;
    if (cvml_context_create(&ctx) != 0) return 1;
    int failures = 0;
    for (const layer& l : kLayers) {
        failures += !write_layer(ctx, l, std::string(argv[1]) + "/" + l.name, true);
        failures += !write_layer(ctx, l, std::string(argv[1]) + "/" + l.name + "_base", false);
    }
    if (argc == 3) {
        mkdir(argv[2], 0755);
        for (const kernel_case& l : kKernelCases)
            failures += !write_kernel_case(ctx, l, std::string(argv[2]) + "/" + l.name);
    }
    cvml_context_release(ctx);
    cvml_release();
    for (const layer& l : kLayers) printf("%s\n", l.name);
    return failures ? 1 : 0;
}
