/* Built against an installed cvm-lite (CMake package or pkg-config): builds a one-node
 * graph with the builder API and runs it. */
#include <stdio.h>

#include "cvml.h"

int main(void) {
    const int32_t dims[] = {1, 4};
    const int8_t in[] = {-3, 0, 5, -128};
    int32_t out[4];
    cvml_context* ctx = NULL;
    cvml_graph* g = NULL;
    cvml_tensor *x = NULL, *y = NULL;
    if (cvml_init() || cvml_context_create(&ctx) || cvml_graph_create(ctx, &g) ||
        cvml_graph_add_input(g, "data", 2, dims, 8, &x) ||
        cvml_graph_add_node(g, "relu", "relu_0", NULL, NULL, 0, &x, 1, &y, 1) ||
        cvml_graph_set_outputs(g, &y, 1) || cvml_graph_verify(g) || cvml_tensor_set_i8(x, in, 4) ||
        cvml_graph_run(g) || cvml_tensor_get_i32(y, out, 4)) {
        fprintf(stderr, "consumer: %s\n", cvml_last_error());
        return 1;
    }
    /* SetInput clips -128 to -127 at precision 8; relu then zeroes it. */
    printf("cvml %s relu: %d %d %d %d\n", cvml_version(), out[0], out[1], out[2], out[3]);
    cvml_graph_release(g);
    cvml_context_release(ctx);
    cvml_release();
    return out[0] == 0 && out[1] == 0 && out[2] == 5 && out[3] == 0 ? 0 : 1;
}
