/* syscall.c - syscall entries and returns (LX_REC_SYSCALL, LX_REC_SYSCALL_EXIT, --syscalls=all):
 * a GoSysCall on the calling thread, whose later block in the same syscall then follows it
 * directly; with m->sysrets the syscall lasts until its return, which pairs with the thread's
 * open entry (or its block in a syscall). A return with none open (its entry before the start,
 * or lost; execve's in a new thread; a new thread's first) is ignored; an entry while one is
 * open means that one's return was lost, and ends it (MODEL_REPAIR_NO_SYSRET).
 */
#include "user/model/core.h"
#include "user/model/handlers.h"
#include "user/model/threads.h"

int model_on_syscall(struct model *m, const struct lx_rec *r)
{
	const struct lx_syscall *s = (const struct lx_syscall *)r;
	struct thread *t;
	uint64_t stk;
	int err;

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
	if (!err && t->sysopen) {
		model_repair(m, MODEL_REPAIR_NO_SYSRET);
		err = m->out->sysret(m, s->h.cpu, t);
	}
	if (!err)
		err = model_thread_stack(m, s->h.cpu, t, s->nr, &stk);
	if (!err)
		err = m->out->syscall(m, s->h.cpu, t, stk);
	t->sysenter = s->nr;
	t->sysopen = m->sysrets;
	return err;
}

int model_on_sysret(struct model *m, const struct lx_rec *r)
{
	struct thread *t;
	int err;

	if (!m->sysrets) {
		m->st.ignored++;
		return 0;
	}
	t = model_live(m, r->tid, &err);
	if (!t || !t->sysopen) {
		m->st.ignored += !err;
		return err;
	}
	err = model_make_current(m, r->cpu, t);
	if (!err)
		err = m->out->sysret(m, r->cpu, t);
	t->sysopen = 0;
	t->sysenter = -1;
	return err;
}
