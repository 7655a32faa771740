/* threads.h - the model's table of the threads of one recording, by tid. Entries never move;
 * a reaped thread's entry is removed (threads__remove) and reused for another tid, so the
 * table holds the threads alive, not every tid the recording met. Each tid's generation stays
 * (4 bytes a tid seen), so a tid born again gets a fresh goroutine id. */
#ifndef LXTRACE_USER_THREADS_H
#define LXTRACE_USER_THREADS_H

#include <stdint.h>

enum thread_state {
	THREAD_RUNNABLE = 0,	/* created, preempted or woken: waiting for a CPU */
	THREAD_RUNNING,		/* on P `cpu` */
	THREAD_WAITING,		/* blocked (GoBlock*, GoSleep, GoWaiting): a GoUnblock readies it */
	THREAD_SYSBLOCKED,	/* in a blocking syscall (GoSysBlock, GoInSyscall) till GoSysExit */
	THREAD_EXITED,		/* GoEnd written; its records until the final switch ignored */
	THREAD_REAPED,		/* switched out dead: seen again only when the tid is reused */
};

struct thread {
	uint64_t goid;		/* 0 until a GoCreate was written for this generation */
	uint64_t seq;		/* the seq its next GoStart, GoUnblock or GoSysExit writes */
	/* A wakeup (sched_waking) not written yet: one that came while it ran, kept for its
	 * switch-out; or, with enqueue records (model_opts.enqueue), one of a blocked thread,
	 * kept for its enqueue (model_ready_kept). */
	uint64_t wake_stk;	/* the waker's stack, 0 = none kept */
	uint64_t wake_by;	/* goid of the G that ran on wake_p then, 0 = none */
	uint64_t wake_ts;	/* when */
	uint64_t last_stk;	/* its stack last written, 0 = none: in syscall last_stk_nr (-1:
				 * none) under identity last_stk_ident */
	/* What the flight recorder's triggers measure at its next start (0: unknown): */
	uint64_t ready_ts;	/* when it last became runnable (created, woken, preempted) */
	uint64_t off_ts;	/* when it last left a CPU */
	uint32_t tid;
	uint32_t gen;		/* births of this tid in the recording before this one */
	uint32_t ident;		/* naming identity (stacks/idents.h) */
	int32_t cpu;		/* its P while THREAD_RUNNING */
	int32_t sysenter;	/* syscall whose GoSysCall is its latest event, or -1 */
	int32_t last_stk_nr;
	int32_t off_nr;		/* the syscall it blocked in when it left, -1 when none */
	uint32_t wake_p;	/* the waker's P (its CPU) */
	uint32_t last_stk_ident;
	/* Set at the exit that ended its process: that process's image, forgotten when the
	 * thread leaves the table (model_remove_reaped), not at the exit. A CPU sample can still
	 * land in its do_exit after the exit record, and must resolve. 0 = none. */
	uint64_t exit_image;
	uint8_t state;		/* enum thread_state */
	uint8_t unplaced;	/* runnable on a CPU the model does not know: its first run there is
				 * an expected placement, not a repair */
	uint8_t scanned;	/* created from the /proc scan and not seen in any record since */
	uint8_t reborn;		/* a new entry of a tid whose earlier thread had a goroutine */
	uint8_t insys;		/* go1.23: inside a syscall in the file, not returned from
				 * yet (model_out_go123) */
	uint8_t sysopen;	/* with m->sysrets: its latest syscall entry has had no return */
};

struct threads;

/* NULL with errno set. */
struct threads *threads__new(void);

/* The entry of tid, or NULL when tid was never added. */
struct thread *threads__find(const struct threads *ts, uint32_t tid);

/* Adds a zeroed entry for tid (which must be absent), with the generation the tid's last
 * removed entry left (and `reborn` set when that one had a goroutine). NULL with errno =
 * ENOMEM. */
struct thread *threads__add(struct threads *ts, uint32_t tid);

/* Removes t's entry (threads__find no longer gives it; its memory goes to the next add). The
 * tid's next entry gets t's generation, the next one when t had a goroutine. */
void threads__remove(struct threads *ts, struct thread *t);

/* Entries held now. */
size_t threads__count(const struct threads *ts);

/* Accepts NULL. */
void threads__free(struct threads *ts);

#endif
