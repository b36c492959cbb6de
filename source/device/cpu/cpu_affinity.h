/* Binding the thread pool's workers to CPUs.
 *
 * Why: between two inferences the workers sleep. On the machines measured (a 2-vCPU
 * KVM guest, Linux 6.x), a worker woken after 20 ms or more of idle was often placed on
 * the waking caller's CPU and stayed there for the whole run, so the two threads shared
 * one core: a 2-thread ResNet-18 ran at the 1-thread speed. A worker bound to a CPU of
 * its own cannot be stacked that way, whatever the gap.
 *
 * Only workers are bound, never the caller's thread (it belongs to the application);
 * see thread_pool.cpp for how a worker moves out of the caller's way. Binding is
 * skipped where the pool has more threads than the process may use CPUs, and turned
 * off with CVML_THREAD_AFFINITY=0. Linux only: elsewhere every function reports
 * "unbound" and the pool works as before. */
#pragma once

#if CVML_WITH_THREADS
#include <pthread.h>
#endif

/* Whether workers should be bound: CVML_THREAD_AFFINITY is not "0". */
bool cpu_affinity_wanted(void);
/* The CPUs this process may run on (its main thread's affinity), ascending, at most `max` of them;
 * their count. */
int cpu_affinity_allowed(int* cpus, int max);
/* The CPU the calling thread runs on now, or -1 where that cannot be known. */
int cpu_affinity_current(void);
#if CVML_WITH_THREADS
/* Binds `thread` to `cpu`; false where the system refused (the thread stays unbound). */
bool cpu_affinity_bind(pthread_t thread, int cpu);
#endif
