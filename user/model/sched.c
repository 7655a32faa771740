/* sched.c - the scheduler's records: a switch (LX_REC_SWITCH) stops the thread leaving the
 * CPU the way the kernel says it left (preempted, yielded, blocked in a syscall, dead) and
 * starts the next one; a wakeup (LX_REC_WAKEUP) readies a blocked thread on the waker's P;
 * a new thread's first wakeup (LX_REC_WAKEUP_NEW) only repairs a lost fork; a CPU's holder
 * (LX_REC_OCCUPANT) that no thread of the trace is, lxtrace or an untraced program, is shown
 * by a stand-in. With
 * model_opts.enqueue a wakeup of a blocked thread is kept, and written at its enqueue
 * (LX_REC_ENQUEUE), where the kernel starts its run delay.
 */
#include <asm/unistd.h>
#include <stdbool.h>

#include "user/model/core.h"
#include "user/model/handlers.h"
#include "user/model/threads.h"
#include "user/proc/syscalls.h"
#include "user/stacks/callstacks.h"

/* Writes how running t leaves CPU c, from the state and syscall the kernel reported. */
static int switch_out(struct model *m, uint32_t c, struct thread *t, unsigned state, int nr)
{
	uint64_t wake = t->wake_stk, stk;
	enum syscall_class cls = nr >= 0 ? syscalls__class(nr) : SYSCALL_CLASS_OTHER;
	enum gt_type ev;
	int err;

	t->wake_stk = 0;
	/* A wakeup that raced ahead of a switch-out that is not a sleep found it still running:
	 * there is nothing to show. */
	if (wake && (state == LX_PREV_DEAD || state == LX_PREV_RUNNABLE))
		m->st.wakeups_moot++;
	if (state == LX_PREV_DEAD)
		return model_go_stop(m, c, GT_EV_GO_END, 0, -1, THREAD_REAPED);
	err = model_thread_stack(m, c, t, nr, &stk);
	if (err)
		return err;
	if (state == LX_PREV_RUNNABLE) {
		ev = cls == SYSCALL_CLASS_YIELD && nr >= 0 ? GT_EV_GO_SCHED : GT_EV_GO_PREEMPT;
		return model_go_stop(m, c, ev, stk, nr, THREAD_RUNNABLE);
	}

	if (state == LX_PREV_DISK && nr >= 0 && m->syscalls != MODEL_SYSCALLS_NONE) {
		/* Uninterruptible inside a syscall: the kernel is doing the syscall's work. */
		ev = GT_EV_GO_SYSBLOCK;
	} else {
		ev = syscalls__wait_event(nr);
	}
	if (ev == GT_EV_GO_SYSBLOCK) {
		/* In --syscalls=all the entry's GoSysCall may already be its latest event; then the
		 * syscall began there, and only a block right after it counts as blocking. */
		err = model_sys_block(m, c, stk, t->sysenter == nr);
	} else {
		err = model_go_stop(m, c, ev, stk, nr, THREAD_WAITING);
	}
	if (nr >= 0)
		t->off_nr = nr;
	/* Woken after setting its sleep state but before this switch: it blocked and was woken
	 * right away, by the waker whose stack was kept; runnable from now on, or with enqueue
	 * records from its enqueue, which follows (the waker waits for this switch to end). */
	if (!err && wake && m->enqueue) {
		t->wake_stk = wake;
		return 0;
	}
	if (wake && !gt_tables__live(&m->tables, true, wake)) {
		/* Kept ids are used again only while the writer knows them (format/dedup.h). */
		model_repair(m, MODEL_REPAIR_STACK_FORGOTTEN);
		wake = 0;
	}
	if (!err && wake)
		err = model_go_ready(m, c, t, wake);
	return err;
}

int model_on_switch(struct model *m, const struct lx_rec *r)
{
	const struct lx_switch *s = (const struct lx_switch *)r;
	uint32_t c = s->h.cpu;
	bool stale = false;
	struct thread *t;
	int err = 0;

	if (s->h.tid) {
		t = threads__find(m->threads, s->h.tid);
		if (t && t->state == THREAD_EXITED) {
			if (s->prev_state == LX_PREV_DEAD)
				model_reap(m, t);
			m->st.ignored++;
		} else if (t && s->prev_state == LX_PREV_DEAD && t->off_nr == __NR_execve) {
			/* Not t: a non-leader exec'er's tid on its old leader's final switch-out.
			 * Linux swaps the two tids as soon as the leader is a zombie, before the
			 * leader's last schedule and before the exec record; t lives on. A real
			 * death sends its exit record first. */
			m->st.ignored++;
		} else {
			t = model_live(m, s->h.tid, &err);
			if (err)
				return err;
			if (m->cur[c] != t) {
				stale = !model_placeable(m, c, t);
				/* What the model runs here left unseen; coming back next,
				 * unwoken, it was preempted by t. */
				if (m->cur[c] && m->cur[c]->tid == s->next_tid)
					err = model_preempt(m, c);
				if (!err)
					err = model_run_here(m, c, t);
			}
			if (!err)
				err = switch_out(m, c, t, s->prev_state, s->prev_syscall);
			if (err)
				return err;
		}
		/* A dead thread's last switch: the walks its BPF cache kept died with it. */
		if (m->cs && s->prev_state == LX_PREV_DEAD)
			callstacks__forget_thread(m->cs, s->h.tid);
	}
	if (m->cur[c]) {
		/* The model had another G here than the kernel switched out: its own switch-out
		 * was not reported. One that is switched in again, unwoken, simply runs on. */
		stale = true;
		err = m->cur[c]->tid != s->next_tid ? model_stop_unseen(m, c) : 0;
		if (err)
			return err;
	}
	if (stale)
		model_repair(m, MODEL_REPAIR_STALE_SWITCH);

	/* Not recorded: the CPU goes idle, or to what the flags say holds it. */
	if (!s->next_tid)
		return model_hold(m, c, s->h.flags <= LX_OCC_UNTRACED ? s->h.flags : LX_OCC_IDLE);
	t = model_live(m, s->next_tid, &err);
	if (err || !t) {
		if (!err)
			m->st.ignored++;
		return err;
	}
	return model_run_here(m, c, t);
}

int model_on_wakeup(struct model *m, const struct lx_rec *r)
{
	const struct lx_wakeup *w = (const struct lx_wakeup *)r;
	uint32_t c = w->h.cpu;
	struct thread *t = threads__find(m->threads, w->h.tid);
	uint64_t stk;
	int err;

	if (!w->h.tid || (t && t->state == THREAD_EXITED)) {
		m->st.ignored++;
		return 0;
	}
	/* First seen now, asleep since before a read of its stack: blocked at it, then woken. */
	if ((!t || t->state == THREAD_REAPED) &&
	    !(t = model_late_found(m, w->h.tid, r->ts, &err))) {
		if (err)
			return err;
		/* Created runnable, which is what the wakeup would have made it. */
		model_live(m, w->h.tid, &err);
		return err;
	}
	switch (t->state) {
	case THREAD_WAITING:
	case THREAD_SYSBLOCKED:
		err = model_waker_stack(m, c, m->cur[c], &stk);
		if (err || !m->enqueue)
			return err ? err : model_go_ready(m, c, t, stk);
		/* Runnable from its enqueue on, as the kernel counts its run delay. */
		model_keep_wake(m, t, c, stk);
		return 0;
	case THREAD_RUNNING:
		/* sched_waking can precede the wakee's own switch-out (docs/model.md). */
		if (t->wake_stk)
			m->st.wakeups_moot++;
		err = model_waker_stack(m, c, m->cur[c] != t ? m->cur[c] : NULL, &stk);
		if (!err)
			model_keep_wake(m, t, c, stk);
		return err;
	default:
		/* Runnable: sched_waking fires only for a thread in the sleep state it is woken
		 * from, so this one was preempted after setting it, on its way to sleep. The
		 * wakeup cancels that sleep; the kernel and the model agree it is runnable. */
		m->st.wakeups_moot++;
		return 0;
	}
}

int model_on_wakeup_new(struct model *m, const struct lx_rec *r)
{
	const struct lx_wakeup *w = (const struct lx_wakeup *)r;
	struct thread *t = threads__find(m->threads, w->h.tid);
	int err = 0;

	/* GoCreate already made a forked thread runnable; only a lost fork needs a repair. */
	if (w->h.tid && (!t || t->state == THREAD_REAPED))
		model_live(m, w->h.tid, &err);
	return err;
}

int model_on_enqueue(struct model *m, const struct lx_rec *r)
{
	struct thread *t = threads__find(m->threads, r->tid);
	uint64_t delay;

	if (!m->enqueue || !t || !t->wake_stk) {
		/* Of a wakeup written at sched_waking (without opts.enqueue), of a runnable or
		 * new thread, or one whose sched_waking was lost: its run repairs that. */
		m->st.ignored++;
		return 0;
	}
	if (t->state == THREAD_RUNNING) {
		/* Found still on its run queue (ttwu_runnable): it never slept. */
		m->st.wakeups_moot++;
		t->wake_stk = 0;
		return 0;
	}
	delay = m->now - t->wake_ts;
	m->st.enqueued++;
	m->st.enqueue_delay_ns += delay;
	if (delay > m->st.enqueue_delay_max_ns)
		m->st.enqueue_delay_max_ns = delay;
	return model_ready_kept(m, t);
}

int model_on_occupant(struct model *m, const struct lx_rec *r)
{
	const struct lx_occupant *o = (const struct lx_occupant *)r;
	uint32_t c = o->h.cpu;
	int err = 0;

	if (o->kind > LX_OCC_UNTRACED) {
		model_repair(m, MODEL_REPAIR_BAD_RECORD);
		return 0;
	}
	if (o->kind != LX_OCC_IDLE)
		err = model_hold_name(m, c, o->kind, o->pid, o->comm);
	/* The switch record that follows gives the CPU to the holder named. */
	if (err || (o->h.flags & LX_OCC_NAME_ONLY))
		return err;
	/* The kernel sends it from a CPU no traced thread holds: the one the model has there left
	 * unseen (docs/model.md, "Switches the kernel does not report"). */
	if (!err && m->cur[c]) {
		model_repair(m, MODEL_REPAIR_STALE_SWITCH);
		err = model_stop_unseen(m, c);
	}
	return err ? err : model_hold(m, c, o->kind);
}
