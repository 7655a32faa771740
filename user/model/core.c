/* core.c - the model's state machine: the Go events that move a thread between states and
 * Ps, the repairs that bring the model to what a record needs, and the time of the events.
 *
 * Invariant: the model's state is exactly the state both Go parsers will have after reading
 * the events written so far (which G runs on which P, each G's state and seq). Every record
 * is checked against it; when the record disagrees (lost records, races between CPUs, corrupt
 * input), the handlers first write, through these functions, the fewest events that bring the
 * parsers' state to what the record needs, count that repair, and only then write the record's
 * own events. So no input can make the model write an invalid file.
 *
 * Time: every event is written at m->now, the newest record time seen; an older record is
 * written at m->now (counted as MODEL_REPAIR_TIME_CLAMPED), so time never goes backwards on
 * any P or across Ps.
 *
 * Nothing here knows a record kind: the handlers (handlers.h) call in, never the reverse.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"
#include "lib/u64map.h"
#include "user/model/annotations.h"
#include "user/model/core.h"
#include "user/model/threads.h"
#include "user/proc/procscan.h"
#include "user/proc/syscalls.h"
#include "user/stacks/callstacks.h"
#include "user/stacks/idents.h"

void model_repair(struct model *m, enum model_repair r)
{
	m->st.repairs[r]++;
}

void model_advance(struct model *m, uint64_t ts)
{
	/* A time past 2^63 is no CLOCK_MONOTONIC reading (292 years up) and none the parsers'
	 * signed clocks hold (docs/format.md §13): the file would be refused. */
	if (ts < m->now || ts > INT64_MAX)
		model_repair(m, MODEL_REPAIR_TIME_CLAMPED);
	else
		m->now = ts;
}

/* ---- writing events ---------------------------------------------------------------------- */

/* The stack naming t in syscall nr (-1: none), its identity frames alone or under the syscall's,
 * for an event on P p. A thread mostly repeats its last stack (a syscall loop, a read that
 * blocks after its GoSysCall), so that one is kept on the thread: a syscall storm then costs
 * no hash lookup per event. */
static int ident_stack(struct model *m, uint32_t p, struct thread *t, int nr, uint64_t *stk)
{
	if (t->last_stk && t->last_stk_ident == t->ident && t->last_stk_nr == nr &&
	    gt_tables__current(&m->tables, true, t->last_stk)) {
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

int model_thread_stack(struct model *m, uint32_t p, struct thread *t, int nr, uint64_t *stk)
{
	if (!m->rs || m->rs->tid != t->tid)
		return ident_stack(m, p, t, nr, stk);
	*stk = callstacks__get(m->cs, p, t->ident, idents__pid(m->idents, t->ident), nr, m->rs,
			       m->rpy);
	return *stk ? 0 : -errno;
}

int model_special_stack(struct model *m, uint32_t p, enum ident_special k, uint64_t *stk)
{
	*stk = idents__special(m->idents, p, k);
	return *stk ? 0 : -errno;
}

int model_waker_stack(struct model *m, uint32_t p, struct thread *cur, uint64_t *stk)
{
	/* Never the interrupted thread's user stack: the interrupt is not its doing. */
	if (m->rs && (m->rs->uflags & LX_USTACK_IRQ)) {
		*stk = callstacks__get(m->cs, p, 0, 0, -1, m->rs, NULL);
		return *stk ? 0 : -errno;
	}
	if (!cur)
		return model_special_stack(m, p, IDENT_SPECIAL_IRQ, stk);
	return model_thread_stack(m, p, cur, -1, stk);
}

void model_born(struct model *m, struct thread *t)
{
	t->goid = t->tid | (uint64_t)t->gen << 32;
	t->seq = 1;
	t->state = THREAD_RUNNABLE;
	t->sysenter = -1;
	t->wake_stk = 0;
	t->ready_ts = m->now;
	t->off_ts = 0;
	t->off_nr = -1;
	t->insys = 0;
	t->sysopen = 0;
}

int model_go_create(struct model *m, uint32_t p, struct thread *t, uint64_t creator_stk)
{
	/* The program frame alone: the viewers group goroutines by it (idents.h). */
	uint64_t new_stk = idents__create_stack(m->idents, p, t->ident);

	if (!new_stk)
		return -errno;
	model_born(m, t);
	return m->out->create(m, p, t, new_stk, creator_stk);
}

/* The flight recorder's triggers as t starts on P p: how long it waited runnable, how long it
 * was off a CPU and, when it left blocked in a syscall, in that syscall (which cannot have
 * returned before it ran again). The first trigger these times fire is marked on t, which runs
 * there now. A time that spans a loss report is not measured: the runs, blocks and wakeups lost
 * in it would make up a stall that never was. */
static int watch(struct model *m, uint32_t p, struct thread *t)
{
	uint64_t lat = t->ready_ts > m->lost_ts ? m->now - t->ready_ts : 0;
	uint64_t off = t->off_ts > m->lost_ts ? m->now - t->off_ts : 0;
	int nr = off ? t->off_nr : -1;
	struct trigger_fired f;
	const char *comm;
	char msg[256];
	uint32_t pid;
	int len;

	if (lat <= m->trigger_over[TRIGGER_SCHED_LATENCY] &&
	    off <= m->trigger_over[TRIGGER_OFFCPU] &&
	    (nr < 0 || off <= m->trigger_over[TRIGGER_SYSCALL]))
		return 0;
	pid = idents__pid(m->idents, t->ident);
	comm = idents__comm(m->idents, t->ident);
	for (size_t i = 0; i < m->ntriggers; i++) {
		const struct trigger *tr = &m->triggers[i];
		uint64_t ns = tr->kind == TRIGGER_SCHED_LATENCY ? lat : off;
		int knr = tr->kind == TRIGGER_SYSCALL ? nr : -1;

		if ((tr->kind == TRIGGER_SYSCALL && nr < 0) ||
		    !trigger__match(tr, tr->kind, knr, ns, pid, comm))
			continue;
		len = trigger__describe(tr, knr, ns, t->tid, pid, comm, msg, sizeof(msg));
		f = (struct trigger_fired){ .trigger = tr, .nr = knr, .ns = ns, .tid = t->tid,
					    .pid = pid };
		strncpy(f.comm, comm, sizeof(f.comm) - 1);
		return model_fire(m, p, t, msg,
				  len < (int)sizeof(msg) ? (size_t)len : sizeof(msg) - 1, &f);
	}
	return 0;
}

/* t, whose GoStart was written, runs on P p. */
static void on_cpu(struct model *m, uint32_t p, struct thread *t)
{
	t->seq++;
	t->state = THREAD_RUNNING;
	t->scanned = 0;
	t->cpu = (int32_t)p;
	t->unplaced = 0;
	t->sysenter = -1;
	m->cur[p] = t;
}

/* A first run on a CPU the model did not know (found runnable, or met unannounced) has no
 * known times; repairs on the housekeeping P are no runs. */
static bool timed(const struct model *m, uint32_t p, const struct thread *t)
{
	return m->ntriggers && !t->unplaced && p != m->hk;
}

static int standin_stop(struct model *m, uint32_t c);

int model_go_start(struct model *m, uint32_t p, struct thread *t)
{
	bool watched = timed(m, p, t);
	int err = m->held[p].run ? standin_stop(m, p) : 0;

	if (err)
		return err;
	err = m->out->run(m, p, t);

	on_cpu(m, p, t);
	return err || !watched ? err : watch(m, p, t);
}

/* The G running on p leaves it by ev into state: the model's side of model_go_stop. */
static struct thread *off_cpu(struct model *m, uint32_t p, enum gt_type ev, enum thread_state state)
{
	struct thread *t = m->cur[p];

	if (t->wake_stk) {
		/* A wakeup kept for its switch-out, which a repair (counted) replaced. */
		m->st.wakeups_moot++;
		t->wake_stk = 0;
	}
	t->state = state;
	t->sysenter = -1;
	t->off_ts = m->now;
	t->off_nr = -1;
	if (state == THREAD_RUNNABLE)
		t->ready_ts = m->now;
	m->cur[p] = NULL;
	if (ev == GT_EV_GO_END)
		annotations__forget(m->ann, t->goid);
	if (state == THREAD_REAPED)
		model_reap(m, t);
	else if (state == THREAD_EXITED)
		model_exited(m, t);
	return t;
}

int model_go_stop(struct model *m, uint32_t p, enum gt_type ev, uint64_t stk, int nr,
		  enum thread_state state)
{
	struct thread *t = off_cpu(m, p, ev, state);

	return m->out->stop(m, p, t, ev, stk, nr);
}

int model_sys_block(struct model *m, uint32_t p, uint64_t stk, bool begun)
{
	struct thread *t = off_cpu(m, p, GT_EV_GO_SYSBLOCK, THREAD_SYSBLOCKED);

	/* Its return ends the syscall, entered when no entry was seen (before the start). */
	t->sysopen = m->sysrets;
	return m->out->sysblock(m, p, t, stk, begun);
}

int model_go_exec(struct model *m, uint32_t c, struct thread *old, struct thread *t, uint64_t stk)
{
	uint64_t new_stk = idents__create_stack(m->idents, c, t->ident);
	uint8_t insys = t->insys, sysopen = t->sysopen;
	bool watched;
	int err;

	if (!new_stk)
		return -errno;
	model_born(m, t);
	/* The new image is still in execve, and returns from it. */
	if (old == t) {
		t->insys = insys;
		t->sysopen = sysopen;
	}
	/* GoEnd is old's, which still runs on c; when old is t, t stays the runnable new G. */
	off_cpu(m, c, GT_EV_GO_END, old == t ? THREAD_RUNNABLE : THREAD_REAPED);
	watched = timed(m, c, t);
	err = m->out->exec(m, c, old, t, new_stk, stk);
	on_cpu(m, c, t);
	return err || !watched ? err : watch(m, c, t);
}

int model_preempt(struct model *m, uint32_t p)
{
	uint64_t stk;
	int err;

	err = model_thread_stack(m, p, m->cur[p], -1, &stk);
	if (err)
		return err;
	return model_go_stop(m, p, GT_EV_GO_PREEMPT, stk, -1, THREAD_RUNNABLE);
}

int model_stop_unseen(struct model *m, uint32_t p)
{
	uint64_t stk;
	int err;

	err = model_special_stack(m, p, IDENT_SPECIAL_REPAIR, &stk);
	return err ? err
		   : model_go_stop(m, p, GT_EV_GO_BLOCK, stk, MODEL_NR_UNSEEN, THREAD_WAITING);
}

int model_go_ready(struct model *m, uint32_t p, struct thread *t, uint64_t stk)
{
	int err = m->out->ready(m, p, t, stk);

	t->wake_stk = 0;
	t->seq++;
	t->state = THREAD_RUNNABLE;
	t->scanned = 0;
	t->ready_ts = m->now;
	return err;
}

void model_keep_wake(struct model *m, struct thread *t, uint32_t p, uint64_t stk)
{
	struct thread *by = m->cur[p];

	t->wake_stk = stk;
	t->wake_p = p;
	t->wake_by = by && by != t ? by->goid : 0;
	t->wake_ts = m->now;
}

int model_ready_kept(struct model *m, struct thread *t)
{
	struct thread *cur = m->cur[t->wake_p];
	uint64_t stk = t->wake_stk;
	/* An unblock is by the G its P runs: once the waker left its CPU, another G (or none)
	 * runs there, and the unblock goes where none does. The stack names the waker anyway. */
	uint32_t p = (cur ? cur->goid : 0) == t->wake_by ? t->wake_p : m->hk;

	/* Kept ids are used again only while the writer knows them (format/dedup.h). */
	if (!gt_tables__live(&m->tables, true, stk)) {
		model_repair(m, MODEL_REPAIR_STACK_FORGOTTEN);
		stk = 0;
	}
	return model_go_ready(m, p, t, stk);
}

static int ready_by_repair(struct model *m, struct thread *t)
{
	uint64_t stk;
	int err;

	err = model_special_stack(m, m->hk, IDENT_SPECIAL_REPAIR, &stk);
	return err ? err : model_go_ready(m, m->hk, t, stk);
}

/* Whether t's state is what the /proc scan read after the current record: the scan follows
 * the attach, so a thread found asleep may have been woken, or running, at its first records. */
static bool scanned_later(const struct model *m, const struct thread *t)
{
	return t->scanned && m->now <= m->scan_ts;
}

int model_run_here(struct model *m, uint32_t c, struct thread *t)
{
	int err = 0;

	if (t->state == THREAD_RUNNING && (uint32_t)t->cpu == c)
		return 0;
	if (t->state == THREAD_RUNNING) {
		model_repair(m, MODEL_REPAIR_MIGRATED);
		err = model_preempt(m, (uint32_t)t->cpu);
	} else if (t->state == THREAD_WAITING || t->state == THREAD_SYSBLOCKED) {
		if (t->wake_stk) {
			/* Woken, and its enqueue not seen (lost): runnable from here on. */
			m->st.enqueue_unseen++;
			err = model_ready_kept(m, t);
		} else {
			if (!scanned_later(m, t))
				model_repair(m, MODEL_REPAIR_MISSED_WAKEUP);
			err = ready_by_repair(m, t);
		}
	}
	if (!err && m->cur[c])
		err = model_stop_unseen(m, c);
	return err ? err : model_go_start(m, c, t);
}

bool model_placeable(const struct model *m, uint32_t c, const struct thread *t)
{
	return ((t->state == THREAD_RUNNABLE && t->unplaced) || scanned_later(m, t)) && !m->cur[c];
}

int model_make_current(struct model *m, uint32_t c, struct thread *t)
{
	/* A wakeup kept for t's switch-out was of a sleep t gave up without switching out (a lock
	 * taken on its way to sleep, in a fork's copy of the process): between a wakeup that
	 * raced ahead and the switch-out it belongs to, t runs in the scheduler only. */
	if (t->wake_stk && t->state == THREAD_RUNNING) {
		m->st.wakeups_moot++;
		t->wake_stk = 0;
	}
	if (m->cur[c] == t)
		return 0;
	if (model_placeable(m, c, t))
		return model_run_here(m, c, t);
	model_repair(m, MODEL_REPAIR_FOREIGN);
	return model_run_here(m, c, t);
}

int model_end_elsewhere(struct model *m, struct thread *t)
{
	int err = 0;

	model_repair(m, MODEL_REPAIR_EXIT_UNKNOWN);
	if (t->state == THREAD_RUNNING)
		err = model_preempt(m, (uint32_t)t->cpu);
	else if (t->state == THREAD_WAITING || t->state == THREAD_SYSBLOCKED)
		err = ready_by_repair(m, t);
	if (!err)
		err = model_go_start(m, m->hk, t);
	return err ? err : model_go_stop(m, m->hk, GT_EV_GO_END, 0, -1, THREAD_EXITED);
}

/* ---- stand-ins ---------------------------------------------------------------------------- */

/* Their program frames: one group each in both viewers, apart from every real program; and
 * their name while no holder of their kind was named on their CPU. */
static const char *const standin_prog[] = {
	[LX_OCC_SELF] = "[lxtrace]",
	[LX_OCC_UNTRACED] = "[untraced]",
};
static const char *const standin_comm[] = {
	[LX_OCC_SELF] = "lxtrace",
	[LX_OCC_UNTRACED] = "untraced",
};

/* The stand-in running on c stops, blocked at the stack naming what held the CPU: its
 * time there is counted, and it waits unseen until it holds a CPU again. */
static int standin_stop(struct model *m, uint32_t c)
{
	struct held *h = &m->held[c];
	struct thread *s = h->run;
	uint64_t stk;
	int err = model_thread_stack(m, c, s, -1, &stk);

	h->run = NULL;
	if (s == h->s[1])
		m->st.held_self_ns += m->now - h->since;
	else
		m->st.held_untraced_ns += m->now - h->since;
	if (err)
		return err;
	s->state = THREAD_WAITING;
	return m->out->stop(m, c, s, GT_EV_GO_BLOCK, stk, -1);
}

/* Names stand-in s after the holder last named on c, when of its kind; else by its kind alone. */
static int standin_name(struct model *m, uint32_t c, struct thread *s, uint8_t kind)
{
	const struct held *h = &m->held[c];

	if (h->kind != kind)
		return model_name(m, s, 0, standin_comm[kind], standin_prog[kind]);
	return model_name(m, s, h->pid, h->comm, standin_prog[kind]);
}

/* The stand-in of kind starts on c: created there the first time, woken there by no thread
 * (its own stack as the wakeup's) the next, so it never waits for a CPU. */
static int standin_start(struct model *m, uint32_t c, uint8_t kind)
{
	struct held *h = &m->held[c];
	bool self = kind == LX_OCC_SELF;
	struct thread *s = h->s[self];
	uint64_t stk;
	int err;

	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return -ENOMEM;
		s->tid = (uint32_t)MODEL_STANDIN_GOID(c, self);
		s->off_nr = s->last_stk_nr = -1;
		h->s[self] = s;
	}
	if ((err = standin_name(m, c, s, kind)) || (err = model_thread_stack(m, c, s, -1, &stk)))
		return err;
	err = s->goid ? model_go_ready(m, c, s, stk) : model_go_create(m, c, s, stk);
	if (!err)
		err = m->out->run(m, c, s);
	s->seq++;
	s->state = THREAD_RUNNING;
	s->cpu = (int32_t)c;
	h->run = s;
	h->since = m->now;
	return err;
}

int model_hold(struct model *m, uint32_t c, uint8_t kind)
{
	struct held *h = &m->held[c];
	int err = 0;

	if (h->run && kind != LX_OCC_IDLE && h->run == h->s[kind == LX_OCC_SELF])
		return 0;
	if (h->run)
		err = standin_stop(m, c);
	if (!err && kind != LX_OCC_IDLE && !m->cur[c])
		err = standin_start(m, c, kind);
	return err;
}

int model_hold_name(struct model *m, uint32_t c, uint8_t kind, uint32_t pid, const char *comm)
{
	struct held *h = &m->held[c];

	h->kind = kind;
	h->pid = pid;
	memcpy(h->comm, comm, sizeof(h->comm));
	h->comm[sizeof(h->comm) - 1] = '\0';
	if (!h->run || h->run != h->s[kind == LX_OCC_SELF])
		return 0;
	return standin_name(m, c, h->run, kind);
}

int model_log(struct model *m, uint64_t key, const char *msg)
{
	return m->out->lx_log(m, key, msg);
}

int model_sysret_log(struct model *m, uint32_t p, struct thread *t)
{
	uint64_t stk;
	int err;

	/* Interned again when not current in the writer (format/dedup.h). */
	if (!m->key_sysret || !gt_tables__current(&m->tables, false, m->key_sysret)) {
		m->key_sysret = gt_tables__string(&m->tables, p, LXTRACE_SYSRET_KEY);
		if (!m->key_sysret)
			return -errno;
	}
	err = model_thread_stack(m, p, t, t->sysenter, &stk);
	return err ? err : m->out->log(m, p, t, 0, m->key_sysret, stk, "", 0);
}

int model_fire(struct model *m, uint32_t p, struct thread *t, const char *msg, size_t len,
	       struct trigger_fired *f)
{
	uint64_t stk;
	int err;

	/* Interned at the first firing: a recording without any has the same bytes as before.
	 * Again when not current in the writer (format/dedup.h). */
	if (!m->key_trigger || !gt_tables__current(&m->tables, false, m->key_trigger)) {
		m->key_trigger = gt_tables__string(&m->tables, t ? p : m->hk, "lxtrace.trigger");
		if (!m->key_trigger)
			return -errno;
	}
	if (!t) {
		err = model_log(m, m->key_trigger, msg);
	} else {
		err = model_thread_stack(m, p, t, -1, &stk);
		if (!err)
			err = m->out->log(m, p, t, 0, m->key_trigger, stk, msg, len);
	}
	f->ts = m->now;
	if (!err && m->on_trigger)
		m->on_trigger(m->trigger_ctx, f);
	return err;
}

/* ---- the heap counter ---------------------------------------------------------------------- */

int model_set_rss(struct model *m, uint32_t pid, uint64_t pages)
{
	uint64_t *v;
	bool added;

	if (!pages) {
		v = u64map__get(m->rss_pages, pid);
		if (v) {
			m->rss_total -= *v;
			u64map__del(m->rss_pages, pid);
		}
		return 0;
	}
	v = u64map__put(m->rss_pages, pid, &added);
	if (!v)
		return -ENOMEM;
	m->rss_total += pages - *v;
	*v = pages;
	return 0;
}

/* ---- threads ----------------------------------------------------------------------------- */

void model_forget_exit_image(struct model *m, struct thread *t)
{
	if (!m->cs || !t->exit_image)
		return;
	callstacks__exit(m->cs, idents__pid(m->idents, t->ident), t->exit_image);
	callstacks__forget_thread(m->cs, t->tid);
	t->exit_image = 0;
}

int model_rebirth(struct model *m, struct thread *t, uint32_t pid, const char *comm,
		  const char *prog)
{
	/* A fresh goroutine id; the kernel reusing a tid is no damage to repair (a thread whose
	 * end went unseen is counted where that is found). reborn: the earlier thread's entry was
	 * removed, its generation kept. */
	if (t->goid || t->reborn)
		m->st.tids_reused++;
	/* The tid is reused: the thread that ended a process with it is gone for good. */
	model_forget_exit_image(m, t);
	if (t->goid) {
		t->gen++;
		t->goid = 0;
	}
	t->reborn = 0;
	t->unplaced = 0;
	return model_name(m, t, pid, comm, prog);
}

int model_name(struct model *m, struct thread *t, uint32_t pid, const char *comm,
	       const char *prog)
{
	uint32_t ident;
	int err = idents__get(m->idents, pid, comm, prog, &ident);

	if (err || ident == t->ident)
		return err;
	idents__hold(m->idents, ident);
	if (t->ident)
		idents__drop(m->idents, t->ident);
	t->ident = ident;
	return 0;
}

void model_reap(struct model *m, struct thread *t)
{
	t->state = THREAD_REAPED;
	/* Out of memory its entry stays: the table holds more, never less. */
	if (!grow_array((void **)&m->reaped, &m->reaped_cap, m->nreaped + 1, sizeof(*m->reaped),
			16))
		m->reaped[m->nreaped++] = t;
}

void model_exited(struct model *m, struct thread *t)
{
	t->state = THREAD_EXITED;
	if (m->exited_head && m->nexited == m->exited_cap) {
		memmove(m->exited, m->exited + m->exited_head,
			(m->nexited - m->exited_head) * sizeof(*m->exited));
		m->nexited -= m->exited_head;
		m->exited_head = 0;
	}
	/* Out of memory its entry stays until it is reaped: the table holds more, never less. */
	if (!grow_array((void **)&m->exited, &m->exited_cap, m->nexited + 1, sizeof(*m->exited),
			64))
		m->exited[m->nexited++] = (struct exited){ t, m->now, t->tid, t->gen };
}

static void remove_thread(struct model *m, struct thread *t)
{
	model_forget_exit_image(m, t);
	if (t->ident)
		idents__drop(m->idents, t->ident);
	threads__remove(m->threads, t);
}

void model_remove_reaped(struct model *m)
{
	for (size_t i = 0; i < m->nreaped; i++) {
		struct thread *t = m->reaped[i];

		/* Reaped twice in one record, or born again after it: once, or not at all. */
		if (t->state == THREAD_REAPED && threads__find(m->threads, t->tid) == t)
			remove_thread(m, t);
	}
	m->nreaped = 0;
	while (m->exited_head < m->nexited &&
	       m->exited[m->exited_head].ts + EXITED_KEEP_NS <= m->now) {
		const struct exited *x = &m->exited[m->exited_head++];

		/* Still the thread that exited then, never reaped. */
		if (threads__find(m->threads, x->tid) == x->t && x->t->gen == x->gen &&
		    x->t->state == THREAD_EXITED)
			remove_thread(m, x->t);
	}
	if (m->exited_head == m->nexited)
		m->exited_head = m->nexited = 0;
	idents__collect(m->idents);
}

struct thread *model_entry(struct model *m, uint32_t tid, int *err)
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
		t = model_entry(m, tid, err);
	if (!t)
		return NULL;
	if (procscan__thread(m->proc_root, tid, &info))
		info = (struct procscan_thread){ .pid = 0 };
	*err = model_rebirth(m, t, info.pid, info.comm, info.program);
	if (!*err)
		*err = model_special_stack(m, m->hk, IDENT_SPECIAL_REPAIR, &stk);
	if (!*err)
		*err = model_go_create(m, m->hk, t, stk);
	m->st.threads++;
	t->unplaced = 1;
	return *err ? NULL : t;
}

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
