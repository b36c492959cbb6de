#include "device/cpu/thread_pool.h"
#include "device/cpu/cpu_affinity.h"
#include "utility/memory.h"

#include <stdlib.h>
#include <string.h>

#if CVML_WITH_THREADS
#include <pthread.h>
#include <sched.h>
#endif

#include "utility/platform.h"

namespace {

/* One of fn and fn_at is set. */
struct job {
    thread_pool_fn fn;
    thread_pool_fn_at fn_at;
    void* arg;
    int64_t n;
};

/* Chunk k of `chunks` covers [n*k/chunks, n*(k+1)/chunks); `thread` runs it. */
void run_chunk(const job& j, int k, int chunks, int thread) {
    int64_t begin = j.n * k / chunks;
    int64_t end = j.n * (k + 1) / chunks;
    if (begin >= end) return;
    if (j.fn_at)
        j.fn_at(j.arg, begin, end, thread);
    else
        j.fn(j.arg, begin, end);
}

}  // namespace

#if CVML_WITH_THREADS

/* Chunks are claimed, not assigned: each thread owns THREAD_POOL_CHUNKS_PER_THREAD
 * consecutive chunks (the caller the first ones, worker i those of thread i + 1) and
 * claims them in order, then takes chunks still unclaimed from the other threads' ends
 * (the last of each first, the part its owner would have reached last). A chunk's range
 * never changes (static split), so the bytes never depend on which thread ran it, but a
 * thread that computes slower (the host gave its vCPU's core to another guest for a
 * while) or that the OS has not scheduled does not hold the others up: they take its
 * remaining chunks. With one chunk a thread, on a shared Zen 3 VM whose vCPUs were
 * slowed by a quarter for seconds at a time, one thread waited 6-16% of each region for
 * the other; with 8, ResNet-18 at two threads ran 9% faster in the median of 16
 * alternated runs (docs/perf-log.md). Taking one's own chunks first
 * keeps a region's data on the core that had it the region and the run before: with
 * one shared counter, whichever thread came first took chunk 0, and on ResNet-18 at two
 * threads the worker did in a fifth of the regions, so the two halves of a tensor
 * changed cores from layer to layer. Chunk k is claimed by moving chunk_generation[k]
 * from the job's generation - 1 to its generation: every chunk of a job is claimed
 * before the next job is published, so a late worker still holding an earlier
 * generation cannot claim a chunk of a later job with an earlier job's function.
 *
 * Hand-off: a network runs dozens of parallel regions per inference, some well under a
 * millisecond, and waking a sleeping thread costs tens of microseconds (more in a VM).
 * So both sides spin for a bounded while on an atomic before blocking: the workers for
 * the next job, the caller for chunks other threads are still running. The blocking
 * side announces itself (sleepers / caller_sleeping) before re-checking, and the
 * publishing side checks the announcement after publishing; both with sequentially
 * consistent atomics, so at least one of them sees the other and no wake-up is lost.
 * Each store that is followed by such a check goes through announce(). */

/* ~0.1 ms of pause instructions: longer than the gap between two regions of one
 * inference, short enough that an idle pool goes to sleep almost at once. Every
 * kYieldEvery rounds the spinner yields, so a thread that shares its core (more
 * threads than cores, or another process) gets to run. A pool with more threads than
 * online CPUs does not spin at all. */
constexpr int kSpinRounds = 1 << 12;
constexpr int kYieldEvery = 1 << 7;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

struct worker_arg {
    thread_pool* pool;
    int self; /* the worker's own chunk: worker i is thread i + 1, the caller thread 0 */
};

struct thread_pool {
    int threads;
    int spin_rounds; /* kSpinRounds, or 0 when the threads outnumber the CPUs */
    pthread_t* workers;
    worker_arg* args;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_cond_t done_cond;
    job current;         /* written by the caller before it publishes the generation */
    uint32_t generation; /* atomic: the job now published, counted from 1 */
    int chunks;          /* threads * THREAD_POOL_CHUNKS_PER_THREAD */
    /* atomic each: the generation a chunk was last claimed in; thread t's chunks at
     * chunk_slot(t, i), one cache line a thread, so that a thread claiming its own
     * chunks does not take the line from the others */
    uint32_t* chunk_generation;
    int done;            /* atomic: chunks of the current job finished */
    int sleepers;        /* atomic: workers blocked (or about to block) on wake */
    int caller_sleeping; /* atomic: the caller is blocked (or about to) on done_cond */
    int stopping;        /* atomic */
    int in_session;      /* atomic: between thread_pool_begin and thread_pool_end */
    int* worker_cpu;     /* the CPU worker i is bound to, or -1 (see cpu_affinity.h) */
    int caller_cpu;      /* where the caller ran at the last thread_pool_begin, or -1 */
};

static uint32_t load_generation(thread_pool* pool) {
    return __atomic_load_n(&pool->generation, __ATOMIC_SEQ_CST);
}

/* A store that a later load of the other side's announcement must not pass, written as
 * a sequentially consistent exchange (a read-modify-write) rather than a plain store. In
 * the C++ model a seq_cst store and a later seq_cst load are already ordered, but qemu
 * (7.2, TCG on an x86 host) translates an aarch64 STLR followed by an LDAR with no
 * store-load barrier, so both sides of the hand-off could miss each other and the caller
 * slept forever with every chunk done (the unit suite hung in about half the runs under
 * qemu-aarch64). An exchange becomes a locked instruction on the host, a full barrier.
 * (Not a fence: ThreadSanitizer does not model atomic_thread_fence.) One per parallel
 * region and one per sleep. */
static void announce(int* where, int value) {
    (void)__atomic_exchange_n(where, value, __ATOMIC_SEQ_CST);
}

static void publish_generation(thread_pool* pool, uint32_t generation) {
    (void)__atomic_exchange_n(&pool->generation, generation, __ATOMIC_SEQ_CST);  // see announce
}

static bool stopping(thread_pool* pool) {
    return __atomic_load_n(&pool->stopping, __ATOMIC_SEQ_CST) != 0;
}

constexpr int kSlotsPerThread = 16; /* uint32 slots in a 64-byte line */
static_assert(THREAD_POOL_CHUNKS_PER_THREAD <= kSlotsPerThread, "a thread's slots fit a line");

static uint32_t* chunk_slot(thread_pool* pool, int owner, int i) {
    return &pool->chunk_generation[owner * kSlotsPerThread + i];
}

static bool claim_chunk(thread_pool* pool, int owner, int i, uint32_t generation) {
    uint32_t* slot = chunk_slot(pool, owner, i);
    // A plain load first: a chunk already taken costs no write to its owner's line.
    if (__atomic_load_n(slot, __ATOMIC_SEQ_CST) == generation) return false;
    uint32_t previous = generation - 1;
    return __atomic_compare_exchange_n(slot, &previous, generation, false, __ATOMIC_SEQ_CST,
                                       __ATOMIC_SEQ_CST);
}

static void run_claimed(thread_pool* pool, int k, int self) {
    // Read after the claim: the job cannot be replaced while a chunk of it is open.
    const job j = pool->current;
    run_chunk(j, k, pool->chunks, self);
    if (__atomic_add_fetch(&pool->done, 1, __ATOMIC_SEQ_CST) == pool->chunks &&
        __atomic_load_n(&pool->caller_sleeping, __ATOMIC_SEQ_CST)) {
        pthread_mutex_lock(&pool->lock);
        pthread_cond_signal(&pool->done_cond);
        pthread_mutex_unlock(&pool->lock);
    }
}

/* Runs chunks of job `generation`, its own (`self`'s) first in order, then the others'
 * from their ends, until none is left unclaimed. */
static void claim_and_run(thread_pool* pool, uint32_t generation, int self) {
    constexpr int m = THREAD_POOL_CHUNKS_PER_THREAD;
    for (int i = 0; i < m; ++i)
        if (claim_chunk(pool, self, i, generation)) run_claimed(pool, self * m + i, self);
    for (int t = 1; t < pool->threads; ++t) {
        const int owner = (self + t) % pool->threads;
        for (int i = m - 1; i >= 0; --i)
            if (claim_chunk(pool, owner, i, generation)) run_claimed(pool, owner * m + i, self);
    }
}

/* Returns once the generation differs from `seen` or the pool stops. */
static void spin_pause(int round) {
    if (round % kYieldEvery == kYieldEvery - 1)
        sched_yield();
    else
        cpu_relax();
}

/* Inside a session the workers spin until the next job however long the caller's serial
 * work between two regions takes; outside one, for spin_rounds at most. A pool that
 * does not spin at all (more threads than CPUs) does not spin in a session either. */
static bool keeps_spinning(thread_pool* pool, uint32_t round) {
    if (round < static_cast<uint32_t>(pool->spin_rounds)) return true;
    return pool->spin_rounds > 0 && __atomic_load_n(&pool->in_session, __ATOMIC_SEQ_CST) != 0;
}

static bool job_or_stop(thread_pool* pool, uint32_t seen) {
    return load_generation(pool) != seen || stopping(pool);
}

static void worker_wait(thread_pool* pool, uint32_t seen) {
    for (;;) {
        // Unsigned: a long session wraps the count instead of overflowing it.
        for (uint32_t i = 0; keeps_spinning(pool, i); ++i) {
            if (job_or_stop(pool, seen)) return;
            spin_pause(static_cast<int>(i % kYieldEvery));
        }
        pthread_mutex_lock(&pool->lock);
        __atomic_add_fetch(&pool->sleepers, 1, __ATOMIC_SEQ_CST);  // an RMW: see announce
        while (!job_or_stop(pool, seen) && !__atomic_load_n(&pool->in_session, __ATOMIC_SEQ_CST))
            pthread_cond_wait(&pool->wake, &pool->lock);
        __atomic_sub_fetch(&pool->sleepers, 1, __ATOMIC_SEQ_CST);
        pthread_mutex_unlock(&pool->lock);
        if (job_or_stop(pool, seen)) return;
        // Woken by thread_pool_begin: spin through the session.
    }
}

/* Each worker gets a CPU of its own, none of them the caller's current one. The first
 * CPU handed out rotates from pool to pool, so the workers of several graphs spread over
 * the machine instead of piling onto CPU 1. */
static void bind_workers(thread_pool* pool) {
    const int extra = pool->threads - 1;
    for (int i = 0; i < extra; ++i) pool->worker_cpu[i] = -1;
    pool->caller_cpu = cpu_affinity_current();
    if (!cpu_affinity_wanted() || pool->spin_rounds == 0) return;
    int allowed[1024];
    const int count = cpu_affinity_allowed(allowed, 1024);
    int others[1024];
    int n_others = 0;
    for (int i = 0; i < count; ++i)
        if (allowed[i] != pool->caller_cpu) others[n_others++] = allowed[i];
    if (n_others < extra) return;
    static unsigned next_first;  // atomic
    const unsigned first =
        __atomic_fetch_add(&next_first, static_cast<unsigned>(extra), __ATOMIC_RELAXED);
    for (int i = 0; i < extra; ++i) {
        const int cpu =
            others[(first + static_cast<unsigned>(i)) % static_cast<unsigned>(n_others)];
        if (cpu_affinity_bind(pool->workers[i], cpu)) pool->worker_cpu[i] = cpu;
    }
}

/* The caller is never bound, so the scheduler may move it onto a worker's CPU between
 * two runs. Then that worker takes the CPU the caller left: one system call, only when
 * the caller has moved. */
static void step_out_of_callers_way(thread_pool* pool) {
    const int now = cpu_affinity_current();
    if (now < 0 || now == pool->caller_cpu) return;
    const int left = pool->caller_cpu;
    pool->caller_cpu = now;
    if (left < 0) return;
    for (int i = 0; i < pool->threads - 1; ++i) {
        if (pool->worker_cpu[i] != now) continue;
        if (cpu_affinity_bind(pool->workers[i], left)) pool->worker_cpu[i] = left;
        return;
    }
}

static void* worker_main(void* p) {
    thread_pool* pool = static_cast<worker_arg*>(p)->pool;
    const int self = static_cast<worker_arg*>(p)->self;
    uint32_t seen = 0;
    for (;;) {
        worker_wait(pool, seen);
        if (stopping(pool)) break;
        seen = load_generation(pool);
        claim_and_run(pool, seen, self);
    }
    return nullptr;
}

thread_pool* thread_pool_create(int threads) {
    if (threads < 1) threads = 1;
    thread_pool* pool = static_cast<thread_pool*>(cvml_mem_calloc(1, sizeof(thread_pool)));
    if (!pool) return nullptr;
    pool->threads = threads;
    pool->chunks = threads * THREAD_POOL_CHUNKS_PER_THREAD;
    pool->spin_rounds = threads > cvml_cpu_count() ? 0 : kSpinRounds;
    pthread_mutex_init(&pool->lock, nullptr);
    pthread_cond_init(&pool->wake, nullptr);
    pthread_cond_init(&pool->done_cond, nullptr);
    int extra = threads - 1;
    if (extra > 0) {
        pool->workers =
            static_cast<pthread_t*>(cvml_mem_calloc(static_cast<size_t>(extra), sizeof(pthread_t)));
        pool->args = static_cast<worker_arg*>(
            cvml_mem_calloc(static_cast<size_t>(extra), sizeof(worker_arg)));
        pool->worker_cpu =
            static_cast<int*>(cvml_mem_calloc(static_cast<size_t>(extra), sizeof(int)));
        const size_t slot_bytes = sizeof(uint32_t) * kSlotsPerThread * static_cast<size_t>(threads);
        pool->chunk_generation = static_cast<uint32_t*>(cvml_aligned_alloc(64, slot_bytes));
        if (pool->chunk_generation) memset(pool->chunk_generation, 0, slot_bytes);
        if (!pool->workers || !pool->args || !pool->worker_cpu || !pool->chunk_generation) {
            pool->threads = 1;
            thread_pool_release(pool);
            return nullptr;
        }
        for (int i = 0; i < extra; ++i) {
            pool->args[i].pool = pool;
            pool->args[i].self = i + 1;
            if (pthread_create(&pool->workers[i], nullptr, worker_main, &pool->args[i]) != 0) {
                pool->threads = i + 1;  // release joins the ones that started
                thread_pool_release(pool);
                return nullptr;
            }
        }
        bind_workers(pool);
    }
    return pool;
}

void thread_pool_release(thread_pool* pool) {
    if (!pool) return;
    pthread_mutex_lock(&pool->lock);
    __atomic_store_n(&pool->stopping, 1, __ATOMIC_SEQ_CST);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
    for (int i = 0; i < pool->threads - 1; ++i) pthread_join(pool->workers[i], nullptr);
    pthread_mutex_destroy(&pool->lock);
    pthread_cond_destroy(&pool->wake);
    pthread_cond_destroy(&pool->done_cond);
    cvml_mem_free(pool->workers);
    cvml_mem_free(pool->args);
    cvml_mem_free(pool->worker_cpu);
    cvml_aligned_free(pool->chunk_generation);
    cvml_mem_free(pool);
}

static void wake_sleepers(thread_pool* pool) {
    if (__atomic_load_n(&pool->sleepers, __ATOMIC_SEQ_CST) > 0) {
        pthread_mutex_lock(&pool->lock);
        pthread_cond_broadcast(&pool->wake);
        pthread_mutex_unlock(&pool->lock);
    }
}

static bool all_done(thread_pool* pool) {
    return __atomic_load_n(&pool->done, __ATOMIC_SEQ_CST) == pool->chunks;
}

static void caller_wait(thread_pool* pool) {
    for (int i = 0; i < pool->spin_rounds; ++i) {
        if (all_done(pool)) return;
        spin_pause(i);
    }
    pthread_mutex_lock(&pool->lock);
    announce(&pool->caller_sleeping, 1);
    while (!all_done(pool)) pthread_cond_wait(&pool->done_cond, &pool->lock);
    __atomic_store_n(&pool->caller_sleeping, 0, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&pool->lock);
}

static void run_job(thread_pool* pool, const job& j) {
    if (j.n <= 0) return;
    if (pool->threads == 1 || j.n == 1) {
        run_chunk(j, 0, 1, 0);  // the whole range in one call, on the caller
        return;
    }
    pool->current = j;
    __atomic_store_n(&pool->done, 0, __ATOMIC_SEQ_CST);
    const uint32_t generation = load_generation(pool) + 1;
    publish_generation(pool, generation);
    wake_sleepers(pool);
    claim_and_run(pool, generation, 0);
    caller_wait(pool);
}

void thread_pool_begin(thread_pool* pool) {
    if (pool->threads == 1 || pool->spin_rounds == 0) return;
    step_out_of_callers_way(pool);
    announce(&pool->in_session, 1);
    wake_sleepers(pool);
}

void thread_pool_end(thread_pool* pool) {
    __atomic_store_n(&pool->in_session, 0, __ATOMIC_SEQ_CST);
}

int thread_pool_worker_cpu(const thread_pool* pool, int worker) {
    if (worker < 0 || worker >= pool->threads - 1) return -1;
    return pool->worker_cpu[worker];
}

#else /* !CVML_WITH_THREADS */

struct thread_pool {
    int threads;
};

thread_pool* thread_pool_create(int threads) {
    thread_pool* pool = static_cast<thread_pool*>(cvml_mem_calloc(1, sizeof(thread_pool)));
    if (pool) pool->threads = threads < 1 ? 1 : threads;
    return pool;
}

void thread_pool_release(thread_pool* pool) {
    cvml_mem_free(pool);
}

void thread_pool_begin(thread_pool*) {}
void thread_pool_end(thread_pool*) {}

int thread_pool_worker_cpu(const thread_pool*, int) {
    return -1;
}

/* Chunks still follow the thread count so results match a threaded build's split; the
 * caller runs them all as thread 0. */
static void run_job(thread_pool* pool, const job& j) {
    const int chunks = pool->threads * THREAD_POOL_CHUNKS_PER_THREAD;
    for (int k = 0; k < chunks; ++k) run_chunk(j, k, chunks, 0);
}

#endif

void thread_pool_run(thread_pool* pool, int64_t n, thread_pool_fn fn, void* arg) {
    run_job(pool, job{fn, nullptr, arg, n});
}

void thread_pool_run_at(thread_pool* pool, int64_t n, thread_pool_fn_at fn, void* arg) {
    run_job(pool, job{nullptr, fn, arg, n});
}

int thread_pool_threads(const thread_pool* pool) {
    return pool->threads;
}
