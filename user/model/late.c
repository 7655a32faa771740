/* late.c - threads of a target first seen after the start, while they sleep: a process moved
 * into the target cgroup as it waits in read(), a thread of a -p process the start missed.
 * The BPF side sends nothing of them until they wake, so their stack then is the one they
 * slept at, read by the daemon (as the start reads its sleepers) while they still sleep and
 * kept here until their first record (docs/model.md, *Threads first seen later*).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"
#include "user/model/core.h"
#include "user/model/model.h"
#include "user/model/threads.h"
#include "user/stacks/callstacks.h"
#include "user/stacks/idents.h"

/* Threads kept at once, each with up to ~9 KiB of stack: a cgroup that many sleepers join
 * shows the others as it did before (created runnable at their wakeup, a repair). */
#define LATE_MAX 256

struct late_thread {
	struct procscan_thread pt;	/* as the scan found it, asleep */
	struct lx_stack *st;		/* the stack it sleeps at (malloc'd), NULL until read */
	struct lx_pystack *py;		/* its Python frames read with it (malloc'd), or NULL */
	uint64_t ts;			/* read before this time */
};

/* The entry of tid, or NULL. */
static struct late_thread *find(const struct model *m, uint32_t tid)
{
	for (size_t i = 0; i < m->nlate; i++)
		if (m->late[i].pt.tid == tid)
			return &m->late[i];
	return NULL;
}

static void drop(struct model *m, struct late_thread *l)
{
	free(l->st);
	free(l->py);
	*l = m->late[--m->nlate];
}

/* Entries of threads the model knows by now (their first record came without a wakeup to
 * use them, or they were created) or that were never read: offered again if still unknown. */
static void forget_known(struct model *m)
{
	for (size_t i = 0; i < m->nlate;) {
		struct late_thread *l = &m->late[i];

		if (!l->st || threads__find(m->threads, l->pt.tid))
			drop(m, l);
		else
			i++;
	}
}

int model__late_threads(struct model *m, const uint32_t *cand, size_t ncand, uint32_t **tids,
			size_t *n)
{
	*tids = NULL;
	*n = 0;
	if (!m->keep || !m->cs)
		return 0;
	forget_known(m);
	for (size_t i = 0; i < ncand && m->nlate < LATE_MAX; i++) {
		struct procscan_thread pt;

		if (threads__find(m->threads, cand[i]) || find(m, cand[i]) ||
		    procscan__thread(m->proc_root, cand[i], &pt) ||
		    (pt.state != 'S' && pt.state != 'D') || model_left_out(m, &pt) ||
		    !m->keep(m->keep_ctx, &pt))
			continue;
		if (!*tids && !(*tids = calloc(ncand, sizeof(**tids))))
			return -ENOMEM;
		if (grow_array((void **)&m->late, &m->late_cap, m->nlate + 1, sizeof(*m->late), 8))
			return -ENOMEM;
		m->late[m->nlate++] = (struct late_thread){ .pt = pt };
		(*tids)[(*n)++] = pt.tid;
		/* Its rows load now, for the walk at its wakeup; a Python process is found, its
		 * threads read, before the stacks are (for their Python frames). */
		callstacks__note(m->cs, pt.pid);
	}
	return 0;
}

void model__late_stacks(struct model *m, model_start_stack_fn fn, void *ctx, uint64_t ts)
{
	for (size_t i = 0; i < m->nlate; i++) {
		struct late_thread *l = &m->late[i];
		const struct lx_pystack *py = NULL;
		const struct lx_stack *st;
		bool runnable;
		size_t size, pysize;

		if (l->st || !(st = fn(ctx, l->pt.tid, &runnable, &size, &py)) || runnable)
			continue;
		pysize = py ? sizeof(*py) + py->n * sizeof(struct lx_pyframe) : 0;
		l->st = malloc(size);
		l->py = py ? malloc(pysize) : NULL;
		if (!l->st || (py && !l->py)) {
			free(l->st);
			free(l->py);
			l->st = NULL;
			l->py = NULL;
			continue;
		}
		memcpy(l->st, st, size);
		/* Its code objects named now: the process may be gone by its wakeup's turn. */
		if (py) {
			memcpy(l->py, py, pysize);
			callstacks__peek_python(m->cs, l->pt.pid, l->py);
		}
		l->ts = ts;
	}
}

/* The stack kept for tid's wakeup, if any, and its process. */
const struct lx_stack *model_late_stack(const struct model *m, uint32_t tid, uint32_t *pid)
{
	const struct late_thread *l = find(m, tid);

	if (!l || !l->st)
		return NULL;
	*pid = l->pt.pid;
	return l->st;
}

struct thread *model_late_found(struct model *m, uint32_t tid, uint64_t ts, int *err)
{
	struct late_thread *l = find(m, tid);
	const struct lx_stack *rs;
	const struct lx_pystack *rpy;
	struct thread *t;
	uint64_t new_stk = 0;

	*err = 0;
	if (!l || !l->st)
		return NULL;
	/* Woken before the read: the stack read may be of a later sleep. */
	if (ts <= l->ts) {
		drop(m, l);
		return NULL;
	}
	t = model_entry(m, tid, err);
	if (t)
		*err = model_rebirth(m, t, l->pt.pid, l->pt.comm, l->pt.program);
	if (t && !*err && !(new_stk = idents__create_stack(m->idents, m->hk, t->ident)))
		*err = -errno;
	if (!t || *err) {
		drop(m, l);
		return NULL;
	}
	model_born(m, t);
	m->st.threads++;
	m->st.late_found++;
	/* The record's own stack (a waker's) is back for the wakeup, with its Python frames;
	 * the thread blocks at the stack read while it slept, with the Python frames read with
	 * it. */
	rs = m->rs;
	rpy = m->rpy;
	m->rs = l->st;
	m->rpy = l->py;
	*err = model_found_asleep(m, t, new_stk, &l->pt);
	m->rs = rs;
	m->rpy = rpy;
	drop(m, l);
	return *err ? NULL : t;
}

void model_late_free(struct model *m)
{
	while (m->nlate)
		drop(m, &m->late[0]);
	free(m->late);
	m->late = NULL;
	m->late_cap = 0;
}
