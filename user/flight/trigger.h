/* trigger.h - what a flight recorder watches for: the --trigger expressions, parsed once,
 * then matched against the times the model measures.
 *
 *   KIND>DURATION[,comm=NAME][,pid=PID]
 *   KIND      sched-latency  a thread waited runnable (woken, preempted or new) this long
 *             syscall        a thread was in one syscall this long: any that asks for work
 *                            or data (read, write, recv, fsync, openat...), not one that
 *                            waits by design (futex, poll, epoll_wait, accept, wait4,
 *                            nanosleep...); syscall:NAME for that one syscall, whatever it is
 *             offcpu         a thread was off its CPU this long (blocked or waiting)
 *   DURATION  a number and its unit: ns, us, ms or s (50ms, 1.5s)
 *   comm=     only threads with this name (the kernel's comm: at most 15 characters)
 *   pid=      only threads of this process
 */
#ifndef LXTRACE_USER_FLIGHT_TRIGGER_H
#define LXTRACE_USER_FLIGHT_TRIGGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TRIGGER_TEXT_MAX 128	/* longest expression kept, NUL included */
#define TRIGGER_COMM_LEN 16	/* the kernel's TASK_COMM_LEN */

enum trigger_kind {
	TRIGGER_SCHED_LATENCY,
	TRIGGER_SYSCALL,
	TRIGGER_OFFCPU,
	TRIGGER_KINDS,
};

struct trigger {
	enum trigger_kind kind;
	uint64_t over_ns;		/* fires on a time strictly above this */
	int nr;				/* TRIGGER_SYSCALL: the syscall's number, -1 for any */
	uint32_t pid;			/* 0: any process */
	char comm[TRIGGER_COMM_LEN];	/* "": any name */
	char text[TRIGGER_TEXT_MAX];	/* the expression as given */
};

/* One firing, as the model tells the flight recorder of it (model_opts.on_trigger). */
struct trigger_fired {
	uint64_t ts;			/* when: the start that ended the time, or the record's */
	const struct trigger *trigger;	/* the --trigger that fired; NULL for a trigger record:
					 * lxtrace_trigger() on tid, or SIGUSR1 (tid 0) */
	int nr;				/* a syscall trigger's syscall, else -1 */
	uint64_t ns;			/* the time the trigger measured */
	uint32_t tid, pid;
	char comm[TRIGGER_COMM_LEN];	/* the thread's, as the model knows it; "" for tid 0 */
	char reason[TRIGGER_TEXT_MAX];	/* a record's message, cut to fit */
};

/* Parses expression s into t. Returns 0, or -EINVAL with a one-line reason in err (which
 * does not repeat s). */
int trigger__parse(const char *s, struct trigger *t, char *err, size_t errlen);

/* Whether a time of ns measured for kind (syscall nr, -1 when not a syscall) on a thread of
 * process pid named comm fires t. */
bool trigger__match(const struct trigger *t, enum trigger_kind kind, int nr, uint64_t ns,
		    uint32_t pid, const char *comm);

/* "sched-latency", "syscall", "offcpu". */
const char *trigger__kind_name(enum trigger_kind kind);

/* What fired, without the thread: "sched-latency 152.3 ms > 50.0 ms", "syscall read 301.2 ms
 * > 200.0 ms". Returns its length, as snprintf. */
int trigger__what(const struct trigger *t, int nr, uint64_t ns, char *buf, size_t len);

/* The message that marks a firing in the trace, e.g. "sched-latency 152.3 ms > 50 ms: tid 124
 * worker (pid 123)", "syscall read 301.2 ms > 200 ms: ...". Returns its length, as snprintf. */
int trigger__describe(const struct trigger *t, int nr, uint64_t ns, uint32_t tid, uint32_t pid,
		      const char *comm, char *buf, size_t len);

#endif
