/* Builds a small convolutional network with the builder API, runs it on the CPU and
 * prints its output. With --save PREFIX it also writes the model (PREFIX.json,
 * PREFIX.params) and its input (PREFIX.input.bin); that is how the bundled model in
 * examples/models/ was made.
 *
 * It has the shape of a model quantized by MRT: every product of int8 tensors is
 * rescaled by a right shift and clipped back to its precision before the next layer,
 * so the output is int8 like a real CVM model's:
 *
 *   data (1,1,12,12) int8 -> conv2d 4x3x3 + bias -> cvm_right_shift(16, 8)
 *        -> cvm_clip(8) -> relu -> max_pool2d 2x2 -> flatten -> dense 10 + bias
 *        -> cvm_right_shift(8, 10) -> output (1,10) int8
 *
 * Plain C99: builds with `gcc` and links libcvml.a with -lm -lpthread -ldl only. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cvml.h"

#define CHECK(call)                                                                                \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != CVML_OK) {                                                                      \
            fprintf(stderr, "build_and_run: %s failed (%d): %s\n", #call, rc_, cvml_last_error()); \
            exit(rc_);                                                                             \
        }                                                                                          \
    } while (0)

/* Deterministic weights: a 32-bit LCG, so the model is the same on every machine. */
static uint32_t lcg_state = 20240601u;
static int32_t next_value(int32_t bound) {
    lcg_state = lcg_state * 1664525u + 1013904223u;
    return (int32_t)((lcg_state >> 8) % (uint32_t)(2 * bound + 1)) - bound;
}

static void fill(int32_t* v, int n, int32_t bound) {
    int i;
    for (i = 0; i < n; ++i) v[i] = next_value(bound);
}

/* The input: a hand-drawn "7" on a dark background. */
static void draw_seven(int8_t* img) {
    int y, x;
    for (y = 0; y < 12; ++y)
        for (x = 0; x < 12; ++x) img[y * 12 + x] = -20;
    for (x = 2; x < 10; ++x) img[2 * 12 + x] = 100;
    for (y = 3; y < 11; ++y) img[y * 12 + (9 - (y - 3) / 2)] = 110;
}

static cvml_tensor* node(cvml_graph* g, const char* op, const char* name, const char** keys,
                         const char** values, int n_attrs, cvml_tensor** inputs, int n_inputs) {
    cvml_tensor* out = NULL;
    CHECK(cvml_graph_add_node(g, op, name, keys, values, n_attrs, inputs, n_inputs, &out, 1));
    return out;
}

static int write_bytes(const char* path, const void* data, size_t size) {
    FILE* f = fopen(path, "wb");
    size_t written;
    if (!f) return 0;
    written = fwrite(data, 1, size, f);
    return fclose(f) == 0 && written == size;
}

int main(int argc, char** argv) {
    const char* save_prefix = NULL;
    cvml_context* ctx = NULL;
    cvml_graph* g = NULL;
    cvml_tensor *x, *y, *t[3];
    static int32_t conv_w[4 * 1 * 3 * 3], conv_b[4], fc_w[10 * 144], fc_b[10];
    int8_t image[144];
    int32_t out[10];
    uint64_t gas = 0;
    int i;

    if (argc == 3 && strcmp(argv[1], "--save") == 0) {
        save_prefix = argv[2];
    } else if (argc != 1) {
        fprintf(stderr, "usage: build_and_run [--save PREFIX]\n");
        return 64;
    }
    fill(conv_w, 36, 127);
    fill(conv_b, 4, 2000);
    fill(fc_w, 1440, 127);
    fill(fc_b, 10, 2000);
    draw_seven(image);

    CHECK(cvml_init());
    CHECK(cvml_context_create(&ctx));
    CHECK(cvml_graph_create(ctx, &g));
    {
        const int32_t data_dims[] = {1, 1, 12, 12}, cw_dims[] = {4, 1, 3, 3}, cb_dims[] = {4};
        const int32_t fw_dims[] = {10, 144}, fb_dims[] = {10};
        const char* conv_keys[] = {"channels", "kernel_size", "strides", "padding", "use_bias"};
        const char* conv_vals[] = {"4", "(3, 3)", "(1, 1)", "(1, 1)", "True"};
        const char* shift_keys[] = {"precision", "shift_bit"};
        const char* conv_shift_vals[] = {"16", "8"};
        const char* clip_keys[] = {"precision"};
        const char* clip_vals[] = {"8"};
        const char* dense_shift_vals[] = {"8", "10"};
        const char* pool_keys[] = {"pool_size", "strides"};
        const char* pool_vals[] = {"(2, 2)", "(2, 2)"};
        const char* dense_keys[] = {"units", "use_bias"};
        const char* dense_vals[] = {"10", "True"};

        CHECK(cvml_graph_add_input(g, "data", 4, data_dims, 8, &x));
        t[0] = x;
        CHECK(cvml_graph_add_const(g, "conv_w", 4, cw_dims, 8, conv_w, &t[1]));
        CHECK(cvml_graph_add_const(g, "conv_b", 1, cb_dims, 16, conv_b, &t[2]));
        y = node(g, "conv2d", "conv2d_0", conv_keys, conv_vals, 5, t, 3);
        y = node(g, "cvm_right_shift", "cvm_right_shift_0", shift_keys, conv_shift_vals, 2, &y, 1);
        y = node(g, "cvm_clip", "cvm_clip_0", clip_keys, clip_vals, 1, &y, 1);
        y = node(g, "relu", "relu_0", NULL, NULL, 0, &y, 1);
        y = node(g, "max_pool2d", "max_pool2d_0", pool_keys, pool_vals, 2, &y, 1);
        y = node(g, "flatten", "flatten_0", NULL, NULL, 0, &y, 1);
        t[0] = y;
        CHECK(cvml_graph_add_const(g, "fc_w", 2, fw_dims, 8, fc_w, &t[1]));
        CHECK(cvml_graph_add_const(g, "fc_b", 1, fb_dims, 16, fc_b, &t[2]));
        y = node(g, "dense", "dense_0", dense_keys, dense_vals, 2, t, 3);
        y = node(g, "cvm_right_shift", "cvm_right_shift_1", shift_keys, dense_shift_vals, 2, &y, 1);
        CHECK(cvml_graph_set_outputs(g, &y, 1));
    }
    CHECK(cvml_graph_verify(g));
    CHECK(cvml_graph_gas(g, &gas));

    CHECK(cvml_tensor_set_i8(x, image, 144));
    CHECK(cvml_graph_run(g));
    CHECK(cvml_tensor_get_i32(y, out, 10));

    printf("gas %llu\noutput", (unsigned long long)gas);
    for (i = 0; i < 10; ++i) printf(" %d", (int)out[i]);
    printf("\n");

    if (save_prefix) {
        char graph_path[4096], params_path[4096], input_path[4096];
        snprintf(graph_path, sizeof graph_path, "%s.json", save_prefix);
        snprintf(params_path, sizeof params_path, "%s.params", save_prefix);
        snprintf(input_path, sizeof input_path, "%s.input.bin", save_prefix);
        CHECK(cvml_graph_save_file(g, "cvm", graph_path, params_path));
        if (!write_bytes(input_path, image, sizeof image)) {
            fprintf(stderr, "build_and_run: cannot write '%s'\n", input_path);
            return 2;
        }
        printf("wrote %s, %s and %s\n", graph_path, params_path, input_path);
    }
    CHECK(cvml_graph_release(g));
    CHECK(cvml_context_release(ctx));
    CHECK(cvml_release());
    return 0;
}
