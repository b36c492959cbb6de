/* cvml-xcore-probe: what moving cache lines between two CPUs costs on this machine now,
 * for tools/bench/compare.sh. On a shared VM that cost changes from minute to minute
 * (the host moves the virtual CPUs between cores, core complexes and hyperthreads), and
 * two-thread inference, whose threads hand tensors to each other at every layer, moves
 * with it; one-thread inference does not. The probe lets a reader tell those phases
 * apart next to the figures measured in them (docs/performance.md).
 *
 *   cvml-xcore-probe [REPEATS=40]
 *
 * Two threads, bound to the first two CPUs this process may use. Each repeat, the first
 * writes a buffer; then the second reads it (the lines come from the first CPU's
 * caches), reads it again (its own now), writes a part of it (lines the first CPU holds
 * again, after it rewrote them), and writes that part again. Prints one JSON object
 * with each step's median in microseconds. Exits 77 where there are not two CPUs to use. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define READ_BYTES (400 * 1024) /* about a MobileNet-v1 56x56x128 tensor */
#define WRITE_BYTES (200 * 1024)
#define MAX_REPEATS 1000

enum step { READ_REMOTE, READ_LOCAL, WRITE_REMOTE, WRITE_LOCAL, STEPS };

struct probe {
    int cpu[2];
    int repeats;
    uint8_t* buf;
    int turn;           /* atomic: 2 * repeat + 1: the second thread's turn, + 2: the first's */
    int second_unbound; /* the second thread could not bind to cpu[1] (it still takes its
                           turns, so that the first never waits for it in vain) */
    double us[STEPS][MAX_REPEATS];
};

/* Where the reads' sums go, so that the compiler keeps the reads. */
static volatile uint64_t read_sink;

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int bind_to(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

/* One word of each 64-byte line, in four independent sums: fetching the lines, not the
 * loads or an add chain, bounds the loop. */
static uint64_t read_lines(const uint8_t* p, size_t bytes) {
    uint64_t s[4] = {0, 0, 0, 0};
    for (size_t i = 0; i + 256 <= bytes; i += 256)
        for (int k = 0; k < 4; ++k) {
            uint64_t v;
            memcpy(&v, p + i + 64 * k, 8);
            s[k] += v;
        }
    return s[0] + s[1] + s[2] + s[3];
}

static void wait_turn(struct probe* p, int turn) {
    while (__atomic_load_n(&p->turn, __ATOMIC_ACQUIRE) != turn) {
    }
}

static void* second_cpu(void* arg) {
    struct probe* p = (struct probe*)arg;
    p->second_unbound = bind_to(p->cpu[1]) != 0;
    for (int r = 0; r < p->repeats; ++r) {
        wait_turn(p, 2 * r + 1);
        double t = now_us();
        read_sink += read_lines(p->buf, READ_BYTES);
        p->us[READ_REMOTE][r] = now_us() - t;
        t = now_us();
        read_sink += read_lines(p->buf, READ_BYTES);
        p->us[READ_LOCAL][r] = now_us() - t;
        __atomic_store_n(&p->turn, 2 * r + 2, __ATOMIC_RELEASE);
        wait_turn(p, 2 * r + 3);  // the first CPU has rewritten the lines
        t = now_us();
        memset(p->buf, r, WRITE_BYTES);
        p->us[WRITE_REMOTE][r] = now_us() - t;
        t = now_us();
        memset(p->buf, r + 1, WRITE_BYTES);
        p->us[WRITE_LOCAL][r] = now_us() - t;
        __atomic_store_n(&p->turn, 2 * r + 4, __ATOMIC_RELEASE);
    }
    return NULL;
}

static int by_value(const void* a, const void* b) {
    const double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

static double median(double* v, int n) {
    qsort(v, (size_t)n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The first two CPUs of this process's affinity mask; 0 when there are not two. */
static int two_cpus(int cpu[2]) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set)) return 0;
    int n = 0;
    for (int c = 0; c < CPU_SETSIZE && n < 2; ++c)
        if (CPU_ISSET(c, &set)) cpu[n++] = c;
    return n == 2;
}

int main(int argc, char** argv) {
    static struct probe p;
    p.repeats = argc > 1 ? atoi(argv[1]) : 40;
    if (argc > 2 || p.repeats < 1 || p.repeats > MAX_REPEATS) {
        fprintf(stderr, "usage: cvml-xcore-probe [REPEATS=40, at most %d]\n", MAX_REPEATS);
        return 2;
    }
    if (!two_cpus(p.cpu)) {
        fprintf(stderr, "cvml-xcore-probe: skipped: this process may use fewer than two CPUs\n");
        return 77;
    }
    p.buf = (uint8_t*)aligned_alloc(64, READ_BYTES);
    if (!p.buf || bind_to(p.cpu[0])) {
        fprintf(stderr, "cvml-xcore-probe: cannot allocate or bind to CPU %d\n", p.cpu[0]);
        return 1;
    }
    pthread_t other;
    if (pthread_create(&other, NULL, second_cpu, &p)) {
        fprintf(stderr, "cvml-xcore-probe: cannot start a thread\n");
        return 1;
    }
    for (int r = 0; r < p.repeats; ++r) {
        memset(p.buf, r, READ_BYTES);
        __atomic_store_n(&p.turn, 2 * r + 1, __ATOMIC_RELEASE);
        wait_turn(&p, 2 * r + 2);
        memset(p.buf, r + 2, WRITE_BYTES);
        __atomic_store_n(&p.turn, 2 * r + 3, __ATOMIC_RELEASE);
        wait_turn(&p, 2 * r + 4);
    }
    pthread_join(other, NULL);
    if (p.second_unbound) {
        fprintf(stderr, "cvml-xcore-probe: cannot bind to CPU %d\n", p.cpu[1]);
        return 1;
    }
    double m[STEPS];
    for (int s = 0; s < STEPS; ++s) m[s] = median(p.us[s], p.repeats);
    printf(
        "{\"probe\": \"xcore\", \"cpus\": [%d, %d], \"repeats\": %d, \"read_kb\": %d, "
        "\"read_remote_us\": %.2f, \"read_local_us\": %.2f, \"write_kb\": %d, "
        "\"write_remote_us\": %.2f, \"write_local_us\": %.2f, \"read_ratio\": %.2f, "
        "\"write_ratio\": %.2f}\n",
        p.cpu[0], p.cpu[1], p.repeats, READ_BYTES / 1024, m[READ_REMOTE], m[READ_LOCAL],
        WRITE_BYTES / 1024, m[WRITE_REMOTE], m[WRITE_LOCAL], m[READ_REMOTE] / m[READ_LOCAL],
        m[WRITE_REMOTE] / m[WRITE_LOCAL]);
    free(p.buf);
    return 0;
}
