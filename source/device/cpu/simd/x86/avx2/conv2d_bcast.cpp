/* conv2d at avx2, groups == 1, broadcast mode (op/conv2d_gemm.cpp chooses it; see
 * gemm_bcast_mode in op/conv2d_fast.h): output channels along the vectors, each output
 * pixel's 4 image bytes broadcast, only the taps that read the input multiplied. The
 * avx512 kernel's design (simd/x86/avx512/conv2d_bcast.cpp) at half the width and with
 * half the registers: a segment is 7 pixels of one output row, and a block's 32 channels
 * are two pairs of vectors, each pair's pixels in two passes (below).
 *
 * The image holds x itself (this level's gemm_taps_zero is 0), and vpmaddubsw takes the
 * broadcast bytes as its unsigned operand. Where the image has no negative value (the
 * input is a relu's or a clip's output, as nearly every convolution's is) that is exact
 * as it is: a pair sum is within 2 * 127 * 128 = 32,512. Otherwise |x| is the unsigned
 * operand and the weights take x's sign (vpsignb), exact for weights within +-127, which
 * broadcast mode requires at this level (conv2d_gemm.cpp's bcast_fits). */
#include <string.h>

#include "device/cpu/op/conv2d_fast.h"
#include "device/cpu/simd/gemm_s8_impl.h"
#include "device/cpu/simd/x86/avx2/epilogue_avx2.h"
#include "device/cpu/simd/x86/avx2/madd_acc.h"

#if CVML_SIMD_X86
#include <immintrin.h>

namespace cpu_conv2d {
namespace {

/* Pixels per segment; a block's channels in pairs of vectors (16 channels), each pair's
 * pixels in two passes (kPassA and kPassB pixels) so that a pass's accumulators, the pair's
 * two weight vectors and a broadcast fit the 16 registers: per step of K a pass loads two
 * weight vectors and broadcasts 4 (3) pixels for 8 (6) products, as the GEMM's 4 x 16
 * micro-kernel does. One vector of 7 pixels (7 broadcasts for 7 products) ran at 70% of
 * the multiplier's peak. */
constexpr int kPixels = 7;
constexpr int kPassA = 4;
constexpr int kPassB = kPixels - kPassA;
constexpr int kPairs = GEMM_BCAST_BLOCK / 16;
/* A group of 4 input channels' weights for the whole block: 32 channels x 4 bytes. */
constexpr int64_t kGroupBytes = 4 * GEMM_BCAST_BLOCK;

/* Whether any byte of the image is negative (decides the kernel's form). */
CVML_TARGET_AVX2 bool image_has_negative(const uint8_t* img, int64_t n) {
    __m256i seen = _mm256_setzero_si256();
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
        seen = _mm256_or_si256(seen, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(img + i)));
    uint8_t rest = 0;
    for (; i < n; ++i) rest |= img[i];
    return _mm256_movemask_epi8(seen) != 0 || (rest & 0x80u) != 0;
}

/* Whether a tap skips pixel x of the segment (it reads padding there): the first pixel
 * for the left kernel column where the segment starts the row, the last for the right
 * one where it ends it. */
template <int Tap, bool Left, bool Right>
constexpr bool tap_skips(int x) {
    return (Tap == 0 && Left && x == 0) || (Tap == 2 && Right && x == kPixels - 1);
}

/* Where pass A's steps fetch ahead: the next block's weights, pf.step bytes further each
 * step; step 0: nothing (a step fetching the line it reads instead, as it once did,
 * made the 7x7 convs 2% slower). */
struct fetch_at {
    const int8_t* at;
    int64_t step;
};

/* The unsigned passes' loops as asm text. A step: the pair's weights of one group of 4
 * input channels (%[w0] and W1, a register or memory), each pixel's 4 bytes broadcast
 * from AT PIX and multiplied by both into the pixel's accumulators A0, A1. */
// clang-format off
#define CVML_BC_PIXEL(AT, PIX, W1, A0, A1)                           \
    "vpbroadcastd " AT PIX ", %[b]\n\t"                              \
    "vpmaddubsw %[w0], %[b], %[t]\n\t"                               \
    "vpmaddwd %[ones], %[t], %[t]\n\t"                               \
    "vpaddd %[t], %[" A0 "], %[" A0 "]\n\t"                          \
    "vpmaddubsw " W1 ", %[b], %[t]\n\t"                              \
    "vpmaddwd %[ones], %[t], %[t]\n\t"                               \
    "vpaddd %[t], %[" A1 "], %[" A1 "]\n\t"
/* Pixel x's offset (4 * S * x bytes) for X = S1 or S2, the column stride. */
#define CVML_BC_S1_1 "4"
#define CVML_BC_S1_2 "8"
#define CVML_BC_S1_3 "12"
#define CVML_BC_S2_1 "8"
#define CVML_BC_S2_2 "16"
#define CVML_BC_S2_3 "24"
#define CVML_BC_PIXELS3(PIX, W1, X)                                  \
    CVML_BC_PIXEL("", PIX, W1, "a00", "a01")                         \
    CVML_BC_PIXEL(CVML_BC_##X##_1, PIX, W1, "a10", "a11")            \
    CVML_BC_PIXEL(CVML_BC_##X##_2, PIX, W1, "a20", "a21")
#define CVML_BC_PIXELS4(PIX, W1, X)                                  \
    CVML_BC_PIXELS3(PIX, W1, X)                                      \
    CVML_BC_PIXEL(CVML_BC_##X##_3, PIX, W1, "a30", "a31")
#define CVML_BC_FETCH                                                \
    "prefetcht1 (%[pf])\n\t"                                         \
    "add %[pf_step], %[pf]\n\t"
/* Pass B's step (3 pixels): both weight vectors in registers. */
#define CVML_BC_STEP3(W, PIX, X)                                     \
    "vmovdqu " W "(%[w]), %[w0]\n\t"                                 \
    "vmovdqu " W "+32(%[w]), %[w1]\n\t"                              \
    CVML_BC_PIXELS3(PIX, "%[w1]", X)
/* Pass A's step (4 pixels, a fetch ahead where FETCH): the second weight vector read by
 * each product from L1, for want of asm operands (30 at most) to hold it. */
#define CVML_BC_STEP4(W, PIX, X, FETCH)                              \
    "vmovdqu " W "(%[w]), %[w0]\n\t"                                 \
    FETCH                                                            \
    CVML_BC_PIXELS4(PIX, W "+32(%[w])", X)
/* %[n] steps, unrolled twice (the second step's pixels one plane4 further, its weights
 * 128 bytes), an odd first step alone. */
#define CVML_BC_LOOP(STEP1, STEP2)                                   \
    "test $1, %[n]\n\t"                                              \
    "jz 2f\n\t"                                                      \
    STEP1                                                            \
    "add $128, %[w]\n\t"                                             \
    "add %[plane4], %[pix]\n\t"                                      \
    "2:\n\t"                                                         \
    "shr $1, %[n]\n\t"                                               \
    "jz 3f\n\t"                                                      \
    "1:\n\t"                                                         \
    STEP1                                                            \
    STEP2                                                            \
    "add $256, %[w]\n\t"                                             \
    "lea (%[pix],%[plane4],2), %[pix]\n\t"                           \
    "dec %[n]\n\t"                                                   \
    "jnz 1b\n\t"                                                     \
    "3:"
#define CVML_BC_LOOP4(X, FETCH)                                      \
    CVML_BC_LOOP(CVML_BC_STEP4("0", "(%[pix])", X, FETCH),           \
                 CVML_BC_STEP4("128", "(%[pix],%[plane4])", X, FETCH))
#define CVML_BC_LOOP3(X)                                             \
    CVML_BC_LOOP(CVML_BC_STEP3("0", "(%[pix])", X),                  \
                 CVML_BC_STEP3("128", "(%[pix],%[plane4])", X))
// clang-format on

/* A pass's steps on an image without negative values where no pixel is skipped (all
 * but the border segments' two edge taps), as one asm block per form: written with
 * madd_acc steps, GCC's register allocator kept accumulators outside the registers the
 * asm operands want and added copies (unrolled, copies and spills); these loops run the
 * 3 instructions a product, a broadcast a pixel, the weights' loads and a half of the
 * loop's bookkeeping. Pass A (4 pixels) fetches ahead where pf.step. */
template <int S>
CVML_TARGET_AVX2 inline __attribute__((always_inline)) void steps_4px(
    __m256i (&acc)[4][2], const uint8_t* pix, int64_t plane4, const int8_t* w, int64_t groups4,
    fetch_at pf) {
    const __m256i ones = _mm256_set1_epi16(1);
    int64_t n = groups4;
    __m256i w0, b, t;
#define CVML_BC_ASM4(X, FETCH)                                                            \
    __asm__(CVML_BC_LOOP4(X, FETCH)                                                       \
            : [a00] "+x"(acc[0][0]), [a01] "+x"(acc[0][1]), [a10] "+x"(acc[1][0]),        \
              [a11] "+x"(acc[1][1]), [a20] "+x"(acc[2][0]), [a21] "+x"(acc[2][1]),        \
              [a30] "+x"(acc[3][0]), [a31] "+x"(acc[3][1]), [w0] "=&x"(w0), [b] "=&x"(b), \
              [t] "=&x"(t), [w] "+r"(w), [pix] "+r"(pix), [n] "+r"(n), [pf] "+r"(pf.at)   \
            : [ones] "x"(ones), [plane4] "r"(plane4), [pf_step] "r"(pf.step)              \
            : "cc", "memory")
    if constexpr (S == 1) {
        if (pf.step)
            CVML_BC_ASM4(S1, CVML_BC_FETCH);
        else
            CVML_BC_ASM4(S1, "");
    } else {
        if (pf.step)
            CVML_BC_ASM4(S2, CVML_BC_FETCH);
        else
            CVML_BC_ASM4(S2, "");
    }
#undef CVML_BC_ASM4
}

template <int S>
CVML_TARGET_AVX2 inline __attribute__((always_inline)) void steps_3px(
    __m256i (&acc)[3][2], const uint8_t* pix, int64_t plane4, const int8_t* w, int64_t groups4) {
    const __m256i ones = _mm256_set1_epi16(1);
    int64_t n = groups4;
    __m256i w0, w1, b, t;
#define CVML_BC_ASM3(X)                                                                         \
    __asm__(                                                                                    \
        CVML_BC_LOOP3(X)                                                                        \
        : [a00] "+x"(acc[0][0]), [a01] "+x"(acc[0][1]), [a10] "+x"(acc[1][0]),                  \
          [a11] "+x"(acc[1][1]), [a20] "+x"(acc[2][0]), [a21] "+x"(acc[2][1]), [w0] "=&x"(w0),  \
          [w1] "=&x"(w1), [b] "=&x"(b), [t] "=&x"(t), [w] "+r"(w), [pix] "+r"(pix), [n] "+r"(n) \
        : [ones] "x"(ones), [plane4] "r"(plane4)                                                \
        : "cc", "memory")
    if constexpr (S == 1)
        CVML_BC_ASM3(S1);
    else
        CVML_BC_ASM3(S2);
#undef CVML_BC_ASM3
}
#undef CVML_BC_S2_3
#undef CVML_BC_S2_2
#undef CVML_BC_S2_1
#undef CVML_BC_S1_3
#undef CVML_BC_S1_2
#undef CVML_BC_S1_1
#undef CVML_BC_LOOP3
#undef CVML_BC_LOOP4
#undef CVML_BC_LOOP
#undef CVML_BC_STEP4
#undef CVML_BC_STEP3
#undef CVML_BC_FETCH
#undef CVML_BC_PIXELS4
#undef CVML_BC_PIXELS3
#undef CVML_BC_PIXEL

/* One tap over every group of 4 input channels for one pass (pixels X0 .. X0 + P - 1 of
 * the segment) and one pair of vectors: pixel x's bytes of group g4 at row + 4 * Tap +
 * g4 * plane4 + 4 * S * x (S: the column stride), the pair's weights of that group at w
 * + g4 * kGroupBytes. The accumulators are an array indexed by constants only, every
 * loop over them unrolled, so they live in registers. */
template <int S, int X0, int P, int Tap, bool Left, bool Right, bool Signed>
CVML_TARGET_AVX2 inline __attribute__((always_inline)) void tap_steps(
    __m256i (&acc)[P][2], const uint8_t* row, int64_t plane4, const int8_t* w, int64_t groups4,
    fetch_at pf) {
    const __m256i ones = _mm256_set1_epi16(1);
    const uint8_t* pix = row + 4 * Tap + 4 * S * X0;
    constexpr bool skips =
        tap_skips<Tap, Left, Right>(X0) || tap_skips<Tap, Left, Right>(X0 + P - 1);
    if constexpr (!Signed && !skips && P == 4) {
        steps_4px<S>(acc, pix, plane4, w, groups4, X0 == 0 ? pf : fetch_at{nullptr, 0});
        return;
    } else if constexpr (!Signed && !skips && P == 3) {
        steps_3px<S>(acc, pix, plane4, w, groups4);
        return;
    }
    for (int64_t g4 = 0; g4 < groups4; ++g4, w += kGroupBytes, pix += plane4) {
        const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
        const __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 32));
        if (X0 == 0 && pf.step) {
            _mm_prefetch(reinterpret_cast<const char*>(pf.at), _MM_HINT_T1);
            pf.at += pf.step;
        }
#pragma GCC unroll 4
        for (int x = 0; x < P; ++x) {
            if (tap_skips<Tap, Left, Right>(X0 + x)) continue;
            int32_t bytes;
            memcpy(&bytes, pix + 4 * S * x, 4);
            const __m256i b = _mm256_set1_epi32(bytes);
            // In a fixed order (madd_acc.h): GCC's own order kept an accumulator in
            // the stack.
            if (Signed) {
                const __m256i u = _mm256_abs_epi8(b);
                cpu_avx2::madd_acc_signed(acc[x][0], u, b, w0, ones);
                cpu_avx2::madd_acc_signed(acc[x][1], u, b, w1, ones);
            } else {
                cpu_avx2::madd_acc(acc[x][0], b, w0, ones);
                cpu_avx2::madd_acc(acc[x][1], b, w1, ones);
            }
        }
    }
}

/* The border class of output row y (gemm_bcast_mode::starts): 0 where the first kernel
 * row reads padding, 2 where the last one does, else 1. */
inline int64_t row_class(const conv_geom& g, int64_t y) {
    return y == 0 ? 0 : y * g.sh + 1 >= g.h ? 2 : 1;
}

/* r[i] lane j becomes r[j] lane i (8 x 8 int32). */
CVML_TARGET_AVX2 inline __attribute__((always_inline)) void transpose8(__m256i (&r)[8]) {
    __m256i t[8], u[8];
#pragma GCC unroll 4
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_epi32(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_epi32(r[i], r[i + 1]);
    }
    // u[4a + j], each 128-bit half: rows 4a..4a+3 at column 4 * half + j.
#pragma GCC unroll 2
    for (int a = 0; a < 8; a += 4) {
        u[a] = _mm256_unpacklo_epi64(t[a], t[a + 2]);
        u[a + 1] = _mm256_unpackhi_epi64(t[a], t[a + 2]);
        u[a + 2] = _mm256_unpacklo_epi64(t[a + 1], t[a + 3]);
        u[a + 3] = _mm256_unpackhi_epi64(t[a + 1], t[a + 3]);
    }
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
        r[j] = _mm256_permute2x128_si256(u[j], u[4 + j], 0x20);
        r[4 + j] = _mm256_permute2x128_si256(u[j], u[4 + j], 0x31);
    }
}

/* Where a segment's sums go: the GEMM's fused tail (gemm_tail: the matched chain,
 * saturating int8 output, each channel's bias added first) with its constants, or the
 * tile for the plan's tile function. */
struct segment_out {
    int32_t kind; /* gemm_tail::kind, 0: the tile */
    cpu_ep::rc_chain c;
    cpu_ep::rc_consts8 k;
    cpu_ep::rc_shape shape; /* c's */
    /* A shift_clip_add chain whose first clip lies within int8: the residual add runs on
     * bytes (tail_shift_clip). */
    bool add_bytes;
    const int32_t* bias; /* the tail's, at the block's first channel; NULL: none */
    int32_t addend;      /* added to each channel's bias (gemm_tail::addend) */
    int8_t* out;
    int64_t at;     /* channel 0, pixel 0 of the segment */
    int64_t stride; /* between channels */
    /* Output pixel 7 of the segment is the next segment's, which this thread writes after
     * it: each channel's 7 bytes may be stored as 8. */
    bool room;
    int32_t* tile; /* [channel][16] */
};

/* Four channels' bytes (one 8-byte word each in q: pixels 0..6, then a byte of no use)
 * into the output, channel ch[i] from q's word i. With room, each word is stored from its
 * register half (vmovq / vmovhps): through a buffer in the stack, the 56x56 convs took
 * 1.7% longer on Zen 3. */
CVML_TARGET_AVX2 inline void store_words(const segment_out& o, __m256i q, const int (&ch)[4]) {
    const auto at = [&o, &ch](int i) { return o.out + o.at + ch[i] * o.stride; };
    if (o.room) {
        const __m128i lo = _mm256_castsi256_si128(q), hi = _mm256_extracti128_si256(q, 1);
        _mm_storel_epi64(reinterpret_cast<__m128i*>(at(0)), lo);
        _mm_storeh_pi(reinterpret_cast<__m64*>(at(1)), _mm_castsi128_ps(lo));
        _mm_storel_epi64(reinterpret_cast<__m128i*>(at(2)), hi);
        _mm_storeh_pi(reinterpret_cast<__m64*>(at(3)), _mm_castsi128_ps(hi));
        return;
    }
    // Bytes 0..3 and 3..6: the last segment of a row stores exactly 7.
    alignas(32) uint64_t w[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(w), q);
    for (int i = 0; i < 4; ++i) {
        const uint32_t head = static_cast<uint32_t>(w[i]);
        const uint32_t tail = static_cast<uint32_t>(w[i] >> 24);
        memcpy(at(i), &head, 4);
        memcpy(at(i) + 3, &tail, 4);
    }
}

/* Eight channels' values (within int8), channel c's 8 pixels in s[c], as bytes into the
 * output: signed saturating packs (exact there), each channel one 8-byte word. */
CVML_TARGET_AVX2 inline void store_channels(const segment_out& o, const __m256i (&s)[8], int c0) {
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    for (int h = 0; h < 2; ++h) {
        const __m256i* v = s + 4 * h;
        // Per 128-bit half: pixels 0..3 (4..7) of channels 0..3 of the four, then in order.
        const __m256i b =
            _mm256_packs_epi16(_mm256_packs_epi32(v[0], v[1]), _mm256_packs_epi32(v[2], v[3]));
        const int ch[4] = {c0 + 4 * h, c0 + 4 * h + 1, c0 + 4 * h + 2, c0 + 4 * h + 3};
        store_words(o, _mm256_permutevar8x32_epi32(b, order), ch);
    }
}

/* Four channels' residual bytes (the add's int8 operand at the output's indices), channel
 * ch[i]'s 7 as word i, its eighth byte of no use. With room, loaded into the register's
 * halves (vmovq / vmovhps), as store_words stores. */
CVML_TARGET_AVX2 inline __m256i load_words(const segment_out& o, const int (&ch)[4]) {
    const uint8_t* src = static_cast<const uint8_t*>(o.c.add->src) + o.at;
    const auto at = [src, &o, &ch](int i) { return src + ch[i] * o.stride; };
    const auto half = [&at](int i) {
        const __m128i low = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(at(i)));
        return _mm_castps_si128(
            _mm_loadh_pi(_mm_castsi128_ps(low), reinterpret_cast<const __m64*>(at(i + 1))));
    };
    if (o.room) return _mm256_inserti128_si256(_mm256_castsi128_si256(half(0)), half(2), 1);
    int64_t w[4];
    for (int i = 0; i < 4; ++i) w[i] = static_cast<int64_t>(cpu_ep::load_bytes_lt8(at(i), kPixels));
    return _mm256_setr_epi64x(w[0], w[1], w[2], w[3]);
}

/* The residual add and its clip on four channels' words of bytes (q: the round and
 * clip's values, within int8 where o.add_bytes holds): a saturating byte add, then the
 * clip's lower bound. Exact because that clip's bounds lie within int8 and its upper one
 * is 127 (rc_saturates_to_i8), where the add saturates. */
CVML_TARGET_AVX2 inline __m256i add_clip_words(const segment_out& o, __m256i q,
                                               const int (&ch)[4]) {
    const __m256i sum = _mm256_adds_epi8(q, load_words(o, ch));
    return _mm256_max_epi8(sum, _mm256_set1_epi8(static_cast<char>(o.c.lo2)));
}

/* The round and its clip on pixel-major sums (px[x]: pixel x's 8 channels from c0), the
 * bias one vector of the 8 channels' (the same operations on the same values as on
 * channel-major ones), then transposed as bytes: no 8 x 8 int32 transpose. Then, where
 * the chain has one and o.add_bytes, the residual add and its clip on those bytes. */
CVML_TARGET_AVX2 inline void tail_shift_clip(const segment_out& o,
                                             const __m256i (&sums)[kPixels][2], int v, int c0) {
    const __m256i bias =
        _mm256_add_epi32(o.bias ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(o.bias + c0))
                                : _mm256_setzero_si256(),
                         _mm256_set1_epi32(o.addend));
    __m256i px[8];
#pragma GCC unroll 7
    for (int x = 0; x < kPixels; ++x)
        px[x] = cpu_ep::rc_apply8_as<cpu_ep::rc_shape::shift_clip>(
            o.c, o.k, _mm256_add_epi32(sums[x][v], bias), 0, 8);
    px[7] = _mm256_setzero_si256();
    // Per 128-bit half (channels 0..3, 4..7): pixels 0..3 (a) and 4..7 (b) of its four
    // channels, pixel-major bytes; then channel-major within the half.
    const __m256i a =
        _mm256_packs_epi16(_mm256_packs_epi32(px[0], px[1]), _mm256_packs_epi32(px[2], px[3]));
    const __m256i b =
        _mm256_packs_epi16(_mm256_packs_epi32(px[4], px[5]), _mm256_packs_epi32(px[6], px[7]));
    const __m256i by_channel =
        _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15, 0, 4, 8, 12, 1, 5, 9,
                         13, 2, 6, 10, 14, 3, 7, 11, 15);
    const __m256i ca = _mm256_shuffle_epi8(a, by_channel);
    const __m256i cb = _mm256_shuffle_epi8(b, by_channel);
    // Words: channels 0, 1, 4, 5 and 2, 3, 6, 7.
    const int lo[4] = {c0, c0 + 1, c0 + 4, c0 + 5}, hi[4] = {c0 + 2, c0 + 3, c0 + 6, c0 + 7};
    __m256i lo_words = _mm256_unpacklo_epi32(ca, cb), hi_words = _mm256_unpackhi_epi32(ca, cb);
    if (o.add_bytes) {
        lo_words = add_clip_words(o, lo_words, lo);
        hi_words = add_clip_words(o, hi_words, hi);
    }
    store_words(o, lo_words, lo);
    store_words(o, hi_words, hi);
}

/* Any other chain (a residual add reads its operand channel by channel) on the
 * transposed sums, lanes[c]: channel c0 + c's pixels. */
template <cpu_ep::rc_shape S>
CVML_TARGET_AVX2 inline void tail_channels(const segment_out& o, __m256i (&lanes)[8], int c0) {
#pragma GCC unroll 8
    for (int c = 0; c < 8; ++c) {
        const int64_t at = o.at + (c0 + c) * o.stride;
        __m256i s = lanes[c];
        s = _mm256_add_epi32(s, _mm256_set1_epi32(cpu_ep::rc_bias_plus(o.bias, c0 + c, o.addend)));
        lanes[c] = cpu_ep::rc_apply8_as<S>(o.c, o.k, s, at, kPixels);
    }
    store_channels(o, lanes, c0);
}

/* A pair's sums (pixel x's 16 channels in sums[x][0], sums[x][1]) through the tail into
 * the output, or made one vector of 7 pixels per channel into the tile; the pair's first
 * channel is 16 * pair. Out of line: the segments have 16 copies (stride, edges, signs),
 * and each copy of the tail's three forms made the wide layers slower. */
CVML_TARGET_AVX2 __attribute__((noinline)) void store_pair(const __m256i (&sums)[kPixels][2],
                                                           int pair, const segment_out& o) {
    for (int v = 0; v < 2; ++v) {
        const int c0 = 16 * pair + 8 * v;
        if (o.kind && (o.shape == cpu_ep::rc_shape::shift_clip || o.add_bytes)) {
            tail_shift_clip(o, sums, v, c0);
            continue;
        }
        __m256i lanes[8];
#pragma GCC unroll 7
        for (int x = 0; x < kPixels; ++x) lanes[x] = sums[x][v];
        lanes[7] = _mm256_setzero_si256();
        transpose8(lanes);  // lanes[c]: channel c0 + c, lane x: pixel x
        if (!o.kind) {
#pragma GCC unroll 8
            for (int c = 0; c < 8; ++c)
                _mm256_store_si256(reinterpret_cast<__m256i*>(o.tile + 16 * (c0 + c)), lanes[c]);
        } else if (o.shape == cpu_ep::rc_shape::shift_clip_add) {
            tail_channels<cpu_ep::rc_shape::shift_clip_add>(o, lanes, c0);
        } else {
            tail_channels<cpu_ep::rc_shape::any>(o, lanes, c0);
        }
    }
}

/* Where a pass reads: the image, the pair's weights and starts, the segment (7 pixels
 * from x0 of output row y). */
struct pass_at {
    const conv_gemm* f;
    const uint8_t* img;
    const int8_t* w;
    const int32_t* starts; /* the pair's first channel's, class 0 */
    int64_t y, x0;
    int pair;
    /* Where pass A fetches the next block's weights into L2: the segment's slice
     * (fetch_slices), or nothing (step 0). */
    fetch_at slice;
};

/* One pass (pixels X0 .. X0 + P - 1 of the segment) over one tap (its weights at w), its
 * accumulators taken from sums and put back. A segment alternates its two passes tap by
 * tap, so the tap's weights (8 KB for 512 input channels) are read from L1 by the
 * second: passes over all taps each read a 512-channel pair's 73 KB from L2. */
template <int S, int X0, int P, int Tap, bool Left, bool Right, bool Signed>
CVML_TARGET_AVX2 inline __attribute__((always_inline)) void tap_pass(__m256i (&sums)[kPixels][2],
                                                                     const uint8_t* row,
                                                                     int64_t plane4,
                                                                     const int8_t* w,
                                                                     int64_t groups4, fetch_at pf) {
    __m256i acc[P][2];
#pragma GCC unroll 4
    for (int x = 0; x < P; ++x) {
        acc[x][0] = sums[X0 + x][0];
        acc[x][1] = sums[X0 + x][1];
    }
    tap_steps<S, X0, P, Tap, Left, Right, Signed>(acc, row, plane4, w, groups4, pf);
#pragma GCC unroll 4
    for (int x = 0; x < P; ++x) {
        sums[X0 + x][0] = acc[x][0];
        sums[X0 + x][1] = acc[x][1];
    }
}

/* Both passes of one tap. */
template <int S, int Tap, bool Left, bool Right, bool Signed>
CVML_TARGET_AVX2 inline __attribute__((always_inline)) void tap_both(__m256i (&sums)[kPixels][2],
                                                                     const uint8_t* row,
                                                                     int64_t plane4,
                                                                     const int8_t* w,
                                                                     int64_t groups4, fetch_at pf) {
    tap_pass<S, 0, kPassA, Tap, Left, Right, Signed>(sums, row, plane4, w, groups4, pf);
    tap_pass<S, kPassA, kPassB, Tap, Left, Right, Signed>(sums, row, plane4, w, groups4, pf);
}

/* Tap t's pass A fetch for the pass at at: the segment's slice walked through its
 * 2 x 9 x groups4 steps, pair by pair. */
inline fetch_at fetch_of(const pass_at& at, int64_t t) {
    if (!at.slice.step) return at.slice;
    const int64_t groups4 = at.f->taps4.groups4;
    return {at.slice.at + (at.pair * 9 + t) * groups4 * at.slice.step, at.slice.step};
}

/* A pair's sums over a segment (a 3x3 kernel: this level takes no 1x1 ones,
 * simd_config.h's bcast_1x1), from its starts (the pixels' border classes).
 * Left / Right: the segment's first / last pixel's taps of the left / right kernel
 * column read padding (the segment starts / ends the row). Only those two taps skip a
 * pixel; every other tap is the same loop at another column (tap t of a kernel row reads
 * from row + 4 * t), so the kernel rows and taps are loops rather than unrolled copies:
 * with a copy of the tap loops per tap, a 56-wide row ran some 2,500 instructions of
 * them, and on a Zen 3 whose core the host shared with another guest every conv was 2-3%
 * slower than with this form's few hundred (the two forms alternated inference by
 * inference; docs/perf-log.md). */
template <int S, bool Left, bool Right, bool Signed>
CVML_TARGET_AVX2 void pair_3x3(const pass_at& at, __m256i (&sums)[kPixels][2]) {
    const conv_geom& g = at.f->g;
    const int64_t rc = 3 * row_class(g, at.y);
#pragma GCC unroll 7
    for (int x = 0; x < kPixels; ++x) {
        const int64_t col = Left && x == 0 ? 0 : Right && x == kPixels - 1 ? 2 : 1;
        const int32_t* s = at.starts + (rc + col) * g.o;
        sums[x][0] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s));
        sums[x][1] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 8));
    }
    const int64_t groups4 = at.f->taps4.groups4, plane4 = at.f->bcast.plane4;
    const size_t tap_bytes = static_cast<size_t>(groups4 * kGroupBytes);
#pragma GCC unroll 1
    for (int r = 0; r < 3; ++r) {
        // Pixel x, tap t: input row y * sh + r - 1, column (x0 + x) * S + t - 1.
        const int64_t iy = at.y * g.sh + r - 1;
        if (iy < 0 || iy >= g.h) continue;
        const uint8_t* row = at.img + (iy * g.w + at.x0 * S - 1) * 4;
#pragma GCC unroll 1
        for (int t = 0; t < 3; ++t) {
            const int8_t* w = at.w + (3 * r + t) * tap_bytes;
            const fetch_at pf = fetch_of(at, 3 * r + t);
            if (Left && t == 0)
                tap_both<S, 0, true, false, Signed>(sums, row, plane4, w, groups4, pf);
            else if (Right && t == 2)
                tap_both<S, 2, false, true, Signed>(sums, row, plane4, w, groups4, pf);
            else
                tap_both<S, 0, false, false, Signed>(sums, row + 4 * t, plane4, w, groups4, pf);
        }
    }
}

/* A segment's sums, pair by pair. */
template <int S, bool Left, bool Right, bool Signed>
CVML_TARGET_AVX2 void segment(const conv_gemm* f, const uint8_t* img, const int8_t* wblock,
                              fetch_at slice, const int32_t* starts, int64_t y, int64_t x0,
                              const segment_out& o) {
    for (int pair = 0; pair < kPairs; ++pair) {
        const pass_at at = {f, img, wblock + 64 * pair, starts + 16 * pair, y, x0, pair, slice};
        __m256i sums[kPixels][2];
        pair_3x3<S, Left, Right, Signed>(at, sums);
        store_pair(sums, pair, o);
    }
}

/* A block's weights come from memory for its first row and from L2 for the others (147
 * KB for 512 channels): rows 1 .. kFetchRows fetch the next block's, each segment of them
 * a slice, its pass A steps a slice's line every 64 / slices of them (the same line fetched
 * again in between costs a load slot, no traffic). Fetched by one row, the 7x7 layers'
 * next block arrived late and stalled that row (Zen 3 keeps some two dozen misses in
 * flight: the stream asked for a line every 8 cycles). Slices: a power of two, so that a
 * step's share of a line is whole bytes. */
constexpr int64_t kFetchRows = 4;

inline int64_t fetch_slices(int64_t ow) {
    int64_t slices = 1;
    while (2 * slices <= kFetchRows * (ow / kPixels) && 2 * slices <= 64) slices *= 2;
    return slices;
}

/* Output row y of one block, segment by segment. */
template <int S, bool Signed>
CVML_TARGET_AVX2 void row_segments(const conv_gemm* f, const uint8_t* img, const bcast_out* b,
                                   segment_out* o, const int32_t* bias, int64_t block, int64_t y) {
    const conv_geom& g = f->g;
    const int64_t o0 = block * GEMM_BCAST_BLOCK;
    const size_t block_bytes =
        static_cast<size_t>(f->bcast.taps) * static_cast<size_t>(f->taps4.groups4 * kGroupBytes);
    const int8_t* wblock = f->bcast.w + static_cast<size_t>(block) * block_bytes;
    const int32_t* starts = f->bcast.starts + o0;
    o->bias = bias ? bias + o0 : nullptr;
    const int64_t slices = fetch_slices(g.ow);
    const bool has_next = (block + 1) * GEMM_BCAST_BLOCK < g.o;
    for (int64_t x0 = 0; x0 < g.ow; x0 += kPixels) {
        fetch_at slice = {nullptr, 0};
        const int64_t unit = (y - 1) * (g.ow / kPixels) + x0 / kPixels;
        if (has_next && unit >= 0 && unit < slices)
            slice = {wblock + block_bytes + unit * (static_cast<int64_t>(block_bytes) / slices),
                     64 / slices};
        const int64_t first = b->out_base + o0 * f->N + y * g.ow + x0;
        o->at = first;
        o->room = x0 + kPixels < g.ow;
        const bool left = x0 == 0, right = (x0 + kPixels - 1) * S + 1 >= g.w;
        if (left && right)
            segment<S, true, true, Signed>(f, img, wblock, slice, starts, y, x0, *o);
        else if (left)
            segment<S, true, false, Signed>(f, img, wblock, slice, starts, y, x0, *o);
        else if (right)
            segment<S, false, true, Signed>(f, img, wblock, slice, starts, y, x0, *o);
        else
            segment<S, false, false, Signed>(f, img, wblock, slice, starts, y, x0, *o);
        if (!o->kind)
            epilogue_apply_tile_planned(b->plan, o->tile, 16, GEMM_BCAST_BLOCK, &f->bcast.keep,
                                        b->bias ? b->bias + o0 : nullptr, b->out, first, f->N);
    }
}

template <bool Signed>
void items(const conv_gemm* f, const uint8_t* img, const bcast_out* b, segment_out* o,
           const int32_t* bias, int64_t begin, int64_t end) {
    const int64_t blocks = f->g.o / GEMM_BCAST_BLOCK, rows = f->bcast.row_items;
    for (int64_t item = begin; item < end; ++item) {
        const int64_t block = f->bcast.rows_first ? item % blocks : item / rows;
        const int64_t row = f->bcast.rows_first ? item / blocks : item % rows;
        if (f->g.sw == 1)
            row_segments<1, Signed>(f, img, b, o, bias, block, row);
        else
            row_segments<2, Signed>(f, img, b, o, bias, block, row);
    }
}

/* Whether the input rows that items [begin, end) read hold a negative value: the form
 * is chosen per thread (both are exact), each scanning only its own rows where its items
 * lie in one block or go rows first (a few microseconds on ResNet-18's largest image,
 * which each thread had scanned whole), rather than the image's builders passing a flag
 * across threads. */
bool reads_negative(const conv_gemm* f, const uint8_t* img, int64_t begin, int64_t end) {
    const conv_geom& g = f->g;
    const int64_t blocks = g.o / GEMM_BCAST_BLOCK, rows = f->bcast.row_items;
    int64_t y0 = 0, y1 = rows - 1;  // the output rows the items compute
    if (f->bcast.rows_first) {
        y0 = begin / blocks;
        y1 = (end - 1) / blocks;
    } else if (begin / rows == (end - 1) / rows) {
        y0 = begin % rows;
        y1 = (end - 1) % rows;
    }
    // A 3x3 kernel with a padding of 1 (bcast_fits).
    const int64_t lo = y0 * g.sh - 1 < 0 ? 0 : y0 * g.sh - 1;
    const int64_t hi = y1 * g.sh + 1 >= g.h ? g.h - 1 : y1 * g.sh + 1;
    const int64_t plane4 = f->bcast.plane4, row4 = g.w * 4;
    for (int64_t grp = 0; grp < f->taps4.groups4; ++grp)
        if (image_has_negative(img + grp * plane4 + lo * row4, (hi - lo + 1) * row4)) return true;
    return false;
}

}  // namespace

void bcast_items_avx2(const conv_gemm* f, const uint8_t* img, const bcast_out* b, int64_t begin,
                      int64_t end) {
    // Rows of 16 as the avx512 kernel's tile (the tile functions read a row as GEMM_NT
    // values, so the last row's reads run past the block: never kept).
    alignas(32) int32_t tile[GEMM_BCAST_BLOCK * 16 + GEMM_NT - 16] = {};
    segment_out o;
    memset(&o, 0, sizeof o);
    o.tile = tile;
    o.stride = f->N;
    const int32_t* bias = nullptr;
    if (b->tail && b->tail->kind) {
        o.kind = b->tail->kind;
        memcpy(&o.c, b->tail->chain, sizeof o.c);
        o.k = cpu_ep::rc_consts8_of(o.c);
        o.shape = cpu_ep::rc_shape_of(o.c);
        o.add_bytes =
            o.shape == cpu_ep::rc_shape::shift_clip_add && o.c.lo >= -128 && o.c.hi <= 127;
        o.out = b->tail->out;
        bias = b->tail->bias;
        o.addend = b->tail->addend;
    }
    if (reads_negative(f, img, begin, end))
        items<true>(f, img, b, &o, bias, begin, end);
    else
        items<false>(f, img, b, &o, bias, begin, end);
}

}  // namespace cpu_conv2d

#endif
