/* conv2d at avx2, groups == 1, broadcast mode (op/conv2d_gemm.cpp chooses it; see
 * gemm_bcast_mode in op/conv2d_fast.h): output channels along the vectors, each output
 * pixel's 4 image bytes broadcast, only the taps that read the input multiplied. The
 * avx512 kernel's design (simd/x86/avx512/conv2d_bcast.cpp) at half the width and with
 * half the registers: a segment is 7 pixels of one output row, and a block's 32 channels
 * are 4 vectors, the segment's pixels in three passes over all 4 (below).
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

/* Pixels per segment, and a block's 32 channels as 4 vectors; a segment's pixels in
 * passes of 3, 3 and 1 (tap_passes) over all 4 vectors, so that a pass's 12 (4) accumulators,
 * a broadcast, a product and the ones fit the 16 registers: each product reads its
 * weights from L1 as vpmaddubsw's memory operand, and a step of K broadcasts a pixel for
 * 4 products (3 instructions each). The passes over pairs of vectors they replaced (4 and
 * 3 pixels, a broadcast for 2 products) ran 4.1 instructions a product against 3.6. One
 * vector of 7 pixels (7 broadcasts for 7 products) ran at 70% of the multiplier's peak. */
constexpr int kPixels = 7;
constexpr int kVecs = GEMM_BCAST_BLOCK / 8;
static_assert(kVecs == 4, "the asm passes below name 4 accumulators a pixel");
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

/* The unsigned passes as asm text, each a whole pass: its accumulators loaded from the
 * segment's sums (ymm4 .. ymm15: pixel x's 4 vectors in ymm(4 + 4x) ..), its steps, and
 * the sums stored back. Named registers rather than operands: a 3-pixel pass's 12
 * accumulators as "+x" operands would be 24 of an asm statement's 30. A step: one group
 * of 4 input channels, each pixel's 4 bytes broadcast from AT PIX (ymm0) and multiplied
 * by the group's 4 weight vectors, read by vpmaddubsw from memory W bytes past %[w]
 * (ymm1 the product, ymm2 the ones). */
// clang-format off
#define CVML_BC_PRODUCT(W, A)                                        \
    "vpmaddubsw " W "(%[w]), %%ymm0, %%ymm1\n\t"                     \
    "vpmaddwd %%ymm2, %%ymm1, %%ymm1\n\t"                            \
    "vpaddd %%ymm1, %%" A ", %%" A "\n\t"
#define CVML_BC_PIXEL(AT, PIX, W, A0, A1, A2, A3)                    \
    "vpbroadcastd " AT PIX ", %%ymm0\n\t"                            \
    CVML_BC_PRODUCT(W, A0)                                           \
    CVML_BC_PRODUCT(W "+32", A1)                                     \
    CVML_BC_PRODUCT(W "+64", A2)                                     \
    CVML_BC_PRODUCT(W "+96", A3)
/* Pixel x's offset (4 * S * x bytes) for X = S1 or S2, the column stride. */
#define CVML_BC_S1_1 "4"
#define CVML_BC_S1_2 "8"
#define CVML_BC_S2_1 "8"
#define CVML_BC_S2_2 "16"
#define CVML_BC_PIXELS3(W, PIX, X)                                   \
    CVML_BC_PIXEL("", PIX, W, "ymm4", "ymm5", "ymm6", "ymm7")        \
    CVML_BC_PIXEL(CVML_BC_##X##_1, PIX, W, "ymm8", "ymm9", "ymm10", "ymm11") \
    CVML_BC_PIXEL(CVML_BC_##X##_2, PIX, W, "ymm12", "ymm13", "ymm14", "ymm15")
#define CVML_BC_PIXELS1(W, PIX, X)                                   \
    CVML_BC_PIXEL("", PIX, W, "ymm4", "ymm5", "ymm6", "ymm7")
#define CVML_BC_FETCH                                                \
    "prefetcht1 (%[pf])\n\t"                                         \
    "add %[pf_step], %[pf]\n\t"
/* The ones (16-bit) in ymm2. */
#define CVML_BC_ONES                                                 \
    "vpcmpeqw %%ymm2, %%ymm2, %%ymm2\n\t"                            \
    "vpsrlw $15, %%ymm2, %%ymm2\n\t"
/* MOVE(offset, register) for each of a pass's accumulators. */
#define CVML_BC_EACH1(MOVE)                                          \
    MOVE("0", "ymm4") MOVE("32", "ymm5") MOVE("64", "ymm6") MOVE("96", "ymm7")
#define CVML_BC_EACH3(MOVE)                                          \
    CVML_BC_EACH1(MOVE)                                              \
    MOVE("128", "ymm8") MOVE("160", "ymm9") MOVE("192", "ymm10") MOVE("224", "ymm11") \
    MOVE("256", "ymm12") MOVE("288", "ymm13") MOVE("320", "ymm14") MOVE("352", "ymm15")
#define CVML_BC_LOAD(OFF, R) "vmovdqu " OFF "(%[s]), %%" R "\n\t"
#define CVML_BC_STORE(OFF, R) "vmovdqu %%" R ", " OFF "(%[s])\n\t"
/* A pass of %[n] steps over PIXELS, unrolled twice (the second step's pixels one plane4
 * further, its weights kGroupBytes), an odd first step alone. */
#define CVML_BC_PASS(EACH, PIXELS, X, FETCH)                         \
    EACH(CVML_BC_LOAD)                                               \
    CVML_BC_ONES                                                     \
    "test $1, %[n]\n\t"                                              \
    "jz 2f\n\t"                                                      \
    FETCH                                                            \
    PIXELS("0", "(%[pix])", X)                                       \
    "add $128, %[w]\n\t"                                             \
    "add %[plane4], %[pix]\n\t"                                      \
    "2:\n\t"                                                         \
    "shr $1, %[n]\n\t"                                               \
    "jz 3f\n\t"                                                      \
    "1:\n\t"                                                         \
    FETCH                                                            \
    PIXELS("0", "(%[pix])", X)                                       \
    FETCH                                                            \
    PIXELS("128", "(%[pix],%[plane4])", X)                           \
    "add $256, %[w]\n\t"                                             \
    "lea (%[pix],%[plane4],2), %[pix]\n\t"                           \
    "dec %[n]\n\t"                                                   \
    "jnz 1b\n\t"                                                     \
    "3:\n\t"                                                         \
    EACH(CVML_BC_STORE)
#define CVML_BC_CLOBBERS                                             \
    "cc", "memory", "xmm0", "xmm1", "xmm2", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", \
    "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15"
// clang-format on
static_assert(kGroupBytes == 128, "CVML_BC_PASS's weight offsets");

/* A pass's steps on an image without negative values where no pixel is skipped (all
 * but the border segments' two edge taps), as one asm block per form, sums[x * kVecs + v]
 * pixel x's vector v: written with madd_acc steps, GCC's register allocator kept
 * accumulators outside the registers the asm operands want and added copies (unrolled,
 * copies and spills); these run the 3 instructions a product, a broadcast a pixel and
 * a half of the loop's bookkeeping. The first pass (3 pixels) fetches ahead where
 * pf.step. */
template <int S>
CVML_TARGET_AVX2 inline __attribute__((always_inline)) void pass_3px(__m256i* sums,
                                                                     const uint8_t* pix,
                                                                     int64_t plane4,
                                                                     const int8_t* w,
                                                                     int64_t groups4, fetch_at pf) {
    int64_t n = groups4;
#define CVML_BC_ASM3(X, FETCH)                                                     \
    __asm__ volatile(CVML_BC_PASS(CVML_BC_EACH3, CVML_BC_PIXELS3, X, FETCH)        \
                     : [w] "+r"(w), [pix] "+r"(pix), [n] "+r"(n), [pf] "+r"(pf.at) \
                     : [s] "r"(sums), [plane4] "r"(plane4), [pf_step] "r"(pf.step) \
                     : CVML_BC_CLOBBERS)
    if constexpr (S == 1) {
        if (pf.step)
            CVML_BC_ASM3(S1, CVML_BC_FETCH);
        else
            CVML_BC_ASM3(S1, "");
    } else {
        if (pf.step)
            CVML_BC_ASM3(S2, CVML_BC_FETCH);
        else
            CVML_BC_ASM3(S2, "");
    }
#undef CVML_BC_ASM3
}

/* The segment's last pixel over all 4 vectors (its column stride plays no part). */
CVML_TARGET_AVX2 inline __attribute__((always_inline)) void pass_1px(
    __m256i* sums, const uint8_t* pix, int64_t plane4, const int8_t* w, int64_t groups4) {
    int64_t n = groups4;
    __asm__ volatile(CVML_BC_PASS(CVML_BC_EACH1, CVML_BC_PIXELS1, S1, "")
                     : [w] "+r"(w), [pix] "+r"(pix), [n] "+r"(n)
                     : [s] "r"(sums), [plane4] "r"(plane4)
                     : CVML_BC_CLOBBERS);
}
#undef CVML_BC_CLOBBERS
#undef CVML_BC_PASS
#undef CVML_BC_STORE
#undef CVML_BC_LOAD
#undef CVML_BC_EACH3
#undef CVML_BC_EACH1
#undef CVML_BC_ONES
#undef CVML_BC_FETCH
#undef CVML_BC_PIXELS1
#undef CVML_BC_PIXELS3
#undef CVML_BC_S2_2
#undef CVML_BC_S2_1
#undef CVML_BC_S1_2
#undef CVML_BC_S1_1
#undef CVML_BC_PIXEL
#undef CVML_BC_PRODUCT

/* Whether pass X0 .. X0 + P - 1 of tap Tap skips a pixel, and whether it skips them all. */
template <int X0, int P, int Tap, bool Left, bool Right>
constexpr bool pass_skips() {
    for (int x = X0; x < X0 + P; ++x)
        if (tap_skips<Tap, Left, Right>(x)) return true;
    return false;
}
template <int X0, int P, int Tap, bool Left, bool Right>
constexpr bool pass_skips_all() {
    for (int x = X0; x < X0 + P; ++x)
        if (!tap_skips<Tap, Left, Right>(x)) return false;
    return true;
}

/* One tap over every group of 4 input channels for one pass (pixels X0 .. X0 + P - 1 of
 * the segment) and the block's 4 vectors, the intrinsic form: the passes that skip a
 * pixel and those on images with negative values. Pixel x's bytes of group g4 at pix +
 * g4 * plane4 + 4 * S * x (S: the column stride), the block's weights of that group at w
 * + g4 * kGroupBytes. The accumulators are an array indexed by constants only, every
 * loop over them unrolled, so they live in registers. */
template <int S, int X0, int P, int Tap, bool Left, bool Right, bool Signed>
CVML_TARGET_AVX2 inline __attribute__((always_inline)) void tap_steps(
    __m256i (&acc)[P][kVecs], const uint8_t* pix, int64_t plane4, const int8_t* w, int64_t groups4,
    fetch_at pf) {
    const __m256i ones = _mm256_set1_epi16(1);
    for (int64_t g4 = 0; g4 < groups4; ++g4, w += kGroupBytes, pix += plane4) {
        if (pf.step) {
            _mm_prefetch(reinterpret_cast<const char*>(pf.at), _MM_HINT_T1);
            pf.at += pf.step;
        }
#pragma GCC unroll 3
        for (int x = 0; x < P; ++x) {
            if (tap_skips<Tap, Left, Right>(X0 + x)) continue;
            int32_t bytes;
            memcpy(&bytes, pix + 4 * S * x, 4);
            const __m256i b = _mm256_set1_epi32(bytes);
            // In a fixed order (madd_acc.h): GCC's own order kept an accumulator in the
            // stack. The weights stay in L1 (no register is left for them).
            const __m256i_u* wv = reinterpret_cast<const __m256i_u*>(w);
            if (Signed) {
                const __m256i u = _mm256_abs_epi8(b);
#pragma GCC unroll 4
                for (int v = 0; v < kVecs; ++v)
                    cpu_avx2::madd_acc_signed(acc[x][v], u, b, wv[v], ones);
            } else {
#pragma GCC unroll 4
                for (int v = 0; v < kVecs; ++v) cpu_avx2::madd_acc(acc[x][v], b, wv[v], ones);
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
                                             const __m256i (&sums)[kPixels][kVecs], int v, int c0) {
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

/* A segment's sums (pixel x's channels 8 * v .. 8 * v + 7 in sums[x][v]) through the tail
 * into the output, or made one vector of 7 pixels per channel into the tile. Out of
 * line: the segments have 16 copies (stride, edges, signs), and each copy of the tail's
 * three forms made the wide layers slower. */
CVML_TARGET_AVX2 __attribute__((noinline)) void store_block(const __m256i (&sums)[kPixels][kVecs],
                                                            const segment_out& o) {
    for (int v = 0; v < kVecs; ++v) {
        const int c0 = 8 * v;
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

/* Where a segment reads: the image, the block's weights and starts, the segment (7
 * pixels from x0 of output row y). */
struct pass_at {
    const conv_gemm* f;
    const uint8_t* img;
    const int8_t* w;
    const int32_t* starts; /* the block's first channel's, class 0 */
    int64_t y, x0;
    /* Where the first pass fetches the next block's weights into L2: the segment's slice
     * (fetch_slices), or nothing (step 0). */
    fetch_at slice;
};

/* One pass (pixels X0 .. X0 + P - 1 of the segment) over one tap (its weights at w), its
 * accumulators taken from sums and put back. A segment runs its three passes tap by tap,
 * so the tap's weights (16 KB for 512 input channels) are read from L1 by the second and
 * third: passes over all taps would each read a 512-channel block's 147 KB from L2. */
template <int S, int X0, int P, int Tap, bool Left, bool Right, bool Signed>
CVML_TARGET_AVX2 inline __attribute__((always_inline)) void tap_pass(
    __m256i (&sums)[kPixels][kVecs], const uint8_t* row, int64_t plane4, const int8_t* w,
    int64_t groups4, fetch_at pf) {
    const uint8_t* pix = row + 4 * Tap + 4 * S * X0;
    if (X0 != 0) pf = {nullptr, 0};
    // Only the last pass (1 pixel) can skip all: the first, which fetches, never does.
    static_assert(X0 != 0 || !pass_skips_all<X0, P, Tap, Left, Right>(), "a fetch lost");
    if constexpr (pass_skips_all<X0, P, Tap, Left, Right>()) {
        return;
    } else if constexpr (!Signed && !pass_skips<X0, P, Tap, Left, Right>()) {
        static_assert(P == 3 || P == 1, "the asm passes' sizes");
        if constexpr (P == 3)
            pass_3px<S>(sums[X0], pix, plane4, w, groups4, pf);
        else
            pass_1px(sums[X0], pix, plane4, w, groups4);
    } else {
        __m256i acc[P][kVecs];
#pragma GCC unroll 3
        for (int x = 0; x < P; ++x)
#pragma GCC unroll 4
            for (int v = 0; v < kVecs; ++v) acc[x][v] = sums[X0 + x][v];
        tap_steps<S, X0, P, Tap, Left, Right, Signed>(acc, pix, plane4, w, groups4, pf);
#pragma GCC unroll 3
        for (int x = 0; x < P; ++x)
#pragma GCC unroll 4
            for (int v = 0; v < kVecs; ++v) sums[X0 + x][v] = acc[x][v];
    }
}

/* The three passes of one tap: pixels 0-2, 3-5 and 6. */
template <int S, int Tap, bool Left, bool Right, bool Signed>
CVML_TARGET_AVX2 inline __attribute__((always_inline)) void tap_passes(
    __m256i (&sums)[kPixels][kVecs], const uint8_t* row, int64_t plane4, const int8_t* w,
    int64_t groups4, fetch_at pf) {
    static_assert(kPixels == 7, "the passes below cover 7 pixels");
    tap_pass<S, 0, 3, Tap, Left, Right, Signed>(sums, row, plane4, w, groups4, pf);
    tap_pass<S, 3, 3, Tap, Left, Right, Signed>(sums, row, plane4, w, groups4, pf);
    tap_pass<S, 6, 1, Tap, Left, Right, Signed>(sums, row, plane4, w, groups4, pf);
}

/* Tap t's fetch for the segment at at: the segment's slice walked through its
 * 9 x groups4 steps. */
inline fetch_at fetch_of(const pass_at& at, int64_t t) {
    if (!at.slice.step) return at.slice;
    const int64_t groups4 = at.f->taps4.groups4;
    return {at.slice.at + t * groups4 * at.slice.step, at.slice.step};
}

/* A segment's sums for a 3x3 kernel, from its starts (the pixels' border classes).
 * Left / Right: the segment's first / last pixel's taps of the left / right kernel
 * column read padding (the segment starts / ends the row). Only those two taps skip a
 * pixel; every other tap is the same loop at another column (tap t of a kernel row reads
 * from row + 4 * t), so the kernel rows and taps are loops rather than unrolled copies:
 * with a copy of the tap loops per tap, a 56-wide row ran some 2,500 instructions of
 * them, and on a Zen 3 whose core the host shared with another guest every conv was 2-3%
 * slower than with this form's few hundred (the two forms alternated inference by
 * inference; docs/perf-log.md). */
template <int S, bool Left, bool Right, bool Signed>
CVML_TARGET_AVX2 void block_3x3(const pass_at& at, __m256i (&sums)[kPixels][kVecs]) {
    const conv_geom& g = at.f->g;
    const int64_t rc = 3 * row_class(g, at.y);
#pragma GCC unroll 7
    for (int x = 0; x < kPixels; ++x) {
        const int64_t col = Left && x == 0 ? 0 : Right && x == kPixels - 1 ? 2 : 1;
        const int32_t* s = at.starts + (rc + col) * g.o;
#pragma GCC unroll 4
        for (int v = 0; v < kVecs; ++v)
            sums[x][v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 8 * v));
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
                tap_passes<S, 0, true, false, Signed>(sums, row, plane4, w, groups4, pf);
            else if (Right && t == 2)
                tap_passes<S, 2, false, true, Signed>(sums, row, plane4, w, groups4, pf);
            else
                tap_passes<S, 0, false, false, Signed>(sums, row + 4 * t, plane4, w, groups4, pf);
        }
    }
}

/* A segment's sums, then its tail. */
template <int S, bool Left, bool Right, bool Signed>
CVML_TARGET_AVX2 void segment(const conv_gemm* f, const uint8_t* img, const int8_t* wblock,
                              fetch_at slice, const int32_t* starts, int64_t y, int64_t x0,
                              const segment_out& o) {
    const pass_at at = {f, img, wblock, starts, y, x0, slice};
    __m256i sums[kPixels][kVecs];
    block_3x3<S, Left, Right, Signed>(at, sums);
    store_block(sums, o);
}

/* The same for a 1x1 kernel of stride 1 without padding (simd_config.h's bcast_1x1): its
 * one tap reads every pixel, so each channel has one start (the GEMM's) and pixel x reads
 * input column x0 + x of input row y. */
template <bool Signed>
CVML_TARGET_AVX2 void segment_1x1(const conv_gemm* f, const uint8_t* img, const int8_t* wblock,
                                  fetch_at slice, const int32_t* starts, int64_t y, int64_t x0,
                                  const segment_out& o) {
    __m256i sums[kPixels][kVecs];
#pragma GCC unroll 7
    for (int x = 0; x < kPixels; ++x)
#pragma GCC unroll 4
        for (int v = 0; v < kVecs; ++v)
            sums[x][v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(starts + 8 * v));
    const uint8_t* row = img + (y * f->g.w + x0) * 4;
    tap_passes<1, 0, false, false, Signed>(sums, row, f->bcast.plane4, wblock, f->taps4.groups4,
                                           slice);
    store_block(sums, o);
}

/* A block's weights come from memory for its first row and from L2 for the others (147
 * KB for 512 channels): rows 1 .. kFetchRows fetch the next block's, each segment of them
 * a slice, walked by its first pass's steps, kGroupBytes / slices bytes a step (the same
 * line fetched again in between costs a load slot, no traffic). Fetched by one row, the 7x7 layers'
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
                     kGroupBytes / slices};
        const int64_t first = b->out_base + o0 * f->N + y * g.ow + x0;
        o->at = first;
        o->room = x0 + kPixels < g.ow;
        const bool left = x0 == 0, right = (x0 + kPixels - 1) * S + 1 >= g.w;
        if (f->bcast.taps == 1)
            segment_1x1<Signed>(f, img, wblock, slice, starts, y, x0, *o);
        else if (left && right)
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
    // A 3x3 kernel with a padding of 1, or a 1x1 one without (bcast_fits).
    const int64_t pad = f->bcast.taps == 9 ? 1 : 0;
    const int64_t lo = y0 * g.sh - pad < 0 ? 0 : y0 * g.sh - pad;
    const int64_t hi = y1 * g.sh + pad >= g.h ? g.h - 1 : y1 * g.sh + pad;
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
