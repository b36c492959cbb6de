/* broadcast_div on CUDA: C's truncating division; a zero divisor gives 0, as the
 * upstream kernel does, and INT32_MIN / -1 wraps instead of trapping (cvm_div_value,
 * operator/scalar.h). */
#include "binary.cuh"
#include "operator/scalar.h"

CVML_CUDA_BINARY(broadcast_div, cvm_div_value(a, b));
