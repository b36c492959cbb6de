/* The int8 GEMM at the aarch64 dotprod level: SDOT by element. Layouts as at neon
 * (simd/arm/aarch64/neon/gemm_s8.cpp). One SDOT adds, to each of a column quad's 4
 * int32 sums, the dot product of that column's 4 values with one row's 4 (picked by
 * lane from the weights' register): 16 exact int8 products, accumulated with
 * wrap-around like upstream's int32 sums. */
#include "device/cpu/simd/gemm_s8_impl.h"

#if CVML_SIMD_AARCH64
#include <arm_neon.h>

namespace gemm_impl {
namespace {

#define DOT_ROW(r, av, lane)                              \
    do {                                                  \
        c##r##0 = vdotq_laneq_s32(c##r##0, b0, av, lane); \
        c##r##1 = vdotq_laneq_s32(c##r##1, b1, av, lane); \
        c##r##2 = vdotq_laneq_s32(c##r##2, b2, av, lane); \
    } while (0)

#define DOT_STORE(r)                               \
    do {                                           \
        vst1q_s32(out + (r)*GEMM_NT + 0, c##r##0); \
        vst1q_s32(out + (r)*GEMM_NT + 4, c##r##1); \
        vst1q_s32(out + (r)*GEMM_NT + 8, c##r##2); \
    } while (0)

/* 8 rows x one 12-column panel of B (step k4's 48 bytes at b.at(k4)): 24 accumulators,
 * 2 + 3 operand registers. */
template <typename BSource>
CVML_TARGET_DOTPROD inline void ukr_dotprod(const int8_t* a, BSource b, int32_t k4n, int32_t* out) {
    const int32x4_t z = vdupq_n_s32(0);
    int32x4_t c00 = z, c01 = z, c02 = z, c10 = z, c11 = z, c12 = z;
    int32x4_t c20 = z, c21 = z, c22 = z, c30 = z, c31 = z, c32 = z;
    int32x4_t c40 = z, c41 = z, c42 = z, c50 = z, c51 = z, c52 = z;
    int32x4_t c60 = z, c61 = z, c62 = z, c70 = z, c71 = z, c72 = z;
    // Two steps per iteration: the loop's count, compare and pointer steps are paid
    // half as often (2% fewer instructions on cifar_resnet20; the same at neon made 6%
    // more: its 24 accumulators and products spill).
#pragma GCC unroll 2
    for (int32_t k4 = 0; k4 < k4n; ++k4) {
        const int8_t* ak = a + static_cast<size_t>(k4) * 32;
        const int8x16_t lo = vld1q_s8(ak), hi = vld1q_s8(ak + 16);
        const int8_t* bk = b.at(k4);
        const int8x16_t b0 = vld1q_s8(bk), b1 = vld1q_s8(bk + 16), b2 = vld1q_s8(bk + 32);
        DOT_ROW(0, lo, 0);
        DOT_ROW(1, lo, 1);
        DOT_ROW(2, lo, 2);
        DOT_ROW(3, lo, 3);
        DOT_ROW(4, hi, 0);
        DOT_ROW(5, hi, 1);
        DOT_ROW(6, hi, 2);
        DOT_ROW(7, hi, 3);
    }
    DOT_STORE(0);
    DOT_STORE(1);
    DOT_STORE(2);
    DOT_STORE(3);
    DOT_STORE(4);
    DOT_STORE(5);
    DOT_STORE(6);
    DOT_STORE(7);
}

}  // namespace

CVML_TARGET_DOTPROD void tile_dotprod(const gemm_weights* a, const int8_t* b, int32_t m0,
                                      int32_t n0, int32_t cols, int32_t* tile) {
    const int32_t k4n = a->Kp / 4;
    const int8_t* block = static_cast<const int8_t*>(a->data) + static_cast<size_t>(m0) * a->Kp;
    const size_t panel_bytes = static_cast<size_t>(k4n) * ARM_PANEL_BYTES;
    for (int32_t c = 0; c < cols; c += ARM_PANEL)
        ukr_dotprod(block,
                    arm_packed_b{b + static_cast<size_t>((n0 + c) / ARM_PANEL) * panel_bytes}, k4n,
                    tile + c);
}

CVML_TARGET_DOTPROD void tile_taps_dotprod(const gemm_weights* a, const int8_t* img,
                                           const int64_t* boff, int32_t m0, int32_t n0,
                                           int32_t cols, int32_t* tile) {
    const int32_t k4n = a->Kp / 4;
    const int8_t* block = static_cast<const int8_t*>(a->data) + static_cast<size_t>(m0) * a->Kp;
    for (int32_t c = 0; c < cols; c += ARM_PANEL)
        ukr_dotprod(block, arm_taps_b{img + 4 * static_cast<int64_t>(n0 + c), boff}, k4n, tile + c);
}

}  // namespace gemm_impl

#endif
