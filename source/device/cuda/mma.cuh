/* The int8 tensor-core primitives: mma.sync, ldmatrix and cp.async.
 *
 * One warp's int8 tensor-core step: D (16x8 int32) = A (16x32 int8) x B (32x8 int8) + C,
 * as PTX's mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32. Fragments are in the PTX
 * ISA's layout, with groupID g = lane / 4 and t = lane % 4:
 *   a[0] = A[g][4t..4t+3]      a[1] = A[g+8][4t..4t+3]
 *   a[2] = A[g][16+4t..]       a[3] = A[g+8][16+4t..]
 *   b[0] = B[4t..4t+3][g]      b[1] = B[16+4t..16+4t+3][g]
 *   c[0], c[1] = C[g][2t], C[g][2t+1];  c[2], c[3] = C[g+8][2t], C[g+8][2t+1]
 * (byte j of a register is element 4t+j, the low byte first). Without .satfinite the
 * int32 sums wrap mod 2^32, so the result does not depend on the order of summation.
 *
 * Ampere and newer have the m16n8k32 shape; Turing (sm_75) only m8n8k16, whose
 * fragments are exactly the halves above (A rows g, k 4t.., B k 4t.., n g, C row g,
 * columns 2t, 2t+1), so there it is four of those, and cp.async (Ampere) is a plain
 * copy. The host emulation runs the warp collectives in emu/cuda_emu.cpp, either path. */
#pragma once

#include "cuda_kernel.h"

/* The Turing code path: sm_75 on a GPU, or the host emulation built with
 * CVML_CUDA_EMU_TURING (the emu-turing plugin), so that the path runs in the tests. */
#if (defined(__CUDACC__) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800) || \
    (!defined(__CUDACC__) && defined(CVML_CUDA_EMU_TURING))
#define CVML_CUDA_TURING_PATH 1
#endif

#ifdef CVML_CUDA_TURING_PATH
/* D (8x8) = A (8x16) x B (16x8) + C: mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32. */
__device__ __forceinline__ void mma_s8_m8n8k16(int32_t& d0, int32_t& d1, uint32_t a, uint32_t b,
                                               int32_t c0, int32_t c1) {
#ifdef __CUDACC__
    asm volatile("mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32 {%0,%1}, {%2}, {%3}, {%4,%5};\n"
                 : "=r"(d0), "=r"(d1)
                 : "r"(a), "r"(b), "r"(c0), "r"(c1));
#else
    const int32_t c[2] = {c0, c1};
    int32_t d[2];
    cuda_emu::mma_m8n8k16_s8(d, a, b, c);
    d0 = d[0];
    d1 = d[1];
#endif
}
#endif

__device__ __forceinline__ void mma_s8_m16n8k32(int32_t d[4], const uint32_t a[4],
                                                const uint32_t b[2], const int32_t c[4]) {
#if defined(CVML_CUDA_TURING_PATH)
    int32_t t0, t1, t2, t3;
    mma_s8_m8n8k16(t0, t1, a[0], b[0], c[0], c[1]);
    mma_s8_m8n8k16(d[0], d[1], a[2], b[1], t0, t1);
    mma_s8_m8n8k16(t2, t3, a[1], b[0], c[2], c[3]);
    mma_s8_m8n8k16(d[2], d[3], a[3], b[1], t2, t3);
#elif defined(__CUDACC__)
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%10,%11,%12,%13};\n"
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]),
          "r"(c[2]), "r"(c[3]));
#else
    cuda_emu::mma_m16n8k32_s8(d, a, b, c);
#endif
}

/* ldmatrix.sync.aligned.m8n8.x4.shared.b16 (Turing and newer): lane 8j + i gives the
 * shared-memory address of row i (16 bytes, 16-byte aligned) of 8x8 matrix j; each lane
 * gets in r[j] the 4 bytes of matrix j at row lane / 4, bytes 4 * (lane % 4): for int8
 * rows of 16 values that is exactly an mma fragment register. */
__device__ __forceinline__ void ldmatrix_x4(uint32_t r[4], const void* row) {
#if defined(__CUDACC__)
    const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(row));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr)
                 : "memory");
#else
    cuda_emu::ldmatrix_x4(r, row);
#endif
}

/* Copies kBytes (4 or 16, both ends aligned to it) from global to shared memory, or
 * zeros when !valid (then `src` is not read, but must still be a device address):
 * cp.async on Ampere and newer (retired by cp_async_wait), a plain copy on Turing. */
template <int kBytes>
__device__ __forceinline__ void cp_async_zfill(void* dst, const void* src, bool valid) {
    static_assert(kBytes == 4 || kBytes == 16, "cp.async size");
#if defined(CVML_CUDA_TURING_PATH) && !defined(__CUDACC__)
    if (valid)
        memcpy(dst, src, kBytes);
    else
        memset(dst, 0, kBytes);
#elif defined(__CUDACC__) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    const int n = valid ? kBytes : 0;
    if constexpr (kBytes == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(addr), "l"(src), "r"(n)
                     : "memory");
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(addr), "l"(src), "r"(n)
                     : "memory");
#elif defined(__CUDACC__)
    if constexpr (kBytes == 16)
        *static_cast<int4*>(dst) = valid ? *static_cast<const int4*>(src) : make_int4(0, 0, 0, 0);
    else
        *static_cast<int32_t*>(dst) = valid ? *static_cast<const int32_t*>(src) : 0;
#else
    cuda_emu::cp_async(dst, src, kBytes, valid ? kBytes : 0);
#endif
}

/* Closes the calling thread's group of cp.async copies issued since the last commit. */
__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDACC__) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#elif !defined(__CUDACC__) && !defined(CVML_CUDA_TURING_PATH)
    cuda_emu::cp_async_commit();
#endif
}

/* Waits until at most kPending of the calling thread's committed groups are in flight
 * (the others' bytes are in shared memory; a __syncthreads then shows them to all). */
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDACC__) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
#elif !defined(__CUDACC__) && !defined(CVML_CUDA_TURING_PATH)
    cuda_emu::cp_async_wait(kPending);
#endif
}
