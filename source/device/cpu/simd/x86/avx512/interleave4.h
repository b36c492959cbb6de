/* Four byte rows interleaved for vpdpbusd, whose unsigned operand takes 4 consecutive
 * bytes per 32-bit lane: shared by the GEMM's B packing, conv2d's channel-interleaved
 * image and the depthwise kernel. */
#pragma once

#include "device/cpu/simd/simd.h"

#if CVML_SIMD_X86
#include <immintrin.h>

/* 64 columns of 4 rows r0..r3: panel L of p holds columns 16L..16L+15, each as the 4
 * rows' bytes in order, XOR 0x80 (the +128 that makes int8 values unsigned). Byte and
 * word unpacks interleave within 128-bit lanes, so lane L of the q's holds columns
 * 16L..16L+15 in four quarters; a 4 x 4 transpose of lanes makes panel L. */
CVML_TARGET_AVX512 inline __attribute__((always_inline)) void interleave4_panels(
    __m512i r0, __m512i r1, __m512i r2, __m512i r3, __m512i p[4]) {
    const __m512i p01l = _mm512_unpacklo_epi8(r0, r1), p01h = _mm512_unpackhi_epi8(r0, r1);
    const __m512i p23l = _mm512_unpacklo_epi8(r2, r3), p23h = _mm512_unpackhi_epi8(r2, r3);
    const __m512i q0 = _mm512_unpacklo_epi16(p01l, p23l), q1 = _mm512_unpackhi_epi16(p01l, p23l);
    const __m512i q2 = _mm512_unpacklo_epi16(p01h, p23h), q3 = _mm512_unpackhi_epi16(p01h, p23h);
    const __m512i t0 = _mm512_shuffle_i64x2(q0, q1, 0x44), t1 = _mm512_shuffle_i64x2(q2, q3, 0x44);
    const __m512i t2 = _mm512_shuffle_i64x2(q0, q1, 0xEE), t3 = _mm512_shuffle_i64x2(q2, q3, 0xEE);
    const __m512i off = _mm512_set1_epi8(static_cast<char>(0x80));
    p[0] = _mm512_xor_si512(_mm512_shuffle_i64x2(t0, t1, 0x88), off);
    p[1] = _mm512_xor_si512(_mm512_shuffle_i64x2(t0, t1, 0xDD), off);
    p[2] = _mm512_xor_si512(_mm512_shuffle_i64x2(t2, t3, 0x88), off);
    p[3] = _mm512_xor_si512(_mm512_shuffle_i64x2(t2, t3, 0xDD), off);
}
#endif
