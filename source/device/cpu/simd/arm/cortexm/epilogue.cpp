/* Cortex-M tails (epilogue.h): chunks of up to kChunk values as int32 on the stack. */
#include "device/cpu/simd/simd.h"

#if CVML_SIMD_CORTEXM

#pragma GCC optimize("O2")

#include "device/cpu/simd/arm/cortexm/epilogue.h"

#include "graph/graph.h"

#if CVML_SIMD_CORTEXM_MVE
#include <arm_mve.h>
#endif

namespace {

constexpr int32_t kChunk = 64;

/* v[i] = value i of `p` (storage s) from index `at` on, plus bias, wrapping. */
void load_chunk(const void* p, int32_t s, int64_t at, int32_t bias, int32_t n, int32_t* v) {
    const uint32_t b = static_cast<uint32_t>(bias);
#if CVML_SIMD_CORTEXM_MVE
    if (s == STORAGE_INT8 || s == STORAGE_INT32) {
        int32_t i = 0;
        if (s == STORAGE_INT8)
            for (const int8_t* q = static_cast<const int8_t*>(p) + at; i + 4 <= n; i += 4)
                vst1q_s32(v + i, vaddq_n_s32(vldrbq_s32(q + i), bias));
        else
            for (const int32_t* q = static_cast<const int32_t*>(p) + at; i + 4 <= n; i += 4)
                vst1q_s32(v + i, vaddq_n_s32(vld1q_s32(q + i), bias));
        if (i < n) {
            const mve_pred16_t m = vctp32q(static_cast<uint32_t>(n - i));
            const int32x4_t x = s == STORAGE_INT8
                                    ? vldrbq_z_s32(static_cast<const int8_t*>(p) + at + i, m)
                                    : vldrwq_z_s32(static_cast<const int32_t*>(p) + at + i, m);
            vstrwq_p_s32(v + i, vaddq_n_s32(x, bias), m);
        }
        return;
    }
#endif
    if (s == STORAGE_INT8) {
        const int8_t* q = static_cast<const int8_t*>(p) + at;
        for (int32_t i = 0; i < n; ++i)
            v[i] = static_cast<int32_t>(static_cast<uint32_t>(q[i]) + b);
    } else if (s == STORAGE_INT16) {
        const int16_t* q = static_cast<const int16_t*>(p) + at;
        for (int32_t i = 0; i < n; ++i)
            v[i] = static_cast<int32_t>(static_cast<uint32_t>(q[i]) + b);
    } else {
        const int32_t* q = static_cast<const int32_t*>(p) + at;
        for (int32_t i = 0; i < n; ++i)
            v[i] = static_cast<int32_t>(static_cast<uint32_t>(q[i]) + b);
    }
}

/* Stores keep the low bits, as ir_storage_store's casts do (so do MVE's narrowing
 * stores). */
void store_chunk(const int32_t* v, int32_t n, void* p, int32_t s, int64_t at) {
#if CVML_SIMD_CORTEXM_MVE
    if (s == STORAGE_INT8) {
        int8_t* q = static_cast<int8_t*>(p) + at;
        int32_t i = 0;
        for (; i + 4 <= n; i += 4) vstrbq_s32(q + i, vld1q_s32(v + i));
        if (i < n) {
            const mve_pred16_t m = vctp32q(static_cast<uint32_t>(n - i));
            vstrbq_p_s32(q + i, vldrwq_z_s32(v + i, m), m);
        }
        return;
    }
#endif
    if (s == STORAGE_INT8) {
        int8_t* q = static_cast<int8_t*>(p) + at;
        for (int32_t i = 0; i < n; ++i) q[i] = static_cast<int8_t>(v[i]);
    } else if (s == STORAGE_INT16) {
        int16_t* q = static_cast<int16_t*>(p) + at;
        for (int32_t i = 0; i < n; ++i) q[i] = static_cast<int16_t>(v[i]);
    } else {
        int32_t* q = static_cast<int32_t*>(p) + at;
        for (int32_t i = 0; i < n; ++i) q[i] = v[i];
    }
}

#if CVML_SIMD_CORTEXM_MVE

/* v[i] = op(v[i]) for i < n, four at a time, the last few predicated. */
template <typename Op>
inline void map4(int32_t* v, int32_t n, Op op) {
    int32_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_s32(v + i, op(vld1q_s32(v + i)));
    if (i < n) {
        const mve_pred16_t p = vctp32q(static_cast<uint32_t>(n - i));
        vstrwq_p_s32(v + i, op(vldrwq_z_s32(v + i, p)), p);
    }
}

/* v[i] += src[at + i] (storage s) for i < n, wrapping. */
void add_src(int32_t* v, int32_t n, const void* src, int32_t s, int64_t at) {
    int32_t i = 0;
    if (s == STORAGE_INT8) {
        const int8_t* q = static_cast<const int8_t*>(src) + at;
        for (; i + 4 <= n; i += 4) vst1q_s32(v + i, vaddq_s32(vld1q_s32(v + i), vldrbq_s32(q + i)));
    } else if (s == STORAGE_INT32) {
        const int32_t* q = static_cast<const int32_t*>(src) + at;
        for (; i + 4 <= n; i += 4) vst1q_s32(v + i, vaddq_s32(vld1q_s32(v + i), vld1q_s32(q + i)));
    }
    for (; i < n; i += 4) {  // int16 operands, and the last few values
        const mve_pred16_t p = vctp32q(static_cast<uint32_t>(n - i));
        int32x4_t x;
        if (s == STORAGE_INT8)
            x = vldrbq_z_s32(static_cast<const int8_t*>(src) + at + i, p);
        else if (s == STORAGE_INT16)
            x = vldrhq_z_s32(static_cast<const int16_t*>(src) + at + i, p);
        else
            x = vldrwq_z_s32(static_cast<const int32_t*>(src) + at + i, p);
        vstrwq_p_s32(v + i, vaddq_s32(vldrwq_z_s32(v + i, p), x), p);
    }
}

inline int32x4_t round_shift(int32x4_t x, int32x4_t down) {
    return vshrq_n_s32(vaddq_n_s32(vshlq_s32(x, down), 1), 1);
}

/* Steps s (and s + 1 when fused) over v[0 .. n); returns how many steps it took. A
 * rounding or plain shift followed by a clip runs as one pass. */
int32_t run_step(const epilogue* ep, int32_t s, int32_t* v, int32_t n, int64_t at) {
    const ep_step& st = ep->steps[s];
    const bool clip_next = s + 1 < ep->step_count && ep->steps[s + 1].kind == EP_CLIP;
    const int32x4_t lo = vdupq_n_s32(clip_next ? ep->steps[s + 1].lo : 0);
    const int32x4_t hi = vdupq_n_s32(clip_next ? ep->steps[s + 1].hi : 0);
    switch (st.kind) {
        case EP_CLIP: {
            const int32x4_t l = vdupq_n_s32(st.lo), h = vdupq_n_s32(st.hi);
            map4(v, n, [=](int32x4_t x) { return vmaxq_s32(vminq_s32(x, h), l); });
            return 1;
        }
        case EP_ROUND: {
            const int32x4_t down = vdupq_n_s32(-(st.shift - 1));
            if (clip_next) {
                map4(v, n, [=](int32x4_t x) {
                    return vmaxq_s32(vminq_s32(round_shift(x, down), hi), lo);
                });
                return 2;
            }
            map4(v, n, [=](int32x4_t x) { return round_shift(x, down); });
            return 1;
        }
        case EP_SRA: {
            const int32x4_t down = vdupq_n_s32(-st.shift);
            if (clip_next) {
                map4(v, n,
                     [=](int32x4_t x) { return vmaxq_s32(vminq_s32(vshlq_s32(x, down), hi), lo); });
                return 2;
            }
            map4(v, n, [=](int32x4_t x) { return vshlq_s32(x, down); });
            return 1;
        }
        case EP_SRA31:
            map4(v, n, [](int32x4_t x) { return vshrq_n_s32(x, 31); });
            return 1;
        case EP_MUL: {
            const int32_t f = st.factor;
            map4(v, n, [=](int32x4_t x) { return vmulq_n_s32(x, f); });
            return 1;
        }
        case EP_ADD:
            add_src(v, n, st.src, st.src_storage, at);
            return 1;
        default:
            return 1;
    }
}

#else

/* A shift then a clip, in one pass: ((x >> down) + add) >> post is EP_ROUND's rounding
 * shift by down + 1 (add 1, post 1, the + 1 wrapping) or EP_SRA's (add 0, post 0). */
void shift_clip(int32_t* v, int32_t n, int32_t down, int32_t add, int32_t post, int32_t lo,
                int32_t hi) {
    for (int32_t i = 0; i < n; ++i) {
        int32_t x = cvml_wrap_add(v[i] >> down, add) >> post;
        x = x > hi ? hi : x;
        v[i] = x < lo ? lo : x;
    }
}

/* Step s (and s + 1 when fused) over v[0 .. n); returns how many steps it took. A
 * rounding or plain shift followed by a clip (cvm_right_shift) runs as one pass. */
int32_t run_step(const epilogue* ep, int32_t s, int32_t* v, int32_t n, int64_t at) {
    const ep_step& st = ep->steps[s];
    if ((st.kind == EP_ROUND || st.kind == EP_SRA) && s + 1 < ep->step_count &&
        ep->steps[s + 1].kind == EP_CLIP) {
        const int32_t round = st.kind == EP_ROUND ? 1 : 0;
        shift_clip(v, n, st.shift - round, round, round, ep->steps[s + 1].lo, ep->steps[s + 1].hi);
        return 2;
    }
    switch (st.kind) {
        case EP_CLIP:
            for (int32_t i = 0; i < n; ++i) {
                int32_t x = v[i] > st.hi ? st.hi : v[i];
                v[i] = x < st.lo ? st.lo : x;
            }
            break;
        case EP_ROUND: {
            const int32_t down = st.shift - 1;
            for (int32_t i = 0; i < n; ++i) v[i] = cvml_wrap_add(v[i] >> down, 1) >> 1;
            break;
        }
        case EP_SRA31:
            for (int32_t i = 0; i < n; ++i) v[i] >>= 31;
            break;
        case EP_SRA:
            for (int32_t i = 0; i < n; ++i) v[i] >>= st.shift;
            break;
        case EP_MUL:
            for (int32_t i = 0; i < n; ++i)
                v[i] = static_cast<int32_t>(static_cast<uint32_t>(v[i]) *
                                            static_cast<uint32_t>(st.factor));
            break;
        case EP_ADD:
            if (st.src_storage == STORAGE_INT8) {
                const int8_t* q = static_cast<const int8_t*>(st.src) + at;
                for (int32_t i = 0; i < n; ++i) v[i] = cvml_wrap_add(v[i], q[i]);
            } else if (st.src_storage == STORAGE_INT16) {
                const int16_t* q = static_cast<const int16_t*>(st.src) + at;
                for (int32_t i = 0; i < n; ++i) v[i] = cvml_wrap_add(v[i], q[i]);
            } else {
                const int32_t* q = static_cast<const int32_t*>(st.src) + at;
                for (int32_t i = 0; i < n; ++i) v[i] = cvml_wrap_add(v[i], q[i]);
            }
            break;
        default:
            break;
    }
    return 1;
}

#endif

}  // namespace

void cm_epilogue_apply(const epilogue* ep, const void* in, int32_t in_storage, int64_t in_index,
                       int32_t bias, void* out, int32_t out_storage, int64_t out_index, int64_t n) {
    // Vector steps may run past the chunk's count to a multiple of 4: lanes never stored.
    alignas(16) int32_t v[kChunk];
    for (int64_t done = 0; done < n;) {
        const int32_t m = n - done < kChunk ? static_cast<int32_t>(n - done) : kChunk;
        load_chunk(in, in_storage, in_index + done, bias, m, v);
        for (int32_t s = 0; s < ep->step_count;) s += run_step(ep, s, v, m, out_index + done);
        store_chunk(v, m, out, out_storage, out_index + done);
        done += m;
    }
}

#endif

#if CVML_SIMD_CORTEXM_MVE
namespace {

/* Narrowing vector stores of four int32 lanes (the low bits, as ir_storage_store). */
inline void store4(int8_t* q, int32x4_t x) {
    vstrbq_s32(q, x);
}
inline void store4(int16_t* q, int32x4_t x) {
    vstrhq_s32(q, x);
}
inline void store4(int32_t* q, int32x4_t x) {
    vst1q_s32(q, x);
}
inline void store4(int8_t* q, int32x4_t x, mve_pred16_t p) {
    vstrbq_p_s32(q, x, p);
}
inline void store4(int16_t* q, int32x4_t x, mve_pred16_t p) {
    vstrhq_p_s32(q, x, p);
}
inline void store4(int32_t* q, int32x4_t x, mve_pred16_t p) {
    vstrwq_p_s32(q, x, p);
}

/* A shift then a clip as one vector step: ((x >> down) + add) >> post clipped to
 * [lo, hi] is EP_ROUND's rounding shift by down + 1 (add 1, post 1, the + 1 wrapping),
 * EP_SRA's shift (add 0, post 0), or nothing (all 0, the clip the whole int32 range). */
struct shift_clip {
    int32x4_t down, add, post, lo, hi; /* down and post negated: vshl's right shifts */
};

shift_clip make_shift_clip(const ep_step* shift) {
    if (!shift)
        return {vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(INT32_MIN),
                vdupq_n_s32(INT32_MAX)};
    const int32_t round = shift->kind == EP_ROUND ? 1 : 0;
    return {vdupq_n_s32(-(shift->shift - round)), vdupq_n_s32(round), vdupq_n_s32(-round),
            vdupq_n_s32(shift[1].lo), vdupq_n_s32(shift[1].hi)};
}

inline int32x4_t apply(const shift_clip& f, int32x4_t x) {
    x = vshlq_s32(vaddq_s32(vshlq_s32(x, f.down), f.add), f.post);
    return vmaxq_s32(vminq_s32(x, f.hi), f.lo);
}

/* The rows of a block into the output (row r at out + r * out_stride) through f. */
template <typename T>
void store_block(const shift_clip& f, const int32_t* sums, int32_t rows, int32_t cols, T* out,
                 int64_t out_stride) {
    for (int32_t r = 0; r < rows; ++r, sums += cols, out += out_stride) {
        int32_t i = 0;
        for (; i + 4 <= cols; i += 4) store4(out + i, apply(f, vld1q_s32(sums + i)));
        if (i < cols) {
            const mve_pred16_t p = vctp32q(static_cast<uint32_t>(cols - i));
            store4(out + i, apply(f, vldrwq_z_s32(sums + i, p)), p);
        }
    }
}

}  // namespace
#endif

#if CVML_SIMD_CORTEXM
void cm_epilogue_block(const epilogue* ep, int32_t* sums, int32_t rows, int32_t cols, void* out,
                       int32_t out_storage, int64_t out_first, int64_t out_stride) {
    int32_t steps = ep->step_count;
#if CVML_SIMD_CORTEXM_MVE
    // A final shift and clip (cvm_right_shift) is applied as the rows are stored: one
    // pass over the block fewer.
    const ep_step* last_shift = nullptr;
    if (steps >= 2 && ep->steps[steps - 1].kind == EP_CLIP &&
        (ep->steps[steps - 2].kind == EP_ROUND || ep->steps[steps - 2].kind == EP_SRA)) {
        last_shift = &ep->steps[steps - 2];
        steps -= 2;
    }
#endif
    const int32_t n = rows * cols;
    for (int32_t s = 0; s < steps;) {
        if (ep->steps[s].kind != EP_ADD) {
            s += run_step(ep, s, sums, n, 0);
            continue;
        }
        for (int32_t r = 0; r < rows; ++r)
            run_step(ep, s, sums + static_cast<size_t>(r) * cols, cols, out_first + r * out_stride);
        ++s;
    }
#if CVML_SIMD_CORTEXM_MVE
    const shift_clip f = make_shift_clip(last_shift);
    if (out_storage == STORAGE_INT8)
        store_block(f, sums, rows, cols, static_cast<int8_t*>(out) + out_first, out_stride);
    else if (out_storage == STORAGE_INT16)
        store_block(f, sums, rows, cols, static_cast<int16_t*>(out) + out_first, out_stride);
    else
        store_block(f, sums, rows, cols, static_cast<int32_t*>(out) + out_first, out_stride);
#else
    for (int32_t r = 0; r < rows; ++r)
        store_chunk(sums + static_cast<size_t>(r) * cols, cols, out, out_storage,
                    out_first + r * out_stride);
#endif
}
#endif
