/* out_go119.c - the model's facts as go1.19 events on Ps (format/go119/writer.h): each CPU a P,
 * each thread a goroutine whose seq the model keeps, blocking as Go's block events, the P of a
 * thread blocked in a syscall handed off, the housekeeping P for the init phase and repairs,
 * lxtrace's goroutine for logs (docs/format.md §11).
 */
#include <string.h>

#include "user/model/core.h"
#include "user/model/out.h"
#include "user/model/threads.h"

/* Event t with up to three arguments on P p at m->now. */
static int emit(struct model *m, uint32_t p, enum gt_type t, uint64_t a0, uint64_t a1, uint64_t a2)
{
	const uint64_t args[3] = { a0, a1, a2 };

	return gt_writer__event(m->w, p, m->now, t, args, gt_nvalues(t));
}

/* lxtrace's goroutine is created first (strictly the earliest event), then the housekeeping P
 * starts, and the goroutine runs and sleeps there: named in Go 1.19's goroutine tables, like
 * a sleeping thread. Each event a tick after the last. */
static int lx_found(struct model *m, uint64_t stk)
{
	int err = emit(m, m->hk, GT_EV_GO_CREATE, LXTRACE_GOID, stk, 0);

	m->now++;
	if (!err)
		err = emit(m, m->hk, GT_EV_PROC_START, m->hk, 0, 0);
	m->now++;
	if (!err)
		err = emit(m, m->hk, GT_EV_GO_START, LXTRACE_GOID, 1, 0);
	m->now++;
	return err ? err : emit(m, m->hk, GT_EV_GO_BLOCK, stk, 0, 0);
}

/* Created on the housekeeping P; a waiting one started and blocked there, a tick apart
 * (model.c, init_thread, says why). */
static int found(struct model *m, struct thread *t, uint64_t new_stk, enum gt_type wait, int nr)
{
	uint64_t stk;
	int err = emit(m, m->hk, GT_EV_GO_CREATE, t->goid, new_stk, 0);

	if (err || wait == GT_EV_NONE)
		return err;
	m->now++;
	err = emit(m, m->hk, GT_EV_GO_START, t->goid, t->seq, 0);
	if (!err)
		err = model_thread_stack(m, m->hk, t, nr, &stk);
	m->now++;
	return err ? err : emit(m, m->hk, wait, stk, 0, 0);
}

static int gomaxprocs(struct model *m)
{
	return emit(m, m->hk, GT_EV_GOMAXPROCS, m->ncpus, 0, 0);
}

static int proc(struct model *m, uint32_t p, bool start)
{
	return start ? emit(m, p, GT_EV_PROC_START, p, 0, 0) : emit(m, p, GT_EV_PROC_STOP, 0, 0, 0);
}

static int create(struct model *m, uint32_t p, struct thread *t, uint64_t new_stk,
		  uint64_t creator_stk)
{
	return emit(m, p, GT_EV_GO_CREATE, t->goid, new_stk, creator_stk);
}

static int run(struct model *m, uint32_t p, struct thread *t)
{
	return emit(m, p, GT_EV_GO_START, t->goid, t->seq, 0);
}

static int stop(struct model *m, uint32_t p, struct thread *t, enum gt_type ev, uint64_t stk,
		int nr)
{
	(void)t;
	(void)nr;
	return emit(m, p, ev, stk, 0, 0);
}

/* The P stops and starts again, as the Go runtime hands off its P: the 1.23 viewer ends the
 * G's syscall slice at the ProcStop, and without one it ends it at some later ProcStop of
 * that P, when the G may no longer run there, and panics (docs/format.md §10.5). */
static int sysblock(struct model *m, uint32_t p, struct thread *t, uint64_t stk, bool begun)
{
	int err = begun ? 0 : emit(m, p, GT_EV_GO_SYSCALL, stk, 0, 0);

	(void)t;
	if (!err)
		err = emit(m, p, GT_EV_GO_SYSBLOCK, 0, 0, 0);
	if (!err)
		err = proc(m, p, false);
	return err ? err : proc(m, p, true);
}

static int ready(struct model *m, uint32_t p, struct thread *t, uint64_t stk)
{
	if (t->state == THREAD_SYSBLOCKED)
		return emit(m, p, GT_EV_GO_SYSEXIT, t->goid, t->seq, 0);
	return emit(m, p, GT_EV_GO_UNBLOCK, t->goid, t->seq, stk);
}

static int exec_image(struct model *m, uint32_t c, struct thread *old, struct thread *t,
		uint64_t new_stk, uint64_t stk)
{
	int err = emit(m, c, GT_EV_GO_CREATE, t->goid, new_stk, stk);

	(void)old;
	if (!err)
		err = emit(m, c, GT_EV_GO_END, 0, 0, 0);
	return err ? err : run(m, c, t);
}

static int sys_enter(struct model *m, uint32_t p, struct thread *t, uint64_t stk)
{
	(void)t;
	return emit(m, p, GT_EV_GO_SYSCALL, stk, 0, 0);
}

/* GoSysCall has no length, and GoSysExit is a wakeup (Go's parsers refuse one for a thread
 * not blocked): the return is a log of the thread's, key "lxtrace.sysret", empty, at the
 * stack of its syscall (docs/format.md §10.3). Both viewers show it as an instant; Go 1.23
 * still takes a GoSysCall whose next event is not GoSysBlock for a syscall that did not
 * block. */
static int sys_ret(struct model *m, uint32_t p, struct thread *t)
{
	return model_sysret_log(m, p, t);
}

static int user(struct model *m, uint32_t p, struct thread *t, enum gt_type ev, uint64_t a0,
		uint64_t a1, uint64_t a2, uint64_t stk)
{
	const uint64_t args[4] = { a0, a1, a2, stk };

	(void)t;
	if (ev == GT_EV_USER_TASK_END)
		return emit(m, p, ev, a0, stk, 0);
	return gt_writer__event(m->w, p, m->now, ev, args, gt_nvalues(ev));
}

static int user_log(struct model *m, uint32_t p, struct thread *t, uint64_t task, uint64_t key,
		uint64_t stk, const char *msg, size_t len)
{
	(void)t;
	return gt_writer__user_log(m->w, p, m->now, task, key, stk, msg, len);
}

/* UserLog needs a running G with a stack (docs/format.md §10.3): lxtrace's wakes on the
 * housekeeping P, logs and sleeps again. */
static int lx_log(struct model *m, uint64_t key, const char *msg)
{
	uint64_t stk;
	int err;

	err = model_special_stack(m, m->hk, IDENT_SPECIAL_LXTRACE, &stk);
	if (!err)
		err = emit(m, m->hk, GT_EV_GO_UNBLOCK, LXTRACE_GOID, m->lx_seq++, stk);
	if (!err)
		err = emit(m, m->hk, GT_EV_GO_START, LXTRACE_GOID, m->lx_seq++, 0);
	if (!err)
		err = gt_writer__user_log(m->w, m->hk, m->now, 0, key, stk, msg, strlen(msg));
	return err ? err : emit(m, m->hk, GT_EV_GO_BLOCK, stk, 0, 0);
}

static int sample(struct model *m, uint32_t p, struct thread *t, uint64_t stk)
{
	return gt_writer__cpu_sample(m->w, p, m->now, p, t ? t->goid : 0, stk);
}

static int heap(struct model *m, uint32_t p, uint64_t bytes)
{
	return emit(m, p, GT_EV_HEAP_ALLOC, bytes, 0, 0);
}

static int flush(struct model *m)
{
	return gt_writer__flush(m->w);
}

const struct model_out model_out_go119 = {
	.lx_found = lx_found, .found = found, .gomaxprocs = gomaxprocs, .proc = proc,
	.create = create, .run = run, .stop = stop, .sysblock = sysblock, .ready = ready,
	.exec = exec_image, .syscall = sys_enter, .sysret = sys_ret, .user = user, .log = user_log,
	.lx_log = lx_log, .sample = sample, .heap = heap, .flush = flush,
};
