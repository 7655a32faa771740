/* workload.h - the protocol every test workload shares with tests/lib/record.c.
 *
 * A workload prints, on stdout, one fact per line:
 *   pid PID            first, before any thread is created
 *   tid ROLE TID       one per thread that matters, ROLE naming what it does
 *   stat KEY VALUE     counts the workload measured itself (e.g. voluntary switches)
 * stdout is block-buffered and flushed at exit, so reporting costs no syscall inside the
 * traced loops. Counts come from argv; a bad argument exits 2 with a one-line message.
 */
#ifndef LXTRACE_TESTS_WORKLOAD_H
#define LXTRACE_TESTS_WORKLOAD_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static inline void wl_pid(void)
{
	printf("pid %d\n", (int)getpid());
}

/* stdio locks the stream, so threads may call this concurrently. */
static inline void wl_tid(const char *role)
{
	printf("tid %s %d\n", role, (int)gettid());
}

static inline void wl_stat(const char *key, long long value)
{
	printf("stat %s %lld\n", key, value);
}

/* Voluntary context switches of the calling thread so far: each is one time it blocked. */
static inline long long wl_vcsw(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		return -1;
	return ru.ru_nvcsw;
}

/* argv[i] as a count in [min, max], or def when absent. */
static inline long wl_arg(int argc, char **argv, int i, long def, long min, long max)
{
	char *end;
	long v;

	if (i >= argc)
		return def;
	errno = 0;
	v = strtol(argv[i], &end, 10);
	if (errno || end == argv[i] || *end || v < min || v > max) {
		fprintf(stderr, "%s: argument %d '%s' is not a count in [%ld, %ld]\n",
			argv[0], i, argv[i], min, max);
		exit(2);
	}
	return v;
}

static inline void wl_die(const char *what)
{
	fprintf(stderr, "workload: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* CLOCK_MONOTONIC in ns: the trace's clock, so reported times compare with the trace's. */
static inline long long wl_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Sleeps ms milliseconds in nanosleep(), whole even when a signal interrupts it. */
static inline void wl_sleep_ms(long ms)
{
	struct timespec d = { ms / 1000, ms % 1000 * 1000000 };

	while (nanosleep(&d, &d))
		if (errno != EINTR)
			wl_die("nanosleep");
}

/* The kernel's own counts of the calling thread's context switches, as /proc shows them
 * (voluntary_ctxt_switches, nonvoluntary_ctxt_switches), reported as stat kvcsw-ROLE and
 * knvcsw-ROLE with the CLOCK_MONOTONIC times just before and after the read (kread0-ROLE,
 * kread1-ROLE): a trace of the thread must hold as many switches before kread0, and no
 * more before kread1 (make kernel-test asserts it). */
static inline void wl_kernel_switches(const char *role)
{
	long long t0 = wl_now_ns(), t1, vol = -1, invol = -1;
	char line[256], key[64];
	FILE *f = fopen("/proc/thread-self/status", "r");

	if (!f)
		wl_die("/proc/thread-self/status");
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "voluntary_ctxt_switches: %lld", &vol);
		sscanf(line, "nonvoluntary_ctxt_switches: %lld", &invol);
	}
	fclose(f);
	t1 = wl_now_ns();
	snprintf(key, sizeof(key), "kvcsw-%s", role);
	wl_stat(key, vol);
	snprintf(key, sizeof(key), "knvcsw-%s", role);
	wl_stat(key, invol);
	snprintf(key, sizeof(key), "kread0-%s", role);
	wl_stat(key, t0);
	snprintf(key, sizeof(key), "kread1-%s", role);
	wl_stat(key, t1);
}

#endif
