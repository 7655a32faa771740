/* pystack.c - a Python thread's frames (LX_REC_PYSTACK): the BPF side sends them just before
 * the record whose stack they belong to, in the same ring (bpf/python.h); they wait here,
 * one per CPU, for that record. */
#include <stddef.h>
#include <string.h>

#include "user/model/core.h"
#include "user/model/handlers.h"

_Static_assert(offsetof(struct py_pending, f) ==
	       offsetof(struct py_pending, ps) + sizeof(struct lx_pystack), "frames follow ps");

int model_on_pystack(struct model *m, const struct lx_rec *r)
{
	const struct lx_pyrec *py = (const struct lx_pyrec *)r;
	struct py_pending *p = &m->py[r->cpu];

	/* dispatch.c checked the frames' count against the record's size. */
	p->ts = r->ts;
	p->tid = r->tid;
	p->ps = py->ps;
	memcpy(p->f, py->f, py->ps.n * sizeof(py->f[0]));
	return 0;
}

const struct lx_pystack *model_python_frames(struct model *m, const struct lx_rec *r,
					     const struct lx_stack *rs)
{
	struct py_pending *p = &m->py[r->cpu];

	if (!p->tid || p->tid != rs->tid || p->ts != r->ts || (rs->uflags & LX_USTACK_IRQ))
		return NULL;
	return &p->ps;
}
