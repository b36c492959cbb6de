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

/* Stores keep the low bits, as ir_storage_store's casts do. */
void store_chunk(const int32_t* v, int32_t n, void* p, int32_t s, int64_t at) {
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

/* One step over v[0 .. n) (n a multiple of 4: the chunk has room). */
void step_chunk(const ep_step& st, int32_t* v, int32_t n, int64_t at) {
    switch (st.kind) {
        case EP_CLIP: {
            const int32x4_t lo = vdupq_n_s32(st.lo), hi = vdupq_n_s32(st.hi);
            for (int32_t i = 0; i < n; i += 4)  // min with hi, then max with lo
                vst1q_s32(v + i, vmaxq_s32(vminq_s32(vld1q_s32(v + i), hi), lo));
            break;
        }
        case EP_ROUND: {
            const int32x4_t down = vdupq_n_s32(-(st.shift - 1));
            for (int32_t i = 0; i < n; i += 4)
                vst1q_s32(v + i, vshrq_n_s32(vaddq_n_s32(vshlq_s32(vld1q_s32(v + i), down), 1), 1));
            break;
        }
        case EP_SRA31:
            for (int32_t i = 0; i < n; i += 4) vst1q_s32(v + i, vshrq_n_s32(vld1q_s32(v + i), 31));
            break;
        case EP_SRA: {
            const int32x4_t down = vdupq_n_s32(-st.shift);
            for (int32_t i = 0; i < n; i += 4) vst1q_s32(v + i, vshlq_s32(vld1q_s32(v + i), down));
            break;
        }
        case EP_MUL:
            for (int32_t i = 0; i < n; i += 4)
                vst1q_s32(v + i, vmulq_n_s32(vld1q_s32(v + i), st.factor));
            break;
        case EP_ADD:
            if (st.src_storage == STORAGE_INT8) {
                const int8_t* q = static_cast<const int8_t*>(st.src) + at;
                for (int32_t i = 0; i < n; i += 4) {
                    const mve_pred16_t p = vctp32q(static_cast<uint32_t>(n - i));
                    vst1q_s32(v + i, vaddq_s32(vld1q_s32(v + i), vldrbq_z_s32(q + i, p)));
                }
            } else if (st.src_storage == STORAGE_INT16) {
                const int16_t* q = static_cast<const int16_t*>(st.src) + at;
                for (int32_t i = 0; i < n; i += 4) {
                    const mve_pred16_t p = vctp32q(static_cast<uint32_t>(n - i));
                    vst1q_s32(v + i, vaddq_s32(vld1q_s32(v + i), vldrhq_z_s32(q + i, p)));
                }
            } else {
                const int32_t* q = static_cast<const int32_t*>(st.src) + at;
                for (int32_t i = 0; i < n; i += 4) {
                    const mve_pred16_t p = vctp32q(static_cast<uint32_t>(n - i));
                    vst1q_s32(v + i, vaddq_s32(vld1q_s32(v + i), vldrwq_z_s32(q + i, p)));
                }
            }
            break;
        default:
            break;
    }
}

#else

inline int32_t wrap_add(int32_t a, int32_t b) {
    return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}

void step_chunk(const ep_step& st, int32_t* v, int32_t n, int64_t at) {
    switch (st.kind) {
        case EP_CLIP:
            for (int32_t i = 0; i < n; ++i) {
                int32_t x = v[i] > st.hi ? st.hi : v[i];
                v[i] = x < st.lo ? st.lo : x;
            }
            break;
        case EP_ROUND: {
            const int32_t down = st.shift - 1;
            for (int32_t i = 0; i < n; ++i) v[i] = wrap_add(v[i] >> down, 1) >> 1;
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
                for (int32_t i = 0; i < n; ++i) v[i] = wrap_add(v[i], q[i]);
            } else if (st.src_storage == STORAGE_INT16) {
                const int16_t* q = static_cast<const int16_t*>(st.src) + at;
                for (int32_t i = 0; i < n; ++i) v[i] = wrap_add(v[i], q[i]);
            } else {
                const int32_t* q = static_cast<const int32_t*>(st.src) + at;
                for (int32_t i = 0; i < n; ++i) v[i] = wrap_add(v[i], q[i]);
            }
            break;
        default:
            break;
    }
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
        for (int32_t s = 0; s < ep->step_count; ++s)
            step_chunk(ep->steps[s], v, m, out_index + done);
        store_chunk(v, m, out, out_storage, out_index + done);
        done += m;
    }
}

#endif
