#include <gtest/gtest.h>

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
    int threads;
};

void record_range(void* arg, int64_t begin, int64_t end) {
    ChunkJob* job = static_cast<ChunkJob*>(arg);
    for (int k = 0; k < job->threads; ++k)
        if (job->n * k / job->threads == begin)
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

/* The split is static: chunk k always covers [n*k/T, n*(k+1)/T). */
TEST(ThreadPool, ChunksAreStatic) {
    const int threads = 3;
    thread_pool* pool = thread_pool_create(threads);
    ASSERT_NE(pool, nullptr);
    for (int64_t n : {3, 10, 1000}) {
        std::vector<std::pair<int64_t, int64_t>> ranges(threads, {-1, -1});
        ChunkJob job = {&ranges, n, threads};
        thread_pool_run(pool, n, record_range, &job);
        for (int k = 0; k < threads; ++k) {
            EXPECT_EQ(ranges[static_cast<size_t>(k)].first, n * k / threads);
            EXPECT_EQ(ranges[static_cast<size_t>(k)].second, n * (k + 1) / threads);
        }
    }
    thread_pool_release(pool);
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
