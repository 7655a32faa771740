/* events_go123.c - a go1.23 file's events as the go1.19 events the walk reads (events_go123.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/go123/reader.h"
#include "lib/grow.h"
#include "lib/hash.h"
#include "lib/u64map.h"
#include "user/events/events_go123.h"
#include "user/events/ident.h"
#include "user/proc/syscalls.h"

/* A generation's event, its stack and string ids made the file's (args as in the format). */
struct rec {
	uint64_t ticks, ns, m, seq, gen, off;
	uint64_t args[5];
	uint8_t type;
	char *msg;		/* a log's value, copied */
	size_t msg_len;
};

struct mstate {
	int64_t p;		/* the P it holds, -1: none */
	uint64_t g;		/* the goroutine it runs (or that is in a syscall on it), 0: none */
	uint64_t ended;		/* the goroutine it ended last, for an exec's creation */
};

struct gstate {
	bool insys, told;	/* in a syscall; its block told (its P was taken) */
	bool entered;		/* its entry told (a file of entries and returns) */
	bool own;		/* lxtrace's goroutine: its syscall holds the housekeeping P */
	uint64_t sys_ticks, sys_ns, sys_stk;
};

struct events_go123 {
	struct go123_reader *r;
	struct gt_dict *d;
	struct u64map *strings, *stacks;	/* content hash -> the file's id */
	struct u64map *gen_stacks, *gen_strings;	/* the generation's id -> the file's */
	struct u64map *ms, *gs;	/* M, G -> index + 1 */
	struct mstate *mv;
	struct gstate *gv;
	size_t nm, mcap, ng, gcap;
	size_t *gfree, nfree, free_cap;	/* slots of goroutines that ended */
	uint64_t next_string, next_stack;
	struct rec *recs;
	size_t nrecs, rcap;
	struct rec pending;	/* the first event of the next generation */
	bool has_pending, eof, first_gen_done;
	size_t init_at;		/* records of the first generation before Gomaxprocs */
	uint64_t last_ticks, last_ns;	/* the latest record's, once chained */
	bool chained;
	int64_t hk;		/* the housekeeping P, lxtrace's goroutine's at the start; -1 */
	/* The file says its syscalls run from entry to return (LXTRACE_SYSCALLS_KEY); the
	 * dictionary's id of LXTRACE_SYSRET_KEY, 0 until needed. */
	bool calls;
	uint64_t key_sysret;
	uint64_t gen;		/* the reader's generation */
	struct gt_event *out;	/* what the current record told */
	size_t nout, outcap, outi, reci;
	char err[256];
	bool failed;
};

static int intern_string(struct events_go123 *s, const char *str, size_t len, uint64_t *id)
{
	char buf[GO123_MAX_STRING + 1];
	uint64_t h, *slot;
	bool added;
	int err;

	/* A NUL ends a string, as the 1.19 dictionary keeps it. */
	len = strnlen(str, len < GO123_MAX_STRING ? len : GO123_MAX_STRING);
	h = hash_mix(hash_bytes(HASH_BYTES_INIT, str, len));
	if (!len) {
		*id = 0;
		return 0;
	}
	slot = u64map__get(s->strings, h);
	if (slot) {
		const char *have = gt_dict__string(s->d, *slot);

		if (have && strlen(have) == len && !memcmp(have, str, len)) {
			*id = *slot;
			return 0;
		}
	}
	memcpy(buf, str, len);
	buf[len] = '\0';
	*id = ++s->next_string;
	if ((err = gt_dict__add_string(s->d, *id, buf, len)))
		return err;
	if (!slot && !(slot = u64map__put(s->strings, h, &added)))
		return -ENOMEM;
	*slot = *id;
	return 0;
}

static int gen_string(struct events_go123 *s, uint64_t gid, uint64_t *id)
{
	uint64_t *slot = u64map__get(s->gen_strings, gid);
	const char *str;
	size_t len;
	bool added;
	int err;

	if (!gid) {
		*id = 0;
		return 0;
	}
	if (slot) {
		*id = *slot;
		return 0;
	}
	str = go123_reader__string(s->r, gid, &len);
	if (!str)
		return -EINVAL;
	if ((err = intern_string(s, str, len, id)))
		return err;
	if (!(slot = u64map__put(s->gen_strings, gid, &added)))
		return -ENOMEM;
	*slot = *id;
	return 0;
}

static bool same_stack(const struct gt_stack *a, const uint64_t *vals, size_t n)
{
	if (!a || a->n != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (a->frames[i].pc != vals[4 * i] || a->frames[i].func_id != vals[4 * i + 1] ||
		    a->frames[i].file_id != vals[4 * i + 2] || a->frames[i].line != vals[4 * i + 3])
			return false;
	}
	return true;
}

static int gen_stack(struct events_go123 *s, uint64_t gid, uint64_t *id)
{
	struct go123_frame fr[GO123_MAX_FRAMES];
	uint64_t vals[4 * GO123_MAX_FRAMES], h = HASH_BYTES_INIT;
	uint64_t *slot = u64map__get(s->gen_stacks, gid);
	bool added;
	int n, err;

	if (!gid) {
		*id = 0;
		return 0;
	}
	if (slot) {
		*id = *slot;
		return 0;
	}
	n = go123_reader__stack(s->r, gid, fr);
	if (n < 0)
		return -EINVAL;
	for (int i = 0; i < n; i++) {
		vals[4 * i] = fr[i].pc;
		vals[4 * i + 3] = fr[i].line;
		if ((err = intern_string(s, fr[i].func, fr[i].func_len, &vals[4 * i + 1])) ||
		    (err = intern_string(s, fr[i].file, fr[i].file_len, &vals[4 * i + 2])))
			return err;
	}
	h = hash_mix(hash_bytes(h, vals, 4 * (size_t)n * sizeof(vals[0])));
	slot = u64map__get(s->stacks, h);
	if (slot && same_stack(gt_dict__stack(s->d, *slot), vals, (size_t)n)) {
		*id = *slot;
	} else {
		*id = ++s->next_stack;
		if (n && (err = gt_dict__add_stack(s->d, *id, vals, (size_t)n)))
			return err;
		if (!slot && !(slot = u64map__put(s->stacks, h, &added)))
			return -ENOMEM;
		*slot = *id;
	}
	if (!(slot = u64map__put(s->gen_stacks, gid, &added)))
		return -ENOMEM;
	*slot = *id;
	return 0;
}

/* The event made a record of the file's ids, while its generation is the reader's. */
static int take(struct events_go123 *s, const struct go123_event *e, struct rec *r)
{
	const struct go123_spec *sp = e->type == GO123_EV_CPU_SAMPLE ? NULL : go123_spec(e->type);
	int err = 0;

	memset(r, 0, sizeof(*r));
	r->gen = e->gen;
	r->off = e->off;
	r->ticks = e->ts;
	r->ns = (uint64_t)go123_reader__ns(s->r, e->ts);
	r->m = e->m;
	r->type = e->type;
	memcpy(r->args, e->args, sizeof(r->args));
	if (e->type == GO123_EV_CPU_SAMPLE)
		return gen_stack(s, e->args[4], &r->args[4]);
	for (int i = 0; sp && i < e->nargs && i < GO123_MAX_ARGS && !err; i++) {
		if (sp->stacks & (1u << i))
			err = gen_stack(s, e->args[i], &r->args[i]);
		else if (sp->strings & (1u << i))
			err = gen_string(s, e->args[i], &r->args[i]);
	}
	if (!err && e->type == GO123_EV_USER_LOG) {
		size_t len;
		const char *v = go123_reader__string(s->r, e->args[2], &len);

		r->msg = v ? malloc(len ? len : 1) : NULL;
		if (v && !r->msg)
			return -ENOMEM;
		if (v)
			memcpy(r->msg, v, len);
		r->msg_len = v ? len : 0;
	}
	return err;
}

static int cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->ticks != y->ticks)
		return x->ticks < y->ticks ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void drop_recs(struct events_go123 *s)
{
	for (size_t i = 0; i < s->nrecs; i++)
		free(s->recs[i].msg);
	s->nrecs = s->reci = 0;
}

static int push_rec(struct events_go123 *s, const struct rec *r)
{
	if (grow_array((void **)&s->recs, &s->rcap, s->nrecs + 1, sizeof(*r), 1024))
		return -ENOMEM;
	s->recs[s->nrecs] = *r;
	s->recs[s->nrecs].seq = s->nrecs;
	s->nrecs++;
	return 0;
}

static bool is_status(uint8_t type)
{
	return type == GO123_EV_PROC_STATUS || type == GO123_EV_GO_STATUS ||
	       type == GO123_EV_GO_STATUS_STACK;
}

/* Whether lxtrace wrote the file: its goroutine's status, at its stack "lxtrace", is among the
 * statuses that open it (user/model/out_go123.c, lx_found). */
static bool by_lxtrace(const struct events_go123 *s)
{
	for (size_t i = 0; i < s->nrecs && is_status(s->recs[i].type); i++) {
		const struct rec *r = &s->recs[i];
		const char *special;

		if (r->type != GO123_EV_GO_STATUS_STACK || !r->args[3])
			continue;
		special = ident__special(gt_dict__stack(s->d, r->args[3]));
		if (special && !strcmp(special, "lxtrace"))
			return true;
	}
	return false;
}

/* The recorder's first look at the threads (their statuses, and the instant each found
 * asleep runs to block where it sleeps) is written at one time, each event a tick after the
 * one before: it ends where that chain breaks. 1.19's init phase ends with Gomaxprocs. */
static size_t init_end(const struct events_go123 *s)
{
	size_t i = 1;

	if (!by_lxtrace(s)) {
		/* Go's runtime: the statuses of what runs at the start, then what happens. */
		for (i = 0; i < s->nrecs && is_status(s->recs[i].type); i++)
			;
		return i ? i : 1;
	}
	while (i < s->nrecs && s->recs[i].ticks - s->recs[i - 1].ticks <= 1)
		i++;
	return i;
}

/* Reads the next generation whole, in time order: 1, 0 at the end, or an error. */
static int read_generation(struct events_go123 *s)
{
	struct go123_event e;
	struct rec r;
	int ret;

	drop_recs(s);
	if (s->has_pending) {
		s->has_pending = false;
		if ((ret = push_rec(s, &s->pending)))
			return ret;
	}
	while (!s->eof) {
		ret = go123_reader__next(s->r, &e);
		if (ret < 0)
			return ret;
		if (!ret) {
			s->eof = true;
			break;
		}
		if (e.gen != s->gen) {
			/* The reader holds the new generation now: its ids are its own. */
			u64map__clear(s->gen_stacks);
			u64map__clear(s->gen_strings);
			s->gen = e.gen;
		}
		if ((ret = take(s, &e, &r)))
			return ret;
		if (s->nrecs && s->recs[0].gen != e.gen) {
			s->pending = r;
			s->has_pending = true;
			break;
		}
		if ((ret = push_rec(s, &r))) {
			free(r.msg);
			return ret;
		}
	}
	qsort(s->recs, s->nrecs, sizeof(*s->recs), cmp_rec);
	/* The encoder writes an event at the time of the one before it a tick later (docs/
	 * format.md §18.4): a chain of ticks is one time, as the model gave it and 1.19 has it. */
	for (size_t i = 0; i < s->nrecs; i++) {
		if (s->chained && s->recs[i].ticks - s->last_ticks <= 1)
			s->recs[i].ns = s->last_ns;
		s->last_ticks = s->recs[i].ticks;
		s->last_ns = s->recs[i].ns;
		s->chained = true;
	}
	return s->nrecs > 0;
}

static struct mstate *m_of(struct events_go123 *s, uint64_t m)
{
	uint64_t *slot;
	bool added;

	if (m == GO123_NO_THREAD)
		return NULL;
	slot = u64map__get(s->ms, m);
	if (slot)
		return &s->mv[*slot - 1];
	if (grow_array((void **)&s->mv, &s->mcap, s->nm + 1, sizeof(*s->mv), 64) ||
	    !(slot = u64map__put(s->ms, m, &added))) {
		s->failed = true;
		return NULL;
	}
	*slot = ++s->nm;
	s->mv[s->nm - 1] = (struct mstate){ .p = -1 };
	return &s->mv[s->nm - 1];
}

/* The goroutine's state; *fresh when the file had not named it before. */
static struct gstate *g_of(struct events_go123 *s, uint64_t g, bool *fresh)
{
	uint64_t *slot = u64map__get(s->gs, g);
	bool added;

	if (fresh)
		*fresh = !slot;
	if (slot)
		return &s->gv[*slot - 1];
	if (!g ||
	    (!s->nfree && grow_array((void **)&s->gv, &s->gcap, s->ng + 1, sizeof(*s->gv), 64)) ||
	    !(slot = u64map__put(s->gs, g, &added))) {
		s->failed = g != 0;
		return NULL;
	}
	*slot = s->nfree ? s->gfree[--s->nfree] + 1 : ++s->ng;
	memset(&s->gv[*slot - 1], 0, sizeof(*s->gv));
	return &s->gv[*slot - 1];
}

/* Goroutine g ended: its slot is free for the next one. */
static void gone(struct events_go123 *s, uint64_t g)
{
	const uint64_t *slot = u64map__get(s->gs, g);

	if (!slot)
		return;
	if (grow_array((void **)&s->gfree, &s->free_cap, s->nfree + 1, sizeof(*s->gfree), 64)) {
		s->failed = true;
		return;
	}
	s->gfree[s->nfree++] = *slot - 1;
	u64map__del(s->gs, g);
}

static struct gt_event *emit(struct events_go123 *s, const struct rec *r, uint8_t type, uint64_t ns,
			     int64_t p, uint64_t g, uint64_t stk)
{
	struct gt_event *e;

	if (grow_array((void **)&s->out, &s->outcap, s->nout + 1, sizeof(*s->out), 8)) {
		s->failed = true;
		return NULL;
	}
	e = &s->out[s->nout++];
	memset(e, 0, sizeof(*e));
	e->ts = ns;
	e->off = r->off;
	e->type = type;
	e->p = p;
	e->g = g;
	e->stack = stk ? gt_dict__stack(s->d, stk) : NULL;
	return e;
}

/* In a file of entries and returns, the syscall's entry, once: a GoSysCall of its own, which
 * the walk tells from the GoSysCall of a block (followed by its GoSysBlock at once). */
static void entered(struct events_go123 *s, const struct rec *r, uint64_t g, struct gstate *gs,
		    int64_t p)
{
	if (!s->calls || gs->own || gs->entered)
		return;
	emit(s, r, GT_EV_GO_SYSCALL, gs->sys_ns, p, g, gs->sys_stk);
	gs->entered = true;
}

/* A syscall that kept its thread off the CPU: its entry and its block at its start. */
static void sys_blocked(struct events_go123 *s, const struct rec *r, uint64_t g, struct gstate *gs,
			int64_t p)
{
	emit(s, r, GT_EV_GO_SYSCALL, gs->sys_ns, p, g, gs->sys_stk);
	emit(s, r, GT_EV_GO_SYSBLOCK, gs->sys_ns, p, g, 0);
	gs->told = true;
}

/* Whether the reason why begins with the class cls and ": ". */
static bool classed(const char *why, const char *cls)
{
	size_t n = strlen(cls);

	return !strncmp(why, cls, n) && !strncmp(why + n, ": ", 2);
}

/* A block's reason as 1.19's event: the class lxtrace writes before the syscall's name
 * (format/go123/wire.h), or the syscall's own class (files written before it did). */
static uint8_t block_type(const struct events_go123 *s, uint64_t reason)
{
	const char *why = gt_dict__string(s->d, reason);

	if (why && classed(why, GO123_REASON_SYNC))
		return GT_EV_GO_BLOCK_SYNC;
	if (why && classed(why, GO123_REASON_SELECT))
		return GT_EV_GO_BLOCK_SELECT;
	return (uint8_t)syscalls__wait_event(why ? syscalls__nr(why) : -1);
}

/* A goroutine the file names first by its status: created where the recording begins, at
 * its stack (its program frame: it names the thread's program, as 1.19's GoCreate does). */
static void status(struct events_go123 *s, const struct rec *r)
{
	uint64_t g = r->args[0], stk = r->type == GO123_EV_GO_STATUS_STACK ? r->args[3] : 0;
	struct mstate *m = m_of(s, r->args[1]);
	bool fresh;
	struct gstate *gs = g_of(s, g, &fresh);
	struct gt_event *e;
	const char *special;

	if (!gs)
		return;
	if (fresh) {
		e = emit(s, r, GT_EV_GO_CREATE, r->ns, -1, 0, 0);
		if (e) {
			e->args[0] = g;
			e->args[1] = stk;
			e->nargs = 2;
		}
		special = ident__special(stk ? gt_dict__stack(s->d, stk) : NULL);
		gs->own = special && !strcmp(special, "lxtrace");
		if (gs->own && m && s->hk < 0)
			s->hk = m->p;
	}
	if (!m || r->args[2] == GO123_G_RUNNABLE || r->args[2] == GO123_G_WAITING)
		return;
	m->g = g;
	if (r->args[2] == GO123_G_SYSCALL && !gs->insys) {
		gs->insys = true;
		gs->told = gs->own;
		/* Entered before the file says: its length is not known. */
		gs->entered = true;
		gs->sys_ticks = r->ticks;
		gs->sys_ns = r->ns;
	} else if (r->args[2] == GO123_G_RUNNING && fresh) {
		emit(s, r, GT_EV_GO_START, r->ns, m->p, g, 0);
	}
}

/* A P taken from an M whose goroutine is in a syscall: the syscall kept it off the CPU. */
static void steal(struct events_go123 *s, const struct rec *r)
{
	struct mstate *from = m_of(s, r->args[2]);
	struct gstate *gs;

	if (!from)
		return;
	gs = from->g ? g_of(s, from->g, NULL) : NULL;
	if (gs && gs->insys && !gs->told) {
		entered(s, r, from->g, gs, from->p);
		sys_blocked(s, r, from->g, gs, from->p);
	}
	if (from->p == (int64_t)r->args[0])
		from->p = -1;
}

/* The syscall that ends at r (a file of entries and returns) ends at a block or a yield of
 * its thread, right after: the recorder ends it there so that the wait keeps its reason,
 * and writes its return as a log when it comes (user/model/out_go123.c). */
static bool ended_early(const struct events_go123 *s, const struct rec *r)
{
	for (size_t j = s->reci + 1; j < s->nrecs && s->recs[j].ticks - r->ticks <= 2; j++)
		if (s->recs[j].m == r->m)
			return s->recs[j].type == GO123_EV_GO_BLOCK ||
			       s->recs[j].type == GO123_EV_GO_STOP;
	return false;
}

/* A call of a file of entries and returns ends: its entry told, then its return as a 1.19
 * file has it, a log (LXTRACE_SYSRET_KEY). Its block, when its CPU was taken, was told then;
 * one on a CPU left idle is not in the file. */
static void call_end(struct events_go123 *s, const struct rec *r, struct mstate *m,
		     struct gstate *gs)
{
	struct gt_event *e;

	entered(s, r, m->g, gs, m->p);
	if (ended_early(s, r))
		return;
	if (!s->key_sysret &&
	    intern_string(s, LXTRACE_SYSRET_KEY, strlen(LXTRACE_SYSRET_KEY), &s->key_sysret)) {
		s->failed = true;
		return;
	}
	e = emit(s, r, GT_EV_USER_LOG, r->ns, m->p, m->g, gs->sys_stk);
	if (e) {
		e->args[1] = s->key_sysret;
		e->nargs = 2;
		e->msg = "";
	}
}

static void sys_end(struct events_go123 *s, const struct rec *r, struct mstate *m, bool blocked)
{
	struct gstate *gs = m->g ? g_of(s, m->g, NULL) : NULL;

	if (!gs || !gs->insys)
		return;
	gs->insys = false;
	if (!gs->own && s->calls) {
		call_end(s, r, m, gs);
		return;
	}
	if (gs->own || gs->told)
		return;
	/* Kept its CPU throughout: an entry of no length is an entry (a stream without returns);
	 * one that lasted kept the thread off the CPU, as far as the file says, until it ran. */
	if (!blocked && r->ticks - gs->sys_ticks <= 2) {
		emit(s, r, GT_EV_GO_SYSCALL, gs->sys_ns, m->p, m->g, gs->sys_stk);
		return;
	}
	sys_blocked(s, r, m->g, gs, m->p);
	if (!blocked)
		emit(s, r, GT_EV_GO_START, r->ns, m->p, m->g, 0);
}

/* One record as go1.19 events into s->out. */
static void translate(struct events_go123 *s, const struct rec *r)
{
	struct mstate *m = r->type == GO123_EV_CPU_SAMPLE ? NULL : m_of(s, r->m);
	struct gstate *gs;
	struct gt_event *e;
	uint64_t g = m ? m->g : 0;
	int64_t p = m ? m->p : -1;
	const char *key;
	bool fresh;

	switch (r->type) {
	case GO123_EV_PROC_STATUS:
		if (m && (r->args[1] == GO123_P_RUNNING || r->args[1] == GO123_P_SYSCALL))
			m->p = (int64_t)r->args[0];
		break;
	case GO123_EV_GO_STATUS:
	case GO123_EV_GO_STATUS_STACK:
		status(s, r);
		break;
	case GO123_EV_PROC_START:
		if (m)
			m->p = (int64_t)r->args[0];
		break;
	case GO123_EV_PROC_STOP:
		emit(s, r, GT_EV_PROC_STOP, r->ns, p, 0, 0);
		if (m)
			m->p = -1;
		break;
	case GO123_EV_PROC_STEAL:
		steal(s, r);
		break;
	case GO123_EV_GO_CREATE:
	case GO123_EV_GO_CREATE_SYSCALL:
		gs = g_of(s, r->args[0], &fresh);
		if (!gs)
			break;
		e = emit(s, r, GT_EV_GO_CREATE, r->ns, p, g ? g : (m ? m->ended : 0),
			 r->type == GO123_EV_GO_CREATE ? r->args[2] : 0);
		if (e) {
			e->args[0] = r->args[0];
			e->args[1] = r->type == GO123_EV_GO_CREATE ? r->args[1] : 0;
			e->nargs = 2;
		}
		if (r->type == GO123_EV_GO_CREATE_SYSCALL && m) {
			m->g = r->args[0];
			*gs = (struct gstate){ .insys = true, .told = true };
		}
		break;
	case GO123_EV_GO_START:
		if (!m)
			break;
		m->g = r->args[0];
		emit(s, r, GT_EV_GO_START, r->ns, m->p, m->g, 0);
		break;
	case GO123_EV_GO_DESTROY:
	case GO123_EV_GO_DESTROY_SYSCALL:
		if (!m || !g)
			break;
		emit(s, r, GT_EV_GO_END, r->ns, p, g, 0);
		gone(s, g);
		m->ended = g;
		m->g = 0;
		break;
	case GO123_EV_GO_STOP:
		e = emit(s, r, GT_EV_GO_PREEMPT, r->ns, p, g, r->args[1]);
		if (e) {
			const char *why = gt_dict__string(s->d, r->args[0]);

			if (why && !strcmp(why, "yield"))
				e->type = GT_EV_GO_SCHED;
		}
		if (m)
			m->g = 0;
		break;
	case GO123_EV_GO_BLOCK:
		emit(s, r, block_type(s, r->args[0]), r->ns, p, g, r->args[1]);
		if (m)
			m->g = 0;
		break;
	case GO123_EV_GO_UNBLOCK:
		/* lxtrace's goroutine wakes for an interrupt (its stack "[irq]") or a repair (its
		 * stack says so): 1.19 has the interrupt's on its CPU, which the file does not
		 * say, and no P of a CPU marks a repair. */
		gs = g ? g_of(s, g, NULL) : NULL;
		e = emit(s, r, GT_EV_GO_UNBLOCK, r->ns, gs && gs->own ? -1 : p, g, r->args[2]);
		if (e) {
			e->args[0] = r->args[0];
			e->nargs = 2;
		}
		break;
	case GO123_EV_GO_SYSCALL_BEGIN:
		gs = g ? g_of(s, g, NULL) : NULL;
		if (!gs)
			break;
		gs->insys = true;
		gs->told = gs->own;
		gs->entered = false;
		gs->sys_ticks = r->ticks;
		gs->sys_ns = r->ns;
		gs->sys_stk = r->args[1];
		break;
	case GO123_EV_GO_SYSCALL_END:
	case GO123_EV_GO_SYSCALL_END_BLOCKED:
		if (m)
			sys_end(s, r, m, r->type == GO123_EV_GO_SYSCALL_END_BLOCKED);
		if (m && r->type == GO123_EV_GO_SYSCALL_END_BLOCKED)
			m->g = 0;
		break;
	case GO123_EV_CPU_SAMPLE:
		emit(s, r, GT_EV_CPU_SAMPLE, r->ns, (int64_t)r->args[2], r->args[3], r->args[4]);
		break;
	case GO123_EV_USER_LOG:
		key = gt_dict__string(s->d, r->args[1]);
		s->calls |= key && !strcmp(key, LXTRACE_SYSCALLS_KEY);
		e = emit(s, r, GT_EV_USER_LOG, r->ns, p, g, r->args[3]);
		if (e) {
			e->args[0] = r->args[0];
			e->args[1] = r->args[1];
			e->nargs = 2;
			e->msg = r->msg ? r->msg : "";
			e->msg_len = r->msg_len;
		}
		break;
	default:
		break;
	}
}

/* The Ps the generation in memory names: one past the highest. */
static uint64_t procs_named(const struct events_go123 *s)
{
	uint64_t n = 0;

	for (size_t i = 0; i < s->nrecs; i++) {
		const struct rec *r = &s->recs[i];

		if ((r->type == GO123_EV_PROC_STATUS || r->type == GO123_EV_PROC_START) &&
		    r->args[0] < INT32_MAX && r->args[0] + 1 > n)
			n = r->args[0] + 1;
	}
	return n;
}

/* Where the first look at the threads ends, Gomaxprocs: the CPUs are the Ps below the
 * housekeeping one, which lxtrace's goroutine holds. A trace Go's runtime wrote has no such
 * goroutine: its Ps are all its own, each named by its status in the first generation (a P's
 * may come after another's first events). */
static void gomaxprocs(struct events_go123 *s, const struct rec *r)
{
	struct gt_event *e = emit(s, r, GT_EV_GOMAXPROCS, r->ns, s->hk, 0, 0);

	if (e) {
		e->args[0] = s->hk > 0 ? (uint64_t)s->hk : s->hk < 0 ? procs_named(s) : 0;
		e->nargs = 1;
	}
}

int events_go123__next(struct events_go123 *s, struct gt_event *e)
{
	int ret;

	while (s->outi == s->nout) {
		s->outi = s->nout = 0;
		if (s->failed)
			return -ENOMEM;
		if (s->reci == s->nrecs) {
			ret = read_generation(s);
			if (ret <= 0) {
				if (ret < 0 && !s->err[0])
					snprintf(s->err, sizeof(s->err), "%s",
						 *go123_reader__error(s->r) ?
						 go123_reader__error(s->r) : strerror(-ret));
				return ret;
			}
			if (!s->first_gen_done)
				s->init_at = init_end(s);
		}
		translate(s, &s->recs[s->reci]);
		s->reci++;
		if (!s->first_gen_done && s->reci == s->init_at) {
			s->first_gen_done = true;
			gomaxprocs(s, &s->recs[s->reci - 1]);
		}
	}
	*e = s->out[s->outi++];
	return 1;
}

struct events_go123 *events_go123__new(int fd)
{
	struct go123_reader_opts ro = { .sz = sizeof(ro), .fd = fd, .header_read = true };
	struct events_go123 *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->hk = -1;
	s->r = go123_reader__new(&ro);
	s->d = gt_dict__new(NULL, 0);
	s->strings = u64map__new();
	s->stacks = u64map__new();
	s->gen_stacks = u64map__new();
	s->gen_strings = u64map__new();
	s->ms = u64map__new();
	s->gs = u64map__new();
	if (!s->r || !s->d || !s->strings || !s->stacks || !s->gen_stacks || !s->gen_strings ||
	    !s->ms || !s->gs) {
		events_go123__free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

const struct gt_dict *events_go123__dict(const struct events_go123 *s)
{
	return s->d;
}

uint64_t events_go123__last_ns(const struct events_go123 *s)
{
	return s->last_ns;
}

const char *events_go123__error(const struct events_go123 *s)
{
	return s->err;
}

void events_go123__free(struct events_go123 *s)
{
	if (!s)
		return;
	drop_recs(s);
	if (s->has_pending)
		free(s->pending.msg);
	free(s->recs);
	free(s->out);
	free(s->mv);
	free(s->gv);
	free(s->gfree);
	u64map__free(s->strings);
	u64map__free(s->stacks);
	u64map__free(s->gen_stacks);
	u64map__free(s->gen_strings);
	u64map__free(s->ms);
	u64map__free(s->gs);
	gt_dict__free(s->d);
	go123_reader__free(s->r);
	free(s);
}
