/* The int8 GEMM micro-kernels and the fused epilogue against plain reference loops, at
 * every SIMD level this CPU has: odd sizes, K not a multiple of 4, extremes -128/127. */
#include <gtest/gtest.h>

#include <algorithm>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <random>
#include <string>
#include <vector>

#include "device/cpu/simd/epilogue.h"
#include "device/cpu/simd/gemm_s8.h"
#include "device/cpu/simd/simd_config.h"
#include "device/cpu/simd/simd.h"
#include "graph/graph.h"

namespace {

std::vector<int> levels() {
    int l[8];
    return std::vector<int>(l, l + cpu_simd_levels(l, 8));
}

struct Sink {
    std::vector<int32_t>* c;
    int32_t N;
    std::vector<int>* hits;
};

void sink_tile(void* arg, int32_t m0, int32_t rows, int32_t n0, int32_t cols, const int32_t* t) {
    Sink* s = static_cast<Sink*>(arg);
    for (int32_t r = 0; r < rows; ++r)
        for (int32_t c = 0; c < cols; ++c) {
            (*s->c)[static_cast<size_t>(m0 + r) * s->N + n0 + c] = t[r * GEMM_NT + c];
            (*s->hits)[static_cast<size_t>(m0 + r) * s->N + n0 + c]++;
        }
}

/* Values: a mix of extremes and random, generated as int32 outside int8 too so the
 * upstream int8 cast (conv2d groups == 1) is exercised by the packing. */
std::vector<int32_t> values(size_t n, std::mt19937& rng, int mode) {
    std::vector<int32_t> v(n);
    std::uniform_int_distribution<int32_t> d8(-128, 127), dw(-1000, 1000);
    for (auto& x : v) {
        if (mode == 0) x = d8(rng);
        if (mode == 1) x = (rng() & 1) ? -128 : 127;
        if (mode == 2) x = -128;
        if (mode == 3) x = dw(rng);
        if (mode == 4) x = d8(rng) & 127;          // a relu's output
        if (mode == 5) x = (rng() & 1) ? 0 : 127;  // its extremes
    }
    if (mode == 6 && n > 0) v[rng() % n] = -1;  // one negative value among zeros
    return v;
}

/* cvm_range: weights within +-127 (a verified CVM model's: its -128s become -127; avx2
 * notes no -128, which its narrow and broadcast kernels would refuse); B keeps the whole
 * int8 range either way. b_mode: B's values (values(); -1: mode's). by_rows: B packed
 * whole by gemm_pack_b_rows, as conv2d packs it (else group by group, as dense). */
void check_gemm(int level, int32_t M, int32_t K, int32_t N, int mode, uint32_t seed, int splits,
                bool plain = false, bool fold_bias = false, bool cvm_range = false, int b_mode = -1,
                bool by_rows = false) {
    std::mt19937 rng(seed);
    std::vector<int32_t> A = values(static_cast<size_t>(M) * K, rng, mode);
    if (cvm_range)
        for (auto& x : A)
            if (static_cast<int8_t>(x) == INT8_MIN) x = -127;
    std::vector<int32_t> B = values(static_cast<size_t>(K) * N, rng, b_mode < 0 ? mode : b_mode);
    std::vector<int32_t> ref(static_cast<size_t>(M) * N);
    for (int32_t m = 0; m < M; ++m)
        for (int32_t n = 0; n < N; ++n) {
            uint32_t acc = 0;
            for (int32_t k = 0; k < K; ++k)
                acc += static_cast<uint32_t>(
                    static_cast<int32_t>(static_cast<int8_t>(A[static_cast<size_t>(m) * K + k])) *
                    static_cast<int32_t>(static_cast<int8_t>(B[static_cast<size_t>(k) * N + n])));
            ref[static_cast<size_t>(m) * N + n] = static_cast<int32_t>(acc);
        }
    gemm_weights w;
    std::vector<int8_t> a8(A.size() + 4);
    for (size_t i = 0; i < A.size(); ++i) a8[i] = static_cast<int8_t>(A[i]);
    for (size_t i = A.size(); i < a8.size(); ++i) a8[i] = 0x55;  // past the end: must not matter
    if (plain)
        ASSERT_EQ(gemm_weights_plain(level, a8.data(), M, K, &w), CVML_OK);
    else
        ASSERT_EQ(gemm_weights_pack(level, A.data(), M, K, &w), CVML_OK);
    if (level == CPU_SIMD_AVX2 && cvm_range) {
        ASSERT_EQ(w.has_min, 0);
    }
    if (fold_bias) {
        // Folded where the level starts its sums from w.start (avx512): every sum then
        // includes the bias, wrapping like the tail's add would.
        std::vector<int32_t> bias(static_cast<size_t>(M));
        for (auto& b : bias) b = static_cast<int32_t>(rng());
        bias[0] = INT32_MAX;
        const int folded = gemm_weights_fold_bias(&w, bias.data());
        ASSERT_EQ(folded, level == CPU_SIMD_AVX512 ? 1 : 0);
        for (int32_t m = 0; m < M && folded; ++m)
            for (int32_t n = 0; n < N; ++n) {
                int32_t& r = ref[static_cast<size_t>(m) * N + n];
                r = static_cast<int32_t>(static_cast<uint32_t>(r) + static_cast<uint32_t>(bias[m]));
            }
    }
    std::vector<uint8_t> packed(gemm_b_bytes(level, K, N) + 64);
    std::vector<int8_t> b8(B.size());
    for (size_t i = 0; i < B.size(); ++i) b8[i] = static_cast<int8_t>(B[i]);
    if (by_rows) {
        std::vector<int64_t> offsets(static_cast<size_t>(K));
        for (int32_t k = 0; k < K; ++k) offsets[static_cast<size_t>(k)] = int64_t{k} * N;
        const std::vector<int8_t> pad(static_cast<size_t>(N) + 64, INT8_MIN);
        gemm_pack_b_rows(level, b8.data(), offsets.data(), pad.data(), N, K, packed.data());
    }
    for (int32_t k4 = 0; k4 * 4 < K && !by_rows; ++k4) {
        const int8_t* rows[GEMM_KG];
        for (int i = 0; i < GEMM_KG; ++i) {
            int32_t k = k4 * 4 + i;
            rows[i] = k < K ? b8.data() + static_cast<size_t>(k) * N : nullptr;
        }
        gemm_pack_b_group(level, rows, N, K, k4, packed.data());
    }
    std::vector<int32_t> C(static_cast<size_t>(M) * N, 0x5a5a5a5a);
    std::vector<int> hits(C.size(), 0);
    Sink s = {&C, N, &hits};
    int64_t tiles = gemm_tile_count(M, N);
    for (int p = 0; p < splits; ++p)
        gemm_run_tiles(&w, packed.data(), N, tiles * p / splits, tiles * (p + 1) / splits,
                       sink_tile, &s);
    gemm_weights_free(&w);
    for (size_t i = 0; i < C.size(); ++i) {
        ASSERT_EQ(hits[i], 1) << "element " << i << " written " << hits[i] << " times";
        ASSERT_EQ(C[i], ref[i]) << cpu_simd_name(level) << " M=" << M << " K=" << K << " N=" << N
                                << " mode=" << mode << " at " << i;
    }
}

TEST(SimdGemm, DetectAndEnvironment) {
    const std::vector<int> have = levels();
    ASSERT_FALSE(have.empty());
    EXPECT_EQ(have.front(), CPU_SIMD_SCALAR);
    EXPECT_EQ(have.back(), cpu_simd_detect());
    EXPECT_STREQ(cpu_simd_name(CPU_SIMD_SCALAR), "scalar");
    EXPECT_STREQ(cpu_simd_name(CPU_SIMD_AVX2), "avx2");
    EXPECT_STREQ(cpu_simd_name(CPU_SIMD_AVX512), "avx512");
    EXPECT_STREQ(cpu_simd_name(CPU_SIMD_NEON), "neon");
    EXPECT_STREQ(cpu_simd_name(CPU_SIMD_DOTPROD), "dotprod");
    // CVML_SIMD steps down to each level this CPU has, and never up or sideways.
    const char* saved = getenv("CVML_SIMD");
    std::string keep = saved ? saved : "";
    for (int level : have) {
        setenv("CVML_SIMD", cpu_simd_name(level), 1);
        EXPECT_EQ(cpu_simd_level(), level) << cpu_simd_name(level);
    }
    for (const char* other : {"avx2", "avx512", "neon", "dotprod", "i8mm", "bogus"}) {
        setenv("CVML_SIMD", other, 1);
        const int got = cpu_simd_level();
        const bool known = std::find(have.begin(), have.end(), got) != have.end();
        EXPECT_TRUE(known) << other;
        // A level this CPU lacks, or a name of none: the detected level.
        const bool named = strcmp(cpu_simd_name(got), other) == 0;
        EXPECT_TRUE(named || got == cpu_simd_detect()) << other;
    }
    if (saved)
        setenv("CVML_SIMD", keep.c_str(), 1);
    else
        unsetenv("CVML_SIMD");
}

TEST(SimdGemm, OddSizesAllLevels) {
    const int32_t Ms[] = {1, 3, 8, 9, 17};
    const int32_t Ks[] = {1, 2, 3, 4, 5, 7, 9, 27, 64, 67};
    const int32_t Ns[] = {1, 5, 15, 16, 17, 33, 47, 48, 49, 97};
    uint32_t seed = 1;
    for (int level : levels())
        for (int32_t M : Ms)
            for (int32_t K : Ks)
                for (int32_t N : Ns) {
                    ++seed;
                    check_gemm(level, M, K, N, 0, seed, 1 + static_cast<int>(seed % 3));
                    check_gemm(level, M, K, N, 0, seed, 2, true);
                    check_gemm(level, M, K, N, 0, seed, 1 + static_cast<int>(seed % 3), false,
                               false, true);
                    check_gemm(level, M, K, N, 0, seed, 2, true, false, true);
                }
}

TEST(SimdGemm, ExtremesAllLevels) {
    for (int level : levels())
        for (int mode = 1; mode <= 3; ++mode)
            for (int32_t K : {4, 9, 576, 1153}) {
                check_gemm(level, 16, K, 50, mode, 7u + mode, 2);
                check_gemm(level, 13, K, 50, mode, 9u + mode, 3, true);
                check_gemm(level, 13, K, 50, mode, 11u + mode, 2, true, true);
                check_gemm(level, 24, K, 17, mode, 13u + mode, 1, false, true);
                check_gemm(level, 16, K, 50, mode, 15u + mode, 2, false, false, true);
                check_gemm(level, 13, K, 50, mode, 17u + mode, 3, true, false, true);
            }
}

/* B packed whole (conv2d's packing) with no negative value, which avx2 multiplies as
 * vpmaddubsw's unsigned operand, against every kind of weights (-128 included); and B
 * with negative values, a single one among zeros included, which must not take it. */
TEST(SimdGemm, PackedRowsSignsAllLevels) {
    uint32_t seed = 100;
    for (int level : levels())
        for (int mode : {0, 1, 2})
            for (int b_mode : {4, 5, 6, 0, 1})
                for (int32_t K : {1, 5, 64, 67, 576})
                    for (int32_t N : {1, 15, 16, 17, 48}) {
                        ++seed;
                        check_gemm(level, 17, K, N, mode, seed, 2, false, false, false, b_mode,
                                   true);
                        check_gemm(level, 16, K, N, mode, seed, 1, true, false, false, b_mode,
                                   true);
                        check_gemm(level, 16, K, N, mode, seed, 1, true, false, true, b_mode, true);
                    }
}

TEST(SimdGemm, LargeKWrapsLikeUpstream) {
    // 140000 products of (-128) * (-128) overflow int32: the sum must wrap, not saturate.
    for (int level : levels()) check_gemm(level, 8, 140000, 16, 2, 3, 1);
    // The same with weights -127 (avx2's int8 kernel): 140000 * 16256 wraps too.
    for (int level : levels()) check_gemm(level, 8, 140000, 16, 2, 3, 1, true, false, true);
    // And 140000 products of (-128) * 127 with B packed whole: avx2's unsigned form.
    for (int level : levels())
        check_gemm(level, 8, 140000, 16, 2, 3, 1, true, false, false, 5, true);
}

/* gemm_run_narrow (dot products along K) against the reference at every level that has
 * it (avx512, avx2), for every tail width, K around the 32- and 64-byte steps, extremes
 * (avx512's +128 offset and its correction; avx2's signs, and -128 weights, which take
 * its exact fallback with signed columns), columns without negative values (avx2's
 * unsigned form, against every kind of weights) and with a single one, and sums that
 * wrap. */
TEST(SimdGemm, NarrowTailsMatchReference) {
    std::mt19937 rng(11);
    int levels_run = 0;
    for (int level : levels()) {
        if (!cpu_simd_config_of(level)->gemm_narrow_block) continue;
        ++levels_run;
        for (int mode : {0, 1, 2, 4, 5})
            for (int b_mode : {mode, 4, 6})
                for (int32_t K : {1, 3, 31, 32, 33, 63, 64, 65, 147, 1152, 140000})
                    for (int32_t c = 1; c <= GEMM_NARROW; ++c) {
                        const int32_t M = K > 10000 ? 8 : 24;
                        std::vector<int32_t> A = values(static_cast<size_t>(M) * K, rng, mode);
                        // avx2's int8 form takes weights within +-127; modes 1 and 2 keep their
                        // -128s (the fallback), the others are a verified model's.
                        if (mode != 1 && mode != 2)
                            for (auto& v : A) v = v < -127 ? -127 : v;
                        std::vector<int32_t> B = values(static_cast<size_t>(K) * c, rng, b_mode);
                        std::vector<int8_t> a8(A.size() + 4, 0x55);
                        for (size_t i = 0; i < A.size(); ++i) a8[i] = static_cast<int8_t>(A[i]);
                        gemm_weights w;
                        ASSERT_EQ(gemm_weights_plain(level, a8.data(), M, K, &w), CVML_OK);
                        ASSERT_TRUE(gemm_narrow_ok(&w));
                        const size_t stride = gemm_narrow_stride(K);
                        std::vector<uint8_t> cols(stride * static_cast<size_t>(c), 0);
                        for (int32_t j = 0; j < c; ++j)
                            for (int32_t k = 0; k < K; ++k)
                                cols[stride * j + k] = static_cast<uint8_t>(
                                    static_cast<uint8_t>(B[static_cast<size_t>(k) * c + j]) ^
                                    0x80u);
                        std::vector<int32_t> C(static_cast<size_t>(M) * c, 0x5a5a5a5a);
                        std::vector<int> hits(C.size(), 0);
                        Sink s = {&C, c, &hits};
                        gemm_run_narrow(&w, cols.data(), c, 0, 0, 1, sink_tile, &s);
                        gemm_run_narrow(&w, cols.data(), c, 0, 1, M / GEMM_MR, sink_tile, &s);
                        gemm_weights_free(&w);
                        for (int32_t m = 0; m < M; ++m)
                            for (int32_t j = 0; j < c; ++j) {
                                uint32_t acc = 0;
                                for (int32_t k = 0; k < K; ++k)
                                    acc += static_cast<uint32_t>(
                                        static_cast<int32_t>(static_cast<int8_t>(
                                            A[static_cast<size_t>(m) * K + k])) *
                                        static_cast<int32_t>(static_cast<int8_t>(
                                            B[static_cast<size_t>(k) * c + j])));
                                const size_t i = static_cast<size_t>(m) * c + j;
                                ASSERT_EQ(hits[i], 1);
                                ASSERT_EQ(C[i], static_cast<int32_t>(acc))
                                    << "level " << level << " K=" << K << " c=" << c
                                    << " mode=" << mode << " b_mode=" << b_mode << " m=" << m;
                            }
                    }
    }
    if (levels_run == 0) GTEST_SKIP() << "no level with narrow tails on this CPU";
}

/* A random selection of cols increasing flat positions (pos) out of 64, each output
 * panel within two 16-column groups; false where the draw does not fit one. */
bool random_select(std::mt19937& rng, int32_t cols, gemm_select* sel, std::vector<int32_t>* pos) {
    *sel = {};
    pos->clear();
    for (int32_t j = 0, at = 0; j < cols; ++j, at += 1 + (rng() % 5 == 0 ? 1 : 0))
        pos->push_back(at);
    if (pos->back() >= 64) return false;
    sel->panels = (cols + 15) / 16;
    for (int32_t i = 0; i < sel->panels; ++i) {
        sel->from[i] = (*pos)[16 * i] / 16;
        for (int32_t j = 0; j < 16 && 16 * i + j < cols; ++j) {
            const int32_t rel = (*pos)[16 * i + j] - 16 * sel->from[i];
            if (rel >= 32) return false;
            sel->idx[i][j] = static_cast<uint8_t>(rel);
        }
    }
    return gemm_select_ok(sel) != 0;
}

/* gemm_pack_b_select picks columns out of 64 consecutive ones: the same packed bytes as
 * gemm_pack_b_rows over those columns gathered first. */
TEST(SimdGemm, SelectPackingMatchesGatheredColumns) {
    if (cpu_simd_detect() != CPU_SIMD_AVX512) GTEST_SKIP() << "no AVX-512 VNNI on this CPU";
    std::mt19937 rng(12);
    for (int iter = 0; iter < 200; ++iter) {
        const int32_t K = 1 + static_cast<int32_t>(rng() % 40);
        const int32_t cols = 1 + static_cast<int32_t>(rng() % 48);
        gemm_select sel;
        std::vector<int32_t> pos;
        if (!random_select(rng, cols, &sel, &pos)) continue;
        std::vector<int8_t> img(static_cast<size_t>(K) * 64 + 64);
        for (auto& v : img) v = static_cast<int8_t>(rng());
        std::vector<int64_t> offsets(K);
        for (int32_t k = 0; k < K; ++k) offsets[k] = static_cast<int64_t>(k) * 64;
        std::vector<int8_t> pad(64, -128);
        std::vector<uint8_t> got(gemm_b_bytes(CPU_SIMD_AVX512, K, 48), 0xEE);
        gemm_pack_b_select(CPU_SIMD_AVX512, img.data(), offsets.data(), pad.data(), K, &sel,
                           got.data());
        std::vector<int8_t> gathered(static_cast<size_t>(K) * cols + 64);
        for (int32_t k = 0; k < K; ++k)
            for (int32_t j = 0; j < cols; ++j)
                gathered[static_cast<size_t>(k) * cols + j] = img[offsets[k] + pos[j]];
        std::vector<int64_t> goff(K);
        for (int32_t k = 0; k < K; ++k) goff[k] = static_cast<int64_t>(k) * cols;
        std::vector<uint8_t> want(got.size(), 0xEE);
        gemm_pack_b_rows(CPU_SIMD_AVX512, gathered.data(), goff.data(), pad.data(), cols, K,
                         want.data());
        // Only the selected lanes are defined: compare column by column.
        const size_t panel_bytes = static_cast<size_t>((K + 3) / 4) * 64;
        for (int32_t j = 0; j < cols; ++j)
            for (int32_t k4 = 0; k4 * 4 < K; ++k4)
                for (int32_t b = 0; b < 4; ++b) {
                    const size_t i = static_cast<size_t>(j / 16) * panel_bytes +
                                     static_cast<size_t>(k4) * 64 +
                                     static_cast<size_t>(j % 16) * 4 + b;
                    ASSERT_EQ(got[i], want[i]) << "iter " << iter << " column " << j;
                }
    }
}

/* A dense strip's GEMM (gemm_pack_b_select, then the tiles) against products over the
 * selected columns, at each level that packs selections; images with and without
 * negative values (avx2 multiplies the latter as vpmaddubsw's unsigned operand), weights
 * with -128. */
TEST(SimdGemm, SelectedColumnsGemmMatchesReference) {
    std::mt19937 rng(13);
    for (int level : levels()) {
        if (level != CPU_SIMD_AVX512 && level != CPU_SIMD_AVX2) continue;
        for (int iter = 0; iter < 300; ++iter) {
            const int32_t K = 1 + static_cast<int32_t>(rng() % 70), M = 1 + rng() % 20;
            const int32_t cols = 1 + static_cast<int32_t>(rng() % 48);
            gemm_select sel;
            std::vector<int32_t> pos;
            if (!random_select(rng, cols, &sel, &pos)) continue;
            const bool non_negative = iter % 2 == 0;
            std::vector<int8_t> img(static_cast<size_t>(K) * 64 + 64);
            for (auto& v : img) v = static_cast<int8_t>(non_negative ? rng() & 127 : rng());
            std::vector<int8_t> a(static_cast<size_t>(M) * K + 4);
            for (auto& v : a) v = static_cast<int8_t>(rng() % 3 == 0 ? -128 : rng());
            std::vector<int64_t> offsets(K);
            for (int32_t k = 0; k < K; ++k) offsets[k] = static_cast<int64_t>(k) * 64;
            const std::vector<int8_t> pad(64, -128);
            std::vector<uint8_t> packed(gemm_b_bytes(level, K, 48) + 64, 0xEE);
            gemm_pack_b_select(level, img.data(), offsets.data(), pad.data(), K, &sel,
                               packed.data());
            gemm_weights w;
            ASSERT_EQ(gemm_weights_plain(level, a.data(), M, K, &w), CVML_OK);
            std::vector<int32_t> C(static_cast<size_t>(M) * cols, 0x5a5a5a5a);
            std::vector<int> hits(C.size(), 0);
            Sink s = {&C, cols, &hits};
            gemm_run_tiles(&w, packed.data(), cols, 0, gemm_tile_count(M, cols), sink_tile, &s);
            gemm_weights_free(&w);
            for (int32_t m = 0; m < M; ++m)
                for (int32_t j = 0; j < cols; ++j) {
                    uint32_t acc = 0;
                    for (int32_t k = 0; k < K; ++k)
                        acc += static_cast<uint32_t>(a[static_cast<size_t>(m) * K + k] *
                                                     img[offsets[k] + pos[j]]);
                    ASSERT_EQ(C[static_cast<size_t>(m) * cols + j], static_cast<int32_t>(acc))
                        << cpu_simd_name(level) << " iter " << iter << " m " << m << " column "
                        << j;
                }
        }
    }
}

int32_t ref_rshift(int32_t x, int32_t p, int32_t b) {
    int64_t mx = (int64_t{1} << (p - 1)) - 1;
    if (mx == 0) return 0;
    if (b >= 31) return x >> 31;
    int32_t t = static_cast<int32_t>(static_cast<uint32_t>(x >> (b - 1)) + 1u) >> 1;
    if (p + b >= 32) return t;
    return static_cast<int32_t>(t < -mx ? -mx : t > mx ? mx : t);
}

TEST(SimdEpilogue, RshiftQuirksAndChainsAllLevels) {
    std::mt19937 rng(5);
    std::vector<int32_t> x(1000), other(1000);
    for (size_t i = 0; i < x.size(); ++i) {
        x[i] = static_cast<int32_t>(rng());
        other[i] = static_cast<int32_t>(rng());
    }
    x[0] = INT32_MAX;
    x[1] = INT32_MIN;
    x[2] = -1;
    x[3] = 0;
    std::vector<int8_t> other8(other.size());
    for (size_t i = 0; i < other.size(); ++i) other8[i] = static_cast<int8_t>(other[i]);
    const int32_t ps[] = {1, 2, 8, 16, 24, 31, 32};
    const int32_t bs[] = {1, 2, 7, 8, 24, 30, 31, 32};
    for (int level : levels())
        for (int32_t p : ps)
            for (int32_t b : bs)
                for (int add = 0; add < 3; ++add) {
                    epilogue ep = {};
                    ASSERT_TRUE(epilogue_add_rshift(&ep, p, b));
                    if (add == 1) {
                        ASSERT_TRUE(epilogue_add_add(&ep, other.data(), STORAGE_INT32));
                    }
                    if (add == 2) {
                        ASSERT_TRUE(epilogue_add_add(&ep, other8.data(), STORAGE_INT8));
                    }
                    ASSERT_TRUE(epilogue_add_clip(&ep, 0, INT32_MAX));
                    int32_t bias = static_cast<int32_t>(rng());
                    std::vector<int32_t> y(x.size());
                    epilogue_apply(level, &ep, x.data(), STORAGE_INT32, 0, bias, y.data(),
                                   STORAGE_INT32, 0, static_cast<int64_t>(x.size()));
                    for (size_t i = 0; i < x.size(); ++i) {
                        int32_t v = static_cast<int32_t>(static_cast<uint32_t>(x[i]) +
                                                         static_cast<uint32_t>(bias));
                        v = ref_rshift(v, p, b);
                        if (add == 1)
                            v = static_cast<int32_t>(static_cast<uint32_t>(v) +
                                                     static_cast<uint32_t>(other[i]));
                        if (add == 2)
                            v = static_cast<int32_t>(static_cast<uint32_t>(v) +
                                                     static_cast<uint32_t>(other8[i]));
                        v = v < 0 ? 0 : v;
                        ASSERT_EQ(y[i], v) << cpu_simd_name(level) << " p=" << p << " b=" << b
                                           << " add=" << add << " i=" << i;
                    }
                }
}

/* Consecutive clips are merged into one when the chain is built; the result must be
 * that of applying max(min(v, hi), lo) step by step, for any bounds: nested, disjoint,
 * touching, reversed (lo > hi: the constant lo), extreme. */
TEST(SimdEpilogue, ClipChainsMergeExactly) {
    std::mt19937 rng(11);
    const int32_t edges[] = {INT32_MIN, -300, -128, -127, -1, 0, 1, 5, 127, 128, 300, INT32_MAX};
    std::vector<int32_t> x(200);
    for (auto& v : x) v = static_cast<int32_t>(rng());
    for (size_t i = 0; i < 12; ++i) x[i] = edges[i];
    for (int level : levels())
        for (int iter = 0; iter < 300; ++iter) {
            epilogue ep = {};
            const int steps = 2 + iter % 3;
            std::vector<std::pair<int32_t, int32_t>> clips;
            for (int k = 0; k < steps; ++k) {
                int32_t lo = edges[rng() % 12], hi = edges[rng() % 12];
                clips.push_back({lo, hi});
                ASSERT_TRUE(epilogue_add_clip(&ep, lo, hi));
            }
            EXPECT_EQ(ep.step_count, 1);
            std::vector<int32_t> y(x.size());
            epilogue_apply(level, &ep, x.data(), STORAGE_INT32, 0, 0, y.data(), STORAGE_INT32, 0,
                           static_cast<int64_t>(x.size()));
            for (size_t i = 0; i < x.size(); ++i) {
                int32_t v = x[i];
                for (auto& c : clips) v = std::max(std::min(v, c.second), c.first);
                ASSERT_EQ(y[i], v) << cpu_simd_name(level) << " iter " << iter << " i " << i;
                ASSERT_EQ(epilogue_value(&ep, x[i], static_cast<int64_t>(i)), v);
            }
        }
}

/* A GEMM tile through the chain must equal epilogue_value on every kept column, for the
 * chains with a code path of their own (cvm_right_shift, then a residual add and a clip)
 * and for those without (no clip after the round, a shift of 31 or more, an add first),
 * over random column masks, every row count and each storage of the output and of the
 * residual operand; planned once (epilogue_plan_tile) or not, the round folded or not. */
TEST(SimdEpilogue, TileChainsMatchValueAllLevels) {
    std::mt19937 rng(21);
    const int32_t storages[] = {STORAGE_INT8, STORAGE_INT16, STORAGE_INT32};
    std::vector<int32_t> tile(GEMM_MR * GEMM_NT);
    std::vector<int32_t> operand(2048);
    for (auto& v : operand) v = static_cast<int32_t>(rng());
    for (int level : levels())
        for (int iter = 0; iter < 400; ++iter) {
            for (auto& v : tile) v = static_cast<int32_t>(rng());
            tile[0] = INT32_MAX;
            tile[1] = INT32_MIN;
            const int32_t add_storage = storages[rng() % 3], out_storage = storages[rng() % 3];
            std::vector<uint8_t> add_bytes(operand.size() * 4), out_bytes(operand.size() * 4);
            for (size_t i = 0; i < operand.size(); ++i)
                ir_storage_store(add_bytes.data(), add_storage, static_cast<int64_t>(i),
                                 operand[i]);
            epilogue ep = {};
            // 0, 1, 5, 6: matched (5, 6: after a requantization prefix); 2, 3, 4: generic
            const int form = iter % 7;
            if (form == 4) {
                ASSERT_TRUE(epilogue_add_add(&ep, add_bytes.data(), add_storage));
            }
            if (form >= 5) {  // [round [clip] | clip], then a multiply
                const int kind = static_cast<int>(rng() % 4);
                int ok = 1;
                if (kind == 0) ok = epilogue_add_rshift(&ep, 16, 1 + rng() % 3);
                if (kind == 1) ok = epilogue_add_clip(&ep, -32767, 32767);
                if (kind == 2) ok = epilogue_add_rshift(&ep, 24, 8 + rng() % 4);  // no clip
                ASSERT_TRUE(ok);
                ASSERT_TRUE(epilogue_add_mul(&ep, static_cast<int32_t>(rng() % 80001) - 40000));
            }
            const int32_t p = form == 2 ? 24 : 2 + static_cast<int32_t>(rng() % 15);
            const int32_t b = form == 3   ? 31 + static_cast<int32_t>(rng() % 2)
                              : form == 2 ? 8 + static_cast<int32_t>(rng() % 14)
                                          : 1 + static_cast<int32_t>(rng() % 14);
            ASSERT_TRUE(epilogue_add_rshift(&ep, p, b));  // form 2: p + b >= 32: no clip
            if (form == 1 || form == 6) {
                ASSERT_TRUE(epilogue_add_add(&ep, add_bytes.data(), add_storage));
                ASSERT_TRUE(epilogue_add_clip(&ep, -static_cast<int32_t>(rng() % 200), 127));
            }
            ASSERT_TRUE(epilogue_add_clip(&ep, 0, INT32_MAX));
            // Half the rounds as a caller that put the + 2^(b-1) in the sums (EP_SRA).
            if (rng() % 2) epilogue_fold_round(&ep);
            const int32_t rows = 1 + iter % GEMM_MR, cols = 1 + static_cast<int32_t>(rng() % 48);
            uint16_t mask[3] = {0, 0, 0};
            for (int32_t c = 0; c < cols; ++c)
                if (rng() % 4 != 0 || c == 0) mask[c / 16] |= static_cast<uint16_t>(1u << (c % 16));
            ep_tile_keep keep;
            epilogue_tile_keep(&keep, mask, cols);
            std::vector<int32_t> bias(GEMM_MR, 0);
            const bool with_bias = iter % 3 != 0;  // else NULL: a bias folded into the sums
            for (auto& v : bias) v = with_bias ? static_cast<int32_t>(rng()) : 0;
            const int64_t first = rng() % 100, stride = keep.count + rng() % 50;
            if (iter % 2) {  // planned once, as conv2d does
                ep_tile_plan plan;
                epilogue_plan_tile(level, &ep, with_bias, out_storage, &plan);
                epilogue_apply_tile_planned(&plan, tile.data(), GEMM_NT, rows, &keep,
                                            with_bias ? bias.data() : nullptr, out_bytes.data(),
                                            first, stride);
            } else {
                epilogue_apply_tile(level, &ep, tile.data(), GEMM_NT, rows, &keep,
                                    with_bias ? bias.data() : nullptr, out_bytes.data(),
                                    out_storage, first, stride);
            }
            for (int32_t r = 0; r < rows; ++r)
                for (int32_t c = 0, j = 0; c < cols; ++c) {
                    if (!(mask[c / 16] >> (c % 16) & 1)) continue;
                    const int64_t at = first + r * stride + j++;
                    const int32_t v =
                        static_cast<int32_t>(static_cast<uint32_t>(tile[r * GEMM_NT + c]) +
                                             static_cast<uint32_t>(bias[r]));
                    std::vector<uint8_t> want(4);
                    ir_storage_store(want.data(), out_storage, 0, epilogue_value(&ep, v, at));
                    ASSERT_EQ(ir_storage_load(out_bytes.data(), out_storage, at),
                              ir_storage_load(want.data(), out_storage, 0))
                        << cpu_simd_name(level) << " iter " << iter << " form " << form << " row "
                        << r << " column " << c;
                }
        }
}

TEST(SimdEpilogue, Int8StorageInAndOut) {
    std::vector<int8_t> x(77), y(77);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int8_t>(i * 37);
    for (int level : levels()) {
        epilogue ep = {};
        ASSERT_TRUE(epilogue_add_clip(&ep, -100, 90));
        epilogue_apply(level, &ep, x.data(), STORAGE_INT8, 0, 3, y.data(), STORAGE_INT8, 0,
                       static_cast<int64_t>(x.size()));
        for (size_t i = 0; i < x.size(); ++i) {
            int32_t v = x[i] + 3;
            v = v > 90 ? 90 : v < -100 ? -100 : v;
            ASSERT_EQ(y[i], v) << cpu_simd_name(level) << " i=" << i;
        }
    }
}

}  // namespace

/* The even and odd bytes of rows of every length up to 100 (the vector steps and the
 * scalar rest), each level against the plain loop; nothing written past either half. */
/* int32 to int8 as a C cast (the low byte), every level, lengths 0-100 around the vector
 * steps, values across the whole int32 range; nothing written past n. */
TEST(SimdEpilogue, NarrowI32ToI8AllLevels) {
    std::mt19937 rng(23);
    for (int level : levels())
        for (int64_t n = 0; n <= 100; ++n) {
            std::vector<int32_t> src(static_cast<size_t>(n));
            for (auto& v : src) v = static_cast<int32_t>(rng());
            std::vector<int8_t> dst(static_cast<size_t>(n) + 8, 0x55), want = dst;
            for (int64_t i = 0; i < n; ++i)
                want[static_cast<size_t>(i)] = static_cast<int8_t>(src[static_cast<size_t>(i)]);
            simd_narrow_i32_i8(level, src.data(), n, dst.data());
            ASSERT_EQ(dst, want) << cpu_simd_name(level) << " n " << n;
        }
}

TEST(SimdEpilogue, Deinterleave2AllLevels) {
    std::mt19937 rng(21);
    for (int level : levels())
        for (int64_t n = 0; n <= 100; ++n) {
            std::vector<int8_t> src(static_cast<size_t>(n));
            for (auto& v : src) v = static_cast<int8_t>(rng());
            std::vector<int8_t> even(static_cast<size_t>(n) / 2 + 8, 0x55),
                odd(static_cast<size_t>(n) / 2 + 8, 0x55);
            std::vector<int8_t> want_even = even, want_odd = odd;
            for (int64_t i = 0; i < n; ++i)
                (i % 2 ? want_odd : want_even)[static_cast<size_t>(i / 2)] =
                    src[static_cast<size_t>(i)];
            simd_deinterleave2_i8(level, src.data(), n, even.data(), odd.data());
            ASSERT_EQ(even, want_even) << cpu_simd_name(level) << " n " << n;
            ASSERT_EQ(odd, want_odd) << cpu_simd_name(level) << " n " << n;
        }
}
