#include "module/plan/memory_plan.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cvml.h"
#include "utility/error.h"
#include "utility/memory.h"
#include "utility/sort.h"

namespace {

/* A buffer with bytes to place; zero-sized requests sit at offset 0 and take no part. */
struct live {
    int32_t first;
    int32_t last;
    int32_t id;   /* index into the requests */
    size_t bytes; /* as requested: the greedy order compares these */
    size_t size;  /* aligned */
};

/* One placed buffer's address range, for the gap search. */
struct span {
    size_t begin;
    size_t end;
};

int by_first(const void* a, const void* b) {
    const live* x = static_cast<const live*>(a);
    const live* y = static_cast<const live*>(b);
    if (x->first != y->first) return x->first < y->first ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

int by_size_desc(const void* a, const void* b) {
    const live* x = static_cast<const live*>(a);
    const live* y = static_cast<const live*>(b);
    if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

int by_begin(const void* a, const void* b) {
    const span* x = static_cast<const span*>(a);
    const span* y = static_cast<const span*>(b);
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

int out_of_memory(int32_t count) {
    return cvml_fail(CVML_ERR_RUNTIME, "out of memory planning %" PRId32 " buffers", count);
}

int too_large() {
    return cvml_fail(CVML_ERR_RUNTIME, "memory plan: the arena exceeds the address space");
}

/* First position in [from, n) of `sorted` (by first) whose first exceeds `step`. */
int32_t first_after(const live* sorted, int32_t from, int32_t n, int32_t step) {
    int32_t lo = from, hi = n;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (sorted[mid].first <= step)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Pairs alive at once: in first order, buffer p meets exactly the later-sorted ones that
 * start before it ends, so each pair is counted once. */
int64_t count_pairs(const live* sorted, int32_t n) {
    int64_t pairs = 0;
    for (int32_t p = 0; p < n; ++p) pairs += first_after(sorted, p + 1, n, sorted[p].last) - p - 1;
    return pairs;
}

/* Lowest offset where `size` bytes fit between the given spans (any order, may overlap). */
size_t lowest_gap(span* spans, int32_t k, size_t size) {
    cvml_sort(spans, static_cast<size_t>(k), sizeof(span), by_begin);
    size_t cursor = 0;
    for (int32_t i = 0; i < k; ++i) {
        if (spans[i].begin >= cursor && spans[i].begin - cursor >= size) break;
        if (spans[i].end > cursor) cursor = spans[i].end;
    }
    return cursor;
}

/* Greedy by decreasing size (ties by request index), each buffer at the lowest offset free
 * among the buffers it meets in time: the neighbours come from a table of the pairs. */
int plan_exact(plan_request* requests, live* items, int32_t n, int64_t pairs, size_t* total) {
    size_t nn = static_cast<size_t>(n);
    size_t np = static_cast<size_t>(pairs);
    // Neighbour table, compressed rows indexed by position in `items` (sorted by first).
    int32_t* start = static_cast<int32_t*>(cvml_scratch_calloc(nn + 1, sizeof(int32_t)));
    int32_t* neighbours = static_cast<int32_t*>(cvml_scratch_alloc(sizeof(int32_t) * (2 * np + 1)));
    int32_t* fill = static_cast<int32_t*>(cvml_scratch_alloc(sizeof(int32_t) * nn));
    uint8_t* placed = static_cast<uint8_t*>(cvml_scratch_calloc(nn, 1));
    span* spans = static_cast<span*>(cvml_scratch_alloc(sizeof(span) * nn));
    live* order = static_cast<live*>(cvml_scratch_alloc(sizeof(live) * nn));
    int rc = CVML_OK;
    if (!start || !neighbours || !fill || !placed || !spans || !order) {
        rc = out_of_memory(n);
        goto done;
    }
    for (int32_t p = 0; p < n; ++p) {
        int32_t end = first_after(items, p + 1, n, items[p].last);
        start[p + 1] += end - p - 1;
        for (int32_t q = p + 1; q < end; ++q) ++start[q + 1];
    }
    for (int32_t p = 0; p < n; ++p) start[p + 1] += start[p];
    for (int32_t p = 0; p < n; ++p) fill[p] = start[p];
    for (int32_t p = 0; p < n; ++p) {
        int32_t end = first_after(items, p + 1, n, items[p].last);
        for (int32_t q = p + 1; q < end; ++q) {
            neighbours[fill[p]++] = q;
            neighbours[fill[q]++] = p;
        }
    }
    for (int32_t p = 0; p < n; ++p) {
        order[p] = items[p];
        order[p].first = p;  // carries the position through the sort
    }
    cvml_sort(order, nn, sizeof(live), by_size_desc);
    for (int32_t k = 0; k < n; ++k) {
        int32_t p = order[k].first;
        int32_t m = 0;
        for (int32_t e = start[p]; e < start[p + 1]; ++e) {
            int32_t q = neighbours[e];
            if (!placed[q]) continue;
            const plan_request& other = requests[items[q].id];
            spans[m].begin = other.offset;
            spans[m].end = other.offset + items[q].size;
            ++m;
        }
        size_t offset = lowest_gap(spans, m, items[p].size);
        if (offset > SIZE_MAX / 2 - items[p].size) {
            rc = too_large();
            goto done;
        }
        requests[items[p].id].offset = offset;
        placed[p] = 1;
        if (offset + items[p].size > *total) *total = offset + items[p].size;
    }
done:
    cvml_scratch_free(start);
    cvml_scratch_free(neighbours);
    cvml_scratch_free(fill);
    cvml_scratch_free(placed);
    cvml_scratch_free(spans);
    cvml_scratch_free(order);
    return rc;
}

/* Size classes: the distinct aligned sizes, ascending; a segment tree over them counts
 * the free blocks of each class so the smallest class >= a size with a free block is
 * found in O(log classes). */
struct free_blocks {
    size_t* sizes;   /* class sizes, ascending */
    int32_t classes; /* number of classes */
    int32_t leaves;  /* power of two >= classes */
    int32_t* counts; /* segment tree, 2 * leaves */
    int32_t* head;   /* per class: first free block (a buffer position) or -1 */
    int32_t* next;   /* per block: next free block of its class */
    int32_t* klass;  /* per block: its class */
    size_t* offsets; /* per block: where it lies */
};

int32_t class_of(const free_blocks* f, size_t size) {
    int32_t lo = 0, hi = f->classes;  // first class with sizes[c] >= size
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (f->sizes[mid] < size)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void count_block(free_blocks* f, int32_t c, int32_t delta) {
    for (int32_t i = c + f->leaves; i >= 1; i /= 2) f->counts[i] += delta;
}

/* Smallest class >= c holding a free block, or -1. */
int32_t first_free_class(const free_blocks* f, int32_t c) {
    int32_t i = c + f->leaves;
    if (f->counts[i] > 0) return c;
    // Climb until a right sibling holds a block, then descend to its leftmost block.
    for (;;) {
        if (i == 1) return -1;
        if ((i & 1) == 0 && f->counts[i + 1] > 0) {
            i = i + 1;
            break;
        }
        i /= 2;
    }
    while (i < f->leaves) i = f->counts[2 * i] > 0 ? 2 * i : 2 * i + 1;
    return i - f->leaves;
}

int by_size_asc(const void* a, const void* b) {
    size_t x = *static_cast<const size_t*>(a), y = *static_cast<const size_t*>(b);
    return x < y ? -1 : x > y;
}

int by_last(const void* a, const void* b) {
    const live* x = static_cast<const live*>(a);
    const live* y = static_cast<const live*>(b);
    if (x->last != y->last) return x->last < y->last ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* In step order: buffers that ended before a step give their blocks back, then the
 * buffers starting there take a free block of their class or one at most twice their
 * size, or a new block at the top of the arena. */
int plan_in_time_order(plan_request* requests, live* items, int32_t n, size_t* total) {
    size_t nn = static_cast<size_t>(n);
    free_blocks f;
    memset(&f, 0, sizeof f);
    live* ending = static_cast<live*>(cvml_scratch_alloc(sizeof(live) * nn));
    int32_t* block_of = static_cast<int32_t*>(cvml_scratch_alloc(sizeof(int32_t) * nn));
    f.sizes = static_cast<size_t*>(cvml_scratch_alloc(sizeof(size_t) * nn));
    f.head = static_cast<int32_t*>(cvml_scratch_alloc(sizeof(int32_t) * nn));
    f.next = static_cast<int32_t*>(cvml_scratch_alloc(sizeof(int32_t) * nn));
    f.klass = static_cast<int32_t*>(cvml_scratch_alloc(sizeof(int32_t) * nn));
    f.offsets = static_cast<size_t*>(cvml_scratch_alloc(sizeof(size_t) * nn));
    int rc = CVML_OK;
    if (!ending || !block_of || !f.sizes || !f.head || !f.next || !f.klass || !f.offsets) {
        rc = out_of_memory(n);
        goto done;
    }
    for (int32_t p = 0; p < n; ++p) f.sizes[p] = items[p].size;
    cvml_sort(f.sizes, nn, sizeof(size_t), by_size_asc);
    for (int32_t p = 0; p < n; ++p)
        if (f.classes == 0 || f.sizes[f.classes - 1] != f.sizes[p])
            f.sizes[f.classes++] = f.sizes[p];
    f.leaves = 1;
    while (f.leaves < f.classes) f.leaves *= 2;
    f.counts = static_cast<int32_t*>(
        cvml_scratch_calloc(2 * static_cast<size_t>(f.leaves), sizeof(int32_t)));
    if (!f.counts) {
        rc = out_of_memory(n);
        goto done;
    }
    for (int32_t c = 0; c < f.classes; ++c) f.head[c] = -1;
    for (int32_t p = 0; p < n; ++p) {
        ending[p] = items[p];
        ending[p].first = p;  // carries the position
    }
    cvml_sort(ending, nn, sizeof(live), by_last);
    {
        int32_t blocks = 0;
        int32_t released = 0;
        for (int32_t p = 0; p < n; ++p) {
            const live& b = items[p];
            for (; released < n && ending[released].last < b.first; ++released) {
                int32_t k = block_of[ending[released].first];
                f.next[k] = f.head[f.klass[k]];
                f.head[f.klass[k]] = k;
                count_block(&f, f.klass[k], 1);
            }
            int32_t want = class_of(&f, b.size);
            int32_t c = first_free_class(&f, want);
            if (c >= 0 && f.sizes[c] / 2 <= b.size) {
                int32_t k = f.head[c];
                f.head[c] = f.next[k];
                count_block(&f, c, -1);
                block_of[p] = k;
            } else {
                if (*total > SIZE_MAX / 2 - b.size) {
                    rc = too_large();
                    goto done;
                }
                int32_t k = blocks++;
                f.klass[k] = want;
                f.offsets[k] = *total;
                *total += b.size;
                block_of[p] = k;
            }
            requests[b.id].offset = f.offsets[block_of[p]];
        }
    }
done:
    cvml_scratch_free(ending);
    cvml_scratch_free(block_of);
    cvml_scratch_free(f.sizes);
    cvml_scratch_free(f.counts);
    cvml_scratch_free(f.head);
    cvml_scratch_free(f.next);
    cvml_scratch_free(f.klass);
    cvml_scratch_free(f.offsets);
    return rc;
}

}  // namespace

int memory_plan(plan_request* requests, int32_t count, size_t align, size_t* arena_size) {
    return memory_plan_ex(requests, count, align, PLAN_EXACT_PAIRS, arena_size);
}

int memory_plan_ex(plan_request* requests, int32_t count, size_t align, int64_t exact_pairs,
                   size_t* arena_size) {
    *arena_size = 0;
    if (count <= 0) return CVML_OK;
    live* items = static_cast<live*>(cvml_scratch_alloc(sizeof(live) * static_cast<size_t>(count)));
    if (!items) return out_of_memory(count);
    int32_t n = 0;
    for (int32_t i = 0; i < count; ++i) {
        requests[i].offset = 0;
        if (requests[i].size == 0) continue;
        if (requests[i].size > SIZE_MAX / 2) {
            cvml_scratch_free(items);
            return too_large();
        }
        items[n].first = requests[i].first;
        items[n].last = requests[i].last < requests[i].first ? requests[i].first : requests[i].last;
        items[n].id = i;
        items[n].bytes = requests[i].size;
        items[n].size = (requests[i].size + align - 1) & ~(align - 1);
        ++n;
    }
    cvml_sort(items, static_cast<size_t>(n), sizeof(live), by_first);
    int64_t pairs = count_pairs(items, n);
    size_t total = 0;
    int rc = pairs <= exact_pairs ? plan_exact(requests, items, n, pairs, &total)
                                  : plan_in_time_order(requests, items, n, &total);
    cvml_scratch_free(items);
    if (!rc) *arena_size = total;
    return rc;
}
