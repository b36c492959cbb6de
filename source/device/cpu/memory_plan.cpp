#include "device/cpu/memory_plan.h"

#include <inttypes.h>
#include <stdlib.h>

#include "cvml.h"
#include "utility/error.h"
#include "utility/memory.h"

namespace {

bool lives_overlap(const plan_request& a, const plan_request& b) {
    return a.first <= b.last && b.first <= a.last;
}

/* Insertion sort of indices by size, descending, ties by index: deterministic and
 * allocation-free; plans have at most a few thousand buffers. */
void order_by_size(const plan_request* r, int32_t* order, int32_t count) {
    for (int32_t i = 0; i < count; ++i) order[i] = i;
    for (int32_t i = 1; i < count; ++i) {
        int32_t v = order[i];
        int32_t j = i;
        while (j > 0 && r[order[j - 1]].size < r[v].size) {
            order[j] = order[j - 1];
            --j;
        }
        order[j] = v;
    }
}

}  // namespace

int memory_plan(plan_request* requests, int32_t count, size_t align, size_t* arena_size) {
    *arena_size = 0;
    if (count == 0) return CVML_OK;
    int32_t* order =
        static_cast<int32_t*>(cvml_mem_alloc(sizeof(int32_t) * 2 * static_cast<size_t>(count)));
    if (!order)
        return cvml_fail(CVML_ERR_RUNTIME, "out of memory planning %" PRId32 " buffers", count);
    int32_t* placed = order + count;
    int32_t placed_count = 0;
    order_by_size(requests, order, count);
    size_t total = 0;
    for (int32_t k = 0; k < count; ++k) {
        plan_request& r = requests[order[k]];
        size_t size = (r.size + align - 1) & ~(align - 1);
        // Try offset 0, then the end of every conflicting buffer, lowest first.
        size_t best = SIZE_MAX;
        for (int32_t c = -1; c < placed_count; ++c) {
            size_t candidate = 0;
            if (c >= 0) {
                const plan_request& p = requests[placed[c]];
                if (!lives_overlap(p, r)) continue;
                candidate = p.offset + ((p.size + align - 1) & ~(align - 1));
            }
            if (candidate >= best) continue;
            bool fits = true;
            for (int32_t q = 0; q < placed_count && fits; ++q) {
                const plan_request& p = requests[placed[q]];
                if (!lives_overlap(p, r)) continue;
                size_t p_end = p.offset + ((p.size + align - 1) & ~(align - 1));
                fits = candidate + size <= p.offset || p_end <= candidate;
            }
            if (fits) best = candidate;
        }
        r.offset = best;
        if (best + size > total) total = best + size;
        placed[placed_count++] = order[k];
    }
    cvml_mem_free(order);
    *arena_size = total;
    return CVML_OK;
}
