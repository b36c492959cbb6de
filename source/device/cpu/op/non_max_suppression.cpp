/* non_max_suppression on the CPU, step for step as upstream's CPU kernel (FORMAT.md §7):
 * - vc = clamp(valid_count[b], 0, N); vc <= 0 fills the batch with -1 and ends the whole
 *   kernel. Upstream leaves the later batches as stale memory; here they are filled with
 *   -1 too, so the output never depends on what the buffer held before;
 * - the first vc rows are stably sorted by score, descending (own merge sort in scratch:
 *   std::stable_sort allocates);
 * - with 0 < top_k < vc the rows ranked >= top_k are overwritten with -1 in the INPUT
 *   buffer, as upstream does;
 * - the suppression scan of row i stops at the first later row with a negative id, and
 *   a row with a negative id is not output but still suppresses;
 * - max_output_size only limits when > 0 (0 means no limit on upstream's CPU);
 * - iou is an integer percentage in int64 with upstream's overflow rule. */
#include "operator/non_max_suppression.h"

#include <string.h>

#include "device/cpu/cpu_kernel.h"
#include "utility/error.h"

namespace {

constexpr int64_t K = 6;

/* Upstream's iou(): int32 coordinates and differences (wrapping as its -O3 build does),
 * int64 areas, and the percentage computed so that I*100 cannot overflow. */
int64_t iou_percent(const int32_t* r1, const int32_t* r2) {
    const int32_t x1min = r1[0], y1min = r1[1], x1max = r1[2], y1max = r1[3];
    const int32_t x2min = r2[0], y2min = r2[1], x2max = r2[2], y2max = r2[3];
    const uint64_t a1 = static_cast<uint64_t>(static_cast<int64_t>(cvml_wrap_sub(x1max, x1min)) *
                                              cvml_wrap_sub(y1max, y1min));
    const uint64_t a2 = static_cast<uint64_t>(static_cast<int64_t>(cvml_wrap_sub(x2max, x2min)) *
                                              cvml_wrap_sub(y2max, y2min));
    const int64_t sum_area = static_cast<int64_t>(a1 + a2);
    if (sum_area <= 0) return 0;
    const int32_t wmin = x1max < x2max ? x1max : x2max, wmax = x1min > x2min ? x1min : x2min;
    const int32_t hmin = y1max < y2max ? y1max : y2max, hmax = y1min > y2min ? y1min : y2min;
    int32_t w = cvml_wrap_sub(wmin, wmax);
    int32_t h = cvml_wrap_sub(hmin, hmax);
    if (w < 0) w = 0;
    if (h < 0) h = 0;
    int64_t overlap = static_cast<int64_t>(h) * w;
    int64_t tmp = sum_area - overlap;
    if (tmp <= 0) return 0;
    if (INT64_MAX / 100 < overlap)
        tmp /= 100;
    else
        overlap *= 100;
    return overlap / tmp;
}

/* Stable merge sort of row indices by score (column 1), descending; `tmp` has n slots. */
void sort_by_score(const int32_t* xb, int32_t* idx, int32_t* tmp, int64_t n) {
    for (int64_t width = 1; width < n; width *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * width) {
            int64_t mid = lo + width < n ? lo + width : n;
            int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            int64_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi) {
                // Take from the right run only when strictly greater: ties keep input order.
                if (xb[idx[j] * K + 1] > xb[idx[i] * K + 1])
                    tmp[o++] = idx[j++];
                else
                    tmp[o++] = idx[i++];
            }
            while (i < mid) tmp[o++] = idx[i++];
            while (j < hi) tmp[o++] = idx[j++];
        }
        memcpy(idx, tmp, static_cast<size_t>(n) * sizeof(int32_t));
    }
}

void fill_rows(int32_t* y, int64_t rows) {
    for (int64_t i = 0; i < rows * K; ++i) y[i] = -1;
}

int nms_prerun(cpu_node_ctx* ctx, size_t* scratch_bytes) {
    const ir_tensor* x = ctx->inputs[0];
    if (x->ndim != 3 || x->dims[2] != K || ctx->inputs[1]->dims[0] != x->dims[0])
        return cvml_fail(CVML_ERR_RUNTIME, "non_max_suppression: input shapes disagree");
    const size_t n = static_cast<size_t>(x->dims[1]);
    *scratch_bytes = 2 * n * sizeof(int32_t) + n;
    return CVML_OK;
}

int nms_run(cpu_node_ctx* ctx) {
    const non_max_suppression_param* p = static_cast<const non_max_suppression_param*>(ctx->param);
    const ir_tensor* xt = ctx->inputs[0];
    const int64_t batches = xt->dims[0], n = xt->dims[1];
    int32_t* x = cpu_in(ctx, 0);
    const int32_t* valid = cpu_in(ctx, 1);
    int32_t* y = cpu_out(ctx, 0);
    int32_t* idx = static_cast<int32_t*>(ctx->scratch);
    int32_t* tmp = idx + n;
    uint8_t* removed = reinterpret_cast<uint8_t*>(tmp + n);
    const int64_t topk = p->top_k;
    for (int64_t b = 0; b < batches; ++b) {
        int32_t* xb = x + b * n * K;
        int32_t* yb = y + b * n * K;
        int64_t vc = valid[b];
        if (vc > n) vc = n;
        if (vc <= 0) {
            // Upstream returns from the whole kernel here; later batches are filled with
            // -1 instead of keeping stale memory.
            fill_rows(yb, (batches - b) * n);
            return CVML_OK;
        }
        for (int64_t i = 0; i < vc; ++i) idx[i] = static_cast<int32_t>(i);
        sort_by_score(xb, idx, tmp, vc);
        if (topk > 0 && topk < vc)
            for (int64_t i = topk; i < vc; ++i) fill_rows(xb + idx[i] * K, 1);
        const int64_t need_keep = (topk >= 0 && topk < vc) ? topk : vc;
        memset(removed, 0, static_cast<size_t>(n));
        fill_rows(yb, n);
        int64_t out = 0;
        for (int64_t i = 0; i < need_keep; ++i) {
            const int32_t* r1 = xb + idx[i] * K;
            if (!removed[i] && r1[0] >= 0) {
                memcpy(yb + out * K, r1, K * sizeof(int32_t));
                ++out;
            }
            for (int64_t j = i + 1; j < need_keep && !removed[i]; ++j) {
                const int32_t* r2 = xb + idx[j] * K;
                if (r2[0] < 0) break;
                if ((p->force_suppress || r1[0] == r2[0]) &&
                    iou_percent(r1 + 2, r2 + 2) >= p->iou_threshold)
                    removed[j] = 1;
            }
        }
        if (p->max_output_size > 0) {
            int64_t kept = 0;
            for (int64_t i = 0; i < vc; ++i) {
                if (yb[i * K] < 0) continue;
                if (kept == p->max_output_size)
                    fill_rows(yb + i * K, 1);
                else
                    ++kept;
            }
        }
    }
    return CVML_OK;
}

}  // namespace

extern const cpu_kernel cpu_kernel_non_max_suppression = {
    .op = "non_max_suppression",
    .prerun = nms_prerun,
    .run = nms_run,
};
