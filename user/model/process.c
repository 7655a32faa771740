/* process.c - the records of a thread's life: fork (LX_REC_FORK) creates its goroutine, exec
 * (LX_REC_EXEC) renames it and logs the new program, exit (LX_REC_EXIT) ends it.
 */
#include <asm/unistd.h>
#include <string.h>

#include "user/model/core.h"
#include "user/model/handlers.h"
#include "user/model/threads.h"
#include "user/stacks/callstacks.h"
#include "user/stacks/idents.h"

int model_on_fork(struct model *m, const struct lx_rec *r)
{
	const struct lx_fork *f = (const struct lx_fork *)r;
	uint32_t c = f->h.cpu, p = c;
	struct thread *parent, *child;
	char comm[LX_COMM_LEN] = "";
	uint64_t stk;
	int err = 0;

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
		err = model_end_elsewhere(m, child);
		if (err)
			return err;
	}
	if (!child)
		child = model_entry(m, f->h.tid, &err);
	if (!child)
		return err;
	err = model_rebirth(m, child, f->child_pid, comm);
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
		err = model_special_stack(m, p, IDENT_SPECIAL_REPAIR, &stk);
	}
	return err ? err : model_go_create(m, p, child, stk);
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
		err = model_end_elsewhere(m, t);
	if (!err && !t)
		t = model_entry(m, e->h.tid, &err);
	if (err)
		return err;
	err = model_rebirth(m, t, e->pid, comm);
	if (!err)
		err = model_thread_stack(m, c, old, __NR_execve, &stk);
	if (!err)
		err = model_go_create(m, c, t, stk);
	if (!err)
		err = model_go_stop(m, c, GT_EV_GO_END, 0, THREAD_REAPED);
	*out = t;
	return err ? err : model_go_start(m, c, t);
}

int model_on_exec(struct model *m, const struct lx_rec *r)
{
	const struct lx_exec *e = (const struct lx_exec *)r;
	uint32_t c = e->h.cpu;
	char comm[LX_COMM_LEN];
	const char *name;
	struct thread *t;
	uint64_t stk;
	int err = 0;

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
		err = model_thread_stack(m, c, t, __NR_execve, &stk);
	return err ? err : gt_writer__user_log(m->w, c, m->now, 0, m->key_exec, stk, name, strlen(name));
}

int model_on_exit(struct model *m, const struct lx_rec *r)
{
	struct thread *t = threads__find(m->threads, r->tid);
	int err = 0;

	if (!r->tid || (t && t->state == THREAD_EXITED)) {
		m->st.ignored++;
		return 0;
	}
	if (!t || t->state == THREAD_REAPED) {
		/* Never created (or reborn unseen): nothing to end, but its last records must be
		 * ignored and a later birth of the tid must get a fresh goroutine id. */
		model_repair(m, MODEL_REPAIR_EXIT_UNKNOWN);
		if (!t)
			t = model_entry(m, r->tid, &err);
		if (t)
			t->state = THREAD_EXITED;
		return err;
	}
	if (model_placeable(m, r->cpu, t))
		err = model_go_start(m, r->cpu, t);
	if (m->cur[r->cpu] == t)
		return err ? err : model_go_stop(m, r->cpu, GT_EV_GO_END, 0, THREAD_EXITED);
	return model_end_elsewhere(m, t);
}
