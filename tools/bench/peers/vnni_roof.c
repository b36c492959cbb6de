/* cvml-vnni-roof: the int8 multiply-accumulate peak of this machine's cores, for the
 * "share of the roofline" column of tools/bench/compare.sh. Each thread runs a loop of
 * independent 512-bit VPDPBUSD instructions (64 u8 x s8 products each) on registers
 * only, so nothing but the VNNI issue rate limits it.
 *
 *   cvml-vnni-roof [THREADS=1] [SECONDS_TENTHS=5]
 *
 * Prints one JSON object: gmacs_per_s in total and per thread. */
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Twelve accumulators: more than the instruction's latency times its issue rate on the
 * cores measured (Zen 4: 4 x 1, Zen 5 and Sapphire Rapids: 4 x 2, with room). */
#define ACCUMULATORS 12
#define ROUNDS_PER_CHECK 4096

struct worker {
    double seconds;
    unsigned long long macs;
    int sink;
};

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

__attribute__((target("avx512f,avx512vnni"))) static void* spin(void* arg) {
    struct worker* w = (struct worker*)arg;
    __m512i acc[ACCUMULATORS];
    for (int i = 0; i < ACCUMULATORS; ++i) acc[i] = _mm512_set1_epi32(i);
    const __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-5);
    const double start = now_s();
    unsigned long long rounds = 0;
    double elapsed = 0;
    do {
        for (int r = 0; r < ROUNDS_PER_CHECK; ++r)
            for (int i = 0; i < ACCUMULATORS; ++i) acc[i] = _mm512_dpbusd_epi32(acc[i], a, b);
        rounds += ROUNDS_PER_CHECK;
        elapsed = now_s() - start;
    } while (elapsed < w->seconds);
    __m512i sum = acc[0];
    for (int i = 1; i < ACCUMULATORS; ++i) sum = _mm512_add_epi32(sum, acc[i]);
    w->sink = _mm512_reduce_add_epi32(sum);  // keeps the loop
    w->macs = rounds * ACCUMULATORS * 64ULL;
    w->seconds = elapsed;
    return NULL;
}

int main(int argc, char** argv) {
    const int threads = argc > 1 ? atoi(argv[1]) : 1;
    const int tenths = argc > 2 ? atoi(argv[2]) : 5;
    if (threads < 1 || threads > 256 || tenths < 1) {
        fprintf(stderr, "usage: cvml-vnni-roof [THREADS] [SECONDS_TENTHS]\n");
        return 2;
    }
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512vnni")) {
        fprintf(stderr, "cvml-vnni-roof: this CPU has no AVX-512 VNNI\n");
        return 77;
    }
    pthread_t ids[256];
    struct worker workers[256];
    for (int t = 0; t < threads; ++t) {
        workers[t].seconds = tenths / 10.0;
        pthread_create(&ids[t], NULL, spin, &workers[t]);
    }
    double total = 0;
    for (int t = 0; t < threads; ++t) {
        pthread_join(ids[t], NULL);
        total += (double)workers[t].macs / workers[t].seconds / 1e9;
    }
    printf("{\"threads\": %d, \"gmacs_per_s\": %.1f, \"gmacs_per_s_per_thread\": %.1f}\n", threads,
           total, total / threads);
    return 0;
}
