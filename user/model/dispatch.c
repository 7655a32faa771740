/* dispatch.c - records in: each is checked against the table of record kinds (its size, the
 * call stack that may follow it, the thread and process ids it names), counted, and handed to
 * its kind's handler (handlers.h).
 *
 * Adding a record kind to the model: its row here, its handler, and a summary counter
 * (enum model_kind in model.h, its name in model.c) unless it shares one. Capture stages any
 * record whole, so it needs nothing.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "user/model/core.h"
#include "user/model/handlers.h"
#include "user/model/model.h"
#include "user/model/threads.h"
#include "user/stacks/callstacks.h"

/* PID_MAX_LIMIT on 64-bit kernels: a larger tid is a corrupt record. */
#define TID_LIMIT (1u << 22)

enum stack_rule {
	STACK_NONE,	/* never followed by a stack */
	STACK_MAY,	/* a stack when the record is longer than its struct (lxtrace.h) */
	STACK_ALWAYS,	/* always followed by one */
	STACK_PY,	/* followed by Python frames, never a stack (struct lx_pyrec) */
};

static const struct kind {
	uint16_t size;			/* of the record's struct */
	uint8_t stack;			/* enum stack_rule */
	uint8_t ids[2];			/* offsets of other __u32 tid or pid fields; 0: none */
	enum model_kind count;
	int (*on)(struct model *m, const struct lx_rec *r);
} kinds[] = {
	[LX_REC_SWITCH] = { sizeof(struct lx_switch), STACK_MAY,
			    { offsetof(struct lx_switch, next_tid) }, MODEL_KIND_SWITCH,
			    model_on_switch },
	[LX_REC_WAKEUP] = { sizeof(struct lx_wakeup), STACK_MAY, { 0 }, MODEL_KIND_WAKEUP,
			    model_on_wakeup },
	[LX_REC_WAKEUP_NEW] = { sizeof(struct lx_wakeup), STACK_MAY, { 0 }, MODEL_KIND_WAKEUP,
				model_on_wakeup_new },
	[LX_REC_FORK] = { sizeof(struct lx_fork), STACK_MAY,
			  { offsetof(struct lx_fork, parent_tid),
			    offsetof(struct lx_fork, child_pid) },
			  MODEL_KIND_FORK, model_on_fork },
	[LX_REC_EXEC] = { sizeof(struct lx_exec), STACK_MAY,
			  { offsetof(struct lx_exec, pid), offsetof(struct lx_exec, old_tid) },
			  MODEL_KIND_EXEC, model_on_exec },
	[LX_REC_EXIT] = { sizeof(struct lx_rec), STACK_NONE, { 0 }, MODEL_KIND_EXIT,
			  model_on_exit },
	[LX_REC_SYSCALL] = { sizeof(struct lx_syscall), STACK_NONE, { 0 }, MODEL_KIND_SYSCALL,
			     model_on_syscall },
	[LX_REC_SYSCALL_EXIT] = { sizeof(struct lx_syscall), STACK_NONE, { 0 }, MODEL_KIND_SYSRET,
				  model_on_sysret },
	[LX_REC_RSS] = { sizeof(struct lx_rss), STACK_NONE, { offsetof(struct lx_rss, pid) },
			 MODEL_KIND_RSS, model_on_rss },
	[LX_REC_TASK_BEGIN] = { sizeof(struct lx_user), STACK_NONE,
				{ offsetof(struct lx_user, pid) }, MODEL_KIND_ANNOTATION,
				model_on_user },
	[LX_REC_TASK_END] = { sizeof(struct lx_user), STACK_NONE,
			      { offsetof(struct lx_user, pid) }, MODEL_KIND_ANNOTATION,
			      model_on_user },
	[LX_REC_REGION_BEGIN] = { sizeof(struct lx_user), STACK_NONE,
				  { offsetof(struct lx_user, pid) }, MODEL_KIND_ANNOTATION,
				  model_on_user },
	[LX_REC_REGION_END] = { sizeof(struct lx_user), STACK_NONE,
				{ offsetof(struct lx_user, pid) }, MODEL_KIND_ANNOTATION,
				model_on_user },
	[LX_REC_LOG] = { sizeof(struct lx_user_log), STACK_NONE, { offsetof(struct lx_user, pid) },
			 MODEL_KIND_ANNOTATION, model_on_user },
	[LX_REC_SAMPLE] = { sizeof(struct lx_sample), STACK_ALWAYS,
			    { offsetof(struct lx_sample, pid) }, MODEL_KIND_SAMPLE,
			    model_on_sample },
	[LX_REC_MMAP] = { sizeof(struct lx_mmap), STACK_NONE, { offsetof(struct lx_mmap, pid) },
			  MODEL_KIND_MMAP, model_on_mmap },
	[LX_REC_TRIGGER] = { sizeof(struct lx_user_log), STACK_NONE,
			     { offsetof(struct lx_user, pid) }, MODEL_KIND_TRIGGER,
			     model_on_trigger },
	[LX_REC_RENAME] = { sizeof(struct lx_rename), STACK_NONE,
			    { offsetof(struct lx_rename, pid) }, MODEL_KIND_RENAME,
			    model_on_rename },
	[LX_REC_ENQUEUE] = { sizeof(struct lx_rec), STACK_NONE, { 0 }, MODEL_KIND_ENQUEUE,
			     model_on_enqueue },
	[LX_REC_OCCUPANT] = { sizeof(struct lx_occupant), STACK_NONE,
			      { offsetof(struct lx_occupant, pid) }, MODEL_KIND_OCCUPANT,
			      model_on_occupant },
	[LX_REC_PYSTACK] = { sizeof(struct lx_pyrec), STACK_PY, { 0 }, MODEL_KIND_PYSTACK,
			     model_on_pystack },
};

/* The kind of a record that can be trusted to be what its type says: a type the model takes
 * (not a syscall chunk, which capture unpacks), big enough, on a real CPU, naming tids a kernel
 * can have (which also keeps them off lxtrace's own goroutine id). NULL otherwise. */
static const struct kind *well_formed(const struct model *m, const struct lx_rec *r, size_t size)
{
	const struct kind *k;

	if (size < sizeof(*r) || r->type >= sizeof(kinds) / sizeof(kinds[0]))
		return NULL;
	k = &kinds[r->type];
	if (!k->size || size < k->size || r->cpu >= m->ncpus || r->tid > TID_LIMIT)
		return NULL;
	for (size_t i = 0; i < sizeof(k->ids) / sizeof(k->ids[0]) && k->ids[i]; i++) {
		uint32_t id;

		memcpy(&id, (const char *)r + k->ids[i], sizeof(id));
		if (id > TID_LIMIT)
			return NULL;
	}
	return k;
}

/* The call stack after a record of kind k, or NULL when there is none; *ok false when what
 * follows the record is not a whole stack, or a stack the kind cannot have. */
static const struct lx_stack *trailing_stack(const struct kind *k, const struct lx_rec *r,
					     size_t size, bool *ok)
{
	const struct lx_stack *st = (const void *)((const char *)r + k->size);
	const struct lx_pyrec *py = (const void *)r;
	const struct lx_ucopy *c;
	size_t frames;

	*ok = true;
	if (k->stack == STACK_PY) {
		*ok = py->ps.n <= LX_PY_FRAMES_MAX &&
		      size == sizeof(*py) + py->ps.n * sizeof(py->f[0]);
		return NULL;
	}
	if (size == k->size && k->stack != STACK_ALWAYS)
		return NULL;
	*ok = k->stack != STACK_NONE && size >= k->size + sizeof(*st) &&
	      st->nkern <= LX_STACK_KERN_MAX && st->nuser <= LX_STACK_USER_MAX;
	/* An interrupt's stack is kernel frames only (lxtrace.h): one naming user frames, sent
	 * or stored, would be built as a thread's stack of no thread. */
	if (*ok && (st->uflags & LX_USTACK_IRQ))
		*ok = !st->nuser &&
		      !(st->uflags & (LX_USTACK_COPY | LX_USTACK_STORE | LX_USTACK_HIT));
	if (!*ok)
		return NULL;
	frames = k->size + sizeof(*st) + ((size_t)st->nkern + st->nuser) * sizeof(st->pc[0]);
	/* A walk to finish here brings the stack above where it stopped (LX_USTACK_COPY). */
	c = (const void *)((const char *)r + frames);
	if (st->uflags & LX_USTACK_COPY)
		*ok = size >= frames + sizeof(*c) && c->len <= LX_UCOPY_MAX && !(c->len & 7) &&
		      size == frames + sizeof(*c) + c->len;
	else
		*ok = size == frames;
	return *ok ? st : NULL;
}

/* Whether the stack rs of record r can be made now (callstacks__ready), from the process of
 * the thread it is of. */
static bool stack_ready(const struct model *m, const struct lx_rec *r, const struct lx_stack *rs)
{
	const struct thread *t;
	uint32_t pid;

	if (r->type == LX_REC_SAMPLE) {
		pid = ((const struct lx_sample *)r)->pid;
	} else {
		t = threads__find(m->threads, rs->tid);
		if (!t || !t->ident)	/* no process known yet to read the rows for */
			return true;
		pid = idents__pid(m->idents, t->ident);
	}
	return callstacks__ready(m->cs, pid, rs);
}

/* Whether the stack read while it slept of a thread first seen at wakeup r
 * (model__late_stacks), if any, can be walked now. */
static bool late_ready(const struct model *m, const struct lx_rec *r)
{
	const struct lx_stack *st;
	uint32_t pid;

	if (r->type != LX_REC_WAKEUP || !m->nlate || threads__find(m->threads, r->tid) ||
	    !(st = model_late_stack(m, r->tid, &pid)))
		return true;
	return callstacks__ready(m->cs, pid, st);
}

int model__record(struct model *m, const struct lx_rec *r, size_t size)
{
	const struct lx_stack *rs = NULL;
	const struct kind *k;
	bool ok = false;
	int err;

	if (m->err)
		return m->err;
	if (!m->started || m->finished)
		return -EINVAL;
	k = well_formed(m, r, size);
	if (k)
		rs = trailing_stack(k, r, size, &ok);
	/* Nothing of the record is taken before: it comes again. */
	if ((ok && rs && m->cs && !stack_ready(m, r, rs)) || !late_ready(m, r))
		return -EBUSY;
	m->st.records++;
	m->rs = rs;
	m->rpy = rs ? model_python_frames(m, r, rs) : NULL;
	/* Stacks nobody asked for (opts.stacks off) are corrupt input too. */
	if (!ok || (m->rs && !m->cs)) {
		m->rs = NULL;
		m->rpy = NULL;
		model_repair(m, MODEL_REPAIR_BAD_RECORD);
		return 0;
	}
	/* A walk the thread's BPF cache stored: later records name it instead of carrying it. */
	if (m->rs)
		callstacks__see(m->cs, m->rs);
	model_advance(m, r->ts);
	m->st.kinds[k->count]++;
	err = k->on(m, r);
	model_remove_reaped(m);
	m->rs = NULL;
	m->rpy = NULL;
	if (err)
		m->err = err;
	return err;
}

void model__peek(struct model *m, const struct lx_rec *r, size_t size)
{
	if (m->cs && size >= sizeof(*r))
		callstacks__peek(m->cs, r, size);
}
