#include "device/cpu/thread_pool.h"

#include <stdlib.h>

#if CVML_WITH_THREADS
#include <pthread.h>
#endif

namespace {

struct job {
    thread_pool_fn fn;
    void* arg;
    int64_t n;
};

void run_chunk(const job& j, int k, int threads) {
    int64_t begin = j.n * k / threads;
    int64_t end = j.n * (k + 1) / threads;
    if (begin < end) j.fn(j.arg, begin, end);
}

}  // namespace

#if CVML_WITH_THREADS

struct worker_arg {
    thread_pool* pool;
    int index;
};

struct thread_pool {
    int threads;
    pthread_t* workers;
    worker_arg* args;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_cond_t done;
    job current;
    uint64_t generation;
    int pending;
    bool stopping;
};

static void* worker_main(void* p) {
    worker_arg* wa = static_cast<worker_arg*>(p);
    thread_pool* pool = wa->pool;
    uint64_t seen = 0;
    pthread_mutex_lock(&pool->lock);
    for (;;) {
        while (!pool->stopping && pool->generation == seen)
            pthread_cond_wait(&pool->wake, &pool->lock);
        if (pool->stopping) break;
        seen = pool->generation;
        job j = pool->current;
        pthread_mutex_unlock(&pool->lock);
        run_chunk(j, wa->index, pool->threads);
        pthread_mutex_lock(&pool->lock);
        if (--pool->pending == 0) pthread_cond_signal(&pool->done);
    }
    pthread_mutex_unlock(&pool->lock);
    return nullptr;
}

thread_pool* thread_pool_create(int threads) {
    if (threads < 1) threads = 1;
    thread_pool* pool = static_cast<thread_pool*>(calloc(1, sizeof(thread_pool)));
    if (!pool) return nullptr;
    pool->threads = threads;
    pthread_mutex_init(&pool->lock, nullptr);
    pthread_cond_init(&pool->wake, nullptr);
    pthread_cond_init(&pool->done, nullptr);
    int extra = threads - 1;
    if (extra > 0) {
        pool->workers =
            static_cast<pthread_t*>(calloc(static_cast<size_t>(extra), sizeof(pthread_t)));
        pool->args =
            static_cast<worker_arg*>(calloc(static_cast<size_t>(extra), sizeof(worker_arg)));
        if (!pool->workers || !pool->args) {
            pool->threads = 1;
            thread_pool_release(pool);
            return nullptr;
        }
        for (int i = 0; i < extra; ++i) {
            pool->args[i].pool = pool;
            pool->args[i].index = i + 1;
            if (pthread_create(&pool->workers[i], nullptr, worker_main, &pool->args[i]) != 0) {
                pool->threads = i + 1;  // release joins the ones that started
                thread_pool_release(pool);
                return nullptr;
            }
        }
    }
    return pool;
}

void thread_pool_release(thread_pool* pool) {
    if (!pool) return;
    pthread_mutex_lock(&pool->lock);
    pool->stopping = true;
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
    for (int i = 0; i < pool->threads - 1; ++i) pthread_join(pool->workers[i], nullptr);
    pthread_mutex_destroy(&pool->lock);
    pthread_cond_destroy(&pool->wake);
    pthread_cond_destroy(&pool->done);
    free(pool->workers);
    free(pool->args);
    free(pool);
}

void thread_pool_run(thread_pool* pool, int64_t n, thread_pool_fn fn, void* arg) {
    if (n <= 0) return;
    job j = {fn, arg, n};
    if (pool->threads == 1 || n == 1) {
        j.fn(j.arg, 0, n);
        return;
    }
    pthread_mutex_lock(&pool->lock);
    pool->current = j;
    pool->pending = pool->threads - 1;
    pool->generation++;
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
    run_chunk(j, 0, pool->threads);
    pthread_mutex_lock(&pool->lock);
    while (pool->pending > 0) pthread_cond_wait(&pool->done, &pool->lock);
    pthread_mutex_unlock(&pool->lock);
}

#else /* !CVML_WITH_THREADS */

struct thread_pool {
    int threads;
};

thread_pool* thread_pool_create(int threads) {
    thread_pool* pool = static_cast<thread_pool*>(calloc(1, sizeof(thread_pool)));
    if (pool) pool->threads = threads < 1 ? 1 : threads;
    return pool;
}

void thread_pool_release(thread_pool* pool) {
    free(pool);
}

/* Chunks still follow the thread count so results match a threaded build's split. */
void thread_pool_run(thread_pool* pool, int64_t n, thread_pool_fn fn, void* arg) {
    job j = {fn, arg, n};
    for (int k = 0; k < pool->threads; ++k) run_chunk(j, k, pool->threads);
}

#endif

int thread_pool_threads(const thread_pool* pool) {
    return pool->threads;
}
