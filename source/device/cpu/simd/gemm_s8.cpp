#include "device/cpu/simd/gemm_s8.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cvml.h"
#include "device/cpu/simd/epilogue_chain.h"
#include "device/cpu/simd/gemm_s8_impl.h"
#include "device/cpu/simd/simd.h"
#include "device/cpu/simd/simd_config.h"
#include "utility/error.h"
#include "utility/platform.h"
#include "utility/memory.h"

using namespace gemm_impl;

namespace {

/* A kernel that negates weights (avx2's vpsignb) does not survive -128. */
inline void note_weight(const cpu_simd_config* cfg, int8_t v, gemm_weights* out) {
    if (cfg->gemm_notes_min && v == INT8_MIN) out->has_min = 1;
}

}  // namespace

/* ---- scalar ------------------------------------------------------------------------- */

/* A: M x Kp int8 rows; B: Kp x N int8 rows. Sums in uint32 wrap like upstream. */
void gemm_impl::tile_scalar(const gemm_weights* a, const void* b_any, int32_t N, int32_t m0,
                            int32_t rows, int32_t n0, int32_t cols, int32_t* tile) {
    const int8_t* b = static_cast<const int8_t*>(b_any);
    const int8_t* w = static_cast<const int8_t*>(a->data);
    for (int32_t r = 0; r < rows; ++r) {
        uint32_t acc[GEMM_NT] = {0};
        const int8_t* wr = w + static_cast<size_t>(m0 + r) * static_cast<size_t>(a->Kp);
        for (int32_t k = 0; k < a->K; ++k) {
            int32_t wv = wr[k];
            const int8_t* br = b + static_cast<size_t>(k) * static_cast<size_t>(N) + n0;
            for (int32_t c = 0; c < cols; ++c)
                acc[c] += static_cast<uint32_t>(wv * static_cast<int32_t>(br[c]));
        }
        for (int32_t c = 0; c < cols; ++c) tile[r * GEMM_NT + c] = static_cast<int32_t>(acc[c]);
    }
}

namespace {

/* Packs M x K weights given as int32 or int8 values (cast to int8 as upstream's conv2d
 * does) for `level`. */
template <typename T>
int pack_weights(int level, const T* w, int32_t M, int32_t K, gemm_weights* out) {
    memset(out, 0, sizeof(*out));
    const cpu_simd_config* cfg = cpu_simd_config_of(level);
    out->level = cfg->level;
    out->M = M;
    out->K = K;
    out->Mp = round_up(M, GEMM_MR);
    out->Kp = round_up(K, cfg->gemm_k_pad);
    size_t elems = static_cast<size_t>(out->Mp) * static_cast<size_t>(out->Kp);
    out->data = cvml_aligned_alloc(64, elems);
    out->start =
        static_cast<int32_t*>(cvml_mem_calloc(static_cast<size_t>(out->Mp), sizeof(int32_t)));
    if (!out->data || !out->start) {
        gemm_weights_free(out);
        return cvml_fail(CVML_ERR_RUNTIME,
                         "out of memory packing %" PRId32 " x %" PRId32 " weights", M, K);
    }
    memset(out->data, 0, elems);
    for (int32_t m = 0; m < M; ++m) {
        uint32_t sum = 0;
        for (int32_t k = 0; k < K; ++k) {
            int8_t v = static_cast<int8_t>(w[static_cast<size_t>(m) * K + k]);
            sum += static_cast<uint32_t>(static_cast<int32_t>(v));
            note_weight(cfg, v, out);
            size_t mb = static_cast<size_t>(m / GEMM_MR), r = static_cast<size_t>(m % GEMM_MR);
            size_t blk = mb * GEMM_MR * static_cast<size_t>(out->Kp);
            if (cfg->gemm_a_layout == GEMM_A_K8)  // 8-value steps of K, row pairs side by side
                static_cast<int8_t*>(
                    out->data)[blk + static_cast<size_t>(k / 8) * GEMM_MR * 8 + (r / 2) * 16 +
                               (r % 2) * 8 + static_cast<size_t>(k % 8)] = v;
            else if (cfg->gemm_a_layout == GEMM_A_K4)  // blocks interleaved by 4
                static_cast<int8_t*>(out->data)[blk + static_cast<size_t>(k / 4) * GEMM_MR * 4 +
                                                r * 4 + static_cast<size_t>(k % 4)] = v;
            else  // GEMM_A_ROWS: zero-padded int8 rows
                static_cast<int8_t*>(out->data)[static_cast<size_t>(m) * out->Kp + k] = v;
        }
        out->start[m] = static_cast<int32_t>(0u - sum * 128u);
    }
    return CVML_OK;
}

}  // namespace

int gemm_weights_pack(int level, const int32_t* w, int32_t M, int32_t K, gemm_weights* out) {
    return pack_weights(level, w, M, K, out);
}

int gemm_weights_plain(int level, const int8_t* w, int32_t M, int32_t K, gemm_weights* out) {
    // The scalar level keeps its own copy (the reference loops read Kp-long rows).
    const cpu_simd_config* cfg = cpu_simd_config_of(level);
    if (!cfg->gemm_a_in_place) return pack_weights(level, w, M, K, out);
    memset(out, 0, sizeof(*out));
    out->level = level;
    out->M = M;
    out->K = K;
    out->Mp = round_up(M, GEMM_MR);
    out->Kp = round_up(K, GEMM_KG);
    out->plain = w;
    out->lda = K;
    int32_t tail = M % GEMM_MR;
    size_t tail_bytes = static_cast<size_t>(GEMM_MR) * static_cast<size_t>(out->Kp);
    out->data = tail ? cvml_aligned_alloc(64, tail_bytes) : nullptr;
    out->start =
        static_cast<int32_t*>(cvml_mem_calloc(static_cast<size_t>(out->Mp), sizeof(int32_t)));
    if ((tail && !out->data) || !out->start) {
        gemm_weights_free(out);
        return cvml_fail(CVML_ERR_RUNTIME,
                         "out of memory packing %" PRId32 " x %" PRId32 " weights", M, K);
    }
    if (tail) memset(out->data, 0, tail_bytes);
    int32_t tail0 = M - tail;
    for (int32_t m = 0; m < M; ++m) {
        uint32_t sum = 0;
        for (int32_t k = 0; k < K; ++k) {
            int8_t v = w[static_cast<size_t>(m) * K + k];
            sum += static_cast<uint32_t>(static_cast<int32_t>(v));
            note_weight(cfg, v, out);
            // The last partial block: interleaved by 4 (avx512) or zero-padded rows (avx2).
            if (m >= tail0 && cfg->gemm_a_layout == GEMM_A_K4)
                static_cast<int8_t*>(
                    out->data)[static_cast<size_t>(k / 4) * GEMM_MR * 4 +
                               static_cast<size_t>(m - tail0) * 4 + static_cast<size_t>(k % 4)] = v;
            else if (m >= tail0)
                static_cast<int8_t*>(out->data)[static_cast<size_t>(m - tail0) * out->Kp + k] = v;
        }
        out->start[m] = static_cast<int32_t>(0u - sum * 128u);
    }
    return CVML_OK;
}

void gemm_weights_free(gemm_weights* w) {
    cvml_aligned_free(w->data);
    cvml_mem_free(w->start);
    w->data = nullptr;
    w->start = nullptr;
}

namespace {

/* start[m] += per_row[m] (when given) + all, wrapping. */
int fold_into_start(gemm_weights* w, const int32_t* per_row, int32_t all) {
    if (!cpu_simd_config_of(w->level)->gemm_folds_start || !w->start) return 0;
    for (int32_t m = 0; m < w->M; ++m)
        w->start[m] = static_cast<int32_t>(static_cast<uint32_t>(w->start[m]) +
                                           static_cast<uint32_t>(per_row ? per_row[m] : 0) +
                                           static_cast<uint32_t>(all));
    return 1;
}

}  // namespace

int gemm_weights_fold_bias(gemm_weights* w, const int32_t* bias) {
    return fold_into_start(w, bias, 0);
}

int gemm_weights_fold_add(gemm_weights* w, int32_t v) {
    return fold_into_start(w, nullptr, v);
}

int32_t gemm_b_cols(int level, int32_t N) {
    return round_up(N, cpu_simd_config_of(level)->gemm_panel);
}

size_t gemm_b_bytes(int level, int32_t K, int32_t N) {
    const cpu_simd_config* cfg = cpu_simd_config_of(level);
    const size_t cols = static_cast<size_t>(gemm_b_cols(level, N));
    const size_t panels = static_cast<size_t>(round_up(K, GEMM_KG)) * cols +
                          cols / static_cast<size_t>(cfg->gemm_panel) * cfg->gemm_b_panel_tail;
    return cfg->gemm_b_head + cfg->gemm_b_copies * panels;
}

void gemm_pack_b_group(int level, const int8_t* const rows[GEMM_KG], int32_t N, int32_t K,
                       int32_t k4, void* packed) {
    cpu_simd_config_of(level)->gemm_pack_group(rows, N, K, k4, packed);
}

#if CVML_SIMD_X86
void gemm_impl::pack_group_avx512(const int8_t* const rows[GEMM_KG], int32_t N, int32_t K,
                                  int32_t k4, void* packed) {
    int32_t Kp = round_up(K, GEMM_KG);
    uint8_t* base = static_cast<uint8_t*>(packed);
    size_t panel_bytes = static_cast<size_t>(Kp / 4) * 64;
    int32_t n = 0;
    bool all = rows[0] && rows[1] && rows[2] && rows[3];
    int32_t Np = round_up(N, 16);
    if (all) {
        for (; n < Np; n += 64) {
            const int32_t panels = (Np - n) / 16 < 4 ? (Np - n) / 16 : 4;
            pack64_avx512(
                rows, n, N - n, panels,
                base + static_cast<size_t>(n / 16) * panel_bytes + static_cast<size_t>(k4) * 64,
                panel_bytes);
        }
        return;
    }
    for (; n < Np; ++n) {
        uint8_t* d = base + static_cast<size_t>(n / 16) * panel_bytes +
                     static_cast<size_t>(k4) * 64 + static_cast<size_t>(n % 16) * 4;
        for (int i = 0; i < 4; ++i)
            d[i] = rows[i] ? static_cast<uint8_t>((n < N ? rows[i][n] : 0) ^ 0x80) : 0;
    }
}
#endif

void gemm_impl::pack_group_scalar(const int8_t* const rows[GEMM_KG], int32_t N, int32_t K,
                                  int32_t k4, void* packed) {
    (void)K;
    int8_t* base = static_cast<int8_t*>(packed);
    for (int i = 0; i < GEMM_KG; ++i) {
        int8_t* d = base + (static_cast<size_t>(k4) * 4 + static_cast<size_t>(i)) * N;
        if (rows[i])
            memcpy(d, rows[i], static_cast<size_t>(N));
        else
            memset(d, 0, static_cast<size_t>(N));
    }
}

void gemm_pack_b_rows(int level, const int8_t* base, const int64_t* offsets, const int8_t* pad,
                      int32_t N, int32_t K, void* packed) {
    const cpu_simd_config* cfg = cpu_simd_config_of(level);
    if (cfg->gemm_pack_rows) {
        cfg->gemm_pack_rows(base, offsets, pad, N, K, packed);
        return;
    }
    // Only the avx512 packer reads pad (rows past K); here they are zeros.
    for (int32_t k4 = 0; k4 * GEMM_KG < K; ++k4) {
        // Rows past K must pack to zeros: the weights read in place have other bytes
        // there (the next row's).
        const int8_t* rows[GEMM_KG];
        group_rows(base, offsets, nullptr, K, k4, rows);
        cfg->gemm_pack_group(rows, N, K, k4, packed);
    }
}

int64_t gemm_tile_count(int32_t M, int32_t N) {
    int64_t mb = (M + GEMM_MR - 1) / GEMM_MR;
    int64_t nt = (N + GEMM_NT - 1) / GEMM_NT;
    return mb * nt;
}

#if CVML_SIMD_X86
namespace {

/* Whether the chain's round, ((s >> (b - 1)) + 1) >> 1 of the sums plus the bias, may
 * become (s + bias + 2^(b - 1)) >> b, the addend added with the bias (fewer instructions
 * a vector in a level's tail that adds the bias): the same wherever the sum plus the bias
 * plus the addend does not overflow, so wherever no row's bias can take it there, the
 * sums lying within K * 128 * 128 either way of 0 (int8 operands). Checked at every run:
 * a bias may be a graph input, its values new each run (M values against the GEMM's
 * M * N * K products). */
bool rounding_folds(const gemm_weights* a, const cpu_ep::rc_chain& rc, const int32_t* bias) {
    if (rc.folded || rc.shift < 1 || rc.shift > 31) return false;
    const int64_t sums = int64_t{a->K} * 128 * 128, addend = int64_t{1} << (rc.shift - 1);
    int64_t lo = 0, hi = 0;
    for (int32_t m = 0; bias && m < a->M; ++m) {
        lo = bias[m] < lo ? bias[m] : lo;
        hi = bias[m] > hi ? bias[m] : hi;
    }
    return hi + sums + addend <= INT32_MAX && lo - sums >= INT32_MIN;
}

}  // namespace
#endif

int gemm_tail_plan(const gemm_weights* a, const ep_tile_plan* plan, const int32_t* bias,
                   gemm_tail* t) {
    memset(t, 0, sizeof *t);
#if CVML_SIMD_X86
    const cpu_simd_config* cfg = cpu_simd_config_of(a->level);
    cpu_ep::rc_chain rc;
    if (!cfg->gemm_tiles_tail || !cpu_ep::match_rc_chain(plan->ep, &rc) || rc.pre ||
        !cpu_ep::rc_saturates_to_i8(rc, plan->out_storage))
        return 0;
    // A level whose sums start from the bias and the rounding addend has no add left.
    if (!cfg->gemm_tail_adds_bias && (bias || !rc.folded)) return 0;
    if (rc.add && rc.add->src_storage != STORAGE_INT8) return 0;
    if (cfg->gemm_tail_adds_bias && rounding_folds(a, rc, bias)) {
        t->addend = 1 << (rc.shift - 1);
        rc.folded = true;
    }
    static_assert(sizeof rc <= sizeof t->chain, "a tail holds its chain");
    memcpy(t->chain, &rc, sizeof rc);
    t->kind = GEMM_TAIL_ON | (rc.add ? GEMM_TAIL_ADD : 0);
    t->bias = bias;
    return 1;
#else
    (void)a;
    (void)plan;
    (void)bias;
    return 0;
#endif
}

void gemm_run_tiles(const gemm_weights* a, const void* packed_b, int32_t N, int64_t t0, int64_t t1,
                    gemm_tile_fn fn, void* arg) {
    gemm_run_tiles_tail(a, packed_b, N, t0, t1, nullptr, fn, arg);
}

void gemm_run_tiles_tail(const gemm_weights* a, const void* packed_b, int32_t N, int64_t t0,
                         int64_t t1, const gemm_tail* tail, gemm_tile_fn fn, void* arg) {
    const cpu_simd_config* cfg = cpu_simd_config_of(a->level);
    if (tail && tail->kind && cfg->gemm_tiles_tail) {
        cfg->gemm_tiles_tail(a, static_cast<const uint8_t*>(packed_b), nullptr, N, t0, t1, tail, fn,
                             arg);
        return;
    }
    alignas(64) int32_t tile[GEMM_MR * GEMM_NT];
    tile_walk w(a->M, N, t0);
    for (int64_t t = t0; t < t1; ++t, w.next()) {
        cfg->gemm_tile(a, packed_b, N, w.m0, w.rows, w.n0, w.cols, tile);
        fn(arg, w.m0, w.rows, w.n0, w.cols, tile);
    }
}

void gemm_pack_b_select(int level, const int8_t* base, const int64_t* offsets, const int8_t* pad,
                        int32_t K, const gemm_select* sel, void* packed) {
    const cpu_simd_config* cfg = cpu_simd_config_of(level);
    // Dense strips are chosen only where the level packs selections (dense_pays).
    if (!cfg->gemm_pack_select) abort();
    cfg->gemm_pack_select(base, offsets, pad, K, sel, static_cast<uint8_t*>(packed));
}

int gemm_select_ok(const gemm_select* sel) {
    if (sel->panels < 1 || sel->panels > 3 || sel->from[0] != 0) return 0;
    if (sel->panels > 1 && sel->from[1] != 1 && sel->from[1] != 2) return 0;
    if (sel->panels > 2 && sel->from[2] != 2) return 0;
    for (int32_t i = 0; i < sel->panels; ++i)
        for (int32_t j = 0; j < 16; ++j)
            if (sel->idx[i][j] >= 32) return 0;
    return 1;
}

int gemm_narrow_ok(const gemm_weights* a) {
    return cpu_simd_config_of(a->level)->gemm_narrow_block && a->plain && a->M % GEMM_MR == 0;
}

int32_t gemm_narrow_cols(const gemm_weights* a) {
    return gemm_narrow_ok(a) ? cpu_simd_config_of(a->level)->gemm_narrow_max_cols : 0;
}

size_t gemm_narrow_stride(int32_t K) {
    return static_cast<size_t>(round_up(K, 64));
}

void gemm_run_narrow(const gemm_weights* a, const uint8_t* cols, int32_t c, int32_t n0, int64_t mb0,
                     int64_t mb1, gemm_tile_fn fn, void* arg) {
    const cpu_simd_config* cfg = cpu_simd_config_of(a->level);
    if (!cfg->gemm_narrow_block) abort();  // callers ask gemm_narrow_ok() first
    alignas(64) int32_t tile[GEMM_MR * GEMM_NT];
    const size_t stride = gemm_narrow_stride(a->K);
    for (int64_t mb = mb0; mb < mb1; ++mb) {
        const int32_t m0 = static_cast<int32_t>(mb) * GEMM_MR;
        cfg->gemm_narrow_block(a, cols, stride, c, m0, tile, mb1 - mb0 > 1);
        fn(arg, m0, GEMM_MR, n0, c, tile);
    }
}

void gemm_weights_prefetch(const gemm_weights* a, int64_t mb) {
    if (mb < 0 || mb * GEMM_MR >= a->M) return;
    // A block is contiguous either way: GEMM_MR rows read in place, or packed.
    const bool in_place = a->plain && (mb + 1) * GEMM_MR <= a->M;
    const int8_t* block =
        in_place   ? a->plain + static_cast<size_t>(mb) * GEMM_MR * static_cast<size_t>(a->lda)
        : a->plain ? static_cast<const int8_t*>(a->data)
                   : static_cast<const int8_t*>(a->data) +
                         static_cast<size_t>(mb) * GEMM_MR * static_cast<size_t>(a->Kp);
    const size_t bytes =
        static_cast<size_t>(GEMM_MR) * static_cast<size_t>(in_place ? a->lda : a->Kp);
    for (size_t at = 0; at < bytes; at += 64) __builtin_prefetch(block + at, 0, 2);
}

uint8_t gemm_taps_zero(int level) {
    return cpu_simd_config_of(level)->gemm_taps_zero;
}

void gemm_interleave4(int level, const int8_t* const rows[4], int64_t lo, int64_t w, int64_t wq,
                      uint8_t* dst) {
    cpu_simd_config_of(level)->gemm_interleave4(rows, lo, w, wq, dst);
}

void gemm_impl::interleave4_scalar(const int8_t* const rows[4], int64_t lo, int64_t w, int64_t wq,
                                   uint8_t* dst) {
    for (int64_t j = 0; j < wq; ++j)
        for (int i = 0; i < 4; ++i) {
            const int64_t x = j - lo;
            const int8_t v = rows[i] && x >= 0 && x < w ? rows[i][x] : 0;
            dst[4 * j + i] = static_cast<uint8_t>(static_cast<uint8_t>(v) ^ 0x80u);
        }
}

void gemm_run_tiles_taps(const gemm_weights* a, const uint8_t* img, const int64_t* boff, int32_t N,
                         int64_t t0, int64_t t1, gemm_tile_fn fn, void* arg) {
    gemm_run_tiles_taps_tail(a, img, boff, N, t0, t1, nullptr, fn, arg);
}

void gemm_run_tiles_taps_tail(const gemm_weights* a, const uint8_t* img, const int64_t* boff,
                              int32_t N, int64_t t0, int64_t t1, const gemm_tail* tail,
                              gemm_tile_fn fn, void* arg) {
    const cpu_simd_config* cfg = cpu_simd_config_of(a->level);
    if (tail && tail->kind && cfg->gemm_tiles_tail) {
        cfg->gemm_tiles_tail(a, img, boff, N, t0, t1, tail, fn, arg);
        return;
    }
    // Only levels with taps-mode kernels plan taps mode (gemm_tile_taps).
    if (!cfg->gemm_tile_taps) abort();
    alignas(64) int32_t tile[GEMM_MR * GEMM_NT];
    const int64_t mblocks = (a->M + GEMM_MR - 1) / GEMM_MR;
    for (int64_t t = t0; t < t1; ++t) {
        const int32_t m0 = static_cast<int32_t>(t % mblocks) * GEMM_MR;
        const int32_t n0 = static_cast<int32_t>(t / mblocks) * GEMM_NT;
        const int32_t cols = N - n0 < GEMM_NT ? N - n0 : GEMM_NT;
        const int32_t rows = a->M - m0 < GEMM_MR ? a->M - m0 : GEMM_MR;
        cfg->gemm_tile_taps(a, img, boff, m0, n0, cols, tile);
        fn(arg, m0, rows, n0, cols, tile);
    }
}
