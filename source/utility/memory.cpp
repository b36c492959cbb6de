/* The library's heap (memory.h): the caller's allocator or the C library's. */
#include "utility/memory.h"

#include <stdlib.h>
#include <string.h>

#include "utility/error.h"
#include "utility/platform.h"

namespace {

cvml_allocator g_allocator; /* alloc == NULL: the C library's */

}  // namespace

void* cvml_mem_alloc(size_t size) {
    if (g_allocator.alloc) return g_allocator.alloc(g_allocator.user, size ? size : 1);
    return malloc(size ? size : 1);
}

void* cvml_mem_calloc(size_t count, size_t size) {
    if (!g_allocator.alloc) return calloc(count ? count : 1, size ? size : 1);
    if (size && count > static_cast<size_t>(-1) / size) return nullptr;
    const size_t bytes = count * size > 0 ? count * size : 1;
    void* p = g_allocator.alloc(g_allocator.user, bytes);
    if (p) memset(p, 0, bytes);
    return p;
}

void* cvml_mem_realloc(void* p, size_t size) {
    if (g_allocator.alloc) return g_allocator.resize(g_allocator.user, p, size ? size : 1);
    return realloc(p, size ? size : 1);
}

void cvml_mem_free(void* p) {
    if (!p) return;
    if (g_allocator.alloc)
        g_allocator.release(g_allocator.user, p);
    else
        free(p);
}

int cvml_mem_is_custom(void) {
    return g_allocator.alloc != nullptr;
}

int cvml_mem_set_allocator(const cvml_allocator* a) {
    if (!a) {
        memset(&g_allocator, 0, sizeof g_allocator);
        return CVML_OK;
    }
    if (a->struct_size < sizeof(cvml_allocator))
        return cvml_fail(CVML_ERR_LOGIC, "cvml_set_allocator: struct_size %u is smaller than %u",
                         static_cast<unsigned>(a->struct_size),
                         static_cast<unsigned>(sizeof(cvml_allocator)));
    if (!a->alloc || !a->resize || !a->release)
        return cvml_fail(CVML_ERR_LOGIC,
                         "cvml_set_allocator: alloc, resize and release are all needed");
    g_allocator = *a;
    return CVML_OK;
}

/* ---- scratch ----------------------------------------------------------------------- */

namespace {

/* Each block of the region starts with a header: where the previous block's header is
 * (offset + 1, 0 for none) and the block's rounded size, its low bit set once freed. */
struct scratch_header {
    size_t prev;
    size_t size;
};

constexpr size_t kScratchAlign = sizeof(scratch_header);

struct scratch_region {
    uint8_t* base; /* NULL: nothing lent */
    size_t size;
    size_t top;  /* bytes in use */
    size_t last; /* the newest header's offset + 1, 0 for none */
};

CVML_THREAD_LOCAL scratch_region t_scratch;

bool in_scratch(const void* p) {
    const scratch_region& r = t_scratch;
    uintptr_t at = reinterpret_cast<uintptr_t>(p), base = reinterpret_cast<uintptr_t>(r.base);
    return r.base && at >= base && at < base + r.size;
}

scratch_header* header_of(void* p) {
    return reinterpret_cast<scratch_header*>(static_cast<uint8_t*>(p) - sizeof(scratch_header));
}

size_t round_up(size_t n) {
    return (n + kScratchAlign - 1) & ~(kScratchAlign - 1);
}

/* Pops the freed blocks at the top of the region. */
void pop_freed() {
    scratch_region& r = t_scratch;
    while (r.last) {
        scratch_header* h = reinterpret_cast<scratch_header*>(r.base + r.last - 1);
        if (!(h->size & 1)) break;
        r.top = r.last - 1;
        r.last = h->prev;
    }
}

}  // namespace

void cvml_scratch_begin(void* region, size_t size) {
    memset(&t_scratch, 0, sizeof t_scratch);
    uintptr_t at = reinterpret_cast<uintptr_t>(region);
    size_t skip = (kScratchAlign - at % kScratchAlign) % kScratchAlign;
    if (!region || size < skip + 4 * kScratchAlign) return;
    t_scratch.base = static_cast<uint8_t*>(region) + skip;
    t_scratch.size = (size - skip) & ~(kScratchAlign - 1);
}

int cvml_scratch_end(void) {
    int empty = t_scratch.top == 0;
    memset(&t_scratch, 0, sizeof t_scratch);
    return empty;
}

int cvml_scratch_active(void) {
    return t_scratch.base != nullptr;
}

void* cvml_scratch_alloc(size_t size) {
    scratch_region& r = t_scratch;
    if (!r.base || size > r.size) return cvml_mem_alloc(size);
    size_t need = round_up(size ? size : 1);
    size_t avail = r.size - r.top;
    if (need > avail || avail - need < sizeof(scratch_header)) return cvml_mem_alloc(size);
    scratch_header* h = reinterpret_cast<scratch_header*>(r.base + r.top);
    h->prev = r.last;
    h->size = need;
    r.last = r.top + 1;
    r.top += sizeof(scratch_header) + need;
    return h + 1;
}

void* cvml_scratch_calloc(size_t count, size_t size) {
    if (size && count > static_cast<size_t>(-1) / size) return nullptr;
    void* p = cvml_scratch_alloc(count * size);
    if (p) memset(p, 0, count * size);
    return p;
}

void cvml_scratch_free(void* p) {
    if (!p) return;
    if (!in_scratch(p)) {
        cvml_mem_free(p);
        return;
    }
    header_of(p)->size |= 1;
    pop_freed();
}

void* cvml_scratch_settle(void* p) {
    scratch_region& r = t_scratch;
    if (!p || !in_scratch(p)) return p;
    scratch_header* h = header_of(p);
    const size_t offset = static_cast<size_t>(reinterpret_cast<uint8_t*>(h) - r.base);
    if (r.last != offset + 1) return p;
    size_t prev = h->prev, to = offset;
    while (prev) {
        const scratch_header* below = reinterpret_cast<scratch_header*>(r.base + prev - 1);
        if (!(below->size & 1)) break;
        to = prev - 1;
        prev = below->prev;
    }
    if (to == offset) return p;
    const size_t size = h->size;
    scratch_header* moved = reinterpret_cast<scratch_header*>(r.base + to);
    memmove(moved + 1, p, size);
    moved->prev = prev;
    moved->size = size;
    r.last = to + 1;
    r.top = to + sizeof(scratch_header) + size;
    return moved + 1;
}

void* cvml_scratch_realloc(void* p, size_t size) {
    if (!p) return cvml_scratch_alloc(size);
    if (!in_scratch(p)) return cvml_mem_realloc(p, size);
    scratch_region& r = t_scratch;
    scratch_header* h = header_of(p);
    size_t old = h->size & ~static_cast<size_t>(1);
    size_t offset = static_cast<size_t>(reinterpret_cast<uint8_t*>(h) - r.base);
    size_t room = r.size - offset - sizeof(scratch_header);  // for the newest block
    size_t need = size <= room ? round_up(size ? size : 1) : room + 1;
    if (r.last == offset + 1 && need <= room) {
        h->size = need;  // the newest block grows or shrinks where it is
        r.top = offset + sizeof(scratch_header) + need;
        return p;
    }
    void* q = cvml_scratch_alloc(size);
    if (!q) return nullptr;
    memcpy(q, p, old < size ? old : size);
    cvml_scratch_free(p);
    return q;
}
