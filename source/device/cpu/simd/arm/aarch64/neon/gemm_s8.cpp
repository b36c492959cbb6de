/* The int8 GEMM at the aarch64 neon level (SMULL + SADALP), and B's packing shared by
 * the neon and dotprod levels.
 *
 * Layouts (both levels): the weights in blocks of GEMM_MR = 8 rows, each k4 step 32
 * bytes holding row r's 4 values at r * 4 (gemm_s8.cpp packs them); B in panels of 12
 * columns, each k4 step 48 bytes holding column c's 4 values at c * 4. Both are signed:
 * SDOT and SMULL multiply signed bytes, so no offset is needed.
 *
 * neon: a row's 4 bytes are repeated over a register; SMULL multiplies them with 2
 * columns' 4 values each into int16 products (exact: |-128 * -128| < 2^15), SADALP adds
 * each product pair into an int32 lane, wrapping, so a column has two partial sums,
 * added at the end (addition mod 2^32 in any order is exact). */
#include "device/cpu/simd/gemm_s8_impl.h"

#if CVML_SIMD_AARCH64
#include <arm_neon.h>
#include <string.h>

namespace gemm_impl {

void pack_group_arm(const int8_t* const rows[GEMM_KG], int32_t N, int32_t Kp, int32_t k4,
                    int8_t* packed) {
    const size_t panel_bytes = static_cast<size_t>(Kp / 4) * ARM_PANEL_BYTES;
    int8_t* base = packed + static_cast<size_t>(k4) * ARM_PANEL_BYTES;
    // Column n's 4 bytes of this step.
    auto column = [&](int32_t n) {
        return base + static_cast<size_t>(n / ARM_PANEL) * panel_bytes +
               static_cast<size_t>(n % ARM_PANEL) * 4;
    };
    int32_t n = 0;
    if (rows[0] && rows[1] && rows[2] && rows[3]) {
        // 16 columns at a time: byte-interleave rows 0/1 and 2/3, then the pairs, which
        // gives 4 columns' 4 values per register; a quad never straddles a panel.
        for (; n + 16 <= N; n += 16) {
            const int8x16x2_t z01 = vzipq_s8(vld1q_s8(rows[0] + n), vld1q_s8(rows[1] + n));
            const int8x16x2_t z23 = vzipq_s8(vld1q_s8(rows[2] + n), vld1q_s8(rows[3] + n));
            const int16x8x2_t lo =
                vzipq_s16(vreinterpretq_s16_s8(z01.val[0]), vreinterpretq_s16_s8(z23.val[0]));
            const int16x8x2_t hi =
                vzipq_s16(vreinterpretq_s16_s8(z01.val[1]), vreinterpretq_s16_s8(z23.val[1]));
            vst1q_s8(column(n), vreinterpretq_s8_s16(lo.val[0]));
            vst1q_s8(column(n + 4), vreinterpretq_s8_s16(lo.val[1]));
            vst1q_s8(column(n + 8), vreinterpretq_s8_s16(hi.val[0]));
            vst1q_s8(column(n + 12), vreinterpretq_s8_s16(hi.val[1]));
        }
    }
    // The rest, and the panel's padding columns (zeros; their sums are never used).
    const int32_t Np = round_up(N, ARM_PANEL);
    for (; n < Np; ++n) {
        int8_t* d = column(n);
        for (int i = 0; i < GEMM_KG; ++i) d[i] = rows[i] && n < N ? rows[i][n] : 0;
    }
}

namespace {

/* Rows r of the 4-row group held in `av` times the panel's 3 column quads. */
#define NEON_ROW(r)                                                                \
    do {                                                                           \
        const int8x16_t w = vreinterpretq_s8_s32(vdupq_laneq_s32(av, r));          \
        c##r##0 = vpadalq_s16(c##r##0, vmull_s8(vget_low_s8(b0), vget_low_s8(w))); \
        c##r##1 = vpadalq_s16(c##r##1, vmull_high_s8(b0, w));                      \
        c##r##2 = vpadalq_s16(c##r##2, vmull_s8(vget_low_s8(b1), vget_low_s8(w))); \
        c##r##3 = vpadalq_s16(c##r##3, vmull_high_s8(b1, w));                      \
        c##r##4 = vpadalq_s16(c##r##4, vmull_s8(vget_low_s8(b2), vget_low_s8(w))); \
        c##r##5 = vpadalq_s16(c##r##5, vmull_high_s8(b2, w));                      \
    } while (0)

#define NEON_STORE(r)                                                   \
    do {                                                                \
        vst1q_s32(out + (r)*GEMM_NT + 0, vpaddq_s32(c##r##0, c##r##1)); \
        vst1q_s32(out + (r)*GEMM_NT + 4, vpaddq_s32(c##r##2, c##r##3)); \
        vst1q_s32(out + (r)*GEMM_NT + 8, vpaddq_s32(c##r##4, c##r##5)); \
    } while (0)

/* 4 rows (a: their k4 steps 32 bytes apart) x one 12-column panel of B (step k4's 48
 * bytes at b.at(k4)). */
template <typename BSource>
inline void ukr_neon(const int8_t* a, BSource b, int32_t k4n, int32_t* out) {
    const int32x4_t z = vdupq_n_s32(0);
    int32x4_t c00 = z, c01 = z, c02 = z, c03 = z, c04 = z, c05 = z;
    int32x4_t c10 = z, c11 = z, c12 = z, c13 = z, c14 = z, c15 = z;
    int32x4_t c20 = z, c21 = z, c22 = z, c23 = z, c24 = z, c25 = z;
    int32x4_t c30 = z, c31 = z, c32 = z, c33 = z, c34 = z, c35 = z;
    for (int32_t k4 = 0; k4 < k4n; ++k4) {
        const int32x4_t av = vreinterpretq_s32_s8(vld1q_s8(a + static_cast<size_t>(k4) * 32));
        const int8_t* bk = b.at(k4);
        const int8x16_t b0 = vld1q_s8(bk), b1 = vld1q_s8(bk + 16), b2 = vld1q_s8(bk + 32);
        NEON_ROW(0);
        NEON_ROW(1);
        NEON_ROW(2);
        NEON_ROW(3);
    }
    NEON_STORE(0);
    NEON_STORE(1);
    NEON_STORE(2);
    NEON_STORE(3);
}

}  // namespace

void tile_neon(const gemm_weights* a, const int8_t* b, int32_t m0, int32_t n0, int32_t cols,
               int32_t* tile) {
    const int32_t k4n = a->Kp / 4;
    const int8_t* block = static_cast<const int8_t*>(a->data) + static_cast<size_t>(m0) * a->Kp;
    const size_t panel_bytes = static_cast<size_t>(k4n) * ARM_PANEL_BYTES;
    for (int32_t c = 0; c < cols; c += ARM_PANEL) {
        const arm_packed_b panel{b + static_cast<size_t>((n0 + c) / ARM_PANEL) * panel_bytes};
        ukr_neon(block, panel, k4n, tile + c);
        ukr_neon(block + 16, panel, k4n, tile + 4 * GEMM_NT + c);
    }
}

void tile_taps_neon(const gemm_weights* a, const int8_t* img, const int64_t* boff, int32_t m0,
                    int32_t n0, int32_t cols, int32_t* tile) {
    const int32_t k4n = a->Kp / 4;
    const int8_t* block = static_cast<const int8_t*>(a->data) + static_cast<size_t>(m0) * a->Kp;
    for (int32_t c = 0; c < cols; c += ARM_PANEL) {
        const arm_taps_b panel{img + 4 * static_cast<int64_t>(n0 + c), boff};
        ukr_neon(block, panel, k4n, tile + c);
        ukr_neon(block + 16, panel, k4n, tile + 4 * GEMM_NT + c);
    }
}

void interleave4_arm(const int8_t* const rows[4], int64_t lo, int64_t w, int64_t wq, int8_t* dst) {
    // Pixel j is rows[i][j - lo]: zeros left of lo and from lo + w on.
    const int64_t end = lo + w < wq ? lo + w : wq;
    int64_t j = 0;
    for (; j < lo && j < wq; ++j) memset(dst + 4 * j, 0, 4);
    const int8x16_t zero = vdupq_n_s8(0);
    for (; j + 16 <= end; j += 16) {
        const int64_t x = j - lo;
        const int8x16_t r0 = rows[0] ? vld1q_s8(rows[0] + x) : zero;
        const int8x16_t r1 = rows[1] ? vld1q_s8(rows[1] + x) : zero;
        const int8x16_t r2 = rows[2] ? vld1q_s8(rows[2] + x) : zero;
        const int8x16_t r3 = rows[3] ? vld1q_s8(rows[3] + x) : zero;
        const int8x16x2_t z01 = vzipq_s8(r0, r1), z23 = vzipq_s8(r2, r3);
        const int16x8x2_t a =
            vzipq_s16(vreinterpretq_s16_s8(z01.val[0]), vreinterpretq_s16_s8(z23.val[0]));
        const int16x8x2_t b =
            vzipq_s16(vreinterpretq_s16_s8(z01.val[1]), vreinterpretq_s16_s8(z23.val[1]));
        int8_t* d = dst + 4 * j;
        vst1q_s8(d, vreinterpretq_s8_s16(a.val[0]));
        vst1q_s8(d + 16, vreinterpretq_s8_s16(a.val[1]));
        vst1q_s8(d + 32, vreinterpretq_s8_s16(b.val[0]));
        vst1q_s8(d + 48, vreinterpretq_s8_s16(b.val[1]));
    }
    for (; j < wq; ++j)
        for (int i = 0; i < 4; ++i) {
            const int64_t x = j - lo;
            dst[4 * j + i] = rows[i] && x >= 0 && x < w ? rows[i][x] : 0;
        }
}

}  // namespace gemm_impl

#endif
