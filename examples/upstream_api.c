/* Runs a model through the upstream CVM C API only (CVMAPI*, as
 * CortexFoundation/cvm-runtime declares it): a program written for libcvm_runtime
 * builds unchanged against cvm-lite.
 *
 *   upstream_api GRAPH.json GRAPH.params INPUT.bin */
#include <stdio.h>
#include <stdlib.h>

#include "cvm_api.h"

static char* read_all(const char* path, long* size) {
    FILE* f = fopen(path, "rb");
    char* data = NULL;
    long n;
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        data = (char*)malloc(n > 0 ? (size_t)n : 1);
        if (data && fread(data, 1, (size_t)n, f) != (size_t)n) {
            free(data);
            data = NULL;
        }
        *size = n;
    }
    fclose(f);
    return data;
}

int main(int argc, char** argv) {
    long graph_size = 0, params_size = 0, input_size = 0;
    char *graph, *params, *input, *output;
    void* net = NULL;
    unsigned long long in_len = 0, out_len = 0, out_type = 0, gas = 0, i;
    int rc;

    if (argc != 4) {
        fprintf(stderr, "usage: upstream_api GRAPH.json GRAPH.params INPUT.bin\n");
        return 64;
    }
    graph = read_all(argv[1], &graph_size);
    params = read_all(argv[2], &params_size);
    input = read_all(argv[3], &input_size);
    if (!graph || !params || !input) {
        fprintf(stderr, "upstream_api: cannot read the model or input files\n");
        return 2;
    }
    rc = CVMAPILoadModel(graph, (int)graph_size, params, (int)params_size, &net, 0, 0);
    if (rc != 0) {
        fprintf(stderr, "upstream_api: CVMAPILoadModel returned %d\n", rc);
        return rc;
    }
    if ((rc = CVMAPIGetInputLength(net, &in_len)) != 0 ||
        (rc = CVMAPIGetOutputLength(net, &out_len)) != 0 ||
        (rc = CVMAPIGetOutputTypeSize(net, &out_type)) != 0 ||
        (rc = CVMAPIGetGasFromModel(net, &gas)) != 0) {
        fprintf(stderr, "upstream_api: a CVMAPIGet* call returned %d\n", rc);
        return rc;
    }
    if ((unsigned long long)input_size != in_len) {
        fprintf(stderr, "upstream_api: input has %ld bytes, the model takes %llu\n", input_size,
                in_len);
        return 1;
    }
    output = (char*)calloc(out_len ? out_len : 1, 1);
    if (!output) return 2;
    rc = CVMAPIInference(net, input, (int)input_size, output);
    if (rc != 0) {
        fprintf(stderr, "upstream_api: CVMAPIInference returned %d\n", rc);
        return rc;
    }
    printf("gas %llu\n", gas);
    for (i = 0; i < out_len / out_type; ++i) {
        long v;
        if (out_type == 1) {
            v = (signed char)output[i];
        } else {
            unsigned long u = (unsigned long)(unsigned char)output[4 * i] |
                              (unsigned long)(unsigned char)output[4 * i + 1] << 8 |
                              (unsigned long)(unsigned char)output[4 * i + 2] << 16 |
                              (unsigned long)(unsigned char)output[4 * i + 3] << 24;
            v = u >= 0x80000000ul ? (long)u - 0x100000000l : (long)u;
        }
        printf(i ? " %ld" : "%ld", v);
    }
    printf("\n");
    CVMAPIFreeModel(net);
    free(graph);
    free(params);
    free(input);
    free(output);
    return 0;
}
