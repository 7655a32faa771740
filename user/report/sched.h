/* sched.h - the report's scheduler latency: per process and per thread, the waits for a CPU
 * after a wakeup and after a preemption apart (count, p50/p90/p99/max, when the max was), and
 * the worst waits with the threads that ran on that CPU meanwhile. */
#ifndef LXTRACE_USER_REPORT_SCHED_H
#define LXTRACE_USER_REPORT_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "user/report/hist.h"
#include "user/report/walk.h"

struct sched_report;

/* top: processes, threads of each and worst waits shown. NULL with errno set. */
struct sched_report *sched_report__new(size_t top);

/* A walk_sink's wait. */
void sched_report__wait(struct sched_report *s, const struct walk *w,
			const struct walk_thread *t, enum walk_wait kind, uint64_t ns,
			uint64_t at, int64_t p);

/* False after a failed allocation: something was not counted. */
bool sched_report__ok(const struct sched_report *s);

/* The process's (pid) or, with tid, the thread's waits of a kind; NULL when it has none. For
 * the tests. */
const struct hist *sched_report__hist(const struct sched_report *s, uint32_t pid, uint32_t tid,
				      enum walk_wait kind);

/* The i-th worst wait (0: the worst), false past the last; its runs are the threads that ran
 * on its CPU during it, the longest first, `idle` the time no run covers. */
#define SCHED_WORST_RUNS 4
struct sched_ran {
	struct walk_thread who;	/* tid alone for a thread that had ended by the wait's end */
	uint64_t ns;		/* its runs' time inside the wait */
};
struct sched_worst {
	struct walk_thread who;
	enum walk_wait kind;
	uint64_t ns, at;
	int64_t p;
	size_t nruns;
	struct sched_ran runs[SCHED_WORST_RUNS];	/* per thread, longest first */
	uint64_t others_ns;	/* runs of threads past the SCHED_WORST_RUNS longest */
	uint64_t idle_ns;	/* covered by no run kept */
	uint64_t unsure_ns;	/* runs whose end a repair wrote: who ran then is not known */
	bool complete;		/* every run of the span was kept */
};
bool sched_report__worst(const struct sched_report *s, size_t i, struct sched_worst *out);

/* Waits for a CPU after a wakeup, per process then per thread, log2 histograms of them. */
void sched_report__print(const struct sched_report *s, bool hist, FILE *out);

/* The same figures as JSON, the key "sched" (docs/report.md, "JSON"). */
struct json;
void sched_report__json(const struct sched_report *s, bool hist, struct json *j);

/* Accepts NULL. */
void sched_report__free(struct sched_report *s);

#endif
