/* process.c - the records of a thread's life: fork (LX_REC_FORK) creates its goroutine, exec
 * (LX_REC_EXEC) replaces it with the goroutine of the new image, exit (LX_REC_EXIT) ends it.
 */
#include <asm/unistd.h>
#include <stdio.h>
#include <string.h>

#include "user/model/annotations.h"
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
	char comm[LX_COMM_LEN] = "", prog[LX_COMM_LEN] = "";
	uint64_t stk;
	int err = 0;

	if (!f->h.tid) {
		m->st.ignored++;
		return 0;
	}
	parent = model_live(m, f->parent_tid, &err);
	if (err)
		return err;
	/* A child has its parent's name and program, as in Linux, until it execs. */
	if (parent) {
		memcpy(comm, idents__comm(m->idents, parent->ident), LX_COMM_LEN);
		memcpy(prog, idents__prog(m->idents, parent->ident), LX_COMM_LEN);
	}

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
		/* The tid is new to the kernel: the thread the model has under it ended unseen. */
		err = model_end_elsewhere(m, child);
		if (err)
			return err;
	}
	if (!child)
		child = model_entry(m, f->h.tid, &err);
	if (!child)
		return err;
	err = model_rebirth(m, child, f->child_pid, comm, prog);
	if (err)
		return err;
	if (m->cs && f->child_pid == f->h.tid)
		callstacks__fork(m->cs, parent ? idents__pid(m->idents, parent->ident) : 0,
				 f->child_pid);

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
	if (!err)
		err = model_go_create(m, p, child, stk);
	m->st.threads++;
	return err;
}

/* An exec starts a new image as a new goroutine: the goroutine that ran the old image creates
 * the one of the new image (creation stack: the new program's name; creator: `syscall execve`
 * in the old one), ends, and the new one runs on in its place. Both Go viewers name and group a
 * goroutine by its creation stack alone, which an exec cannot change on a goroutine that
 * exists: this is how the exec'd program appears under its own name.
 *
 * The tid that goes on is old's own, or, when a non-leader thread execs, its leader's: Linux
 * ends the leader first (its exit record comes first) and gives the exec'ing thread the
 * leader's tid, and old's own tid vanishes with no exit record. t is that tid's entry; the new
 * goroutine is its next generation, so the goroutine id's high bits count the tid's earlier
 * goroutines (docs/model.md). The new image is the same thread: no thread is counted. */
static int exec_image(struct model *m, uint32_t c, struct thread *old, struct thread *t,
		      uint32_t pid, const char *comm)
{
	uint64_t old_goid, stk;
	int err;

	err = model_make_current(m, c, old);
	if (!err)
		err = model_thread_stack(m, c, old, __NR_execve, &stk);
	if (err)
		return err;
	old_goid = old->goid;
	if (t->goid) {
		t->gen++;
		t->goid = 0;
	}
	t->unplaced = 0;
	t->scanned = 0;
	err = model_name(m, t, pid, comm, comm);
	if (!err)
		err = model_go_exec(m, c, old, t, stk);
	annotations__forget(m->ann, old_goid);
	return err;
}

int model_on_exec(struct model *m, const struct lx_rec *r)
{
	const struct lx_exec *e = (const struct lx_exec *)r;
	char comm[LX_COMM_LEN];
	struct thread *old, *t;
	int err = 0;

	memcpy(comm, e->comm, LX_COMM_LEN);
	comm[LX_COMM_LEN - 1] = '\0';
	/* An exec by the idle task is corrupt input; old_tid 0 is an exec'er that kept its tid. */
	old = e->h.tid ? model_live(m, e->old_tid ? e->old_tid : e->h.tid, &err) : NULL;
	if (!old) {
		m->st.ignored += !err;
		return err;
	}
	t = old;
	if (old->tid != e->h.tid) {
		t = threads__find(m->threads, e->h.tid);
		/* The leader still alive in the model: its exit record was lost. */
		if (t && t->goid && t->state < THREAD_EXITED)
			err = model_end_elsewhere(m, t);
		if (!err && !t)
			t = model_entry(m, e->h.tid, &err);
		if (err)
			return err;
	}
	/* Its later stacks resolve in the new image, which began with its first mapping. */
	return exec_image(m, e->h.cpu, old, t, e->pid, comm);
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
			model_exited(m, t);
		return err;
	}
	/* Its first run there: runnable, or asleep as the /proc scan read it before this record
	 * (readied first: a GoStart needs a runnable goroutine). */
	if (model_placeable(m, r->cpu, t))
		err = model_run_here(m, r->cpu, t);
	if (m->cur[r->cpu] == t)
		err = err ? err : model_go_stop(m, r->cpu, GT_EV_GO_END, 0, -1, THREAD_EXITED);
	else
		err = model_end_elsewhere(m, t);
	/* Its process is gone with it, so what is kept for its stacks can go, the walks its BPF
	 * cache kept too, once the thread leaves the table: a CPU sample can still hit it in
	 * do_exit, after this record (one of 200 short-lived processes showed a sample with no
	 * image left). That is at its final switch-out, or EXITED_KEEP_NS from now in a target
	 * mode (-p, a command), where the process left the targets with this exit. */
	if (m->cs && (r->flags & LX_EXIT_GROUP))
		t->exit_image = callstacks__image(m->cs, idents__pid(m->idents, t->ident));
	return err;
}

/* A mapping of code: the image the process's stacks resolve against grows (or, with an exec's
 * first mapping, starts anew). Nothing for the trace itself. */
int model_on_mmap(struct model *m, const struct lx_rec *r)
{
	if (m->cs)
		callstacks__mmap(m->cs, (const struct lx_mmap *)r);
	return 0;
}

/* Its identity ("COMM (pid PID)", its program's group unchanged) names its events from now on:
 * Go's viewers show a thread that names itself after its creation under its own name. */
int model_on_rename(struct model *m, const struct lx_rec *r)
{
	const struct lx_rename *rn = (const struct lx_rename *)r;
	struct thread *t = threads__find(m->threads, r->tid);
	char comm[LX_COMM_LEN], prog[LX_COMM_LEN];

	if (!t || !t->ident || t->state == THREAD_EXITED || t->state == THREAD_REAPED) {
		m->st.ignored++;
		return 0;
	}
	memcpy(comm, rn->comm, sizeof(comm));
	comm[sizeof(comm) - 1] = '\0';
	snprintf(prog, sizeof(prog), "%s", idents__prog(m->idents, t->ident));
	return model_name(m, t, idents__pid(m->idents, t->ident), comm, prog);
}
