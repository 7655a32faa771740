/* tquery.h - questions tests ask of a decoded trace: how many events of a kind a thread had,
 * which stacks name a function, how far apart two events are.
 *
 * Threads are goroutines with goid = tid, or tid | generation << 32 for a reused tid, so a
 * thread matches every goroutine whose low 32 bits are its tid.
 */
#ifndef LXTRACE_TESTS_TQUERY_H
#define LXTRACE_TESTS_TQUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "format/v1/reader.h"

#define TQ_ANY_THREAD 0
#define TQ_BIT(type) (1ULL << (type))
/* A thread waking up: GoUnblock, or GoSysExit for a thread blocked in a syscall. */
#define TQ_WAKEUPS (TQ_BIT(GT_EV_GO_UNBLOCK) | TQ_BIT(GT_EV_GO_SYSEXIT))

/* The goroutine an event is about: the one created, started, unblocked or leaving a syscall
 * for GoCreate, GoStart, GoUnblock, GoSysExit, GoWaiting, GoInSyscall; else the one running
 * on the event's P. */
uint64_t tq_subject(const struct gt_event *e);

/* Does event e concern thread tid (TQ_ANY_THREAD: any)? */
bool tq_about(const struct gt_event *e, uint32_t tid);

/* Events whose type is in mask (TQ_BIT()s) about tid. */
size_t tq_count(const struct gt_trace *t, uint64_t mask, uint32_t tid);

/* The same, counting only events whose stack has a frame with function func. */
size_t tq_count_frame(const struct gt_trace *t, uint64_t mask, uint32_t tid, const char *func);

/* The same, counting only events whose stack's process frame (tq_process) is func. */
size_t tq_count_process(const struct gt_trace *t, uint64_t mask, uint32_t tid, const char *func);

/* The next event at index >= *i of a type in mask about tid; *i is left on it. NULL at the end. */
const struct gt_event *tq_next(const struct gt_trace *t, size_t *i, uint64_t mask, uint32_t tid);

/* Frame queries; s may be NULL. The leaf is frames[0]; a thread's stacks end in its process
 * frame "COMM (pid PID)" and, outermost, its program frame "PROGRAM"; a creation stack is the
 * program frame alone (user/stacks/idents.h). */
bool tq_stack_has(const struct gt_stack *s, const char *func);
const char *tq_leaf(const struct gt_stack *s);
const char *tq_outermost(const struct gt_stack *s);
/* The process frame: the one inside the outermost, NULL for a stack of fewer than 2 frames. */
const char *tq_process(const struct gt_stack *s);

/* Whether s has a user frame: neither lxtrace's (the synthetic bit, format/pcs.h) nor the
 * kernel's. */
bool tq_user_frames(const struct gt_stack *s);

/* The frame that ends a cut user stack ("[truncated]" or "[truncated: ...]"), or NULL. */
const char *tq_cut_mark(const struct gt_stack *s);

/* The stack a GoCreate gives its new goroutine (its name), NULL when none. */
const struct gt_stack *tq_create_stack(const struct gt_trace *t, const struct gt_event *e);

/* Is there any stack (event stacks and GoCreate new stacks) with a frame whose function
 * contains needle? With tid != 0, only events about tid count. */
bool tq_has_func(const struct gt_trace *t, uint32_t tid, const char *needle);

/* GoCreates of goroutines of tid whose creation stack's outermost frame is name. */
size_t tq_count_created(const struct gt_trace *t, uint32_t tid, const char *name);

/* UserLog events whose key or message contains needle. */
size_t tq_count_logs(const struct gt_trace *t, const char *needle);

/* One line per event with from <= ts < to, "g=G Type leaf-function message", sorted, a CPU
 * sample's without its goroutine (a window cut out of a trace names none it has not created
 * yet): what a window cut out of a trace must share with the trace. Malloc'd, *n lines;
 * tq_free_lines frees them. */
char **tq_window_lines(const struct gt_trace *t, uint64_t from, uint64_t to, size_t *n);
void tq_free_lines(char **lines, size_t n);

/* What thread tid's goroutines did in [from, to] (absolute ticks) as the kernel's schedstat
 * counts it: the time they were runnable (ready to run, not running: from GoCreate, GoUnblock,
 * GoSysExit, GoPreempt or GoSched to the next GoStart) in the waits that ended in the window,
 * each whole (the kernel adds a wait to the run delay when it ends), the runs begun, those
 * that ended a wakeup's wait, and the stops the model had to invent because the kernel
 * reported no switch-out (a GoBlock by the "[lxtrace repair]" frame); repaired, every event
 * of the window the model invented (by that frame: after lost records, a wakeup or a stop).
 * The kernel also adds a wait so far when it moves the waiting thread to another CPU, so at
 * each edge of the window part of a wait may be counted on the other side: before_ns is the
 * part before `from` of the wait that ended in the window, open_ns the part within it of a
 * wait not ended by `to`. */
struct tq_sched {
	double runnable_ns, before_ns, open_ns;
	size_t starts, woken, unseen, repaired;
};

void tq_sched(const struct gt_trace *t, uint32_t tid, uint64_t from, uint64_t to,
	      struct tq_sched *out);

/* Tick difference in nanoseconds. */
double tq_ns(const struct gt_trace *t, uint64_t from, uint64_t to);

/* Prints tid's events (all threads when TQ_ANY_THREAD), at most max lines, one per line
 * with time, type, goroutine and leaf frame: what a failing test shows. */
void tq_dump(const struct gt_trace *t, uint32_t tid, size_t max, FILE *f);

#endif
