/* syscall.c - syscall entries (LX_REC_SYSCALL, --syscalls=all): a GoSysCall on the calling
 * thread, whose later block in the same syscall then follows it directly.
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
	if (!err)
		err = model_thread_stack(m, s->h.cpu, t, s->nr, &stk);
	if (!err)
		err = m->out->syscall(m, s->h.cpu, t, stk);
	t->sysenter = s->nr;
	return err;
}
