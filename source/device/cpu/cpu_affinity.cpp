#include "device/cpu/cpu_affinity.h"

#include <stdlib.h>
#include <string.h>

#if defined(__linux__) && CVML_WITH_THREADS
#include <sched.h>
#include <unistd.h>
#define CVML_HAVE_AFFINITY 1
#else
#define CVML_HAVE_AFFINITY 0
#endif

bool cpu_affinity_wanted(void) {
    const char* value = getenv("CVML_THREAD_AFFINITY");
    return !(value && strcmp(value, "0") == 0);
}

#if CVML_HAVE_AFFINITY

int cpu_affinity_allowed(int* cpus, int max) {
    cpu_set_t set;
    CPU_ZERO(&set);
    // The main thread's mask (taskset, cpusets), not the caller's: an application may pin
    // the thread that calls the library, and that must not shut the workers out.
    if (sched_getaffinity(getpid(), sizeof set, &set) != 0) return 0;
    int count = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE && count < max; ++cpu)
        if (CPU_ISSET(cpu, &set)) cpus[count++] = cpu;
    return count;
}

int cpu_affinity_current(void) {
    return sched_getcpu();
}

bool cpu_affinity_bind(pthread_t thread, int cpu) {
    if (cpu < 0 || cpu >= CPU_SETSIZE) return false;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(thread, sizeof set, &set) == 0;
}

#else

int cpu_affinity_allowed(int*, int) {
    return 0;
}

int cpu_affinity_current(void) {
    return -1;
}

#if CVML_WITH_THREADS
bool cpu_affinity_bind(pthread_t, int) {
    return false;
}
#endif

#endif
