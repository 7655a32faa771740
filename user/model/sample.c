/* sample.c - CPU samples (LX_REC_SAMPLE): each on the sampling CPU's P, with the sampled
 * thread's call stack under its identity.
 */
#include <errno.h>
#include <stdint.h>

#include "user/model/core.h"
#include "user/model/handlers.h"
#include "user/model/threads.h"
#include "user/proc/procscan.h"
#include "user/stacks/callstacks.h"
#include "user/stacks/idents.h"

/* A CPU sample: on the sampling CPU's P, naming the thread's goroutine only once it exists in
 * the trace (a sample naming a goroutine before its GoCreate breaks Go 1.19's parser). */
int model_on_sample(struct model *m, const struct lx_rec *r)
{
	const struct lx_sample *s = (const struct lx_sample *)r;
	struct thread *t = s->h.tid ? threads__find(m->threads, s->h.tid) : NULL;
	uint32_t ident = CALLSTACKS_IDLE;
	struct procscan_thread info;
	uint64_t stk;
	int err;

	if (t && t->ident) {
		ident = t->ident;
	} else if (s->h.tid) {
		/* Not seen yet (its fork record is still to come, or was lost), or seen only by its
		 * exit (an entry without a name: model_on_exit): named from /proc. */
		if (procscan__thread(m->proc_root, s->h.tid, &info))
			info = (struct procscan_thread){ .pid = 0 };
		err = idents__get(m->idents, info.pid, info.comm, info.program, &ident);
		if (err)
			return err;
	}
	stk = callstacks__get(m->cs, s->h.cpu, ident, s->pid, m->rs->nkern ? s->syscall : -1, m->rs,
			      m->rpy);
	if (!stk)
		return -errno;
	return m->out->sample(m, s->h.cpu, t, stk);
}
