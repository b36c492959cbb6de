/* The epilogue (epilogue.h) at avx2: eight values per step, int8/int16/int32 in and
 * out, the matched chains (epilogue_chain.h) with their constants made once per call. */
#include <string.h>

#include "device/cpu/simd/epilogue_chain.h"
#include "device/cpu/simd/x86/avx2/epilogue_avx2.h"

#if CVML_SIMD_X86
#include <immintrin.h>

namespace cpu_ep {
namespace {

/* n int32 values of `in` (plus vb) through a matched chain, 8 at a time. */
CVML_TARGET_AVX2 inline void rc_rows_avx2(const rc_chain& rc, const rc_consts8& k,
                                          const int32_t* in, __m256i vb, void* out,
                                          int32_t out_storage, int64_t out_index, int64_t n) {
    for (int64_t i = 0; i < n; i += 8) {
        const int64_t c = n - i < 8 ? n - i : 8, at = out_index + i;
        __m256i v = _mm256_add_epi32(load_n8(in, STORAGE_INT32, i, c), vb);
        v = rc_apply8(rc, k, v, at, c);
        if (c == 8)
            store8_256(out, out_storage, at, v);
        else
            store_part8(out, out_storage, at, c, v);
    }
}

}  // namespace

/* Eight values per pass; a row's last few go through the same vector steps (loaded and
 * stored value by value), so no value takes the scalar chain. */
CVML_TARGET_AVX2 void apply_avx2(const epilogue* ep, const void* in, int32_t in_storage,
                                 int64_t in_index, int32_t bias, void* out, int32_t out_storage,
                                 int64_t out_index, int64_t n) {
    const __m256i vb = _mm256_set1_epi32(bias);
    rc_chain rc;
    const bool matched = match_rc_chain(ep, &rc);
    const rc_consts8 k = rc_consts8_of(rc);
    for (int64_t i = 0; i < n; i += 8) {
        const int64_t c = n - i < 8 ? n - i : 8, at = out_index + i;
        __m256i v = _mm256_add_epi32(load_n8(in, in_storage, in_index + i, c), vb);
        if (matched) {
            v = rc_apply8(rc, k, v, at, c);
        } else {
            for (int32_t s = 0; s < ep->step_count; ++s) v = step_avx2(ep->steps[s], v, at, c);
        }
        if (c == 8)
            store8_256(out, out_storage, at, v);
        else
            store_part8(out, out_storage, at, c, v);
    }
}

/* A plan's matched chain at avx2 (epilogue_plan_tile): each row's kept columns
 * compacted, then the chain 8 values at a time, decided once per plan, not per row. */
CVML_TARGET_AVX2 void planned_tile_avx2(const ep_tile_plan* p, const int32_t* tile,
                                        int32_t tile_stride, int32_t rows, const ep_tile_keep* keep,
                                        const int32_t* bias, void* out, int64_t out_first,
                                        int64_t out_stride) {
    rc_chain rc;
    memcpy(&rc, p->chain, sizeof rc);
    const rc_consts8 k = rc_consts8_of(rc);
    alignas(32) int32_t row[48 + 16];  // a tile row, and simd_compact_i32's slack
    for (int32_t r = 0; r < rows; ++r) {
        const int64_t n =
            simd_compact_i32(CPU_SIMD_AVX2, tile + static_cast<int64_t>(r) * tile_stride,
                             keep->mask, keep->vectors, row);
        rc_rows_avx2(rc, k, row, _mm256_set1_epi32(bias ? bias[r] : 0), out, p->out_storage,
                     out_first + r * out_stride, n);
    }
}

}  // namespace cpu_ep

#endif
