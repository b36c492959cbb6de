/* Inputs of at most 8 (16) bits narrowed to int8 (int16) for the copy to the GPU. */
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <new>
#include <thread>

#include "cuda_device.h"

namespace cuda_dev {

/* ---- narrowing large inputs on several threads ---------------------------------------
 * One thread reads host memory at a fraction of what the machine can (ResNet-18 at batch
 * 64: 9.6 M values, several ms on one thread). A subgraph with an input of more than
 * kNarrowPool values gets workers, started at prerun and parked between runs; at each
 * run they and the calling thread narrow the input in parts, and the calling thread
 * copies each finished part to the GPU, so that the copy of one part overlaps the
 * narrowing of the next. */
constexpr size_t kNarrowChunk = size_t{1} << 17; /* values per part, at least */
static_assert(kNarrowPool == 2 * kNarrowChunk, "a pool narrows at least two parts");
constexpr int kMaxNarrowParts = 64;
constexpr unsigned kMaxNarrowThreads = 16; /* the calling thread included */

struct narrow_job {
    void* host;
    const int32_t* src;
    size_t n;
    int width;
    int parts;
};

struct narrow_pool {
    std::thread workers[kMaxNarrowThreads - 1];
    unsigned count = 0;
    std::mutex lock;
    std::condition_variable wake, idle;
    uint64_t generation = 0; /* one per job */
    int active = 0;          /* workers inside a job */
    bool stop = false;
    narrow_job job = {};
    std::atomic<int> next{0};               /* the next part to take */
    std::atomic<int> done[kMaxNarrowParts]; /* part k narrowed */
    bool fits[kMaxNarrowParts];
};

namespace {

/* Values [begin, end) of the host's int32 `src` into `width`-byte staging; false when
 * one does not fit. Written so that the compiler vectorizes it (no early exit). */
template <class Narrow>
bool narrow_range(Narrow* dst, const int32_t* src, size_t begin, size_t end) {
    constexpr uint32_t kHalf = 1u << (8 * sizeof(Narrow) - 1);
    uint32_t outside = 0;
    for (size_t i = begin; i < end; ++i) {
        dst[i] = static_cast<Narrow>(src[i]);
        outside |= static_cast<uint32_t>(src[i]) + kHalf > 2 * kHalf - 1;
    }
    return outside == 0;
}

bool narrow_part(void* host, const int32_t* src, size_t begin, size_t end, int width) {
    return width == 1 ? narrow_range(static_cast<int8_t*>(host), src, begin, end)
                      : narrow_range(static_cast<int16_t*>(host), src, begin, end);
}

size_t part_begin(const narrow_job& job, int k) {
    return job.n * static_cast<size_t>(k) / static_cast<size_t>(job.parts);
}

void narrow_one(narrow_pool* pool, const narrow_job& job, int k) {
    pool->fits[k] =
        narrow_part(job.host, job.src, part_begin(job, k), part_begin(job, k + 1), job.width);
    pool->done[k].store(1, std::memory_order_release);
}

void narrow_worker(narrow_pool* pool) {
    uint64_t seen = 0;
    for (;;) {
        narrow_job job;
        {
            std::unique_lock<std::mutex> l(pool->lock);
            pool->wake.wait(l, [&] { return pool->stop || pool->generation != seen; });
            if (pool->stop) return;
            seen = pool->generation;
            job = pool->job;
            ++pool->active;  // the job's state stays until this worker leaves it
        }
        for (int k; (k = pool->next.fetch_add(1)) < job.parts;) narrow_one(pool, job, k);
        std::lock_guard<std::mutex> l(pool->lock);
        if (--pool->active == 0) pool->idle.notify_all();
    }
}

}  // namespace

/* Workers for a subgraph (null when none could be started: one thread narrows). */
narrow_pool* narrow_pool_create() {
    narrow_pool* pool = new (std::nothrow) narrow_pool;
    if (!pool) return nullptr;
    unsigned threads = std::thread::hardware_concurrency();
    threads = threads < 2 ? 2 : threads > kMaxNarrowThreads ? kMaxNarrowThreads : threads;
    for (unsigned k = 0; k + 1 < threads; ++k) {
        try {
            pool->workers[k] = std::thread(narrow_worker, pool);
        } catch (...) {
            break;
        }
        ++pool->count;
    }
    if (pool->count == 0) {
        delete pool;
        return nullptr;
    }
    return pool;
}

void narrow_pool_destroy(narrow_pool* pool) {
    if (!pool) return;
    {
        std::lock_guard<std::mutex> l(pool->lock);
        pool->stop = true;
    }
    pool->wake.notify_all();
    for (unsigned k = 0; k < pool->count; ++k) pool->workers[k].join();
    delete pool;
}

/* Narrows the n int32 values of src into `host` (width bytes each) and copies the
 * result to `dev` on `stream`, part by part as parts finish: with a pool, on its workers
 * and this thread. *fits: every value fitted. Returns CVML_OK or the copy's error. */
int narrow_and_send(narrow_pool* pool, void* host, void* dev, const int32_t* src, size_t n,
                    int width, cudaStream_t stream, bool* fits) {
    const char* what = "cudaMemcpyAsync (narrow input)";
    if (!pool || n <= kNarrowPool) {
        *fits = narrow_part(host, src, 0, n, width);
        return cuda_check(cudaMemcpyAsync(dev, host, n * width, cudaMemcpyHostToDevice, stream),
                          what);
    }
    CUDA_PATH("staging: an input narrowed on several threads");
    narrow_job job = {host, src, n, width, static_cast<int>(n / kNarrowChunk)};
    if (job.parts > kMaxNarrowParts) job.parts = kMaxNarrowParts;
    {
        std::unique_lock<std::mutex> l(pool->lock);
        pool->idle.wait(l, [&] { return pool->active == 0; });  // workers left the last job
        pool->job = job;
        pool->next.store(0);
        for (int k = 0; k < job.parts; ++k) pool->done[k].store(0);
        ++pool->generation;
    }
    pool->wake.notify_all();
    int rc = CVML_OK;
    bool all_fit = true;
    for (int sent = 0; sent < job.parts;) {
        const int k = pool->next.fetch_add(1);
        if (k < job.parts) narrow_one(pool, job, k);
        for (; sent < job.parts && pool->done[sent].load(std::memory_order_acquire); ++sent) {
            const size_t begin = part_begin(job, sent), end = part_begin(job, sent + 1);
            all_fit &= pool->fits[sent];
            if (!rc)
                rc = cuda_check(
                    cudaMemcpyAsync(static_cast<int8_t*>(dev) + begin * width,
                                    static_cast<int8_t*>(host) + begin * width,
                                    (end - begin) * width, cudaMemcpyHostToDevice, stream),
                    what);
        }
        if (k >= job.parts && sent < job.parts) std::this_thread::yield();  // a worker's part
    }
    *fits = all_fit;
    return rc;
}

}  // namespace cuda_dev
