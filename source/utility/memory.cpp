/* The library's heap (memory.h): the caller's allocator or the C library's. */
#include "utility/memory.h"

#include <stdlib.h>
#include <string.h>

#include "utility/error.h"

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
