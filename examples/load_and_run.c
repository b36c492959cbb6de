/* Loads a CVM model from its two files, runs it on an input given as upstream's raw
 * bytes and prints the output values, the way a node feeds CVMAPIInference.
 *
 *   load_and_run GRAPH.json GRAPH.params INPUT.bin
 *
 * Plain C99 over cvml.h. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cvml.h"

static unsigned char* read_all(const char* path, size_t* size) {
    FILE* f = fopen(path, "rb");
    unsigned char* data = NULL;
    long n;
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        data = (unsigned char*)malloc(n > 0 ? (size_t)n : 1);
        if (data && fread(data, 1, (size_t)n, f) != (size_t)n) {
            free(data);
            data = NULL;
        }
        *size = (size_t)n;
    }
    fclose(f);
    return data;
}

static int fail(int rc, const char* what) {
    fprintf(stderr, "load_and_run: %s: %s\n", what, cvml_last_error());
    return rc;
}

int main(int argc, char** argv) {
    cvml_context* ctx = NULL;
    cvml_graph* g = NULL;
    unsigned char *input, *output;
    size_t input_size = 0, in_len = 0, out_len = 0, i;
    int in_type = 0, out_type = 0, rc;
    uint64_t gas = 0;

    if (argc != 4) {
        fprintf(stderr, "usage: load_and_run GRAPH.json GRAPH.params INPUT.bin\n");
        return 64;
    }
    if ((rc = cvml_init()) != CVML_OK) return fail(rc, "init");
    if ((rc = cvml_context_create(&ctx)) != CVML_OK) return fail(rc, "context");
    if ((rc = cvml_graph_load_file(ctx, "cvm", argv[1], argv[2], &g)) != CVML_OK)
        return fail(rc, "load");
    if ((rc = cvml_graph_gas(g, &gas)) != CVML_OK) return fail(rc, "gas");
    if ((rc = cvml_graph_input_bytes(g, &in_len, &in_type)) != CVML_OK ||
        (rc = cvml_graph_output_bytes(g, &out_len, &out_type)) != CVML_OK)
        return fail(rc, "sizes");

    input = read_all(argv[3], &input_size);
    if (!input) {
        fprintf(stderr, "load_and_run: cannot read '%s'\n", argv[3]);
        return 2;
    }
    output = (unsigned char*)malloc(out_len ? out_len : 1);
    if (!output) return 2;
    /* The library checks the input length against the model (a logic error). */
    if ((rc = cvml_graph_run_bytes(g, input, input_size, output, out_len)) != CVML_OK)
        return fail(rc, "run");

    printf("gas %llu\n", (unsigned long long)gas);
    for (i = 0; i < out_len / (size_t)out_type; ++i) {
        int32_t v;
        if (out_type == 1) {
            v = (int8_t)output[i];
        } else {
            uint32_t u = (uint32_t)output[4 * i] | (uint32_t)output[4 * i + 1] << 8 |
                         (uint32_t)output[4 * i + 2] << 16 | (uint32_t)output[4 * i + 3] << 24;
            v = (int32_t)u;
        }
        printf(i ? " %d" : "%d", (int)v);
    }
    printf("\n");
    free(input);
    free(output);
    cvml_graph_release(g);
    cvml_context_release(ctx);
    cvml_release();
    return 0;
}
