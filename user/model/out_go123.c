/* out_go123.c - the model's facts in the go1.23 format (format/go123/writer.h, docs/format.md
 * §18.7, §18.8): each thread an M and a goroutine named by its tid, each CPU a P, the
 * housekeeping P one more, lxtrace's goroutine one more thread, which holds the housekeeping
 * P inside a syscall all along, so that its logs, the heap counter and the wakeups no thread
 * made are on a P (a repair that runs a thread there takes the P, and lxtrace's thread takes
 * it back at its next event). A thread blocks with its syscall's name as the reason; one
 * blocked inside a syscall stays in it, its CPU taken by the next thread there, until it runs
 * again. Stacks and strings are the model's ids (m->tables), given to the writer by content.
 */
#include <stdio.h>
#include <string.h>

#include "format/go123/tables.h"
#include "format/go123/writer.h"
#include "user/model/core.h"
#include "user/model/out.h"
#include "user/model/threads.h"
#include "user/proc/syscalls.h"

static struct go123_stack stack_of(const struct model *m, uint64_t stk)
{
	return go123_tables__stack_of(m->t2, stk);
}

/* Why a thread waits: the syscall it waits in, or where it is when in none. */
static const char *reason(int nr)
{
	const char *name = nr >= 0 ? syscalls__name(nr) : NULL;

	if (name)
		return name;
	if (nr == MODEL_NR_UNSEEN)
		return "lxtrace repair";
	return nr >= 0 ? "syscall" : "kernel wait";
}

static int lx_found(struct model *m, uint64_t stk)
{
	struct go123_stack s = stack_of(m, stk);

	return go123_writer__thread_found(m->w2, m->now, LXTRACE_GOID, GO123_G_SYSCALL,
					  (int32_t)m->hk, NULL, &s);
}

/* lxtrace's thread holds the housekeeping P again, in its syscall: runs there, returns and
 * enters it anew (the P then in the syscall, for the next thread there to take). With
 * always, also when it holds it already: it returns and enters anew. */
static int lx_hold_now(struct model *m, bool always)
{
	struct go123_stack s;
	uint64_t stk;
	int err;

	if (!m->lx_off && !always)
		return 0;
	if ((err = model_special_stack(m, m->hk, IDENT_SPECIAL_LXTRACE, &stk)) ||
	    (m->lx_off && (err = go123_writer__run(m->w2, m->now, m->hk, LXTRACE_GOID))) ||
	    (err = go123_writer__syscall_end(m->w2, m->now, LXTRACE_GOID)))
		return err;
	s = stack_of(m, stk);
	err = go123_writer__syscall_begin(m->w2, m->now, LXTRACE_GOID, &s);
	m->lx_off = err != 0;
	return err;
}

static int lx_hold(struct model *m)
{
	return lx_hold_now(m, false);
}

/* A wait on a lock or on descriptors, which 1.19 writes as GoBlockSync or GoBlockSelect: its
 * reason says so first ("sync: futex", "select: read"). Go 1.23's block profile (-pprof=sync,
 * the viewer's /block) takes only waits whose reason holds "chan", "sync" or "select", as it
 * reads those go1.19 events ("sync", "select"): with the syscall's name alone it was empty. */
static int block_classed(struct model *m, struct thread *t, enum gt_type ev, int nr,
			 const struct go123_stack *s)
{
	char why[64];

	snprintf(why, sizeof(why), "%s: %s", ev == GT_EV_GO_BLOCK_SYNC ? GO123_REASON_SYNC :
		 GO123_REASON_SELECT, reason(nr));
	return go123_writer__leave(m->w2, m->now, t->tid, GO123_BLOCKED, why, s);
}

/* Found runnable at its program's frame (at its stack if it waits for a CPU); a waiting one
 * then runs on the housekeeping P for an instant and blocks there at the stack it waits at,
 * as in the go1.19 format: Go 1.23's
 * goroutine table names a goroutine by the root frame of its first transition with a stack,
 * which a GoStatusStack is not, so a thread asleep throughout would have no name there. */
static int found(struct model *m, struct thread *t, uint64_t new_stk, enum gt_type wait, int nr)
{
	struct go123_stack s = stack_of(m, new_stk);
	uint64_t stk;
	int err;

	/* Waiting for a CPU: its status with the stack it was preempted at, as Go's tracer states
	 * a runnable goroutine at a generation's start; its later transitions name it. */
	if (wait == GT_EV_GO_PREEMPT) {
		if ((err = model_thread_stack(m, m->hk, t, nr, &stk)))
			return err;
		s = stack_of(m, stk);
	}
	err = go123_writer__thread_found(m->w2, m->now, t->tid, GO123_G_RUNNABLE, -1, NULL, &s);
	if (err || wait == GT_EV_NONE || wait == GT_EV_GO_PREEMPT)
		return err;
	m->lx_off = true;
	if ((err = go123_writer__run(m->w2, m->now, m->hk, t->tid)) ||
	    (err = model_thread_stack(m, m->hk, t, nr, &stk)))
		return err;
	s = stack_of(m, stk);
	if (wait == GT_EV_GO_BLOCK_SYNC || wait == GT_EV_GO_BLOCK_SELECT)
		return block_classed(m, t, wait, nr, &s);
	return go123_writer__leave(m->w2, m->now, t->tid, GO123_BLOCKED, reason(nr), &s);
}

/* A P is taken by the thread that runs on it: nothing to write. */
static int gomaxprocs(struct model *m)
{
	(void)m;
	return 0;
}

/* A P is taken by the thread that runs on it; but the recording's end is an event, as the
 * go1.19 format's ProcStops are, so that a reader knows until when a thread still asleep then
 * was off the CPU: lxtrace's thread, which stops the recording, returns from its syscall. */
static int proc(struct model *m, uint32_t p, bool start)
{
	return start || p != m->hk ? 0 : lx_hold_now(m, true);
}

static int create(struct model *m, uint32_t p, struct thread *t, uint64_t new_stk,
		  uint64_t creator_stk)
{
	struct thread *parent = m->cur[p];
	struct go123_stack s, start;

	if (!parent) {
		s = stack_of(m, new_stk);
		return go123_writer__thread_found(m->w2, m->now, t->tid, GO123_G_RUNNABLE, -1, NULL,
						  &s);
	}
	s = stack_of(m, creator_stk);
	start = stack_of(m, new_stk);
	return go123_writer__thread_new(m->w2, m->now, parent->tid, t->tid, &s, &start);
}

/* Back from a syscall it slept in, it returns when it runs again, or (m->sysrets) at its
 * return. */
static int run(struct model *m, uint32_t p, struct thread *t)
{
	int err = go123_writer__run(m->w2, m->now, p, t->tid);

	if (p == m->hk)
		m->lx_off = true;
	if (!err && t->insys && !m->sysrets) {
		t->insys = 0;
		err = go123_writer__syscall_end(m->w2, m->now, t->tid);
	}
	return err;
}

static int stop(struct model *m, uint32_t p, struct thread *t, enum gt_type ev, uint64_t stk,
		int nr)
{
	struct go123_stack s = stack_of(m, stk);
	int err;

	(void)p;
	/* Blocked or yielding in a syscall it entered (m->sysrets), it leaves the syscall first:
	 * the wait keeps its reason, and the syscall's length is the time it ran in it. Preempted,
	 * it stays in the syscall, which lasts until its return. */
	if (ev != GT_EV_GO_END && ev != GT_EV_GO_PREEMPT && t->insys) {
		t->insys = 0;
		if ((err = go123_writer__syscall_end(m->w2, m->now, t->tid)))
			return err;
	}
	switch (ev) {
	case GT_EV_GO_END:
		return go123_writer__thread_exit(m->w2, m->now, t->tid);
	case GT_EV_GO_PREEMPT:
		return go123_writer__leave(m->w2, m->now, t->tid, GO123_PREEMPTED, NULL, &s);
	case GT_EV_GO_SCHED:
		return go123_writer__leave(m->w2, m->now, t->tid, GO123_PREEMPTED, "yield", &s);
	case GT_EV_GO_BLOCK_SYNC:
	case GT_EV_GO_BLOCK_SELECT:
		return block_classed(m, t, ev, nr, &s);
	default:
		return go123_writer__leave(m->w2, m->now, t->tid, GO123_BLOCKED, reason(nr), &s);
	}
}

/* The syscall's length is its real one: it began at its entry with m->sysrets, else here
 * (its entry, with --syscalls=all, ended at once), and ends at its return, or when the thread
 * runs again. */
static int sysblock(struct model *m, uint32_t p, struct thread *t, uint64_t stk, bool begun)
{
	struct go123_stack s = stack_of(m, stk);
	int err = t->insys ? 0 : go123_writer__syscall_begin(m->w2, m->now, t->tid, &s);

	(void)p;
	(void)begun;
	if (!err)
		err = go123_writer__leave(m->w2, m->now, t->tid, GO123_BLOCKED, NULL, &s);
	if (!err)
		t->insys = 1;
	return err;
}

/* The waker is the thread running on p; with none (an interrupt, a repair) lxtrace's thread,
 * whose row it is drawn from: a wakeup on no M is drawn from a thread 18446744073709551615 in
 * 1.23's thread view. A thread in a syscall needs no wakeup. */
static int ready(struct model *m, uint32_t p, struct thread *t, uint64_t stk)
{
	struct thread *by = m->cur[p];
	struct go123_stack s;
	int err;

	if (t->state == THREAD_SYSBLOCKED)
		return 0;
	/* lx_hold adds a stack, which may end the tables' generation and free the frames
	 * stack_of hands out: it goes first. */
	if (!by && (err = lx_hold(m)))
		return err;
	s = stack_of(m, stk);
	return go123_writer__wake(m->w2, m->now, by ? by->tid : LXTRACE_GOID, t->tid, &s);
}

/* old's goroutine ends and t's begins on c: the same M when t is old; else t's tid (its
 * leader's, gone) is a thread old creates, then old ends and t runs on c. */
static int exec_image(struct model *m, uint32_t c, struct thread *old, struct thread *t,
		      uint64_t new_stk, uint64_t stk)
{
	struct go123_stack s = stack_of(m, stk), start = stack_of(m, new_stk);
	int err;

	if (old == t)
		return go123_writer__exec(m->w2, m->now, t->tid, t->goid, &s, &start);
	err = go123_writer__thread_new(m->w2, m->now, old->tid, t->tid, &s, &start);
	if (!err)
		err = go123_writer__thread_exit(m->w2, m->now, old->tid);
	return err ? err : go123_writer__run(m->w2, m->now, c, t->tid);
}

/* Without m->sysrets an entry is a syscall of no length; with, it lasts until sys_ret. */
static int sys_enter(struct model *m, uint32_t p, struct thread *t, uint64_t stk)
{
	struct go123_stack s = stack_of(m, stk);
	int err = go123_writer__syscall_begin(m->w2, m->now, t->tid, &s);

	(void)p;
	if (err || m->sysrets) {
		t->insys = !err;
		return err;
	}
	return go123_writer__syscall_end(m->w2, m->now, t->tid);
}

/* A syscall a block or a yield ended early (stop) returns now: a log says so, as the 1.19
 * format says every return (docs/format.md §10.3), for lxtrace report's length of the call. */
static int sys_ret(struct model *m, uint32_t p, struct thread *t)
{
	if (!t->insys)
		return model_sysret_log(m, p, t);
	t->insys = 0;
	return go123_writer__syscall_end(m->w2, m->now, t->tid);
}

static int user(struct model *m, uint32_t p, struct thread *t, enum gt_type ev, uint64_t a0,
		uint64_t a1, uint64_t a2, uint64_t stk)
{
	struct go123_stack s = stack_of(m, stk);
	const char *name = go123_tables__string_of(m->t2, a2);

	(void)p;
	switch (ev) {
	case GT_EV_USER_TASK_CREATE:
		return go123_writer__task_begin(m->w2, m->now, t->tid, a0, a1, name, &s);
	case GT_EV_USER_TASK_END:
		return go123_writer__task_end(m->w2, m->now, t->tid, a0, &s);
	default:
		return go123_writer__region(m->w2, m->now, t->tid, !a1, a0, name, &s);
	}
}

static int user_log(struct model *m, uint32_t p, struct thread *t, uint64_t task, uint64_t key,
		    uint64_t stk, const char *msg, size_t len)
{
	struct go123_stack s = stack_of(m, stk);

	(void)p;
	return go123_writer__log(m->w2, m->now, t->tid, task, go123_tables__string_of(m->t2, key),
				 msg, len, &s);
}

static int lx_log(struct model *m, uint64_t key, const char *msg)
{
	struct go123_stack s;
	uint64_t stk;
	int err = lx_hold(m);

	if (err || (err = model_special_stack(m, m->hk, IDENT_SPECIAL_LXTRACE, &stk)))
		return err;
	s = stack_of(m, stk);
	return go123_writer__log(m->w2, m->now, LXTRACE_GOID, 0,
				 go123_tables__string_of(m->t2, key), msg, strlen(msg), &s);
}

/* A thread that exited can still be sampled in its exit: its M and tid are named then. */
static int sample(struct model *m, uint32_t p, struct thread *t, uint64_t stk)
{
	struct go123_stack s = stack_of(m, stk);
	uint64_t tid = t && t->goid ? t->tid : 0;

	return go123_writer__cpu_sample(m->w2, m->now, tid, p, &s);
}

static int heap(struct model *m, uint32_t p, uint64_t bytes)
{
	int err = lx_hold(m);

	(void)p;
	return err ? err : go123_writer__heap(m->w2, m->now, LXTRACE_GOID, bytes);
}

static int flush(struct model *m)
{
	return go123_writer__flush(m->w2);
}

const struct model_out model_out_go123 = {
	.lx_found = lx_found,
	.found = found,
	.gomaxprocs = gomaxprocs,
	.proc = proc,
	.create = create,
	.run = run,
	.stop = stop,
	.sysblock = sysblock,
	.ready = ready,
	.exec = exec_image,
	.syscall = sys_enter,
	.sysret = sys_ret,
	.user = user,
	.log = user_log,
	.lx_log = lx_log,
	.sample = sample,
	.heap = heap,
	.flush = flush,
};
