/* Runs a model on the CUDA device when its plugin is present and falls back to the
 * CPU otherwise, then reports which device ran each operator node. The output bytes
 * are the same either way: cvm-lite's devices agree to the last bit.
 *
 *   cuda_fallback GRAPH.json GRAPH.params INPUT.bin
 *
 * The plugin (libcvml_cuda.so) is found in CVML_PLUGIN_PATH or in the library's
 * plugin directory (lib/cvml/plugins). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    fprintf(stderr, "cuda_fallback: %s: %s\n", what, cvml_last_error());
    return rc;
}

int main(int argc, char** argv) {
    const char* cuda[] = {"cuda"};
    cvml_context* ctx = NULL;
    cvml_graph* g = NULL;
    unsigned char *input, *output;
    size_t input_size = 0, out_len = 0, i;
    int out_type = 0, nodes = 0, on_cuda = 0, on_cpu = 0, rc;

    if (argc != 4) {
        fprintf(stderr, "usage: cuda_fallback GRAPH.json GRAPH.params INPUT.bin\n");
        return 64;
    }
    if ((rc = cvml_init()) != CVML_OK) return fail(rc, "init");
    if ((rc = cvml_context_create(&ctx)) != CVML_OK) return fail(rc, "context");
    /* "cuda" is registered only when the plugin loaded and found a GPU; the CPU is
     * always appended as the fallback for nodes CUDA does not take. */
    if (cvml_context_set_devices(ctx, cuda, 1) == CVML_OK)
        printf("device: cuda (cpu fallback)\n");
    else
        printf("device: cpu (no CUDA device: %s)\n", cvml_last_error());

    if ((rc = cvml_graph_load_file(ctx, "cvm", argv[1], argv[2], &g)) != CVML_OK)
        return fail(rc, "load");
    if ((rc = cvml_graph_prerun(g)) != CVML_OK) return fail(rc, "prerun");
    if ((rc = cvml_graph_node_count(g, &nodes)) != CVML_OK) return fail(rc, "nodes");
    for (i = 0; i < (size_t)nodes; ++i) {
        const char* dev = "";
        if ((rc = cvml_graph_node_device(g, (int)i, &dev)) != CVML_OK) return fail(rc, "device");
        if (strcmp(dev, "cuda") == 0) ++on_cuda;
        if (strcmp(dev, "cpu") == 0) ++on_cpu;
    }
    printf("nodes: %d on cuda, %d on cpu\n", on_cuda, on_cpu);

    if ((rc = cvml_graph_output_bytes(g, &out_len, &out_type)) != CVML_OK) return fail(rc, "sizes");
    input = read_all(argv[3], &input_size);
    if (!input) {
        fprintf(stderr, "cuda_fallback: cannot read '%s'\n", argv[3]);
        return 2;
    }
    output = (unsigned char*)malloc(out_len ? out_len : 1);
    if (!output) return 2;
    if ((rc = cvml_graph_run_bytes(g, input, input_size, output, out_len)) != CVML_OK)
        return fail(rc, "run");
    for (i = 0; i < out_len / (size_t)out_type; ++i) {
        int32_t v =
            out_type == 1
                ? (int8_t)output[i]
                : (int32_t)((uint32_t)output[4 * i] | (uint32_t)output[4 * i + 1] << 8 |
                            (uint32_t)output[4 * i + 2] << 16 | (uint32_t)output[4 * i + 3] << 24);
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
