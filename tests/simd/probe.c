/* Prints the SIMD level the CPU kernels would use with CVML_SIMD unset. */
#include <stdio.h>
#include <stdlib.h>

#include "cvml.h"

int main(void) {
    unsetenv("CVML_SIMD");
    puts(cvml_cpu_simd_level());
    return 0;
}
