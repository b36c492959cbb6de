#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "device/cpu/thread_pool.h"

namespace {

struct AddJob {
    std::vector<int>* values;
    int add;
};

void add_range(void* arg, int64_t begin, int64_t end) {
    AddJob* job = static_cast<AddJob*>(arg);
    for (int64_t i = begin; i < end; ++i) (*job->values)[static_cast<size_t>(i)] += job->add;
}

struct ChunkJob {
    std::vector<std::pair<int64_t, int64_t>>* ranges; /* one per chunk, by its begin */
    int64_t n;
    int chunks;
};

void record_range(void* arg, int64_t begin, int64_t end) {
    ChunkJob* job = static_cast<ChunkJob*>(arg);
    for (int k = 0; k < job->chunks; ++k)
        if (job->n * k / job->chunks == begin && job->n * (k + 1) / job->chunks == end)
            (*job->ranges)[static_cast<size_t>(k)] = {begin, end};
}

}  // namespace

/* Many short jobs back to back (the shape of an inference): every index is visited
 * exactly once per job, whichever thread claims which chunk. */
TEST(ThreadPool, ManyShortJobsVisitEveryIndexOnce) {
    for (int threads : {2, 3, 4}) {
        thread_pool* pool = thread_pool_create(threads);
        ASSERT_NE(pool, nullptr);
        std::vector<int> got(700, 0), want(700, 0);
        for (int j = 0; j < 5000; ++j) {
            const int64_t n = 1 + j % 700;
            AddJob job = {&got, j % 5 + 1};
            thread_pool_run(pool, n, add_range, &job);
            for (int64_t i = 0; i < n; ++i) want[static_cast<size_t>(i)] += j % 5 + 1;
        }
        EXPECT_EQ(got, want) << threads << " threads";
        thread_pool_release(pool);
    }
}

/* The split is static: with C = T * THREAD_POOL_CHUNKS_PER_THREAD, chunk k always covers
 * [n*k/C, n*(k+1)/C), and the empty ones are not called. */
TEST(ThreadPool, ChunksAreStatic) {
    const int threads = 3, chunks = threads * THREAD_POOL_CHUNKS_PER_THREAD;
    thread_pool* pool = thread_pool_create(threads);
    ASSERT_NE(pool, nullptr);
    for (int64_t n : {3, 10, 1000}) {
        std::vector<std::pair<int64_t, int64_t>> ranges(chunks, {-1, -1});
        ChunkJob job = {&ranges, n, chunks};
        thread_pool_run(pool, n, record_range, &job);
        for (int k = 0; k < chunks; ++k) {
            const int64_t begin = n * k / chunks, end = n * (k + 1) / chunks;
            if (begin == end) continue;
            EXPECT_EQ(ranges[static_cast<size_t>(k)].first, begin) << "n " << n << " chunk " << k;
            EXPECT_EQ(ranges[static_cast<size_t>(k)].second, end) << "n " << n << " chunk " << k;
        }
    }
    thread_pool_release(pool);
}

struct SlowWorkerJob {
    std::thread::id caller;
    std::vector<int64_t> by_caller;        /* the chunks (their first index) the caller ran */
    std::atomic<int64_t> worker_first{-1}; /* the first chunk the worker ran */
    std::atomic<bool> worker_gave_up{false};
};

/* The worker stalls 200 ms in the first chunk it runs; the caller's first chunk waits for
 * the worker to be in it (up to 5 s), so the caller then finds the rest unclaimed. */
void slow_on_the_worker(void* arg, int64_t begin, int64_t) {
    SlowWorkerJob* job = static_cast<SlowWorkerJob*>(arg);
    if (std::this_thread::get_id() != job->caller) {
        int64_t none = -1;
        if (job->worker_first.compare_exchange_strong(none, begin))
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
        return;
    }
    job->by_caller.push_back(begin);
    if (begin != 0) return;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (job->worker_first.load() < 0)
        if (std::chrono::steady_clock::now() > give_up) {
            job->worker_gave_up = true;
            return;
        } else {
            std::this_thread::yield();
        }
}

/* A thread that stalls in its first chunk does not hold the region up: the caller runs
 * its own chunks in order, then takes the stalled thread's remaining ones from their end. */
TEST(ThreadPool, OthersTakeTheChunksOfAStalledThread) {
    const int m = THREAD_POOL_CHUNKS_PER_THREAD;
    thread_pool* pool = thread_pool_create(2);
    ASSERT_NE(pool, nullptr);
    SlowWorkerJob job;
    job.caller = std::this_thread::get_id();
    thread_pool_run(pool, 2 * m, slow_on_the_worker, &job);  // one index a chunk
    thread_pool_release(pool);
    if (job.worker_gave_up) GTEST_SKIP() << "the worker did not start within 5 s";
    EXPECT_EQ(job.worker_first.load(), m);  // its own first chunk
    std::vector<int64_t> want;
    for (int k = 0; k < m; ++k) want.push_back(k);
    for (int k = 2 * m - 1; k > m; --k) want.push_back(k);
    EXPECT_EQ(job.by_caller, want);
}

struct IndexedJob {
    std::thread::id caller;
    int threads;
    std::vector<int>* visits;
    std::vector<std::atomic<int>>* busy;            /* per thread index: chunks open on it */
    std::vector<std::atomic<std::thread::id>>* who; /* per thread index: the thread seen */
    std::atomic<int> wrong{0};
};

void record_thread(void* arg, int64_t begin, int64_t end, int thread) {
    IndexedJob* job = static_cast<IndexedJob*>(arg);
    if (thread < 0 || thread >= job->threads) {
        ++job->wrong;
        return;
    }
    const size_t t = static_cast<size_t>(thread);
    const std::thread::id self = std::this_thread::get_id();
    if ((thread == 0) != (self == job->caller)) ++job->wrong;  // the caller is thread 0
    std::thread::id none;
    if (!(*job->who)[t].compare_exchange_strong(none, self) && none != self) ++job->wrong;
    if ((*job->busy)[t].fetch_add(1) != 0) ++job->wrong;  // one chunk at a time an index
    for (int64_t i = begin; i < end; ++i) ++(*job->visits)[static_cast<size_t>(i)];
    (*job->busy)[t].fetch_sub(1);
}

/* thread_pool_run_at names the thread running each chunk: the caller is 0, each worker
 * keeps one index, and no index has two chunks open at once (per-thread scratch relies
 * on it); the chunks are those of thread_pool_run. */
TEST(ThreadPool, RunAtNamesTheThreadRunningEachChunk) {
    for (int threads : {1, 2, 3, 4}) {
        thread_pool* pool = thread_pool_create(threads);
        ASSERT_NE(pool, nullptr);
        std::vector<std::atomic<int>> busy(static_cast<size_t>(threads));
        std::vector<std::atomic<std::thread::id>> who(static_cast<size_t>(threads));
        for (int j = 0; j < 3000; ++j) {
            const int64_t n = 1 + j % 97;
            std::vector<int> visits(static_cast<size_t>(n), 0);
            IndexedJob job;
            job.caller = std::this_thread::get_id();
            job.threads = threads;
            job.visits = &visits;
            job.busy = &busy;
            job.who = &who;
            thread_pool_run_at(pool, n, record_thread, &job);
            ASSERT_EQ(job.wrong.load(), 0) << threads << " threads, job " << j;
            for (int v : visits) ASSERT_EQ(v, 1) << threads << " threads, job " << j;
        }
        thread_pool_release(pool);
    }
}

/* A pool whose workers went to sleep (idle longer than the spin) wakes for the next job. */
TEST(ThreadPool, WakesAfterIdle) {
    thread_pool* pool = thread_pool_create(2);
    ASSERT_NE(pool, nullptr);
    std::vector<int> got(100, 0);
    AddJob job = {&got, 1};
    thread_pool_run(pool, 100, add_range, &job);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    thread_pool_run(pool, 100, add_range, &job);
    EXPECT_EQ(got, std::vector<int>(100, 2));
    thread_pool_release(pool);
}

/* Sessions (one per graph run): jobs inside one, with idle gaps between and inside
 * sessions, visit every index once; a session on an idle pool wakes it. */
TEST(ThreadPool, SessionsWithIdleGaps) {
    for (int threads : {2, 3}) {
        thread_pool* pool = thread_pool_create(threads);
        ASSERT_NE(pool, nullptr);
        std::vector<int> got(300, 0), want(300, 0);
        for (int session = 0; session < 6; ++session) {
            if (session % 2) std::this_thread::sleep_for(std::chrono::milliseconds(20));
            thread_pool_begin(pool);
            for (int j = 0; j < 200; ++j) {
                const int64_t n = 1 + (j * 7 + session) % 300;
                AddJob job = {&got, j % 3 + 1};
                thread_pool_run(pool, n, add_range, &job);
                for (int64_t i = 0; i < n; ++i) want[static_cast<size_t>(i)] += j % 3 + 1;
                // Serial work between two regions, longer than the idle spin.
                if (j == 100) std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
            thread_pool_end(pool);
        }
        EXPECT_EQ(got, want) << threads << " threads";
        thread_pool_release(pool);
    }
}

#if !defined(_WIN32)
#include <time.h>

/* After thread_pool_end the workers sleep: an idle pool costs (almost) no CPU time. */
TEST(ThreadPool, NoSpinningBetweenSessions) {
    thread_pool* pool = thread_pool_create(2);
    ASSERT_NE(pool, nullptr);
    std::vector<int> got(100, 0);
    AddJob job = {&got, 1};
    thread_pool_begin(pool);
    thread_pool_run(pool, 100, add_range, &job);
    thread_pool_end(pool);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // past the idle spin
    auto cpu_ms = [] {
        timespec ts;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
    };
    const double before = cpu_ms();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const double spent = cpu_ms() - before;
    // A worker spinning through the sleep would spend about 200 ms.
    EXPECT_LT(spent, 50.0);
    thread_pool_release(pool);
}
#endif

#ifndef CVML_WITH_THREADS
#error \
    "tests/CMakeLists.txt passes CVML_WITH_THREADS (0 or 1): without it the tests below would vanish"
#endif
/* Workers exist (and are bound) only in a build with threads, and binding is Linux's. */
namespace {

struct FirstChunkJob {
    std::thread::id caller;
    int chunk0_elsewhere; /* regions whose chunk 0 ran on another thread */
};

void note_first_chunk(void* arg, int64_t begin, int64_t end) {
    FirstChunkJob* job = static_cast<FirstChunkJob*>(arg);
    if (begin == 0 && std::this_thread::get_id() != job->caller) ++job->chunk0_elsewhere;
    volatile int64_t work = 0;  // a few microseconds: both threads are inside the region
    for (int64_t i = begin * 2000; i < end * 2000; ++i) work = work + i;
}

}  // namespace

/* Each thread takes the chunk of its own index first (the caller chunk 0), so a region's
 * halves stay on the cores that had them the region before. With one counter for all,
 * whichever thread came first took chunk 0: a spinning worker did in about a fifth of
 * ResNet-18's regions. The caller can still lose chunk 0 when the OS stops it between
 * publishing a job and claiming its chunk, so the bound leaves room for a loaded machine. */
TEST(ThreadPool, EachThreadTakesItsOwnChunkFirst) {
    thread_pool* pool = thread_pool_create(2);
    ASSERT_NE(pool, nullptr);
    FirstChunkJob job = {std::this_thread::get_id(), 0};
    const int regions = 4000;
    thread_pool_begin(pool);
    for (int r = 0; r < regions; ++r) thread_pool_run(pool, 2, note_first_chunk, &job);
    thread_pool_end(pool);
    thread_pool_release(pool);
    EXPECT_LE(job.chunk0_elsewhere, regions / 50);
}

#if defined(__linux__) && CVML_WITH_THREADS
#include <sched.h>
#include <stdlib.h>

namespace {

/* Runs the test's thread on one CPU for the lifetime of the object. */
class PinnedCaller {
  public:
    explicit PinnedCaller(int cpu) {
        sched_getaffinity(0, sizeof saved_, &saved_);
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        sched_setaffinity(0, sizeof one, &one);
    }
    ~PinnedCaller() { sched_setaffinity(0, sizeof saved_, &saved_); }

  private:
    cpu_set_t saved_;
};

std::vector<int> allowed_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    sched_getaffinity(0, sizeof set, &set);
    std::vector<int> cpus;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
    return cpus;
}

}  // namespace

/* A worker is bound to a CPU that is not the caller's, and when the caller moves onto the
 * worker's CPU between two runs, the worker moves to the CPU the caller left. */
static void workers_stay_out_of_the_callers_way() {
    const std::vector<int> cpus = allowed_cpus();
    unsetenv("CVML_THREAD_AFFINITY");
    thread_pool* pool;
    {
        PinnedCaller on(cpus[0]);
        pool = thread_pool_create(2);
        ASSERT_NE(pool, nullptr);
        const int worker_cpu = thread_pool_worker_cpu(pool, 0);
        EXPECT_NE(worker_cpu, -1);
        EXPECT_NE(worker_cpu, cpus[0]);
    }
    const int first = thread_pool_worker_cpu(pool, 0);
    {
        PinnedCaller on(first);
        thread_pool_begin(pool);
        thread_pool_end(pool);
        EXPECT_EQ(thread_pool_worker_cpu(pool, 0), cpus[0]);
        std::vector<int> values(1000, 0);
        AddJob job = {&values, 1};
        thread_pool_begin(pool);
        thread_pool_run(pool, 1000, add_range, &job);
        thread_pool_end(pool);
        for (int v : values) ASSERT_EQ(v, 1);
    }
    thread_pool_release(pool);
}

/* On a thread of its own: the test pins its caller, and the process's CPUs are those of
 * the main thread. */
TEST(ThreadPoolAffinity, WorkersStayOutOfTheCallersWay) {
    const size_t cpus = allowed_cpus().size();
    if (cpus < 2) GTEST_SKIP() << "needs two CPUs (this process may use " << cpus << ")";
    std::thread caller(workers_stay_out_of_the_callers_way);
    caller.join();
}

TEST(ThreadPoolAffinity, OffWhenAskedOrWhenThreadsOutnumberCpus) {
    setenv("CVML_THREAD_AFFINITY", "0", 1);
    thread_pool* pool = thread_pool_create(2);
    ASSERT_NE(pool, nullptr);
    EXPECT_EQ(thread_pool_worker_cpu(pool, 0), -1);
    thread_pool_release(pool);
    unsetenv("CVML_THREAD_AFFINITY");

    const int too_many = static_cast<int>(allowed_cpus().size()) + 1;
    pool = thread_pool_create(too_many);
    ASSERT_NE(pool, nullptr);
    for (int i = 0; i < too_many - 1; ++i) EXPECT_EQ(thread_pool_worker_cpu(pool, i), -1);
    thread_pool_release(pool);
}
#endif
