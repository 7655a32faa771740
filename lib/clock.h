/* clock.h - the one clock of lxtrace: CLOCK_MONOTONIC in nanoseconds, the clock the BPF
 * programs stamp records with (bpf_ktime_get_ns), so user-space times compare with theirs;
 * and the calling thread's CPU time, for budgets of work that a loaded machine's waits for a
 * CPU must not eat. */
#ifndef LXTRACE_LIB_CLOCK_H
#define LXTRACE_LIB_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static inline uint64_t thread_cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

#endif
