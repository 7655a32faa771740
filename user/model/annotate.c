/* annotate.c - the model's annotation records (LX_REC_TASK_*, LX_REC_REGION_*, LX_REC_LOG):
 * Go user tasks, regions and logs on the thread that wrote them (docs/annotate.md); and
 * triggers (LX_REC_TRIGGER), which a program's lxtrace_trigger() writes the same way.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "lib/hash.h"
#include "user/model/annotations.h"
#include "user/model/core.h"
#include "user/model/handlers.h"
#include "user/model/threads.h"

/* Appended to an annotation string that did not fit its record field. */
#define CUT_MARK "\u2026"
/* In place of a string the probe could not read from the program (a bad pointer). */
#define UNREADABLE "(unreadable)"

/* A name or category from a record as a string id: marked when cut, named when unreadable or
 * empty (the trace has no empty strings). *key gets the hash of the string's content. */
static uint64_t user_string(struct model *m, uint32_t p, const char *s, bool cut, bool fault,
			    uint64_t *key)
{
	char buf[LX_NAME_LEN + sizeof(CUT_MARK)];
	size_t len = strnlen(s, LX_NAME_LEN);
	const char *str = buf;

	if (fault) {
		str = UNREADABLE;
	} else if (!len) {
		str = "(empty)";
	} else {
		memcpy(buf, s, len);
		memcpy(buf + len, cut ? CUT_MARK : "", cut ? sizeof(CUT_MARK) : 1);
	}
	*key = hash_bytes(HASH_BYTES_INIT, str, strlen(str));
	return gt_tables__string(&m->tables, p, str);
}

/* A log or trigger record's message, NUL-terminated in buf, marked when cut; its length. A
 * message the probe could not read says so, as names do: an empty one is what the program
 * logged. */
static size_t record_message(const struct lx_user_log *l, char buf[LX_MSG_LEN + sizeof(CUT_MARK)])
{
	size_t len = strnlen(l->msg, LX_MSG_LEN);

	if (l->u.flags & LX_USER_MSG_FAULT) {
		memcpy(buf, UNREADABLE, sizeof(UNREADABLE));
		return sizeof(UNREADABLE) - 1;
	}
	memcpy(buf, l->msg, len);
	if (l->u.flags & LX_USER_MSG_CUT) {
		memcpy(buf + len, CUT_MARK, sizeof(CUT_MARK) - 1);
		len += sizeof(CUT_MARK) - 1;
	}
	buf[len] = '\0';
	return len;
}

/* Ends g's innermost region with name in task, first ending the regions still open inside it
 * (counted): both parsers reject a region end that is not the innermost open one. An end that
 * matches no open region is written only when none is open (its begin predates the trace). */
static int region_end(struct model *m, uint32_t c, struct thread *th, uint64_t task,
		      uint64_t name, uint64_t key, uint64_t stk)
{
	uint64_t open, t, n;
	long inner = annotations__region_find(m->ann, th->goid, task, key, &open);
	int err = 0;

	if (inner < 0) {
		if (open) {
			model_repair(m, MODEL_REPAIR_REGION_NESTING);
			return 0;
		}
		return m->out->user(m, c, th, GT_EV_USER_REGION, task, 1, name, stk);
	}
	for (long i = 0; i <= inner && !err; i++) {
		annotations__region_pop(m->ann, th->goid, &t, &n);
		if (i < inner)
			model_repair(m, MODEL_REPAIR_REGION_NESTING);
		err = m->out->user(m, c, th, GT_EV_USER_REGION, t, 1, n, stk);
	}
	return err;
}

int model_on_user(struct model *m, const struct lx_rec *r)
{
	const struct lx_user *u = (const struct lx_user *)r;
	uint32_t c = u->h.cpu;
	uint64_t stk, task = 0, parent, name = 0, key = 0;
	bool reused = false, cut = u->flags & LX_USER_NAME_CUT,
	     fault = u->flags & LX_USER_NAME_FAULT;
	struct thread *t;
	int err;

	t = model_live(m, u->h.tid, &err);
	if (!t) {
		m->st.ignored += !err;
		return err;
	}
	/* The thread wrote it, so it runs there; user events need it running, with a stack. */
	err = model_make_current(m, c, t);
	t->sysenter = -1;
	if (!err)
		err = model_thread_stack(m, c, t, -1, &stk);
	if (err)
		return err;
	errno = 0;
	if (u->h.type == LX_REC_TASK_BEGIN)
		task = annotations__task_begin(m->ann, u->pid, u->task, &reused);
	else
		task = annotations__task(m->ann, u->pid, u->task, u->h.type == LX_REC_TASK_END);
	if (!task && errno == ENOMEM)
		return -ENOMEM;
	if (!task && (errno || u->h.type == LX_REC_TASK_BEGIN || u->h.type == LX_REC_TASK_END)) {
		/* A task id out of range, or a begin or end of the background task. */
		model_repair(m, MODEL_REPAIR_BAD_RECORD);
		return 0;
	}
	if (u->h.type == LX_REC_TASK_BEGIN && reused)
		model_repair(m, MODEL_REPAIR_TASK_REUSE);
	if (u->h.type != LX_REC_TASK_END) {
		name = user_string(m, c, u->name, cut, fault, &key);
		if (!name)
			return -errno;
	}

	switch (u->h.type) {
	case LX_REC_TASK_BEGIN:
		/* A parent out of range is no parent. */
		parent = annotations__task(m->ann, u->pid, u->parent, false);
		if (!parent && errno == ENOMEM)
			return -ENOMEM;
		return m->out->user(m, c, t, GT_EV_USER_TASK_CREATE, task, parent, name, stk);
	case LX_REC_TASK_END:
		return m->out->user(m, c, t, GT_EV_USER_TASK_END, task, 0, 0, stk);
	case LX_REC_REGION_BEGIN:
		err = annotations__region_push(m->ann, t->goid, task, name, key);
		return err ? err : m->out->user(m, c, t, GT_EV_USER_REGION, task, 0, name, stk);
	case LX_REC_REGION_END:
		return region_end(m, c, t, task, name, key, stk);
	default: {
		char msg[LX_MSG_LEN + sizeof(CUT_MARK)];
		size_t len = record_message((const struct lx_user_log *)u, msg);

		return m->out->log(m, c, t, task, name, stk, msg, len);
	}
	}
}

int model_on_trigger(struct model *m, const struct lx_rec *r)
{
	const struct lx_user_log *l = (const struct lx_user_log *)r;
	char msg[LX_MSG_LEN + sizeof(CUT_MARK)];
	size_t len = record_message(l, msg);
	struct trigger_fired f = { .nr = -1, .tid = r->tid };
	struct thread *t = NULL;
	int err;

	memcpy(f.reason, msg, len < sizeof(f.reason) ? len : sizeof(f.reason) - 1);
	/* tid 0: the reader's own, for a SIGUSR1; marked on lxtrace's goroutine. */
	if (r->tid) {
		t = model_live(m, r->tid, &err);
		if (!t) {
			m->st.ignored += !err;
			return err;
		}
		/* The thread called lxtrace_trigger(): it runs there. */
		err = model_make_current(m, r->cpu, t);
		t->sysenter = -1;
		if (err)
			return err;
		f.pid = idents__pid(m->idents, t->ident);
		strncpy(f.comm, idents__comm(m->idents, t->ident), sizeof(f.comm) - 1);
	}
	return model_fire(m, r->cpu, t, msg, len, &f);
}
