/* The C ABI from C: the header compiles as C99 with -pedantic, and the builder,
 * tensor and error calls behave from a C program. Prints "N passed, M failed". */
#include <stdio.h>
#include <string.h>

#include "cvml.h"

static int passed, failed;

#define CHECK(cond)                                                                     \
    do {                                                                                \
        if (cond) {                                                                     \
            ++passed;                                                                   \
        } else {                                                                        \
            ++failed;                                                                   \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: %s\n", __FILE__, __LINE__, #cond, \
                    cvml_last_error());                                                 \
        }                                                                               \
    } while (0)

static void test_null_arguments(void) {
    cvml_graph* g = NULL;
    CHECK(cvml_graph_create(NULL, &g) == CVML_ERR_LOGIC);
    CHECK(strlen(cvml_last_error()) > 0);
    CHECK(cvml_graph_run(NULL) == CVML_ERR_LOGIC);
    CHECK(cvml_context_create(NULL) == CVML_ERR_LOGIC);
    CHECK(cvml_tensor_get_i8(NULL, NULL, 0) == CVML_ERR_LOGIC);
    CHECK(cvml_graph_load_file(NULL, "cvm", NULL, NULL, &g) == CVML_ERR_LOGIC);
}

static void test_relu_graph(void) {
    cvml_context* ctx = NULL;
    cvml_graph* g = NULL;
    cvml_tensor *x = NULL, *y = NULL;
    const int32_t dims[2] = {1, 5};
    const int8_t in[5] = {-100, -1, 0, 1, 100};
    int8_t out8[5];
    int32_t out32[5];
    cvml_dtype dtype;
    int precision = 0;
    CHECK(cvml_context_create(&ctx) == CVML_OK);
    CHECK(cvml_context_set_threads(ctx, 2) == CVML_OK);
    CHECK(cvml_context_set_threads(ctx, 0) == CVML_ERR_LOGIC);
    CHECK(cvml_graph_create(ctx, &g) == CVML_OK);
    CHECK(cvml_graph_add_input(g, "data", 2, dims, 8, &x) == CVML_OK);
    CHECK(cvml_graph_add_node(g, "relu", "relu_0", NULL, NULL, 0, &x, 1, &y, 1) == CVML_OK);
    CHECK(cvml_graph_add_node(g, "no_such_op", "bad", NULL, NULL, 0, &x, 1, &y, 1) ==
          CVML_ERR_RUNTIME);
    CHECK(cvml_graph_set_outputs(g, &y, 1) == CVML_OK);
    CHECK(cvml_graph_prerun(g) == CVML_OK);
    CHECK(cvml_tensor_set_i8(x, in, 5) == CVML_OK);
    CHECK(cvml_tensor_set_i8(x, in, 4) == CVML_ERR_LOGIC);
    CHECK(cvml_graph_run(g) == CVML_OK);
    CHECK(cvml_tensor_get_i8(y, out8, 5) == CVML_OK);
    CHECK(cvml_tensor_get_i32(y, out32, 5) == CVML_OK);
    CHECK(out8[0] == 0 && out8[4] == 100 && out32[3] == 1);
    CHECK(cvml_tensor_dtype(y, &dtype) == CVML_OK && dtype == CVML_DTYPE_INT8);
    CHECK(cvml_tensor_precision(y, &precision) == CVML_OK && precision == 8);
    CHECK(cvml_graph_release(g) == CVML_OK);
    CHECK(cvml_context_release(ctx) == CVML_OK);
}

int main(void) {
    CHECK(cvml_init() == CVML_OK);
    CHECK(strlen(cvml_version()) > 0);
    test_null_arguments();
    test_relu_graph();
    CHECK(cvml_release() == CVML_OK);
    /* A second init after a full release works. */
    CHECK(cvml_init() == CVML_OK);
    CHECK(cvml_release() == CVML_OK);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
