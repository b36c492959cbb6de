/* The int8 GEMM at the aarch64 i8mm level: SMMLA. One SMMLA adds to a 2 x 2 block of
 * int32 sums the products of 2 rows by 2 columns over 8 values of K: 32 exact int8
 * products per instruction (SDOT: 16), accumulated with wrap-around like upstream's
 * int32 sums.
 *
 * Layouts: B as at neon and dotprod (12-column panels, 4 values of K per column and k4
 * step; packed, or taps mode's image), so packing and taps mode are shared. Two k4 steps
 * make one SMMLA operand per column pair: ZIP1/ZIP2 on 32-bit lanes turn columns c, c+1
 * of steps 2s and 2s+1 into [c: K 0..7 | c+1: K 0..7]. The weights are packed for this
 * level (gemm_s8.cpp): blocks of 8 rows, each 8-value step of K 64 bytes, row pair p's
 * 16 bytes at p * 16 (row 2p's 8 values, then row 2p+1's), zeros past K, so a last odd
 * k4 step of B may pair with any readable bytes. */
#include "device/cpu/simd/gemm_s8_impl.h"

#if CVML_SIMD_AARCH64
#include <arm_neon.h>

namespace gemm_impl {
namespace {

/* The six column-pair operands q0 .. q5 of one 8-value step from B's steps at xp, yp. */
#define MM_B(xp, yp)                                                \
    const int32x4_t x0 = vreinterpretq_s32_s8(vld1q_s8(xp)),        \
                    x1 = vreinterpretq_s32_s8(vld1q_s8((xp) + 16)), \
                    x2 = vreinterpretq_s32_s8(vld1q_s8((xp) + 32)); \
    const int32x4_t y0 = vreinterpretq_s32_s8(vld1q_s8(yp)),        \
                    y1 = vreinterpretq_s32_s8(vld1q_s8((yp) + 16)), \
                    y2 = vreinterpretq_s32_s8(vld1q_s8((yp) + 32)); \
    const int8x16_t q0 = vreinterpretq_s8_s32(vzip1q_s32(x0, y0)),  \
                    q1 = vreinterpretq_s8_s32(vzip2q_s32(x0, y0)),  \
                    q2 = vreinterpretq_s8_s32(vzip1q_s32(x1, y1)),  \
                    q3 = vreinterpretq_s8_s32(vzip2q_s32(x1, y1)),  \
                    q4 = vreinterpretq_s8_s32(vzip1q_s32(x2, y2)),  \
                    q5 = vreinterpretq_s8_s32(vzip2q_s32(x2, y2))

/* Row pair p's operand at ak times the six column pairs. */
#define MM_ROWS(p, ak)                                 \
    do {                                               \
        const int8x16_t w = vld1q_s8((ak) + 16 * (p)); \
        c##p##0 = vmmlaq_s32(c##p##0, w, q0);          \
        c##p##1 = vmmlaq_s32(c##p##1, w, q1);          \
        c##p##2 = vmmlaq_s32(c##p##2, w, q2);          \
        c##p##3 = vmmlaq_s32(c##p##3, w, q3);          \
        c##p##4 = vmmlaq_s32(c##p##4, w, q4);          \
        c##p##5 = vmmlaq_s32(c##p##5, w, q5);          \
    } while (0)

#define MM_STEP(ak, xb, yb) \
    do {                    \
        MM_B(xb, yb);       \
        MM_ROWS(0, ak);     \
        MM_ROWS(1, ak);     \
        MM_ROWS(2, ak);     \
        MM_ROWS(3, ak);     \
    } while (0)

/* Rows 2p, 2p + 1: the 2 x 2 blocks of column pairs 2j, 2j + 1 side by side. */
#define MM_STORE_PAIR(p, j, a0, a1)                                                              \
    do {                                                                                         \
        const int64x2_t l = vreinterpretq_s64_s32(a0), h = vreinterpretq_s64_s32(a1);            \
        vst1q_s32(out + (2 * (p)) * GEMM_NT + 4 * (j), vreinterpretq_s32_s64(vzip1q_s64(l, h))); \
        vst1q_s32(out + (2 * (p) + 1) * GEMM_NT + 4 * (j),                                       \
                  vreinterpretq_s32_s64(vzip2q_s64(l, h)));                                      \
    } while (0)

#define MM_STORE(p)                            \
    do {                                       \
        MM_STORE_PAIR(p, 0, c##p##0, c##p##1); \
        MM_STORE_PAIR(p, 1, c##p##2, c##p##3); \
        MM_STORE_PAIR(p, 2, c##p##4, c##p##5); \
    } while (0)

/* 8 rows x one 12-column panel of B (kb k4 steps at b.at(k4)): 24 accumulators. */
template <typename BSource>
CVML_TARGET_I8MM inline void ukr_i8mm(const int8_t* a, BSource b, int32_t kb, int32_t* out) {
    const int32x4_t z = vdupq_n_s32(0);
    int32x4_t c00 = z, c01 = z, c02 = z, c03 = z, c04 = z, c05 = z;
    int32x4_t c10 = z, c11 = z, c12 = z, c13 = z, c14 = z, c15 = z;
    int32x4_t c20 = z, c21 = z, c22 = z, c23 = z, c24 = z, c25 = z;
    int32x4_t c30 = z, c31 = z, c32 = z, c33 = z, c34 = z, c35 = z;
    int32_t k4 = 0;
    for (; k4 + 2 <= kb; k4 += 2) {
        const int8_t* xb = b.at(k4);
        const int8_t* yb = b.at(k4 + 1);
        MM_STEP(a + static_cast<size_t>(k4) * 32, xb, yb);
    }
    if (k4 < kb) {  // the weights are zero past K: the second step's bytes do not count
        const int8_t* xb = b.at(k4);
        MM_STEP(a + static_cast<size_t>(k4) * 32, xb, xb);
    }
    MM_STORE(0);
    MM_STORE(1);
    MM_STORE(2);
    MM_STORE(3);
}

}  // namespace

CVML_TARGET_I8MM void tile_i8mm(const gemm_weights* a, const int8_t* b, int32_t m0, int32_t n0,
                                int32_t cols, int32_t* tile) {
    const int32_t kb = round_up(a->K, GEMM_KG) / GEMM_KG;
    const int8_t* block = static_cast<const int8_t*>(a->data) + static_cast<size_t>(m0) * a->Kp;
    const size_t panel_bytes = static_cast<size_t>(kb) * ARM_PANEL_BYTES;
    for (int32_t c = 0; c < cols; c += ARM_PANEL)
        ukr_i8mm(block, arm_packed_b{b + static_cast<size_t>((n0 + c) / ARM_PANEL) * panel_bytes},
                 kb, tile + c);
}

CVML_TARGET_I8MM void tile_taps_i8mm(const gemm_weights* a, const int8_t* img, const int64_t* boff,
                                     int32_t m0, int32_t n0, int32_t cols, int32_t* tile) {
    const int32_t kb = round_up(a->K, GEMM_KG) / GEMM_KG;
    const int8_t* block = static_cast<const int8_t*>(a->data) + static_cast<size_t>(m0) * a->Kp;
    for (int32_t c = 0; c < cols; c += ARM_PANEL)
        ukr_i8mm(block, arm_taps_b{img + 4 * static_cast<int64_t>(n0 + c), boff}, kb, tile + c);
}

}  // namespace gemm_impl

#endif
