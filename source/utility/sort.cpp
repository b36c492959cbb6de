/* Heapsort (sort.h). */
#include "utility/sort.h"

#include <stdint.h>

namespace {

void swap_bytes(uint8_t* a, uint8_t* b, size_t size) {
    for (size_t i = 0; i < size; ++i) {
        const uint8_t t = a[i];
        a[i] = b[i];
        b[i] = t;
    }
}

/* Moves element `root` down the max-heap of the first `count` elements. */
void sift_down(uint8_t* base, size_t root, size_t count, size_t size,
               int (*compare)(const void*, const void*)) {
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= count) return;
        if (child + 1 < count && compare(base + child * size, base + (child + 1) * size) < 0)
            ++child;
        if (compare(base + root * size, base + child * size) >= 0) return;
        swap_bytes(base + root * size, base + child * size, size);
        root = child;
    }
}

}  // namespace

void cvml_sort(void* base, size_t count, size_t size, int (*compare)(const void*, const void*)) {
    uint8_t* b = static_cast<uint8_t*>(base);
    if (count < 2) return;
    for (size_t i = count / 2; i-- > 0;) sift_down(b, i, count, size, compare);
    for (size_t end = count - 1; end > 0; --end) {
        swap_bytes(b, b + end * size, size);
        sift_down(b, 0, end, size, compare);
    }
}
