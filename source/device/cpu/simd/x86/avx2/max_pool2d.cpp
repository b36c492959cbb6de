/* max_pool2d at avx2 (max_pool2d.cpp dispatches). */
#include "device/cpu/op/max_pool2d_fast.h"

#if CVML_SIMD_X86

namespace cpu_max_pool2d {

CVML_TARGET_AVX2 void max_row_avx2(int32_t* acc, const int32_t* src, int64_t n) {
    max_row_body(acc, src, n);
}
CVML_TARGET_AVX2 void max_row8_avx2(int8_t* acc, const int8_t* src, int64_t n) {
    max_row_body(acc, src, n);
}

}  // namespace cpu_max_pool2d

#endif
