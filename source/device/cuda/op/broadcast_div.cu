/* broadcast_div on CUDA: C's truncating division; a zero divisor gives 0, as the
 * upstream kernel does, and INT32_MIN / -1 wraps instead of trapping. */
#include "binary.cuh"
CVML_CUDA_BINARY(broadcast_div,
                 b == 0 ? 0
                        : (b == -1 ? static_cast<int32_t>(0u - static_cast<uint32_t>(a)) : a / b));
