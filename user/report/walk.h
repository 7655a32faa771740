/* walk.h - one pass over a trace file lxtrace wrote, told as what a person asks of it: each
 * wait for a CPU (after a wakeup, after a preemption), each stretch off the CPU and why it
 * began, each blocking syscall's time off the CPU, each syscall entry, CPU sample and log,
 * and the events lxtrace invented to keep the trace valid; each of the threads a filter keeps,
 * in the window it keeps.
 *
 * It streams the file through the one event stream (events.h), either format alike: memory
 * follows the threads alive (a small state each) and the CPUs (the latest runs of each, for
 * walk__runs), never the events; but a go1.19 file Go's runtime wrote is read whole and put
 * in Go's order (format/go119/order.h). It
 * keeps its own small state per thread rather than format/go119/state.h's, which forgets at a
 * wakeup why and when the thread left the CPU, and at a GoSysBlock the stack of its syscall.
 *
 * Times are ns from the trace's first event (as `lxtrace dump`, `lxtrace cut` and both viewers
 * count them). A span counts in the window it ends in, whole. The init phase (the threads
 * alive when recording began, up to the Gomaxprocs event) and whatever began in it are not
 * told: a thread found asleep there has slept since before the recording. */
#ifndef LXTRACE_USER_REPORT_WALK_H
#define LXTRACE_USER_REPORT_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/go119/dict.h"
#include "user/events/ident.h"

enum walk_wait {
	WALK_WAKEUP,		/* woken (GoUnblock, GoSysExit) or created (GoCreate) */
	WALK_PREEMPT,		/* preempted (GoPreempt) or yielded (GoSched) */
	WALK_WAITS,
};

/* Why a thread left the CPU, by the event that says it (docs/model.md, "Switch"). */
enum walk_off {
	WALK_OFF_IO,		/* GoSysBlock: asleep uninterruptibly in a syscall (disk, kernel) */
	WALK_OFF_LOCK,		/* GoBlockSync: futex */
	WALK_OFF_SLEEP,		/* GoSleep: nanosleep, clock_nanosleep */
	WALK_OFF_FD,		/* GoBlockSelect: a pipe, socket, poll or epoll wait */
	WALK_OFF_OTHER,		/* GoBlock: wait4, pause, a sleep outside a syscall, ... */
	WALK_OFF_RUNQ,		/* GoPreempt, GoSched: runnable, waiting for a CPU */
	WALK_OFFS,
};

struct walk_thread {
	uint64_t g;		/* its goroutine: (generation << 32) | tid */
	uint32_t tid;		/* of a trace Go wrote (go_runtime), the goroutine's id */
	struct ident id;	/* pid 0 until a stack of its own has named it */
	bool go_runtime;	/* a goroutine of a trace Go's runtime wrote, not a thread */
};

struct walk_run {
	uint64_t g;		/* who ran: walk__thread names it while it lives */
	uint64_t from, to;	/* ns */
	/* Its end is a repair's (a switch the kernel did not report, docs/model.md): it ran
	 * from `from` until some time before `to`, and what ran after it is not known. */
	bool unsure;
};

struct walk;

#define WALK_NO_LENGTH UINT64_MAX

struct walk_sink {
	void *ctx;
	/* The thread starts on P p at `at` after waiting ns for a CPU; stk is the stack it left
	 * the CPU with (where it slept or was preempted), NULL for a new thread's first run. */
	void (*wait)(void *ctx, const struct walk *w, const struct walk_thread *t,
		     enum walk_wait kind, const struct gt_stack *stk, uint64_t ns, uint64_t at,
		     int64_t p);
	/* The thread starts at `at` after ns off the CPU since it left it for `why`, with stack
	 * stk (NULL when none), in syscall `sys` (NULL when in none). */
	void (*offcpu)(void *ctx, const struct walk_thread *t, enum walk_off why,
		       const struct gt_stack *stk, const char *sys, uint64_t ns, uint64_t at);
	/* The same for a stretch the recording cut: begun before it started (counted from its
	 * start) or not over when it ended (at its end). Time off the CPU, never a syscall's
	 * whole latency. NULL: not told. */
	void (*offcpu_cut)(void *ctx, const struct walk_thread *t, enum walk_off why,
			   const struct gt_stack *stk, const char *sys, uint64_t ns, uint64_t at);
	/* A syscall call (recorded with --syscalls=all), entered with stack stk: it ended at `at`
	 * after ns, its whole length from its entry to its return; WALK_NO_LENGTH when the file
	 * has no return for it (recorded without returns, lost, or never made: exit), `at` then
	 * its entry. Its blocks come apart, each through offcpu. */
	void (*syscall)(void *ctx, const struct walk_thread *t, const struct gt_stack *stk,
			const char *sys, uint64_t ns, uint64_t at);
	/* A CPU sample of t (NULL: of no thread the trace knows) on P p. */
	void (*sample)(void *ctx, const struct walk_thread *t, const struct gt_stack *stk,
		       int64_t p, uint64_t at);
	/* A UserLog: lxtrace's own (key "lxtrace.lost", "lxtrace.trigger") or a program's. */
	void (*log)(void *ctx, const struct walk_thread *t, const char *key, const char *msg,
		    size_t len, uint64_t at);
	/* An event lxtrace invented (its stack is "[lxtrace repair]"), of goroutine t. */
	void (*repair)(void *ctx, const struct walk_thread *t, const char *event, uint64_t at);
};

struct walk_filter {
	uint32_t pid;		/* only this process's threads; 0: any */
	const char *comm;	/* only threads of this name or program; NULL: any */
	uint64_t from_ns, to_ns;	/* only what ends in [from, to) */
};

struct walk_stats {
	uint64_t events;
	uint64_t span_ns;	/* from the first event to the last */
	uint64_t threads;	/* goroutines seen (a thread once per program it ran) */
	int64_t cpus;		/* the Gomaxprocs value: Ps 0..cpus-1 are CPUs */
	uint64_t matched;	/* threads the filter's pid and name keep, at any time */
	/* Go's runtime wrote the file (no goroutine of lxtrace's in it): its threads are
	 * goroutines, its "CPUs" its Ps. */
	bool go_runtime;
	uint64_t runs_missed;	/* walk__runs asked further back than it keeps */
};

/* Walks the file open on fd (from its current offset) and tells s, in file order. 0, or a
 * negative errno with a one-line message in err. */
int walk__file(int fd, const struct walk_filter *f, const struct walk_sink *s,
	       struct walk_stats *st, char *err, size_t errlen);

/* Inside sink->wait: the runs on P p that overlap [from, to), latest first (up to n into out,
 * each clipped to the span). The count found; *complete false when runs before the earliest
 * kept (the latest WALK_RUNS_KEPT of each P: 24 bytes each) would be needed. */
#define WALK_RUNS_KEPT 16384
size_t walk__runs(const struct walk *w, int64_t p, uint64_t from, uint64_t to,
		  struct walk_run *out, size_t n, bool *complete);

/* Inside a sink's call: goroutine g, NULL once it has ended. */
const struct walk_thread *walk__thread(const struct walk *w, uint64_t g);

/* After a walk that kept no thread by the filter's pid or name: "no thread of pid PID in
 * this trace" (or "named NAME", escaped) into buf, and true; false when it kept one or has
 * neither. */
bool walk__none_kept(const struct walk_filter *f, const struct walk_stats *st, char *buf,
		     size_t len);

/* "COMM (tid TID, pid PID)" into buf, escaped for a terminal; "tid TID" when no stack named
 * its process. */
void walk__name(const struct walk_thread *t, char *buf, size_t len);

#endif
