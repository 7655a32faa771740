/* model.c - the shadow state machine of every CPU and thread: kernel records in, Go trace
 * events out (docs/model.md).
 *
 * Invariant: the model's state is exactly the state both Go parsers will have after reading
 * the events written so far (which G runs on which P, each G's state and seq). Every record
 * is checked against it; when the record disagrees (lost records, races between CPUs, corrupt
 * input), the model first writes the fewest events that bring the parsers' state to what the
 * record needs, counts that repair, and only then writes the record's own events. So no input
 * can make it write an invalid file.
 *
 * Time: every event is written at m->now, the newest record time seen; an older record is
 * written at m->now (counted as MODEL_REPAIR_TIME_CLAMPED), so time never goes backwards on
 * any P or across Ps.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/u64map.h"
#include "user/model/annotations.h"
#include "user/model/core.h"
#include "user/model/model.h"
#include "user/model/threads.h"
#include "user/proc/procscan.h"
#include "user/proc/syscalls.h"
#include "user/stacks/callstacks.h"
#include "user/stacks/idents.h"

/* lxtrace's own goroutine: no tid is this large (PID_MAX_LIMIT is 2^22), so it never collides
 * with a thread's goid (tid | generation << 32). */
#define LXTRACE_GOID 0xffffffffull
/* PID_MAX_LIMIT on 64-bit kernels: a larger tid is a corrupt record. */
#define TID_LIMIT (1u << 22)
#define NR_EXECVE 59

static const char *const repair_names[MODEL_REPAIR_COUNT] = {
	[MODEL_REPAIR_UNKNOWN_THREAD] = "unknown-thread",
	[MODEL_REPAIR_MIGRATED] = "migrated",
	[MODEL_REPAIR_STALE_SWITCH] = "stale-switch",
	[MODEL_REPAIR_WAKEUP_DROPPED] = "wakeup-dropped",
	[MODEL_REPAIR_EXIT_UNKNOWN] = "exit-unknown",
	[MODEL_REPAIR_TID_REUSE] = "tid-reuse",
	[MODEL_REPAIR_MISSED_WAKEUP] = "missed-wakeup",
	[MODEL_REPAIR_FOREIGN] = "foreign-record",
	[MODEL_REPAIR_TIME_CLAMPED] = "time-clamped",
	[MODEL_REPAIR_BAD_RECORD] = "bad-record",
	[MODEL_REPAIR_TASK_REUSE] = "task-reuse",
	[MODEL_REPAIR_REGION_NESTING] = "region-nesting",
};

const char *model__repair_name(enum model_repair r)
{
	return (unsigned)r < MODEL_REPAIR_COUNT ? repair_names[r] : "?";
}

void model_repair(struct model *m, enum model_repair r)
{
	m->st.repairs[r]++;
}

/* ---- writing events ---------------------------------------------------------------------- */

int model_emit(struct model *m, uint32_t p, enum gt_type t, uint64_t a0, uint64_t a1, uint64_t a2)
{
	const uint64_t args[3] = { a0, a1, a2 };

	return gt_writer__event(m->w, p, m->now, t, args, gt_nvalues(t));
}

/* The stack naming t in syscall nr (-1: none), its identity frame alone or under the syscall's,
 * for an event on P p. A thread mostly repeats its last stack (a syscall loop, a read that
 * blocks after its GoSysCall), so that one is kept on the thread: a syscall storm then costs
 * no hash lookup per event. */
static int ident_stack(struct model *m, uint32_t p, struct thread *t, int nr, uint64_t *stk)
{
	if (t->last_stk && t->last_stk_ident == t->ident && t->last_stk_nr == nr) {
		*stk = t->last_stk;
		return 0;
	}
	*stk = idents__stack(m->idents, p, t->ident, nr);
	if (!*stk)
		return -errno;
	t->last_stk = *stk;
	t->last_stk_ident = t->ident;
	t->last_stk_nr = nr;
	return 0;
}

/* The stack of t in syscall nr for an event on P p: the call stack the current record took of
 * t when it has one, else ident_stack's. */
int model_thread_stack(struct model *m, uint32_t p, struct thread *t, int nr, uint64_t *stk)
{
	if (!m->rs || m->rs->tid != t->tid)
		return ident_stack(m, p, t, nr, stk);
	*stk = callstacks__get(m->cs, p, t->ident, idents__pid(m->idents, t->ident), nr, m->rs);
	return *stk ? 0 : -errno;
}

static int special_stack(struct model *m, uint32_t p, enum ident_special k, uint64_t *stk)
{
	*stk = idents__special(m->idents, p, k);
	return *stk ? 0 : -errno;
}

/* GoCreate of t (a fresh goid) on P p by whatever runs there; t becomes runnable. */
static int go_create(struct model *m, uint32_t p, struct thread *t, uint64_t creator_stk)
{
	uint64_t new_stk;
	int err;

	/* The identity alone: 1.19 groups goroutines by its first frame's PC. */
	err = ident_stack(m, p, t, -1, &new_stk);
	if (err)
		return err;
	t->goid = t->tid | (uint64_t)t->gen << 32;
	t->seq = 1;
	t->state = THREAD_RUNNABLE;
	t->sysenter = -1;
	t->wake_stk = 0;
	m->st.threads++;
	return model_emit(m, p, GT_EV_GO_CREATE, t->goid, new_stk, creator_stk);
}

/* Runnable t starts on idle P p. */
static int go_start(struct model *m, uint32_t p, struct thread *t)
{
	int err = model_emit(m, p, GT_EV_GO_START, t->goid, t->seq, 0);

	t->seq++;
	t->state = THREAD_RUNNING;
	t->scanned = 0;
	t->cpu = (int32_t)p;
	t->unplaced = 0;
	t->sysenter = -1;
	m->cur[p] = t;
	return err;
}

/* The G running on p leaves it with event type ev (stack stk when ev has one) into state. */
static int go_stop(struct model *m, uint32_t p, enum gt_type ev, uint64_t stk, enum thread_state state)
{
	struct thread *t = m->cur[p];

	if (t->wake_stk) {
		/* A wakeup kept for its switch-out, which a repair replaced. */
		model_repair(m, MODEL_REPAIR_WAKEUP_DROPPED);
		t->wake_stk = 0;
	}
	t->state = state;
	t->sysenter = -1;
	m->cur[p] = NULL;
	if (ev == GT_EV_GO_END)
		annotations__forget(m->ann, t->goid);
	return model_emit(m, p, ev, stk, 0, 0);
}

static int preempt(struct model *m, uint32_t p)
{
	uint64_t stk;
	int err;

	err = model_thread_stack(m, p, m->cur[p], -1, &stk);
	if (err)
		return err;
	return go_stop(m, p, GT_EV_GO_PREEMPT, stk, THREAD_RUNNABLE);
}

/* Blocked t becomes runnable, woken from P p (attributed to whatever runs there) with the
 * waker's stack: GoSysExit for a thread blocked in a syscall, GoUnblock otherwise. */
static int go_ready(struct model *m, uint32_t p, struct thread *t, uint64_t stk)
{
	int err;

	if (t->state == THREAD_SYSBLOCKED)
		err = model_emit(m, p, GT_EV_GO_SYSEXIT, t->goid, t->seq, 0);
	else
		err = model_emit(m, p, GT_EV_GO_UNBLOCK, t->goid, t->seq, stk);
	t->seq++;
	t->state = THREAD_RUNNABLE;
	t->scanned = 0;
	return err;
}

static int ready_by_repair(struct model *m, struct thread *t)
{
	uint64_t stk;
	int err;

	err = special_stack(m, m->hk, IDENT_SPECIAL_REPAIR, &stk);
	return err ? err : go_ready(m, m->hk, t, stk);
}

/* Makes t the G running on P c, with the fewest events: preempts it where the model has it
 * running, readies it if the model has it blocked, stops whatever else runs on c. The caller
 * counts the stale switch, if any; the other repairs are counted here. */
static int run_here(struct model *m, uint32_t c, struct thread *t)
{
	int err = 0;

	if (t->state == THREAD_RUNNING && (uint32_t)t->cpu == c)
		return 0;
	if (t->state == THREAD_RUNNING) {
		model_repair(m, MODEL_REPAIR_MIGRATED);
		err = preempt(m, (uint32_t)t->cpu);
	} else if (t->state == THREAD_WAITING || t->state == THREAD_SYSBLOCKED) {
		model_repair(m, MODEL_REPAIR_MISSED_WAKEUP);
		err = ready_by_repair(m, t);
	}
	if (!err && m->cur[c])
		err = preempt(m, c);
	return err ? err : go_start(m, c, t);
}

/* Whether t, runnable on a CPU the model does not know, can be started on c as its expected
 * first run there. */
static bool placeable(const struct model *m, uint32_t c, const struct thread *t)
{
	return t->state == THREAD_RUNNABLE && t->unplaced && !m->cur[c];
}

/* Makes t the G running on c, for a record the kernel writes only while t runs there (fork,
 * exec, syscall entry): started there if that is its first run; otherwise a switch record was
 * lost, and t is moved there (counted as a foreign record). */
int model_make_current(struct model *m, uint32_t c, struct thread *t)
{
	if (m->cur[c] == t)
		return 0;
	if (placeable(m, c, t))
		return go_start(m, c, t);
	model_repair(m, MODEL_REPAIR_FOREIGN);
	return run_here(m, c, t);
}

/* A thread the model cannot find running ends: the housekeeping P runs it for no time and
 * ends it there (doc §6), after preempting it where the model has it running. */
static int end_elsewhere(struct model *m, struct thread *t)
{
	int err = 0;

	model_repair(m, MODEL_REPAIR_EXIT_UNKNOWN);
	if (t->state == THREAD_RUNNING)
		err = preempt(m, (uint32_t)t->cpu);
	else if (t->state == THREAD_WAITING || t->state == THREAD_SYSBLOCKED)
		err = ready_by_repair(m, t);
	if (!err)
		err = go_start(m, m->hk, t);
	return err ? err : go_stop(m, m->hk, GT_EV_GO_END, 0, THREAD_EXITED);
}

/* lxtrace's goroutine wakes on the housekeeping P, logs msg under key and sleeps again:
 * UserLog needs a running G with a stack (doc §4, "User pages"). */
static int lx_log(struct model *m, uint64_t key, const char *msg)
{
	uint64_t stk;
	int err;

	err = special_stack(m, m->hk, IDENT_SPECIAL_LXTRACE, &stk);
	if (!err)
		err = model_emit(m, m->hk, GT_EV_GO_UNBLOCK, LXTRACE_GOID, m->lx_seq++, stk);
	if (!err)
		err = model_emit(m, m->hk, GT_EV_GO_START, LXTRACE_GOID, m->lx_seq++, 0);
	if (!err)
		err = gt_writer__user_log(m->w, m->hk, m->now, 0, key, stk, msg, strlen(msg));
	return err ? err : model_emit(m, m->hk, GT_EV_GO_BLOCK, stk, 0, 0);
}

/* ---- threads ----------------------------------------------------------------------------- */

/* Gives t a fresh generation (when its goid was used) and the identity of the process
 * pid/comm; the caller writes its GoCreate. */
static int rebirth(struct model *m, struct thread *t, uint32_t pid, const char *comm)
{
	if (t->goid) {
		t->gen++;
		t->goid = 0;
		model_repair(m, MODEL_REPAIR_TID_REUSE);
	}
	t->unplaced = 0;
	return idents__get(m->idents, pid, comm, &t->ident);
}

static struct thread *entry(struct model *m, uint32_t tid, int *err)
{
	struct thread *t = threads__find(m->threads, tid);

	if (!t) {
		t = threads__add(m->threads, tid);
		if (!t)
			*err = -ENOMEM;
	}
	return t;
}

/* A thread seen in a record but never created (or running again after it was reaped: its fork
 * was lost) is created on the housekeeping P, named from /proc when it is still there. It is
 * runnable on a CPU the model does not know, so its first run is not a further repair. */
static struct thread *create_unknown(struct model *m, struct thread *t, uint32_t tid, int *err)
{
	struct procscan_thread info;
	uint64_t stk;

	model_repair(m, MODEL_REPAIR_UNKNOWN_THREAD);
	if (!t)
		t = entry(m, tid, err);
	if (!t)
		return NULL;
	if (procscan__thread(m->proc_root, tid, &info))
		info = (struct procscan_thread){ .pid = 0 };
	*err = rebirth(m, t, info.pid, info.comm);
	if (!*err)
		*err = special_stack(m, m->hk, IDENT_SPECIAL_REPAIR, &stk);
	if (!*err)
		*err = go_create(m, m->hk, t, stk);
	t->unplaced = 1;
	return *err ? NULL : t;
}

/* The live thread a record is about, created when unknown; NULL (and *err 0) when the record
 * is to be ignored: the idle task, or a thread between its exit and its last switch. */
struct thread *model_live(struct model *m, uint32_t tid, int *err)
{
	struct thread *t;

	*err = 0;
	if (!tid)
		return NULL;
	t = threads__find(m->threads, tid);
	if (t && t->state < THREAD_EXITED)
		return t;
	if (t && t->state == THREAD_EXITED)
		return NULL;
	return create_unknown(m, t, tid, err);
}

/* ---- records ----------------------------------------------------------------------------- */

/* A P whose G blocked in a syscall stops and starts again, as the Go runtime hands off its P:
 * the 1.23 viewer ends the G's syscall slice at the ProcStop, and without one it ends it at
 * some later ProcStop of that P, when the G may no longer run there, and panics. */
static int hand_off(struct model *m, uint32_t p)
{
	int err = model_emit(m, p, GT_EV_PROC_STOP, 0, 0, 0);

	return err ? err : model_emit(m, p, GT_EV_PROC_START, p, 0, 0);
}

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
		model_repair(m, MODEL_REPAIR_WAKEUP_DROPPED);
	if (state == LX_PREV_DEAD)
		return go_stop(m, c, GT_EV_GO_END, 0, THREAD_REAPED);
	err = model_thread_stack(m, c, t, nr, &stk);
	if (err)
		return err;
	if (state == LX_PREV_RUNNABLE) {
		ev = cls == SYSCALL_CLASS_YIELD && nr >= 0 ? GT_EV_GO_SCHED : GT_EV_GO_PREEMPT;
		return go_stop(m, c, ev, stk, THREAD_RUNNABLE);
	}

	if (nr < 0) {
		ev = GT_EV_GO_BLOCK;
	} else {
		switch (cls) {
		case SYSCALL_CLASS_SYNC:
			ev = GT_EV_GO_BLOCK_SYNC;
			break;
		case SYSCALL_CLASS_NET:
			ev = GT_EV_GO_BLOCK_NET;
			break;
		case SYSCALL_CLASS_SLEEP:
			ev = GT_EV_GO_SLEEP;
			break;
		case SYSCALL_CLASS_OTHER:
			ev = m->syscalls == MODEL_SYSCALLS_NONE ? GT_EV_GO_BLOCK : GT_EV_GO_SYSBLOCK;
			break;
		default:
			ev = GT_EV_GO_BLOCK;
			break;
		}
	}
	if (ev == GT_EV_GO_SYSBLOCK) {
		/* In --syscalls=all the entry's GoSysCall may already be its latest event; then the
		 * syscall began there, and the block must follow it directly to count as blocking. */
		if (t->sysenter != nr)
			err = model_emit(m, c, GT_EV_GO_SYSCALL, stk, 0, 0);
		if (!err)
			err = go_stop(m, c, GT_EV_GO_SYSBLOCK, 0, THREAD_SYSBLOCKED);
		if (!err)
			err = hand_off(m, c);
	} else {
		err = go_stop(m, c, ev, stk, THREAD_WAITING);
	}
	/* Woken after setting its sleep state but before this switch: it blocked and was woken
	 * right away, by the waker whose stack was kept. */
	if (!err && wake)
		err = go_ready(m, c, t, wake);
	return err;
}

static int on_switch(struct model *m, const struct lx_switch *s)
{
	uint32_t c = s->h.cpu;
	bool stale = false;
	struct thread *t;
	int err = 0;

	m->st.switches++;
	if (s->h.tid) {
		t = threads__find(m->threads, s->h.tid);
		if (t && t->state == THREAD_EXITED) {
			if (s->prev_state == LX_PREV_DEAD)
				t->state = THREAD_REAPED;
			m->st.ignored++;
		} else {
			t = model_live(m, s->h.tid, &err);
			if (err)
				return err;
			if (m->cur[c] != t) {
				stale = !placeable(m, c, t);
				err = run_here(m, c, t);
			}
			if (!err)
				err = switch_out(m, c, t, s->prev_state, s->prev_syscall);
			if (err)
				return err;
		}
	}
	if (m->cur[c]) {
		/* The model had another G here than the kernel switched out. */
		stale = true;
		err = preempt(m, c);
		if (err)
			return err;
	}
	if (stale)
		model_repair(m, MODEL_REPAIR_STALE_SWITCH);

	if (!s->next_tid)
		return 0;
	t = model_live(m, s->next_tid, &err);
	if (err || !t) {
		if (!err)
			m->st.ignored++;
		return err;
	}
	return run_here(m, c, t);
}

static int on_wakeup(struct model *m, const struct lx_wakeup *w)
{
	uint32_t c = w->h.cpu;
	struct thread *t = threads__find(m->threads, w->h.tid);
	uint64_t stk;
	int err;

	m->st.wakeups++;
	if (!w->h.tid || (t && t->state == THREAD_EXITED)) {
		m->st.ignored++;
		return 0;
	}
	if (!t || t->state == THREAD_REAPED) {
		/* Created runnable, which is what the wakeup would have made it. */
		model_live(m, w->h.tid, &err);
		return err;
	}
	switch (t->state) {
	case THREAD_WAITING:
	case THREAD_SYSBLOCKED:
		if (m->cur[c])
			err = model_thread_stack(m, c, m->cur[c], -1, &stk);
		else
			err = special_stack(m, c, IDENT_SPECIAL_IRQ, &stk);
		return err ? err : go_ready(m, c, t, stk);
	case THREAD_RUNNING:
		/* sched_waking can precede the wakee's own switch-out (doc: docs/model.md). */
		if (t->wake_stk)
			model_repair(m, MODEL_REPAIR_WAKEUP_DROPPED);
		if (m->cur[c] && m->cur[c] != t)
			err = model_thread_stack(m, c, m->cur[c], -1, &t->wake_stk);
		else
			err = special_stack(m, c, IDENT_SPECIAL_IRQ, &t->wake_stk);
		return err;
	default:
		model_repair(m, MODEL_REPAIR_WAKEUP_DROPPED);
		return 0;
	}
}

static int on_wakeup_new(struct model *m, const struct lx_wakeup *w)
{
	struct thread *t = threads__find(m->threads, w->h.tid);
	int err = 0;

	m->st.wakeups++;
	/* GoCreate already made a forked thread runnable; only a lost fork needs a repair. */
	if (w->h.tid && (!t || t->state == THREAD_REAPED))
		model_live(m, w->h.tid, &err);
	return err;
}


static int on_fork(struct model *m, const struct lx_fork *f)
{
	uint32_t c = f->h.cpu, p = c;
	struct thread *parent, *child;
	char comm[LX_COMM_LEN] = "";
	uint64_t stk;
	int err = 0;

	m->st.forks++;
	if (!f->h.tid) {
		m->st.ignored++;
		return 0;
	}
	parent = model_live(m, f->parent_tid, &err);
	if (err)
		return err;
	if (parent)
		memcpy(comm, idents__comm(m->idents, parent->ident), LX_COMM_LEN);

	child = threads__find(m->threads, f->h.tid);
	if (child && child->scanned && f->h.ts <= m->scan_ts) {
		/* Forked after the recording started but before the /proc scan, which found it:
		 * created already. */
		child->scanned = 0;
		return 0;
	}
	if (child && child == parent) {
		model_repair(m, MODEL_REPAIR_BAD_RECORD);
		return 0;
	}
	if (child && child->goid && child->state < THREAD_EXITED) {
		/* The tid is new to the kernel, so the thread the model has under it ended unseen. */
		err = end_elsewhere(m, child);
		if (err)
			return err;
	}
	if (!child)
		child = entry(m, f->h.tid, &err);
	if (!child)
		return err;
	err = rebirth(m, child, f->child_pid, comm);
	if (err)
		return err;
	if (m->cs && f->child_pid == f->h.tid)
		callstacks__image(m->cs, f->child_pid, f->h.ts);

	/* GoCreate is attributed to whatever runs on its P: the parent, or nothing at all. */
	if (parent) {
		err = model_make_current(m, c, parent);
		/* An event of its own between a syscall's GoSysCall and GoSysBlock would make the
		 * 1.23 converter end the syscall there: the switch-out writes a new GoSysCall. */
		parent->sysenter = -1;
		if (!err)
			err = model_thread_stack(m, c, parent, -1, &stk);
	} else {
		model_repair(m, MODEL_REPAIR_FOREIGN);
		if (m->cur[c])
			p = m->hk;
		err = special_stack(m, p, IDENT_SPECIAL_REPAIR, &stk);
	}
	return err ? err : go_create(m, p, child, stk);
}

/* A non-leader thread that execs takes its leader's tid (the leader has exited by then) and
 * its own tid vanishes with no exit record. So goroutine `old` creates the next goroutine of
 * the leader's tid, ends, and the new one runs on in its place; *out is the new one. */
static int exec_takeover(struct model *m, uint32_t c, struct thread *old, const struct lx_exec *e,
			 const char *comm, struct thread **out)
{
	struct thread *t = threads__find(m->threads, e->h.tid);
	uint64_t stk;
	int err;

	err = model_make_current(m, c, old);
	/* The leader still alive in the model: its exit record was lost. */
	if (!err && t && t->goid && t->state < THREAD_EXITED)
		err = end_elsewhere(m, t);
	if (!err && !t)
		t = entry(m, e->h.tid, &err);
	if (err)
		return err;
	err = rebirth(m, t, e->pid, comm);
	if (!err)
		err = model_thread_stack(m, c, old, NR_EXECVE, &stk);
	if (!err)
		err = go_create(m, c, t, stk);
	if (!err)
		err = go_stop(m, c, GT_EV_GO_END, 0, THREAD_REAPED);
	*out = t;
	return err ? err : go_start(m, c, t);
}

static int on_exec(struct model *m, const struct lx_exec *e)
{
	uint32_t c = e->h.cpu;
	char comm[LX_COMM_LEN];
	const char *name;
	struct thread *t;
	uint64_t stk;
	int err = 0;

	m->st.execs++;
	memcpy(comm, e->comm, LX_COMM_LEN);
	comm[LX_COMM_LEN - 1] = '\0';
	/* An exec by the idle task is corrupt input; old_tid 0 is an exec'er that kept its tid. */
	t = e->h.tid ? model_live(m, e->old_tid ? e->old_tid : e->h.tid, &err) : NULL;
	if (!t) {
		m->st.ignored += !err;
		return err;
	}
	if (t->tid != e->h.tid) {
		err = exec_takeover(m, c, t, e, comm, &t);
		if (err)
			return err;
	}
	/* Its later stacks carry the new name and resolve in the new image; goroutines it
	 * creates are named after it too. */
	if (m->cs)
		callstacks__image(m->cs, e->pid, e->h.ts);
	err = idents__get(m->idents, e->pid, comm, &t->ident);
	if (err)
		return err;
	name = idents__name(m->idents, t->ident);
	err = model_make_current(m, c, t);
	t->sysenter = -1;
	if (!err)
		err = model_thread_stack(m, c, t, NR_EXECVE, &stk);
	return err ? err : gt_writer__user_log(m->w, c, m->now, 0, m->key_exec, stk, name, strlen(name));
}

static int on_thread_exit(struct model *m, const struct lx_rec *r)
{
	struct thread *t = threads__find(m->threads, r->tid);
	int err = 0;

	m->st.exits++;
	if (!r->tid || (t && t->state == THREAD_EXITED)) {
		m->st.ignored++;
		return 0;
	}
	if (!t || t->state == THREAD_REAPED) {
		/* Never created (or reborn unseen): nothing to end, but its last records must be
		 * ignored and a later birth of the tid must get a fresh goroutine id. */
		model_repair(m, MODEL_REPAIR_EXIT_UNKNOWN);
		if (!t)
			t = entry(m, r->tid, &err);
		if (t)
			t->state = THREAD_EXITED;
		return err;
	}
	if (placeable(m, r->cpu, t))
		err = go_start(m, r->cpu, t);
	if (m->cur[r->cpu] == t)
		return err ? err : go_stop(m, r->cpu, GT_EV_GO_END, 0, THREAD_EXITED);
	return end_elsewhere(m, t);
}

static int on_syscall(struct model *m, const struct lx_syscall *s)
{
	struct thread *t;
	uint64_t stk;
	int err;

	m->st.syscalls++;
	if (m->syscalls != MODEL_SYSCALLS_ALL) {
		m->st.ignored++;
		return 0;
	}
	t = model_live(m, s->h.tid, &err);
	if (!t) {
		m->st.ignored += !err;
		return err;
	}
	err = model_make_current(m, s->h.cpu, t);
	if (!err)
		err = model_thread_stack(m, s->h.cpu, t, s->nr, &stk);
	if (!err)
		err = model_emit(m, s->h.cpu, GT_EV_GO_SYSCALL, stk, 0, 0);
	t->sysenter = s->nr;
	return err;
}

/* ---- interface ----------------------------------------------------------------------------- */

struct model *model__new(const struct model_opts *opts)
{
	struct model *m;

	if (!opts || opts->sz < sizeof(*opts) || !opts->writer || !opts->ncpus ||
	    opts->ncpus > INT32_MAX - 1 || opts->syscalls > MODEL_SYSCALLS_NONE) {
		errno = EINVAL;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->w = opts->writer;
	m->ncpus = opts->ncpus;
	m->hk = opts->ncpus;
	m->syscalls = opts->syscalls;
	m->proc_root = strdup(opts->proc_root ? opts->proc_root : "/proc");
	m->keep = opts->keep;
	m->keep_ctx = opts->keep_ctx;
	m->rss = opts->rss;
	m->page_size = (uint64_t)sysconf(_SC_PAGESIZE);
	m->rss_pages = u64map__new();
	m->threads = threads__new();
	m->idents = idents__new(opts->writer);
	m->ann = annotations__new();
	m->cur = calloc(opts->ncpus + 1, sizeof(*m->cur));
	if (opts->stacks && m->idents)
		m->cs = callstacks__new(opts->writer, m->idents, m->proc_root);
	if (!m->proc_root || !m->rss_pages || !m->threads || !m->idents || !m->ann || !m->cur ||
	    (opts->stacks && !m->cs)) {
		model__free(m);
		errno = ENOMEM;
		return NULL;
	}
	return m;
}

/* One thread alive at start: created runnable, then put waiting or in its syscall unless it
 * is running (on a CPU the model learns from its first record). */
static int init_thread(struct model *m, const struct procscan_thread *pt)
{
	struct thread *t;
	int err = 0;

	/* Zombies have exited: nothing of theirs can be shown. The recorder's own threads are
	 * left out as the BPF side leaves out their records. */
	if (pt->state == 'Z' || pt->state == 'X' || pt->pid == (uint32_t)getpid() ||
	    threads__find(m->threads, pt->tid))
		return 0;
	if (m->rss && pt->tid == pt->pid) {
		err = model_set_rss(m, pt->pid, model_statm_rss(m, pt->pid));
		if (err)
			return err;
	}
	t = entry(m, pt->tid, &err);
	if (!t)
		return err;
	if (m->cs && pt->tid == pt->pid)
		callstacks__note(m->cs, pt->pid);
	err = idents__get(m->idents, pt->pid, pt->comm, &t->ident);
	if (!err)
		err = go_create(m, m->hk, t, 0);
	if (err)
		return err;
	t->scanned = 1;
	if (pt->state == 'R') {
		t->unplaced = 1;
		return 0;
	}
	m->now++;
	t->seq = 2;
	if (pt->syscall >= 0 && syscalls__class(pt->syscall) == SYSCALL_CLASS_OTHER &&
	    m->syscalls != MODEL_SYSCALLS_NONE) {
		t->state = THREAD_SYSBLOCKED;
		return model_emit(m, m->hk, GT_EV_GO_IN_SYSCALL, t->goid, 0, 0);
	}
	t->state = THREAD_WAITING;
	return model_emit(m, m->hk, GT_EV_GO_WAITING, t->goid, 0, 0);
}

/* The init phase (doc §3.5, §4 "1.23 viewer invariants") on the housekeeping P, each event one
 * tick after the last so that nothing collides, ending two ticks before ts: lxtrace's goroutine
 * created first (strictly the earliest event), the P started, every live thread created, then
 * Gomaxprocs; then the housekeeping P is handed off (for the threads put in a syscall on it);
 * at ts every CPU's P starts. */
int model__start(struct model *m, uint64_t ts)
{
	struct procscan_thread *live_threads = NULL;
	size_t n = 0;
	uint64_t stk, n_init;
	int err;

	if (m->err)
		return m->err;
	if (m->started)
		return -EINVAL;
	err = procscan__threads(m->proc_root, &live_threads, &n);
	if (err)
		goto out;
	if (m->keep) {
		size_t kept = 0;

		for (size_t i = 0; i < n; i++)
			if (m->keep(m->keep_ctx, &live_threads[i]))
				live_threads[kept++] = live_threads[i];
		n = kept;
	}
	m->scan_ts = now_ns();
	n_init = 3;
	for (size_t i = 0; i < n; i++)
		n_init += live_threads[i].state == 'R' ? 1 : 2;
	m->now = ts > n_init + 2 ? ts - n_init - 2 : 1;

	err = special_stack(m, m->hk, IDENT_SPECIAL_LXTRACE, &stk);
	if (!err)
		err = model_emit(m, m->hk, GT_EV_GO_CREATE, LXTRACE_GOID, stk, 0);
	m->now++;
	if (!err)
		err = model_emit(m, m->hk, GT_EV_PROC_START, m->hk, 0, 0);
	m->now++;
	if (!err)
		err = model_emit(m, m->hk, GT_EV_GO_WAITING, LXTRACE_GOID, 0, 0);
	m->lx_seq = 2;
	m->key_lost = gt_writer__string(m->w, m->hk, "lxtrace.lost");
	m->key_exec = gt_writer__string(m->w, m->hk, "exec");
	if (!err && (!m->key_lost || !m->key_exec))
		err = -errno;
	for (size_t i = 0; i < n && !err; i++) {
		m->now++;
		err = init_thread(m, &live_threads[i]);
	}
	m->now++;
	if (!err)
		err = model_emit(m, m->hk, GT_EV_GOMAXPROCS, m->ncpus, 0, 0);
	m->now++;
	if (!err)
		err = hand_off(m, m->hk);
	if (m->now < ts)
		m->now = ts;
	else
		m->now++;
	for (uint32_t p = 0; p < m->ncpus && !err; p++)
		err = model_emit(m, p, GT_EV_PROC_START, p, 0, 0);
	if (!err && m->rss)
		err = model_emit(m, m->hk, GT_EV_HEAP_ALLOC, m->rss_total * m->page_size, 0, 0);
	m->started = true;
out:
	free(live_threads);
	if (err)
		m->err = err;
	return err;
}

static const size_t rec_size[] = {
	[LX_REC_SWITCH] = sizeof(struct lx_switch),
	[LX_REC_WAKEUP] = sizeof(struct lx_wakeup),
	[LX_REC_WAKEUP_NEW] = sizeof(struct lx_wakeup),
	[LX_REC_FORK] = sizeof(struct lx_fork),
	[LX_REC_EXEC] = sizeof(struct lx_exec),
	[LX_REC_EXIT] = sizeof(struct lx_rec),
	[LX_REC_SYSCALL] = sizeof(struct lx_syscall),
	[LX_REC_RSS] = sizeof(struct lx_rss),
	[LX_REC_TASK_BEGIN] = sizeof(struct lx_user),
	[LX_REC_TASK_END] = sizeof(struct lx_user),
	[LX_REC_REGION_BEGIN] = sizeof(struct lx_user),
	[LX_REC_REGION_END] = sizeof(struct lx_user),
	[LX_REC_LOG] = sizeof(struct lx_user_log),
	[LX_REC_SAMPLE] = sizeof(struct lx_sample),
};

/* The call stack after a record of its type's size, or NULL when there is none; *ok false when
 * what follows the record is not a whole stack. Samples always carry one. */
static const struct lx_stack *trailing_stack(const struct lx_rec *r, size_t size, bool *ok)
{
	size_t base = rec_size[r->type];
	const struct lx_stack *st = (const void *)((const char *)r + base);
	bool may = r->type == LX_REC_SWITCH || r->type == LX_REC_WAKEUP ||
		   r->type == LX_REC_WAKEUP_NEW || r->type == LX_REC_FORK || r->type == LX_REC_SAMPLE;

	*ok = true;
	if (size == base && r->type != LX_REC_SAMPLE)
		return NULL;
	*ok = may && size >= base + sizeof(*st) && st->nkern <= LX_STACK_KERN_MAX &&
	      st->nuser <= LX_STACK_USER_MAX &&
	      size == base + sizeof(*st) + ((size_t)st->nkern + st->nuser) * sizeof(st->pc[0]);
	return *ok ? st : NULL;
}

/* Sets the time of the events about to be written; never backwards. */
static void advance(struct model *m, uint64_t ts)
{
	if (ts < m->now)
		model_repair(m, MODEL_REPAIR_TIME_CLAMPED);
	else
		m->now = ts;
}

/* Whether a record can be trusted to be what its type says: a type the model takes (not a
 * syscall chunk, which capture unpacks), big enough, on a real CPU, naming tids a kernel can
 * have (which also keeps them off lxtrace's own goroutine id). */
static bool well_formed(const struct model *m, const struct lx_rec *r, size_t size)
{
	if (size < sizeof(*r) || r->type >= sizeof(rec_size) / sizeof(rec_size[0]) ||
	    !rec_size[r->type] || size < rec_size[r->type] ||
	    r->cpu >= m->ncpus || r->tid > TID_LIMIT)
		return false;
	if (r->type == LX_REC_SWITCH)
		return ((const struct lx_switch *)r)->next_tid <= TID_LIMIT;
	if (r->type == LX_REC_FORK)
		return ((const struct lx_fork *)r)->parent_tid <= TID_LIMIT &&
		       ((const struct lx_fork *)r)->child_pid <= TID_LIMIT;
	if (r->type == LX_REC_EXEC)
		return ((const struct lx_exec *)r)->pid <= TID_LIMIT &&
		       ((const struct lx_exec *)r)->old_tid <= TID_LIMIT;
	if (r->type == LX_REC_RSS)
		return ((const struct lx_rss *)r)->pid <= TID_LIMIT;
	if (r->type >= LX_REC_TASK_BEGIN && r->type <= LX_REC_LOG)
		return ((const struct lx_user *)r)->pid <= TID_LIMIT;
	if (r->type == LX_REC_SAMPLE)
		return ((const struct lx_sample *)r)->pid <= TID_LIMIT;
	return true;
}

int model__record(struct model *m, const struct lx_rec *r, size_t size)
{
	bool ok = false;
	int err;

	if (m->err)
		return m->err;
	if (!m->started || m->finished)
		return -EINVAL;
	m->st.records++;
	if (well_formed(m, r, size))
		m->rs = trailing_stack(r, size, &ok);
	/* Stacks nobody asked for (opts.stacks off) are corrupt input too. */
	if (!ok || (m->rs && !m->cs)) {
		m->rs = NULL;
		model_repair(m, MODEL_REPAIR_BAD_RECORD);
		return 0;
	}
	advance(m, r->ts);
	switch (r->type) {
	case LX_REC_SWITCH:
		err = on_switch(m, (const struct lx_switch *)r);
		break;
	case LX_REC_WAKEUP:
		err = on_wakeup(m, (const struct lx_wakeup *)r);
		break;
	case LX_REC_WAKEUP_NEW:
		err = on_wakeup_new(m, (const struct lx_wakeup *)r);
		break;
	case LX_REC_FORK:
		err = on_fork(m, (const struct lx_fork *)r);
		break;
	case LX_REC_EXEC:
		err = on_exec(m, (const struct lx_exec *)r);
		break;
	case LX_REC_EXIT:
		err = on_thread_exit(m, r);
		break;
	case LX_REC_SAMPLE:
		err = model_on_sample(m, (const struct lx_sample *)r);
		break;
	case LX_REC_RSS:
		err = model_on_rss(m, (const struct lx_rss *)r);
		break;
	case LX_REC_SYSCALL:
		err = on_syscall(m, (const struct lx_syscall *)r);
		break;
	default:
		err = model_on_user(m, (const struct lx_user *)r);
		break;
	}
	m->rs = NULL;
	if (err)
		m->err = err;
	return err;
}

void model__peek(struct model *m, const struct lx_rec *r, size_t size)
{
	if (m->cs && size >= sizeof(*r))
		callstacks__peek(m->cs, r, size);
}

int model__lost(struct model *m, uint32_t cpu, uint64_t ts, uint64_t n)
{
	char msg[64];
	int err;

	if (m->err)
		return m->err;
	if (!m->started || m->finished)
		return -EINVAL;
	advance(m, ts);
	m->st.lost += n;
	snprintf(msg, sizeof(msg), "%llu records lost on CPU %u", (unsigned long long)n, cpu);
	err = lx_log(m, m->key_lost, msg);
	if (err)
		m->err = err;
	return err;
}

int model__finish(struct model *m, uint64_t ts)
{
	int err = 0;

	if (m->err)
		return m->err;
	if (!m->started)
		return -EINVAL;
	if (m->finished)
		return 0;
	advance(m, ts);
	/* The 1.19 viewer crashes on a GoStart with no later stop (doc §2). */
	for (uint32_t p = 0; p < m->ncpus && !err; p++)
		if (m->cur[p])
			err = preempt(m, p);
	for (uint32_t p = 0; p <= m->ncpus && !err; p++)
		err = model_emit(m, p, GT_EV_PROC_STOP, 0, 0, 0);
	m->finished = true;
	if (!err)
		err = gt_writer__flush(m->w);
	if (err)
		m->err = err;
	return err;
}

void model__stats(const struct model *m, struct model_stats *out)
{
	struct callstacks_stats cs = { 0 };

	*out = m->st;
	if (m->cs)
		callstacks__stats(m->cs, &cs);
	out->stack_lookups = cs.lookups;
	out->stacks_distinct = cs.distinct;
	out->stacks_trimmed = cs.trimmed;
	out->images = cs.images;
	out->symbolize_ns = cs.symbolize_ns;
}

void model__free(struct model *m)
{
	if (!m)
		return;
	free(m->cur);
	u64map__free(m->rss_pages);
	annotations__free(m->ann);
	callstacks__free(m->cs);
	idents__free(m->idents);
	threads__free(m->threads);
	free(m->proc_root);
	free(m);
}
