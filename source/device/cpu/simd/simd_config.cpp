/* The SIMD levels' records (simd_config.h), one per level this build compiles. Each
 * names only kernels compiled into the build: the x86 records exist where
 * CVML_SIMD_X86, the aarch64 ones where CVML_SIMD_AARCH64; the scalar record always. The
 * small adapters below give a level's kernels the records' common signatures. */
#include "device/cpu/simd/simd_config.h"

#include "device/cpu/op/conv2d_fast.h"
#include "device/cpu/op/max_pool2d_fast.h"
#include "device/cpu/simd/arm/cortexm/epilogue.h"
#include "device/cpu/simd/epilogue_chain.h"
#include "device/cpu/simd/gemm_s8_impl.h"
#include "device/cpu/simd/simd.h"

/* The scalar level's rows of grouped conv2d and max_pool2d live here rather than in
 * op/: an operator left out of a build (CVML_OPERATORS) has no op/ file compiled, and
 * the records always are. */
void cpu_conv2d::acc_row_plain(uint32_t* acc, const int32_t* src, uint32_t w, int64_t n) {
    acc_row_body(acc, src, w, n);
}

void cpu_conv2d::depthwise_plane_plain(const conv_grouped* f, const int8_t* img,
                                       const int64_t* taps, const int32_t* w, int32_t* acc) {
    const conv_geom& g = f->g;
    for (int64_t y = 0; y < g.oh; ++y)
        for (int64_t x = 0; x < g.ow; ++x) {
            uint32_t v = 0;
            for (int64_t t = 0; t < g.kh * g.kw; ++t)
                v += static_cast<uint32_t>(img[y * f->wq + taps[t] + x]) *
                     static_cast<uint32_t>(w[t]);
            acc[y * g.ow + x] = static_cast<int32_t>(v);
        }
}

void cpu_max_pool2d::max_row_plain(int32_t* acc, const int32_t* src, int64_t n) {
    max_row_body(acc, src, n);
}

/* int8 storage in and out: 64 lanes a vector. */
void cpu_max_pool2d::max_row8_plain(int8_t* acc, const int8_t* src, int64_t n) {
    max_row_body(acc, src, n);
}

namespace {

using namespace gemm_impl;

/* The scalar level: the reference loops. On a Cortex-M build with its kernels the
 * scalar level's tails are theirs (the level is the core's, fixed at compile time). */
#if CVML_SIMD_CORTEXM
constexpr auto kScalarApply = cm_epilogue_apply;
#else
constexpr auto kScalarApply = cpu_ep::apply_scalar;
#endif
const cpu_simd_config kScalar = {
    /* level */ CPU_SIMD_SCALAR,
    /* gemm_panel */ 1,
    /* gemm_k_pad */ GEMM_KG,
    /* gemm_a_layout */ GEMM_A_ROWS,
    /* gemm_a_in_place */ false,
    /* gemm_notes_min */ false,
    /* gemm_folds_start */ false,
    /* gemm_taps_zero */ 0x80,
    /* gemm_b_head */ 0,
    /* gemm_b_panel_tail */ 0,
    /* gemm_b_copies */ 1,
    /* gemm_tile */ tile_scalar,
    /* gemm_pack_group */ pack_group_scalar,
    /* gemm_pack_rows */ nullptr,
    /* gemm_interleave4 */ interleave4_scalar,
    /* gemm_pack_select */ nullptr,
    /* gemm_narrow_block */ nullptr,
    /* gemm_narrow_max_cols */ 0,
    /* gemm_tiles_tail */ nullptr,
    /* gemm_tail_adds_bias */ false,
    /* gemm_tile_taps */ nullptr,
    /* taps_in_place */ false,
    /* image_rows_i8 */ nullptr,
    /* image_rows_max_sw */ 0,
    /* dense_strips_min_saving */ 0,
    /* bcast_items */ nullptr,
    /* bcast_max_pixels */ 0,
    /* bcast_1x1 */ false,
    /* acc_row */ cpu_conv2d::acc_row_plain,
    /* dw_image */ nullptr,
    /* dw_image_max_sw */ 0,
    /* dw_plane */ cpu_conv2d::depthwise_plane_plain,
    /* dw_1x1 */ nullptr,
    /* dw_direct */ nullptr,
    /* dw_direct_max_sw */ 0,
    /* dw_direct_window */ 0,
    /* dw_direct_max_kw */ 0,
    /* dw_direct_max_rows */ 0,
    /* max_row */ cpu_max_pool2d::max_row_plain,
    /* max_row8 */ cpu_max_pool2d::max_row8_plain,
    /* pool_rows8 */ nullptr,
    /* pool_phase8_s2 */ nullptr,
    /* pool_direct8 */ nullptr,
    /* vector_tails */ false,
    /* ep_apply */ kScalarApply,
    /* ep_apply_tile */ nullptr,
    /* ep_plan_tile */ nullptr,
    /* narrow_i32_i8 */ cpu_ep::narrow_scalar,
    /* compact_i32 */ cpu_ep::compact_scalar,
    /* compact_max_vectors */ INT32_MAX,
    /* deinterleave2_i8 */ cpu_ep::deinterleave2_scalar,
};

#if CVML_SIMD_X86
void tile_x512(const gemm_weights* a, const void* b, int32_t, int32_t m0, int32_t, int32_t n0,
               int32_t cols, int32_t* tile) {
    tile_avx512(a, static_cast<const uint8_t*>(b), m0, n0, cols, tile);
}
void pack_rows_x512(const int8_t* base, const int64_t* offsets, const int8_t* pad, int32_t N,
                    int32_t K, void* packed) {
    pack_rows_avx512(base, offsets, pad, N, K, static_cast<uint8_t*>(packed));
}
void tile_x2(const gemm_weights* a, const void* b, int32_t, int32_t m0, int32_t, int32_t n0,
             int32_t cols, int32_t* tile) {
    tile_avx2(a, static_cast<const int8_t*>(b), m0, n0, cols, tile);
}
void pack_group_x2(const int8_t* const rows[GEMM_KG], int32_t N, int32_t K, int32_t k4,
                   void* packed) {
    pack_group_avx2(rows, N, round_up(K, GEMM_KG), k4, static_cast<int8_t*>(packed));
}
void pack_rows_x2(const int8_t* base, const int64_t* offsets, const int8_t*, int32_t N, int32_t K,
                  void* packed) {
    pack_rows_avx2(base, offsets, N, K, static_cast<int8_t*>(packed));
}
void run_tiles_tail_x2(const gemm_weights* a, const uint8_t* b, const int64_t*, int32_t N,
                       int64_t t0, int64_t t1, const gemm_tail* tail, gemm_tile_fn fn, void* arg) {
    run_tiles_tail_avx2(a, reinterpret_cast<const int8_t*>(b), N, t0, t1, tail, fn, arg);
}
void pack_select_x2(const int8_t* base, const int64_t* offsets, const int8_t*, int32_t K,
                    const gemm_select* sel, uint8_t* packed) {
    pack_select_avx2(base, offsets, K, sel, reinterpret_cast<int8_t*>(packed));
}

const cpu_simd_config kAvx2 = {
    /* level */ CPU_SIMD_AVX2,
    /* gemm_panel */ AVX2_PANEL,
    /* gemm_k_pad */ GEMM_KG,
    /* gemm_a_layout */ GEMM_A_ROWS,
    /* gemm_a_in_place */ true,
    /* gemm_notes_min */ true,
    /* gemm_folds_start */ false,
    /* gemm_taps_zero */ 0x00,
    /* gemm_b_head */ AVX2_B_HEAD,
    /* gemm_b_panel_tail */ AVX2_PANEL_SUMS,
    /* gemm_b_copies */ 2,
    /* gemm_tile */ tile_x2,
    /* gemm_pack_group */ pack_group_x2,
    /* gemm_pack_rows */ pack_rows_x2,
    /* gemm_interleave4 */ interleave4_avx2,
    /* gemm_pack_select */ pack_select_x2,
    /* gemm_narrow_block */ narrow_block_avx2,
    /* gemm_narrow_max_cols */ 2,
    /* gemm_tiles_tail */ run_tiles_tail_x2,
    /* gemm_tail_adds_bias */ true,
    /* gemm_tile_taps */ nullptr,
    /* taps_in_place */ false,
    /* image_rows_i8 */ cpu_conv2d::image_rows_i8_avx2,
    /* image_rows_max_sw */ 2,
    /* dense_strips_min_saving */ 0,
    /* bcast_items */ cpu_conv2d::bcast_items_avx2,
    /* bcast_max_pixels */ 7,
    /* bcast_1x1 */ true,
    /* acc_row */ cpu_conv2d::acc_row_avx2,
    /* dw_image */ nullptr,
    /* dw_image_max_sw */ 0,
    /* dw_plane */ cpu_conv2d::depthwise_plane_avx2,
    /* dw_1x1 */ nullptr,
    /* dw_direct */ cpu_conv2d::depthwise_direct_avx2,
    /* dw_direct_max_sw */ 2,
    /* dw_direct_window */ 9,
    /* dw_direct_max_kw */ 8,
    /* dw_direct_max_rows */ cpu_conv2d::kDwDirectAvx2MaxRows,
    /* max_row */ cpu_max_pool2d::max_row_avx2,
    /* max_row8 */ cpu_max_pool2d::max_row8_avx2,
    /* pool_rows8 */ cpu_max_pool2d::pool_rows8_avx2,
    /* pool_phase8_s2 */ nullptr,
    /* pool_direct8 */ cpu_max_pool2d::pool_direct8_avx2,
    /* vector_tails */ true,
    /* ep_apply */ cpu_ep::apply_avx2,
    /* ep_apply_tile */ nullptr,
    /* ep_plan_tile */ cpu_ep::plan_tile_avx2,
    /* narrow_i32_i8 */ cpu_ep::narrow_avx2,
    /* compact_i32 */ cpu_ep::compact_scalar,
    /* compact_max_vectors */ INT32_MAX,
    /* deinterleave2_i8 */ cpu_ep::deinterleave2_avx2,
};

/* The direct depthwise's domain: each 128-bit lane's taps lie in a 16-byte window
 * starting at dword sw * L, in at most 4 tap groups; any kernel height. */
const cpu_simd_config kAvx512 = {
    /* level */ CPU_SIMD_AVX512,
    /* gemm_panel */ 16,
    /* gemm_k_pad */ GEMM_KG,
    /* gemm_a_layout */ GEMM_A_K4,
    /* gemm_a_in_place */ true,
    /* gemm_notes_min */ false,
    /* gemm_folds_start */ true,
    /* gemm_taps_zero */ 0x80,
    /* gemm_b_head */ 0,
    /* gemm_b_panel_tail */ 0,
    /* gemm_b_copies */ 1,
    /* gemm_tile */ tile_x512,
    /* gemm_pack_group */ pack_group_avx512,
    /* gemm_pack_rows */ pack_rows_x512,
    /* gemm_interleave4 */ interleave4_avx512,
    /* gemm_pack_select */ pack_select_avx512,
    /* gemm_narrow_block */ narrow_block_avx512,
    /* gemm_narrow_max_cols */ GEMM_NARROW,
    /* gemm_tiles_tail */ run_tiles_tail_avx512,
    /* gemm_tail_adds_bias */ false,
    /* gemm_tile_taps */ tile_taps_avx512,
    /* taps_in_place */ true,
    /* image_rows_i8 */ cpu_conv2d::image_rows_i8_avx512,
    /* image_rows_max_sw */ 2,
    /* dense_strips_min_saving */ 5,
    /* bcast_items */ cpu_conv2d::bcast_items_avx512,
    /* bcast_max_pixels */ 14,
    /* bcast_1x1 */ true,
    /* acc_row */ cpu_conv2d::acc_row_avx512,
    /* dw_image */ cpu_conv2d::depthwise_image_avx512,
    /* dw_image_max_sw */ 2,
    /* dw_plane */ cpu_conv2d::depthwise_plane_avx512,
    /* dw_1x1 */ nullptr,
    /* dw_direct */ cpu_conv2d::depthwise_direct_avx512,
    /* dw_direct_max_sw */ 2,
    /* dw_direct_window */ 15,
    /* dw_direct_max_kw */ 16,
    /* dw_direct_max_rows */ INT64_MAX,
    /* max_row */ cpu_max_pool2d::max_row_avx512,
    /* max_row8 */ cpu_max_pool2d::max_row8_avx512,
    /* pool_rows8 */ cpu_max_pool2d::pool_rows8_avx512,
    /* pool_phase8_s2 */ cpu_max_pool2d::phase_planes8_s2_avx512,
    /* pool_direct8 */ nullptr,
    /* vector_tails */ true,
    /* ep_apply */ cpu_ep::apply_avx512,
    /* ep_apply_tile */ cpu_ep::apply_tile_avx512,
    /* ep_plan_tile */ cpu_ep::plan_tile_avx512,
    /* narrow_i32_i8 */ cpu_ep::narrow_avx512,
    /* compact_i32 */ cpu_ep::compact_avx512,
    /* compact_max_vectors */ INT32_MAX,
    /* deinterleave2_i8 */ cpu_ep::deinterleave2_avx512,
};
#endif

#if CVML_SIMD_AARCH64
/* aarch64's levels differ only in the GEMM's multiply (and i8mm's weight layout); B's
 * packing, taps mode's image, depthwise and the tails are shared NEON code. */
void pack_group_a64(const int8_t* const rows[GEMM_KG], int32_t N, int32_t K, int32_t k4,
                    void* packed) {
    pack_group_arm(rows, N, round_up(K, GEMM_KG), k4, static_cast<int8_t*>(packed));
}
void interleave4_a64(const int8_t* const rows[4], int64_t lo, int64_t w, int64_t wq, uint8_t* dst) {
    interleave4_arm(rows, lo, w, wq, reinterpret_cast<int8_t*>(dst));
}
void tile_neon_any(const gemm_weights* a, const void* b, int32_t, int32_t m0, int32_t, int32_t n0,
                   int32_t cols, int32_t* tile) {
    tile_neon(a, static_cast<const int8_t*>(b), m0, n0, cols, tile);
}
void tile_dotprod_any(const gemm_weights* a, const void* b, int32_t, int32_t m0, int32_t,
                      int32_t n0, int32_t cols, int32_t* tile) {
    tile_dotprod(a, static_cast<const int8_t*>(b), m0, n0, cols, tile);
}
void tile_i8mm_any(const gemm_weights* a, const void* b, int32_t, int32_t m0, int32_t, int32_t n0,
                   int32_t cols, int32_t* tile) {
    tile_i8mm(a, static_cast<const int8_t*>(b), m0, n0, cols, tile);
}
void taps_neon_any(const gemm_weights* a, const uint8_t* img, const int64_t* boff, int32_t m0,
                   int32_t n0, int32_t cols, int32_t* tile) {
    tile_taps_neon(a, reinterpret_cast<const int8_t*>(img), boff, m0, n0, cols, tile);
}
void taps_dotprod_any(const gemm_weights* a, const uint8_t* img, const int64_t* boff, int32_t m0,
                      int32_t n0, int32_t cols, int32_t* tile) {
    tile_taps_dotprod(a, reinterpret_cast<const int8_t*>(img), boff, m0, n0, cols, tile);
}
void taps_i8mm_any(const gemm_weights* a, const uint8_t* img, const int64_t* boff, int32_t m0,
                   int32_t n0, int32_t cols, int32_t* tile) {
    tile_taps_i8mm(a, reinterpret_cast<const int8_t*>(img), boff, m0, n0, cols, tile);
}

constexpr cpu_simd_config arm_config(int level, int32_t k_pad, int32_t layout,
                                     decltype(cpu_simd_config::gemm_tile) tile,
                                     decltype(cpu_simd_config::gemm_tile_taps) taps) {
    return {
        /* level */ level,
        /* gemm_panel */ ARM_PANEL,
        /* gemm_k_pad */ k_pad,
        /* gemm_a_layout */ layout,
        /* gemm_a_in_place */ false,
        /* gemm_notes_min */ false,
        /* gemm_folds_start */ false,
        /* gemm_taps_zero */ 0x00,
        /* gemm_b_head */ 0,
        /* gemm_b_panel_tail */ 0,
        /* gemm_b_copies */ 1,
        /* gemm_tile */ tile,
        /* gemm_pack_group */ pack_group_a64,
        /* gemm_pack_rows */ nullptr,
        /* gemm_interleave4 */ interleave4_a64,
        /* gemm_pack_select */ nullptr,
        /* gemm_narrow_block */ nullptr,
        /* gemm_narrow_max_cols */ 0,
        /* gemm_tiles_tail */ nullptr,
        /* gemm_tail_adds_bias */ false,
        /* gemm_tile_taps */ taps,
        /* taps_in_place */ false,
        /* image_rows_i8 */ nullptr,
        /* image_rows_max_sw */ 0,
        /* dense_strips_min_saving */ 0,
        /* bcast_items */ nullptr,
        /* bcast_max_pixels */ 0,
        /* bcast_1x1 */ false,
        /* acc_row */ cpu_conv2d::acc_row_plain,
        /* dw_image */ nullptr,
        /* dw_image_max_sw */ 0,
        /* dw_plane */ cpu_conv2d::depthwise_plane_neon,
        /* dw_1x1 */ cpu_conv2d::depthwise_1x1_neon,
        /* dw_direct */ nullptr,
        /* dw_direct_max_sw */ 0,
        /* dw_direct_window */ 0,
        /* dw_direct_max_kw */ 0,
        /* dw_direct_max_rows */ 0,
        /* max_row */ cpu_max_pool2d::max_row_plain,
        /* max_row8 */ cpu_max_pool2d::max_row8_plain,
        /* pool_rows8 */ nullptr,
        /* pool_phase8_s2 */ nullptr,
        /* pool_direct8 */ nullptr,
        /* vector_tails */ true,
        /* ep_apply */ cpu_ep::apply_neon,
        /* ep_apply_tile */ nullptr,
        /* ep_plan_tile */ cpu_ep::plan_tile_neon,
        /* narrow_i32_i8 */ cpu_ep::narrow_neon,
        /* compact_i32 */ cpu_ep::compact_neon,
        /* compact_max_vectors */ 3,
        /* deinterleave2_i8 */ cpu_ep::deinterleave2_neon,
    };
}
const cpu_simd_config kNeon =
    arm_config(CPU_SIMD_NEON, GEMM_KG, GEMM_A_K4, tile_neon_any, taps_neon_any);
const cpu_simd_config kDotprod =
    arm_config(CPU_SIMD_DOTPROD, GEMM_KG, GEMM_A_K4, tile_dotprod_any, taps_dotprod_any);
/* i8mm multiplies 8 values of K at a time: its rows are zero-padded to that. */
const cpu_simd_config kI8mm =
    arm_config(CPU_SIMD_I8MM, 2 * GEMM_KG, GEMM_A_K8, tile_i8mm_any, taps_i8mm_any);
#endif

}  // namespace

const cpu_simd_config* cpu_simd_config_of(int level) {
    switch (level) {
#if CVML_SIMD_X86
        case CPU_SIMD_AVX2:
            return &kAvx2;
        case CPU_SIMD_AVX512:
            return &kAvx512;
#endif
#if CVML_SIMD_AARCH64
        case CPU_SIMD_NEON:
            return &kNeon;
        case CPU_SIMD_DOTPROD:
            return &kDotprod;
        case CPU_SIMD_I8MM:
            return &kI8mm;
#endif
        default:
            return &kScalar;
    }
}
