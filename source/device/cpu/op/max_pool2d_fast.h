/* max_pool2d's fast path (max_pool2d.cpp) and what its kernels per instruction set
 * (simd/x86/avx512/max_pool2d.cpp, simd/x86/avx2/max_pool2d.cpp) share with it. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "device/cpu/simd/simd.h"
#include "device/cpu/simd/simd_config.h"

namespace cpu_max_pool2d {

struct pool_fast {
    int level, threads;
    const cpu_simd_config* cfg; /* the level's kernels (simd_config.h) */
    int64_t h, w, oh, ow, kh, kw, sh, sw, ph, pw, hp, wq;
    size_t slot_bytes;
    /* int8 planes: pooled straight from the input by the level's separable kernel, and
     * by bands of output rows (max_pool2d.cpp's pools_direct, pools_by_bands). */
    bool direct, by_bands;
};

template <typename T>
inline void max_row_body(T* acc, const T* src, int64_t n) {
    for (int64_t i = 0; i < n; ++i) acc[i] = acc[i] > src[i] ? acc[i] : src[i];
}

/* Where window offset (r, s) of output row i starts in the phase-split plane. */
inline int64_t window_offset(const pool_fast* f, int64_t i, int64_t r, int64_t s) {
    return ((s % f->sw) * f->hp + i * f->sh + r) * f->wq + s / f->sw;
}

/* The separable kernels (pool_direct8: no padded image) fold a window's rows into one
 * row of at most kPoolDirectMaxW bytes, which the window's columns then read with
 * kPoolDirectMargin bytes of -128 on either side; their 32-byte blocks need rows and
 * output rows of 32 or more, column stride 1 or 2. */
constexpr int64_t kPoolDirectMaxW = 1024;
constexpr int64_t kPoolDirectMargin = 96;
inline bool pool_direct8_fits(const pool_fast* f) {
    // Reads run from column -pw to one past the last window's last column (at stride 2
    // its 64-byte loads take the odd byte after it).
    return f->sw <= 2 && f->w >= 32 && f->ow >= 32 && f->w <= kPoolDirectMaxW &&
           f->pw <= kPoolDirectMargin &&
           (f->ow - 1) * f->sw - f->pw + f->kw < f->w + kPoolDirectMargin;
}

/* The scalar code's rows (simd/simd_config.cpp), which the compiler vectorizes for the
 * build's baseline. */
void max_row_plain(int32_t* acc, const int32_t* src, int64_t n);
void max_row8_plain(int8_t* acc, const int8_t* src, int64_t n);

#if CVML_SIMD_X86
/* Rows folded with max, one copy per instruction set so each vectorizes for its level;
 * int8 storage in and out takes 64 lanes a vector. */
void max_row_avx512(int32_t* acc, const int32_t* src, int64_t n);
void max_row8_avx512(int8_t* acc, const int8_t* src, int64_t n);
void max_row_avx2(int32_t* acc, const int32_t* src, int64_t n);
void max_row8_avx2(int8_t* acc, const int8_t* src, int64_t n);
/* int8 planes at avx512, output rows [i0, i1): every window offset of a 64-column block
 * folded in a register, and the rows of the phase planes of column stride 2 they read. */
void pool_rows8_avx512(const pool_fast* f, const int8_t* ph, int8_t* y, int64_t i0, int64_t i1);
void phase_planes8_s2_avx512(const pool_fast* f, const int8_t* x, int8_t* ph, int64_t i0,
                             int64_t i1);
/* The same folding at avx2, 32 columns a vector. */
void pool_rows8_avx2(const pool_fast* f, const int8_t* ph, int8_t* y, int64_t i0, int64_t i1);
/* int8 planes at avx2 straight from the input, output rows [i0, i1) (pool_direct8_fits). */
void pool_direct8_avx2(const pool_fast* f, const int8_t* x, int8_t* y, int64_t i0, int64_t i1);
#endif

}  // namespace cpu_max_pool2d
