/* schedstat.h - every thread's scheduler counters as the kernel keeps them
 * (/proc/PID/task/TID/schedstat): how long it waited on a run queue and how often it ran, to
 * hold a trace's waits for a CPU against. */
#ifndef LXTRACE_TESTS_SCHEDSTAT_H
#define LXTRACE_TESTS_SCHEDSTAT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct schedstat {
	pid_t pid, tid;
	uint64_t delay_ns;	/* run delay so far: added whole at the run that ends a wait */
	uint64_t pcount;	/* times it ran */
	uint64_t at;		/* when it was read (CLOCK_MONOTONIC) */
};

/* Every thread's now, at most max; returns how many (0 when /proc cannot be read). */
size_t schedstat__snapshot(struct schedstat *out, size_t max);

/* Thread tid's among the n of s, or NULL. */
const struct schedstat *schedstat__find(const struct schedstat *s, size_t n, pid_t tid);

/* The CPU time process pid has had so far (all its threads: utime and stime of
 * /proc/PID/stat), in ms; -1 once it is gone. What a test waits for to know a workload got the
 * CPU, however busy the machine. */
long long schedstat__cpu_ms(pid_t pid);

#endif
