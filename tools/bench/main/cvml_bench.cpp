/* The standalone benchmark executable (`cvml bench` runs the same code). */
#include "bench.h"

int main(int argc, char** argv) {
    return cvml_bench_main(argc, argv);
}
