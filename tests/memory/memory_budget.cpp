/* The RAM a model needs on the host, measured: every heap allocation of the process is
 * counted by interposing glibc's allocator (so nothing the library or the C++ runtime
 * allocates can escape it), the stack high-water is read from a painted thread stack,
 * and the arena is what the graph reports. The model and its params are read into
 * memory before counting starts: they stand for the flash of a microcontroller.
 *
 * usage: cvml_memory_budget MODEL_DIR [--threads N] [--in-place] [--arena]
 *                           [--budget BYTES] [--no-alloc-after-load] [--pool BYTES]
 * --pool gives the library a heap of its own in a static pool (cvml_set_allocator), as a
 * caller without malloc would, and fails on any call of the C library's allocator
 * during the load and run; heap figures are then the pool's live bytes (this test's
 * pool is a plain stack that reuses only what is freed from its top, so it needs far
 * more room than that).
 * MODEL_DIR holds a conformance case (model.json, model.params, input.bin, output.bin,
 * meta.json's gas is passed with --gas G). Prints one line:
 *   memory MODEL simd S threads T: output ... gas G heap_peak H heap_after_load A
 *   allocs_after_load N arena R stack K total X malloc_calls M
 * where total = heap_peak + stack (+ arena when it is the caller's, outside the heap).
 * Exits 0 when the output and gas are right and the requested budgets hold; 77 (the
 * ctest skip code) when the model is absent. */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>
#include <vector>

#include "cvml.h"

/* ---- counting allocator (glibc interposition) ------------------------------------------ */

extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
void __libc_free(void*);
}

namespace {

size_t g_live, g_peak, g_allocs;
bool g_counting;

void count_alloc(void* p) {
    if (!p || !g_counting) return;
    size_t now = __atomic_add_fetch(&g_live, malloc_usable_size(p), __ATOMIC_RELAXED);
    __atomic_add_fetch(&g_allocs, 1, __ATOMIC_RELAXED);
    size_t peak = __atomic_load_n(&g_peak, __ATOMIC_RELAXED);
    while (now > peak && !__atomic_compare_exchange_n(&g_peak, &peak, now, true, __ATOMIC_RELAXED,
                                                      __ATOMIC_RELAXED)) {
    }
}

void count_free(void* p) {
    if (!p || !g_counting) return;
    size_t n = malloc_usable_size(p);
    // A block allocated before counting began is not subtracted below zero.
    size_t live = __atomic_load_n(&g_live, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&g_live, n < live ? n : live, __ATOMIC_RELAXED);
}

}  // namespace

extern "C" {
void* malloc(size_t n) {
    void* p = __libc_malloc(n);
    count_alloc(p);
    return p;
}
void* calloc(size_t a, size_t b) {
    void* p = __libc_calloc(a, b);
    count_alloc(p);
    return p;
}
void* realloc(void* old, size_t n) {
    count_free(old);
    void* p = __libc_realloc(old, n);
    count_alloc(p ? p : (n ? nullptr : nullptr));
    return p;
}
void free(void* p) {
    count_free(p);
    __libc_free(p);
}
void* aligned_alloc(size_t align, size_t n) {
    void* p = __libc_memalign(align, n);
    count_alloc(p);
    return p;
}
void* memalign(size_t align, size_t n) {
    void* p = __libc_memalign(align, n);
    count_alloc(p);
    return p;
}
int posix_memalign(void** out, size_t align, size_t n) {
    void* p = __libc_memalign(align, n);
    if (!p) return 12;  // ENOMEM
    count_alloc(p);
    *out = p;
    return 0;
}
}

/* ---- a heap-less caller: the library's memory from a static pool ----------------------- */

namespace {

/* A stack of blocks in one buffer, each after a header: the last block grows and
 * shrinks in place, and freeing it pops it with the freed blocks under it; a block
 * freed below the top waits until the blocks above it go. */
struct pool {
    uint8_t* base;
    size_t size, top, high_water;
    size_t last;            /* offset of the last block's header; SIZE_MAX when empty */
    size_t allocs;          /* blocks handed out (resizes that move included) */
    size_t live, live_peak; /* bytes of the blocks not freed (what a real heap needs) */
};

struct block_header {
    size_t size;
    uint32_t prev; /* offset of the previous block's header, UINT32_MAX for none */
    uint32_t freed;
};

constexpr size_t kHeader = sizeof(block_header);
static_assert(kHeader % 16 == 0, "blocks stay 16-byte aligned");

size_t rounded(size_t n) {
    return (n + 15) / 16 * 16;
}

block_header* header_of(pool* p, void* block) {
    (void)p;
    return reinterpret_cast<block_header*>(static_cast<uint8_t*>(block) - kHeader);
}

void* pool_alloc(void* user, size_t size) {
    pool* p = static_cast<pool*>(user);
    if (p->size - p->top < kHeader + rounded(size)) return nullptr;
    block_header* h = reinterpret_cast<block_header*>(p->base + p->top);
    h->size = size;
    h->prev = p->last == SIZE_MAX ? UINT32_MAX : static_cast<uint32_t>(p->last);
    h->freed = 0;
    ++p->allocs;
    p->live += size;
    if (p->live > p->live_peak) p->live_peak = p->live;
    p->last = p->top;
    p->top += kHeader + rounded(size);
    if (p->top > p->high_water) p->high_water = p->top;
    return h + 1;
}

void pool_release(void* user, void* block) {
    pool* p = static_cast<pool*>(user);
    if (!block) return;
    header_of(p, block)->freed = 1;
    p->live -= header_of(p, block)->size;
    while (p->last != SIZE_MAX) {
        block_header* h = reinterpret_cast<block_header*>(p->base + p->last);
        if (!h->freed) break;
        p->top = p->last;
        p->last = h->prev == UINT32_MAX ? SIZE_MAX : h->prev;
    }
}

void* pool_resize(void* user, void* block, size_t size) {
    pool* p = static_cast<pool*>(user);
    if (!block) return pool_alloc(user, size);
    block_header* h = header_of(p, block);
    if (reinterpret_cast<uint8_t*>(h) == p->base + p->last) {
        if (p->size - p->last < kHeader + rounded(size)) return nullptr;
        p->live = p->live - h->size + size;
        if (p->live > p->live_peak) p->live_peak = p->live;
        h->size = size;
        p->top = p->last + kHeader + rounded(size);
        if (p->top > p->high_water) p->high_water = p->top;
        return block;
    }
    void* moved = pool_alloc(user, size);
    if (!moved) return nullptr;
    memcpy(moved, block, h->size < size ? h->size : size);
    pool_release(user, block);
    return moved;
}

}  // namespace

/* ---- the measured run ------------------------------------------------------------------ */

namespace {

struct options {
    std::string dir;
    int threads = 1;
    bool in_place = false;
    bool arena = false;
    size_t budget = 0;
    bool no_alloc_after_load = false;
    unsigned long long gas = 0;
    size_t pool = 0; /* --pool BYTES: the library's heap is a static pool (no malloc) */
};

struct result {
    int rc = 1;
    std::string message;
    std::vector<int8_t> output;
    uint64_t gas = 0;
    size_t heap_peak = 0, heap_after_load = 0, allocs_after_load = 0, arena = 0;
    size_t malloc_calls = 0; /* the C library's, during load and run */
};

struct job {
    const options* opt;
    pool* heap_pool; /* the library's heap when --pool, else NULL */
    const std::string* graph;
    const std::string* params;
    const std::string* input;
    size_t output_size;
    std::vector<uint8_t> arena; /* the caller's arena, when --arena */
    result res;
};

int fail(result* r, const char* what) {
    r->message = std::string(what) + ": " + cvml_last_error();
    return r->rc = 1;
}

/* The arena a caller would size offline: cvml_graph_arena_bytes() of a plain load. */
int size_arena(job* j) {
    cvml_context* ctx = nullptr;
    cvml_graph* g = nullptr;
    size_t bytes = 0;
    int rc = cvml_context_create(&ctx);
    if (!rc) rc = cvml_context_set_threads(ctx, j->opt->threads);
    if (!rc)
        rc = cvml_graph_load_memory(ctx, "cvm", j->graph->data(), j->graph->size(),
                                    j->params->data(), j->params->size(), &g);
    if (!rc) rc = cvml_graph_arena_bytes(g, &bytes);
    if (g) cvml_graph_release(g);
    if (ctx) cvml_context_release(ctx);
    if (!rc) j->arena.assign(bytes, 0);
    return rc;
}

/* Loads, runs once, checks nothing: measures. Runs on the painted stack. */
void* measured(void* arg) {
    job* j = static_cast<job*>(arg);
    result* r = &j->res;
    cvml_context* ctx = nullptr;
    cvml_graph* g = nullptr;
    if (j->opt->arena && size_arena(j)) {
        fail(r, "sizing the arena");
        return nullptr;
    }
    r->output.assign(j->output_size, 0);
    pool* hp = j->heap_pool;
    const size_t pool_start = hp ? hp->live : 0;
    if (hp) hp->live_peak = hp->live;
    g_live = g_peak = g_allocs = 0;
    g_counting = true;
    if (cvml_context_create(&ctx) || cvml_context_set_threads(ctx, j->opt->threads)) {
        fail(r, "context");
        return nullptr;
    }
    cvml_load_options lo = {sizeof lo, j->opt->in_place ? CVML_LOAD_PARAMS_IN_PLACE : 0u,
                            j->opt->arena ? j->arena.data() : nullptr, j->arena.size()};
    int rc = cvml_graph_load_memory_ex(ctx, "cvm", j->graph->data(), j->graph->size(),
                                       j->params->data(), j->params->size(), &lo, &g);
    if (!rc && !j->opt->arena) rc = cvml_graph_prerun(g);
    if (rc) {
        fail(r, "load");
        cvml_context_release(ctx);
        return nullptr;
    }
    r->heap_after_load = g_live + (hp ? hp->live - pool_start : 0);
    const size_t allocs_at_load = g_allocs + (hp ? hp->allocs : 0);
    rc = cvml_graph_run_bytes(g, j->input->data(), j->input->size(), r->output.data(),
                              r->output.size());
    r->allocs_after_load = g_allocs + (hp ? hp->allocs : 0) - allocs_at_load;
    r->heap_peak = g_peak + (hp ? hp->live_peak - pool_start : 0);
    r->malloc_calls = g_allocs;
    if (rc) fail(r, "run");
    if (!rc) rc = cvml_graph_gas(g, &r->gas);
    if (!rc) rc = cvml_graph_arena_bytes(g, &r->arena);
    cvml_graph_release(g);
    cvml_context_release(ctx);
    g_counting = false;
    if (!rc) r->rc = 0;
    return nullptr;
}

void* idle(void*) {
    return nullptr;
}

constexpr size_t kStackSize = 1 << 20;
constexpr uint8_t kPaint = 0xA5;

/* Runs fn on a painted stack of its own; returns the bytes of it that were written. */
size_t stack_used(void* (*fn)(void*), void* arg) {
    uint8_t* stack = static_cast<uint8_t*>(__libc_memalign(4096, kStackSize));
    memset(stack, kPaint, kStackSize);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstack(&attr, stack, kStackSize);
    pthread_t t;
    pthread_create(&t, &attr, fn, arg);
    pthread_join(t, nullptr);
    pthread_attr_destroy(&attr);
    size_t untouched = 0;
    while (untouched < kStackSize && stack[untouched] == kPaint) ++untouched;
    __libc_free(stack);
    return kStackSize - untouched;
}

bool read_file(const std::string& path, std::string* out) {
    FILE* f = fopen(path.c_str(), "rb");
    if (!f) return false;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) out->append(buf, n);
    fclose(f);
    return true;
}

bool parse_args(int argc, char** argv, options* o) {
    if (argc < 2) return false;
    o->dir = argv[1];
    for (int i = 2; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--threads" && i + 1 < argc)
            o->threads = atoi(argv[++i]);
        else if (a == "--in-place")
            o->in_place = true;
        else if (a == "--arena")
            o->arena = true;
        else if (a == "--budget" && i + 1 < argc)
            o->budget = strtoull(argv[++i], nullptr, 10);
        else if (a == "--no-alloc-after-load")
            o->no_alloc_after_load = true;
        else if (a == "--gas" && i + 1 < argc)
            o->gas = strtoull(argv[++i], nullptr, 10);
        else if (a == "--pool" && i + 1 < argc)
            o->pool = strtoull(argv[++i], nullptr, 10);
        else if (a == "--pool" && i + 1 < argc)
            o->pool = strtoull(argv[++i], nullptr, 10);
        else
            return false;
    }
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    options opt;
    if (!parse_args(argc, argv, &opt)) {
        fprintf(stderr,
                "usage: %s MODEL_DIR [--threads N] [--in-place] [--arena] [--budget BYTES] "
                "[--no-alloc-after-load] [--gas G] [--pool BYTES]\n",
                argv[0]);
        return 2;
    }
    std::string graph, params, input, expected;
    if (!read_file(opt.dir + "/model.json", &graph) ||
        !read_file(opt.dir + "/model.params", &params) ||
        !read_file(opt.dir + "/input.bin", &input) ||
        !read_file(opt.dir + "/output.bin", &expected)) {
        printf("memory: the model in %s is absent (../shared not mounted); skipped\n",
               opt.dir.c_str());
        return 77;
    }
    pool heap_pool = {nullptr, opt.pool, 0, 0, SIZE_MAX, 0, 0, 0};
    if (opt.pool) {
        heap_pool.base = static_cast<uint8_t*>(__libc_memalign(16, opt.pool));
        const cvml_allocator a = {sizeof a, pool_alloc, pool_resize, pool_release, &heap_pool};
        if (cvml_set_allocator(&a)) {
            fprintf(stderr, "cvml_set_allocator: %s\n", cvml_last_error());
            return 1;
        }
    }
    if (cvml_init()) {
        fprintf(stderr, "cvml_init: %s\n", cvml_last_error());
        return 1;
    }
    const size_t idle_stack = stack_used(idle, nullptr);
    job j{&opt, opt.pool ? &heap_pool : nullptr, &graph, &params, &input, expected.size(), {}, {}};
    const size_t stack = stack_used(measured, &j) - idle_stack;
    cvml_release();
    if (opt.pool) {
        cvml_set_allocator(nullptr);
        __libc_free(heap_pool.base);
    }
    const result& r = j.res;
    if (r.rc) {
        fprintf(stderr, "memory: %s\n", r.message.c_str());
        return 1;
    }
    const size_t total = r.heap_peak + stack + (opt.arena ? r.arena : 0);
    // A conformance case's directory is MODEL/case: name the model.
    std::string name = opt.dir;
    while (!name.empty() && name.back() == '/') name.pop_back();
    if (name.size() > 5 && name.compare(name.size() - 5, 5, "/case") == 0)
        name.resize(name.size() - 5);
    name = name.substr(name.find_last_of('/') + 1);
    printf("memory %s simd %s threads %d%s%s%s: output", name.c_str(), cvml_cpu_simd_level(),
           opt.threads, opt.in_place ? " in-place" : "", opt.arena ? " caller-arena" : "",
           opt.pool ? " pool-heap" : "");
    for (int8_t v : r.output) printf(" %d", v);
    printf(
        " gas %llu heap_peak %zu heap_after_load %zu allocs_after_load %zu arena %zu stack "
        "%zu total %zu malloc_calls %zu\n",
        static_cast<unsigned long long>(r.gas), r.heap_peak, r.heap_after_load, r.allocs_after_load,
        r.arena, stack, total, r.malloc_calls);
    int bad = 0;
    if (memcmp(r.output.data(), expected.data(), expected.size()) != 0) {
        fprintf(stderr, "memory: wrong output bytes\n");
        bad = 1;
    }
    if (opt.gas && r.gas != opt.gas) {
        fprintf(stderr, "memory: gas %llu, expected %llu\n", static_cast<unsigned long long>(r.gas),
                opt.gas);
        bad = 1;
    }
    if (opt.budget && total > opt.budget) {
        fprintf(stderr, "memory: total %zu bytes exceeds the budget of %zu\n", total, opt.budget);
        bad = 1;
    }
    if (opt.pool && r.malloc_calls) {
        fprintf(stderr, "memory: %zu calls of the C library's allocator with a pool heap\n",
                r.malloc_calls);
        bad = 1;
    }
    if (opt.no_alloc_after_load && r.allocs_after_load) {
        fprintf(stderr, "memory: %zu heap allocations after load\n", r.allocs_after_load);
        bad = 1;
    }
    return bad;
}
