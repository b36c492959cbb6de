/* The GEMM's fused tail (gemm_tail_plan, gemm_run_tiles_tail) against the reference
 * chain on the reference sums, at every SIMD level this CPU has that fuses it with a bias
 * added in the tail (avx2): the round folded into the bias where no sum can overflow
 * with it, and left as it is where one could (biases near the ends of int32). */
#include <gtest/gtest.h>

#include <stdint.h>
#include <string.h>

#include <random>
#include <vector>

#include "device/cpu/simd/epilogue.h"
#include "device/cpu/simd/epilogue_chain.h"
#include "device/cpu/simd/gemm_s8.h"
#include "device/cpu/simd/simd.h"
#include "device/cpu/simd/simd_config.h"
#include "graph/graph.h"

namespace {

struct TailRun {
    int32_t addend = -1; /* what gemm_tail_plan chose; -1: it fused nothing */
    bool folded = false; /* the chain it kept */
    std::vector<int8_t> out;
};

void no_tile(void*, int32_t, int32_t, int32_t, int32_t, const int32_t*) {
    ADD_FAILURE() << "a whole tile with every column kept left the fused tail";
}

/* A[M][K] times B[K][N] plus bias, through ep into int8, by the fused tail at `level`. */
TailRun run_tail(int level, const std::vector<int32_t>& A, const std::vector<int8_t>& B, int32_t M,
                 int32_t K, int32_t N, const std::vector<int32_t>& bias, const epilogue& ep) {
    TailRun r;
    gemm_weights w;
    EXPECT_EQ(gemm_weights_pack(level, A.data(), M, K, &w), CVML_OK);
    std::vector<uint8_t> packed(gemm_b_bytes(level, K, N) + 64);
    std::vector<int64_t> offsets(static_cast<size_t>(K));
    for (int32_t k = 0; k < K; ++k) offsets[static_cast<size_t>(k)] = int64_t{k} * N;
    const std::vector<int8_t> pad(static_cast<size_t>(N) + 64, 0);
    gemm_pack_b_rows(level, B.data(), offsets.data(), pad.data(), N, K, packed.data());
    ep_tile_plan plan;
    epilogue_plan_tile(level, &ep, 1, STORAGE_INT8, &plan);
    gemm_tail t;
    if (gemm_tail_plan(&w, &plan, bias.data(), &t)) {
        cpu_ep::rc_chain rc;
        memcpy(&rc, t.chain, sizeof rc);
        r.addend = t.addend;
        r.folded = rc.folded;
        const uint16_t all[3] = {0xFFFF, 0xFFFF, 0xFFFF};
        ep_tile_keep keep;
        epilogue_tile_keep(&keep, all, N);
        r.out.assign(static_cast<size_t>(M) * N, 0x55);
        t.out = r.out.data();
        t.out_first = 0;
        t.out_stride = N;
        t.keep = &keep;
        t.out_size = static_cast<int64_t>(r.out.size());
        gemm_run_tiles_tail(&w, packed.data(), N, 0, gemm_tile_count(M, N), &t, no_tile, nullptr);
    }
    gemm_weights_free(&w);
    return r;
}

/* cvm_right_shift's chain (round by b, clip to 8 bits) on 16 rows of a GEMM of depth K,
 * biases from make_bias: at a level that fuses it, the output equals epilogue_value on
 * the wrapping int32 sum plus the bias, and the round is folded exactly when `fold`. */
template <typename MakeBias>
void check_fold(int32_t K, int32_t b, MakeBias make_bias, bool fold, uint32_t seed) {
    const int32_t M = 16, N = GEMM_NT;
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int32_t> d8(-127, 127);
    std::vector<int32_t> A(static_cast<size_t>(M) * K);
    for (auto& v : A) v = d8(rng);
    std::vector<int8_t> B(static_cast<size_t>(K) * N);
    for (auto& v : B) v = static_cast<int8_t>(d8(rng));
    std::vector<int32_t> bias(static_cast<size_t>(M));
    for (int32_t m = 0; m < M; ++m) bias[static_cast<size_t>(m)] = make_bias(m, rng);
    epilogue ep = {};
    ASSERT_TRUE(epilogue_add_rshift(&ep, 8, b));
    int level_count = 0;
    int levels[8];
    const int n_levels = cpu_simd_levels(levels, 8);
    for (int li = 0; li < n_levels; ++li) {
        const int level = levels[li];
        if (!cpu_simd_config_of(level)->gemm_tail_adds_bias) continue;
        ++level_count;
        const TailRun r = run_tail(level, A, B, M, K, N, bias, ep);
        ASSERT_GE(r.addend, 0) << cpu_simd_name(level) << ": the chain was not fused";
        EXPECT_EQ(r.folded, fold) << cpu_simd_name(level) << " K " << K << " b " << b;
        EXPECT_EQ(r.addend, fold ? 1 << (b - 1) : 0) << cpu_simd_name(level);
        for (int32_t m = 0; m < M; ++m)
            for (int32_t n = 0; n < N; ++n) {
                uint32_t acc = static_cast<uint32_t>(bias[static_cast<size_t>(m)]);
                for (int32_t k = 0; k < K; ++k)
                    acc += static_cast<uint32_t>(A[static_cast<size_t>(m) * K + k] *
                                                 B[static_cast<size_t>(k) * N + n]);
                const int32_t want = epilogue_value(&ep, static_cast<int32_t>(acc), 0);
                ASSERT_EQ(r.out[static_cast<size_t>(m) * N + n], want)
                    << cpu_simd_name(level) << " row " << m << " column " << n << " bias "
                    << bias[static_cast<size_t>(m)];
            }
    }
    if (level_count == 0) GTEST_SKIP() << "no level here adds the bias in a fused tail";
}

TEST(SimdGemmTail, RoundFoldsIntoTheBias) {
    // Biases an int8 network has, and the widest an output of precision 32 allows.
    check_fold(
        64, 8,
        [](int32_t, std::mt19937& rng) { return static_cast<int32_t>(rng() % 20001) - 10000; },
        true, 1);
    check_fold(
        300, 20,
        [](int32_t m, std::mt19937& rng) {
            const int32_t edge = (1 << 30) - 1 - static_cast<int32_t>(rng() % 1000);
            return m % 2 ? edge : -edge;
        },
        true, 2);
    // The bound itself: one row's bias exactly the depth's largest sum and the addend
    // below INT32_MAX.
    check_fold(
        32, 4, [](int32_t m, std::mt19937&) { return m == 5 ? INT32_MAX - 32 * 128 * 128 - 8 : m; },
        true, 5);
}

/* Where a bias lies so near an end of int32 that a sum plus the bias plus the addend
 * could overflow (not from a verified model's precisions, but the kernel must not
 * depend on that), the round stays as it is: the sums that do overflow wrap as
 * upstream's int32 arithmetic does, and so do the outputs. */
TEST(SimdGemmTail, RoundStaysWhereTheBiasCouldOverflow) {
    check_fold(
        64, 8,
        [](int32_t m, std::mt19937& rng) {
            const int32_t near = static_cast<int32_t>(rng() % 300000);
            return m % 2 ? INT32_MAX - near : INT32_MIN + near;
        },
        false, 3);
    // Near the bottom alone: a sum that wraps there lands near the top.
    check_fold(
        64, 8,
        [](int32_t, std::mt19937& rng) { return INT32_MIN + static_cast<int32_t>(rng() % 300000); },
        false, 6);
    // One row past the bound by the addend is enough to keep every row's round.
    check_fold(
        32, 4, [](int32_t m, std::mt19937&) { return m == 5 ? INT32_MAX - 32 * 128 * 128 : m; },
        false, 4);
}

}  // namespace
