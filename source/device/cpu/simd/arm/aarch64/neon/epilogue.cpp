/* The epilogue (epilogue.h) on aarch64, at the neon and dotprod levels (NEON is part of
 * the base architecture): sixteen values per step as four int32x4 quads, int8/int16/
 * int32 in and out, the matched chains (epilogue_chain.h) with their constants made once
 * per call, and a GEMM tile's kept columns compacted with table lookups.
 *
 * Exactness: every step is the scalar one lane by lane. EP_ROUND with b >= 2 is one
 * rounding shift (SRSHL): ((x >> (b-1)) + 1) >> 1 == floor((x + 2^(b-1)) / 2^b), which
 * SRSHL computes without overflow, and the + 1 cannot wrap when b >= 2 (x >> (b-1) <
 * 2^30). With b == 1 it can (x == INT32_MAX), so that shift runs as the three steps. */
#include <string.h>

#include "device/cpu/simd/epilogue_chain.h"

#if CVML_SIMD_AARCH64
#include <arm_neon.h>

/* The helpers below work on values in registers: inlined, always. */
#define CVML_INLINE inline __attribute__((always_inline))

namespace cpu_ep {
namespace {

/* Sixteen int32 values. */
struct v16 {
    int32x4_t q[4];
};

CVML_INLINE v16 load16(const void* p, int32_t storage, int64_t i) {
    v16 v;
    if (storage == STORAGE_INT8) {
        const int8x16_t b = vld1q_s8(static_cast<const int8_t*>(p) + i);
        const int16x8_t lo = vmovl_s8(vget_low_s8(b)), hi = vmovl_high_s8(b);
        v.q[0] = vmovl_s16(vget_low_s16(lo));
        v.q[1] = vmovl_high_s16(lo);
        v.q[2] = vmovl_s16(vget_low_s16(hi));
        v.q[3] = vmovl_high_s16(hi);
    } else if (storage == STORAGE_INT16) {
        const int16_t* h = static_cast<const int16_t*>(p) + i;
        const int16x8_t lo = vld1q_s16(h), hi = vld1q_s16(h + 8);
        v.q[0] = vmovl_s16(vget_low_s16(lo));
        v.q[1] = vmovl_high_s16(lo);
        v.q[2] = vmovl_s16(vget_low_s16(hi));
        v.q[3] = vmovl_high_s16(hi);
    } else {
        const int32_t* w = static_cast<const int32_t*>(p) + i;
        for (int j = 0; j < 4; ++j) v.q[j] = vld1q_s32(w + 4 * j);
    }
    return v;
}

/* Value i of p (storage s) as int32, for i < c, else 0, into t[0 .. 16). Out of line:
 * only a row's last few values come here, and the callers' registers stay registers. */
__attribute__((noinline)) void gather_part(const void* p, int32_t storage, int64_t i, int64_t c,
                                           int32_t* t) {
    for (int64_t k = 0; k < 16; ++k) t[k] = k < c ? ir_storage_load(p, storage, i + k) : 0;
}

/* The first c (< 16) values from element i, the rest 0: nothing past them is read. */
CVML_INLINE v16 load_part16(const void* p, int32_t storage, int64_t i, int64_t c) {
    alignas(16) int32_t t[16];
    gather_part(p, storage, i, c, t);
    return load16(t, STORAGE_INT32, 0);
}

CVML_INLINE v16 load_n16(const void* p, int32_t storage, int64_t i, int64_t c) {
    return c == 16 ? load16(p, storage, i) : load_part16(p, storage, i, c);
}

/* Stores keep the low bits, as ir_storage_store's casts do (XTN truncates). */
CVML_INLINE void store16(void* p, int32_t storage, int64_t i, const v16& v) {
    if (storage == STORAGE_INT8) {
        const int16x8_t lo = vmovn_high_s32(vmovn_s32(v.q[0]), v.q[1]);
        const int16x8_t hi = vmovn_high_s32(vmovn_s32(v.q[2]), v.q[3]);
        vst1q_s8(static_cast<int8_t*>(p) + i, vmovn_high_s16(vmovn_s16(lo), hi));
    } else if (storage == STORAGE_INT16) {
        int16_t* h = static_cast<int16_t*>(p) + i;
        vst1q_s16(h, vmovn_high_s32(vmovn_s32(v.q[0]), v.q[1]));
        vst1q_s16(h + 8, vmovn_high_s32(vmovn_s32(v.q[2]), v.q[3]));
    } else {
        int32_t* w = static_cast<int32_t*>(p) + i;
        for (int j = 0; j < 4; ++j) vst1q_s32(w + 4 * j, v.q[j]);
    }
}

/* t[k] to element i + k of p (storage s) for k < c. Out of line, as gather_part. */
__attribute__((noinline)) void scatter_part(const int32_t* t, int64_t c, void* p, int32_t storage,
                                            int64_t i) {
    for (int64_t k = 0; k < c; ++k) ir_storage_store(p, storage, i + k, t[k]);
}

/* The first c (<= 16) values to element i on; nothing past them is written. */
CVML_INLINE void store_n16(void* p, int32_t storage, int64_t i, int64_t c, const v16& v) {
    if (c == 16) {
        store16(p, storage, i, v);
        return;
    }
    alignas(16) int32_t t[16];
    for (int j = 0; j < 4; ++j) vst1q_s32(t + 4 * j, v.q[j]);
    scatter_part(t, c, p, storage, i);
}

CVML_INLINE void add_all(v16* v, int32x4_t b) {
    for (int j = 0; j < 4; ++j) v->q[j] = vaddq_s32(v->q[j], b);
}

CVML_INLINE void add_v(v16* v, const v16& w) {
    for (int j = 0; j < 4; ++j) v->q[j] = vaddq_s32(v->q[j], w.q[j]);
}

CVML_INLINE void clip_all(v16* v, int32x4_t lo, int32x4_t hi) {
    for (int j = 0; j < 4; ++j) v->q[j] = vmaxq_s32(vminq_s32(v->q[j], hi), lo);
}

/* x >> s for a vector of -s (SSHL by a negative count shifts right arithmetically). */
CVML_INLINE void shift_all(v16* v, int32x4_t neg) {
    for (int j = 0; j < 4; ++j) v->q[j] = vshlq_s32(v->q[j], neg);
}

/* EP_ROUND with shift b: one rounding shift by -b, or at b == 1 the scalar steps. */
CVML_INLINE void round_all(v16* v, int32_t b, int32x4_t neg_b) {
    if (b >= 2) {
        for (int j = 0; j < 4; ++j) v->q[j] = vrshlq_s32(v->q[j], neg_b);
        return;
    }
    const int32x4_t one = vdupq_n_s32(1);
    for (int j = 0; j < 4; ++j) v->q[j] = vshrq_n_s32(vaddq_s32(v->q[j], one), 1);
}

/* One step on 16 values; EP_ADD reads its c operand values at element `at`. */
CVML_INLINE void step16(const ep_step& st, v16* v, int64_t at, int64_t c) {
    switch (st.kind) {
        case EP_CLIP:
            clip_all(v, vdupq_n_s32(st.lo), vdupq_n_s32(st.hi));
            return;
        case EP_ROUND:
            round_all(v, st.shift, vdupq_n_s32(-st.shift));
            return;
        case EP_SRA31:
            for (int j = 0; j < 4; ++j) v->q[j] = vshrq_n_s32(v->q[j], 31);
            return;
        case EP_SRA:
            shift_all(v, vdupq_n_s32(-st.shift));
            return;
        case EP_MUL:
            for (int j = 0; j < 4; ++j) v->q[j] = vmulq_n_s32(v->q[j], st.factor);
            return;
        case EP_ADD:
            add_v(v, load_n16(st.src, st.src_storage, at, c));
            return;
        default:
            return;
    }
}

/* A matched chain's constants, made once per call. */
struct rc_consts {
    int32x4_t pre_neg, pre_lo, pre_hi;
    int32x4_t neg, lo, hi, lo2, hi2;
};

const rc_chain kNoChain = {};

inline rc_consts rc_consts_of(const rc_chain& c) {
    return {vdupq_n_s32(-c.pre_shift), vdupq_n_s32(c.pre_lo), vdupq_n_s32(c.pre_hi),
            vdupq_n_s32(-c.shift),     vdupq_n_s32(c.lo),     vdupq_n_s32(c.hi),
            vdupq_n_s32(c.lo2),        vdupq_n_s32(c.hi2)};
}

/* A matched chain on 16 values; its residual operand's c values at element `at`. */
CVML_INLINE void rc_apply16(const rc_chain& c, const rc_consts& k, v16* v, int64_t at, int64_t n) {
    if (c.pre) {
        if (c.pre & RC_PRE_ROUND) round_all(v, c.pre_shift, k.pre_neg);
        if (c.pre & RC_PRE_SRA) shift_all(v, k.pre_neg);
        if (c.pre & RC_PRE_CLIP) clip_all(v, k.pre_lo, k.pre_hi);
        for (int j = 0; j < 4; ++j) v->q[j] = vmulq_n_s32(v->q[j], c.factor);
    }
    if (c.folded)
        shift_all(v, k.neg);
    else
        round_all(v, c.shift, k.neg);
    clip_all(v, k.lo, k.hi);
    if (c.add) {
        add_v(v, load_n16(c.add->src, c.add->src_storage, at, n));
        clip_all(v, k.lo2, k.hi2);
    }
}

/* n int32 values of `in` (readable to a multiple of 16) plus b through a matched chain. */
CVML_INLINE void rc_row(const rc_chain& rc, const rc_consts& k, const int32_t* in, int32x4_t b,
                        void* out, int32_t out_storage, int64_t out_index, int64_t n) {
    for (int64_t i = 0; i < n; i += 16) {
        const int64_t c = n - i < 16 ? n - i : 16, at = out_index + i;
        v16 v = load16(in, STORAGE_INT32, i);
        add_all(&v, b);
        rc_apply16(rc, k, &v, at, c);
        store_n16(out, out_storage, at, c, v);
    }
}

/* The same through any chain, a step at a time. */
CVML_INLINE void steps_row(const epilogue* ep, const int32_t* in, int32x4_t b, void* out,
                           int32_t out_storage, int64_t out_index, int64_t n) {
    for (int64_t i = 0; i < n; i += 16) {
        const int64_t c = n - i < 16 ? n - i : 16, at = out_index + i;
        v16 v = load16(in, STORAGE_INT32, i);
        add_all(&v, b);
        for (int32_t s = 0; s < ep->step_count; ++s) step16(ep->steps[s], &v, at, c);
        store_n16(out, out_storage, at, c, v);
    }
}

/* Byte indices that gather one 16-column vector's kept int32 lanes, in order, from its
 * 64 bytes: quad q's lanes are keep lanes 4q .. 4q + 3 (past the kept count: any). */
struct keep_tables {
    uint8x16_t idx[3][4];
};

inline void keep_tables_of(const ep_tile_keep* k, keep_tables* t) {
    static const uint8_t kSpread[4][16] = {
        {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3},
        {4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7},
        {8, 8, 8, 8, 9, 9, 9, 9, 10, 10, 10, 10, 11, 11, 11, 11},
        {12, 12, 12, 12, 13, 13, 13, 13, 14, 14, 14, 14, 15, 15, 15, 15}};
    static const uint8_t kBytes[16] = {0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3};
    const uint8x16_t bytes = vld1q_u8(kBytes);
    for (int32_t j = 0; j < k->vectors; ++j) {
        const uint8x16_t lanes = vandq_u8(vld1q_u8(k->lanes[j]), vdupq_n_u8(15));
        for (int q = 0; q < 4; ++q)
            t->idx[j][q] = vaddq_u8(vshlq_n_u8(vqtbl1q_u8(lanes, vld1q_u8(kSpread[q])), 2), bytes);
    }
}

/* The kept columns of a tile row, in order, to dst (16 values of slack). */
CVML_INLINE int64_t compact_row(const int32_t* src, const ep_tile_keep* k, const keep_tables& t,
                                int32_t* dst) {
    int64_t n = 0;
    for (int32_t j = 0; j < k->vectors; ++j) {
        const int32_t* s = src + 16 * j;
        if (k->mask[j] == 0xFFFF) {
            for (int q = 0; q < 4; ++q) vst1q_s32(dst + n + 4 * q, vld1q_s32(s + 4 * q));
            n += 16;
            continue;
        }
        if (k->mask[j] == 0) continue;
        const uint8x16x4_t b = vld1q_u8_x4(reinterpret_cast<const uint8_t*>(s));
        for (int q = 0; q < 4; ++q)
            vst1q_u8(reinterpret_cast<uint8_t*>(dst + n + 4 * q), vqtbl4q_u8(b, t.idx[j][q]));
        n += __builtin_popcount(k->mask[j]);
    }
    return n;
}

}  // namespace

/* Sixteen values per pass; a row's last few go through the same vector steps (loaded
 * and stored value by value), so no value takes the scalar chain. */
void apply_neon(const epilogue* ep, const void* in, int32_t in_storage, int64_t in_index,
                int32_t bias, void* out, int32_t out_storage, int64_t out_index, int64_t n) {
    const int32x4_t vb = vdupq_n_s32(bias);
    rc_chain rc;
    const bool matched = match_rc_chain(ep, &rc);
    const rc_consts k = rc_consts_of(rc);
    for (int64_t i = 0; i < n; i += 16) {
        const int64_t c = n - i < 16 ? n - i : 16, at = out_index + i;
        v16 v = load_n16(in, in_storage, in_index + i, c);
        add_all(&v, vb);
        if (matched) {
            rc_apply16(rc, k, &v, at, c);
        } else {
            for (int32_t s = 0; s < ep->step_count; ++s) step16(ep->steps[s], &v, at, c);
        }
        store_n16(out, out_storage, at, c, v);
    }
}

namespace {

/* A tile's rows through a plan's chain (epilogue_plan_tile): each row's kept columns
 * compacted (not at all where they are the first ones), then the chain 16 values at a
 * time: the matched one (rc) or, without one, each step. */
inline void tile_rows(const ep_tile_plan* p, const rc_chain* rc, const int32_t* tile,
                      int32_t tile_stride, int32_t rows, const ep_tile_keep* keep,
                      const int32_t* bias, void* out, int64_t out_first, int64_t out_stride) {
    const rc_consts k = rc_consts_of(*(rc ? rc : &kNoChain));
    bool whole = true;  // the kept columns are the first `count`: no compaction
    for (int32_t j = 0; j < keep->vectors; ++j) {
        const int32_t left = keep->count - 16 * j;
        const uint32_t want = left >= 16 ? 0xFFFFu : (1u << left) - 1u;
        whole = whole && keep->mask[j] == want;
    }
    keep_tables t;
    if (!whole) keep_tables_of(keep, &t);
    alignas(16) int32_t row[48 + 16];  // a compacted tile row and its slack
    for (int32_t r = 0; r < rows; ++r) {
        const int32_t* src = tile + static_cast<int64_t>(r) * tile_stride;
        if (!whole) {
            compact_row(src, keep, t, row);
            src = row;
        }
        const int32x4_t b = vdupq_n_s32(bias ? bias[r] : 0);
        const int64_t at = out_first + r * out_stride;
        if (rc)
            rc_row(*rc, k, src, b, out, p->out_storage, at, keep->count);
        else
            steps_row(p->ep, src, b, out, p->out_storage, at, keep->count);
    }
}

}  // namespace

void planned_tile_neon(const ep_tile_plan* p, const int32_t* tile, int32_t tile_stride,
                       int32_t rows, const ep_tile_keep* keep, const int32_t* bias, void* out,
                       int64_t out_first, int64_t out_stride) {
    rc_chain rc;
    memcpy(&rc, p->chain, sizeof rc);
    tile_rows(p, &rc, tile, tile_stride, rows, keep, bias, out, out_first, out_stride);
}

void planned_steps_neon(const ep_tile_plan* p, const int32_t* tile, int32_t tile_stride,
                        int32_t rows, const ep_tile_keep* keep, const int32_t* bias, void* out,
                        int64_t out_first, int64_t out_stride) {
    tile_rows(p, nullptr, tile, tile_stride, rows, keep, bias, out, out_first, out_stride);
}

int64_t compact_neon(const int32_t* src, const uint16_t* mask, int32_t vectors, int32_t* dst) {
    ep_tile_keep k;
    epilogue_tile_keep(&k, mask, 16 * vectors);
    keep_tables t;
    keep_tables_of(&k, &t);
    return compact_row(src, &k, t, dst);
}

void narrow_neon(const int32_t* src, int64_t n, int8_t* dst) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) store16(dst, STORAGE_INT8, i, load16(src, STORAGE_INT32, i));
    for (; i < n; ++i) dst[i] = static_cast<int8_t>(src[i]);
}

void deinterleave2_neon(const int8_t* src, int64_t n, int8_t* even, int8_t* odd) {
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const int8x16x2_t v = vld2q_s8(src + i);
        vst1q_s8(even + i / 2, v.val[0]);
        vst1q_s8(odd + i / 2, v.val[1]);
    }
    for (; i + 1 < n; i += 2) {
        even[i / 2] = src[i];
        odd[i / 2] = src[i + 1];
    }
    if (i < n) even[i / 2] = src[i];
}

}  // namespace cpu_ep

#endif
