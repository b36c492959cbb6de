/* dw_claim_output (op/conv2d_fast.h): the zeros a depthwise chunk writes over its output
 * planes before computing them. Another thread may be writing the planes next to them at
 * the same time, so the claim must cover only whole lines that lie within the chunk's
 * own planes; a race in a network test would show a claim too wide only now and then. */
#include <gtest/gtest.h>

#include <stdint.h>
#include <string.h>

#include <vector>

#include "device/cpu/op/conv2d_fast.h"
#include "device/cpu/thread_pool.h"
#include "graph/graph.h"

#if CVML_SIMD_X86

namespace {

constexpr uint8_t kUntouched = 0x5A;

/* Planes [p0, p1) of a layer of `planes`, run with `threads`. */
struct claim_case {
    int64_t plane_bytes, planes;
    int threads;
    int64_t p0, p1;
};

cpu_conv2d::conv_grouped layer_of(const claim_case& c) {
    cpu_conv2d::conv_grouped f;
    memset(&f, 0, sizeof f);
    f.threads = c.threads;
    f.g.n = 1;
    f.g.o = c.planes;
    f.g.oh = 1;
    f.g.ow = c.plane_bytes;
    return f;
}

/* The bytes the claim zeroed, as [first, end) offsets into the output (end <= first:
 * none); the output starts 64-aligned plus `skew` bytes. */
void run_claim(const claim_case& c, int64_t skew, const epilogue& ep, std::vector<uint8_t>* out,
               int64_t* offset) {
    const int64_t bytes = c.planes * c.plane_bytes;
    out->assign(static_cast<size_t>(bytes + 128), kUntouched);
    const uintptr_t base = reinterpret_cast<uintptr_t>(out->data());
    *offset = static_cast<int64_t>(((base + 63) & ~uintptr_t{63}) - base) + skew;
    const cpu_conv2d::conv_grouped f = layer_of(c);
    ir_tensor y;
    memset(&y, 0, sizeof y);
    y.data = out->data() + *offset;
    y.storage = STORAGE_INT8;
    cpu_conv2d::dw_claim_output(&f, &y, &ep, c.p0, c.p1);
}

/* Checks that exactly the whole lines within the chunk's planes were zeroed, or none. */
void expect_claimed(const claim_case& c, int64_t skew, bool claims) {
    epilogue ep;
    memset(&ep, 0, sizeof ep);
    std::vector<uint8_t> out;
    int64_t offset;
    run_claim(c, skew, ep, &out, &offset);
    const int64_t p0 = c.p0, p1 = c.p1;
    const uintptr_t base = reinterpret_cast<uintptr_t>(out.data());
    const uintptr_t lo = base + static_cast<uintptr_t>(offset + p0 * c.plane_bytes);
    const uintptr_t hi = base + static_cast<uintptr_t>(offset + p1 * c.plane_bytes);
    const uintptr_t first = (lo + 63) & ~uintptr_t{63}, end = hi & ~uintptr_t{63};
    for (size_t i = 0; i < out.size(); ++i) {
        const uintptr_t at = base + i;
        const bool zeroed = claims && at >= first && at < end;
        ASSERT_EQ(out[i], zeroed ? 0 : kUntouched)
            << "plane " << c.plane_bytes << " B, planes [" << p0 << ", " << p1 << ") of "
            << c.planes << ", " << c.threads << " threads"
            << ", skew " << skew << ", byte " << static_cast<int64_t>(i) - offset
            << " of the output";
    }
}

TEST(DepthwiseClaim, OnlyWholeLinesOfItsOwnPlanes) {
    // 7x7, 14x14 and 28x28 planes; every chunk the pool cuts 60 planes into (the
    // depthwise kernels run chunk by chunk), and every thread's whole share.
    const int64_t plane_sizes[] = {49, 196, 784};
    for (int64_t plane : plane_sizes)
        for (int64_t skew : {0, 1, 17, 63})
            for (int threads : {2, 3}) {
                const int64_t n = 60, chunks = threads * THREAD_POOL_CHUNKS_PER_THREAD;
                for (int64_t k = 0; k < chunks; ++k) {
                    const int64_t p0 = n * k / chunks, p1 = n * (k + 1) / chunks;
                    if (p0 < p1) expect_claimed({plane, n, threads, p0, p1}, skew, true);
                }
                for (int64_t t = 0; t < threads; ++t)
                    expect_claimed({plane, n, threads, n * t / threads, n * (t + 1) / threads},
                                   skew, true);
            }
}

TEST(DepthwiseClaim, NothingWithOneThreadALargeRangeOrAnOperand) {
    expect_claimed({196, 8, 1, 0, 8}, 0, false);
    // A thread's share of the layer over kDwClaimMaxBytes: not its chunks either, small
    // as they are.
    const int64_t plane = 4096, planes = cpu_conv2d::kDwClaimMaxBytes / plane + 1;
    expect_claimed({plane, 2 * planes, 2, 0, planes}, 0, false);
    expect_claimed({plane, 2 * planes, 2, 1, 2}, 0, false);
    // A tail that reads an operand (which the output might share a buffer with).
    epilogue ep;
    memset(&ep, 0, sizeof ep);
    int8_t operand[4] = {};
    ASSERT_TRUE(epilogue_add_add(&ep, operand, STORAGE_INT8));
    std::vector<uint8_t> out;
    int64_t offset;
    run_claim({196, 8, 2, 0, 4}, 0, ep, &out, &offset);
    for (uint8_t b : out) ASSERT_EQ(b, kUntouched);
}

}  // namespace

#endif
