/* state.c - a go1.23 trace's scheduler state, followed across Ms as Go 1.23 orders a
 * generation (internal/trace: reader.go, batchcursor.go, order.go; state.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/go123/spec.h"
#include "format/go123/state.h"
#include "format/go123/wire.h"
#include "lib/grow.h"
#include "lib/hash.h"
#include "lib/u64map.h"

/* Go's NoGoroutine, NoProc and NoThread, and the id no task has. */
#define NONE UINT64_MAX
/* What a map entry costs beside its element, counted against the budget. */
#define ENTRY_COST 32

struct seq {
	uint64_t gen, n;
};

/* A range in flight (an STW, a sweep, a mark assist): its Begin type and its kind string. */
struct range {
	uint8_t typ;
	uint64_t desc;
};

struct ranges {
	struct range *v;
	size_t n, cap;
};

struct region {
	uint64_t task, hash, len;
};

struct gst {
	uint8_t status;
	struct seq seq;
	struct ranges rg;
	struct region *reg;
	size_t nreg, capreg;
	size_t next_free;	/* a dead slot: the next free one + 1 */
};

struct pst {
	uint8_t status;
	struct seq seq;
	struct ranges rg;
};

struct mst {
	uint64_t id, g, p;
};

/* One M's batches of the generation, read an event at a time (Go's batchCursor). */
struct cursor {
	uint64_t m;
	size_t first, n;	/* its batches: order[first..first + n) */
	size_t bi, off;
	int64_t last;		/* ns of the last event read, 0 at a batch's start */
	int64_t time;		/* of ev */
	uint64_t evoff;		/* file offset of ev */
	uint8_t type;
	uint64_t args[GO123_MAX_ARGS];
	size_t mi;		/* its M's state + 1; 0: not made yet */
};

struct ctx {
	uint64_t g, p, m;
};

/* A cursor in the heap, its keys beside it: the heap is walked for every event. */
struct hent {
	int64_t time;
	uint64_t m;
	size_t c;
};

/* A batch of the generation, by M. */
struct slot {
	uint64_t m;
	size_t i;
};

enum gc_state { GC_UNDETERMINED, GC_NOT_RUNNING, GC_RUNNING };

struct go123_state {
	size_t budget, used;
	uint64_t initial_gen;	/* the first generation ordered; 0: none yet */
	struct u64map *gmap, *pmap, *mmap, *tasks;	/* id -> index + 1 */
	struct gst *gs;
	size_t ngs, capgs, free_g;	/* free_g: the first dead slot + 1 */
	struct pst *ps;
	size_t nps, capps;
	struct mst *ms;
	size_t nms, capms;
	uint64_t gc_seq;
	enum gc_state gc;

	/* The generation being ordered. */
	uint64_t gen;
	double ns_per_tick;
	const struct go123_state_batch *b;
	go123_state_string_fn *str;
	void *str_ctx;
	struct slot *order;	/* the batches by M, in file order within each */
	size_t caporder;
	struct cursor *cur;
	size_t ncur, capcur;
	struct hent *heap;	/* cursors by the time of their next event */
	size_t nheap, capheap;
	uint64_t off;		/* of the event being checked */
	char *msg;
	size_t msglen;
};

static int fail(struct go123_state *s, int err, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(s->msg, s->msglen, "offset %llu: ", (unsigned long long)s->off);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < s->msglen)
		vsnprintf(s->msg + n, s->msglen - (size_t)n, fmt, ap);
	va_end(ap);
	return err;
}

static int spend(struct go123_state *s, size_t cost)
{
	if (cost > s->budget - s->used)
		return fail(s, -EFBIG, "the scheduler state takes more than %zu bytes, the "
			    "tracker's budget", s->budget);
	s->used += cost;
	return 0;
}

/* Grows an array of the state by one element, its cost counted. */
static int grow_one(struct go123_state *s, void **arr, size_t *cap, size_t n, size_t elem)
{
	size_t old = *cap;

	if (n < *cap)
		return 0;
	if (grow_array(arr, cap, n + 1, elem, 4))
		return fail(s, -ENOMEM, "out of memory");
	return spend(s, (*cap - old) * elem);
}

static const char *name(uint8_t t)
{
	const struct go123_spec *sp = go123_spec(t);

	return sp ? sp->name : "?";
}

static bool succeeds(struct seq a, struct seq b)
{
	return a.gen == b.gen && a.n == b.n + 1;
}

/* ---- goroutines, Ps, Ms ---------------------------------------------------------------------- */

/* The index + 1 of id's element in map's array; 0 when it has none. NONE is an id like any
 * other, as in Go's maps: a status may name goroutine or P -1, and an M holding none finds it. */
static size_t slot_of(const struct u64map *map, uint64_t id)
{
	uint64_t *i = u64map__get(map, id);

	return i ? (size_t)*i : 0;
}

static struct gst *gfind(const struct go123_state *s, uint64_t id)
{
	size_t i = slot_of(s->gmap, id);

	return i ? &s->gs[i - 1] : NULL;
}

/* Files id in map as element i of its array, its cost counted. */
static int file_id(struct go123_state *s, struct u64map *map, uint64_t id, size_t i)
{
	uint64_t *slot;
	bool added;
	int ret;

	if ((ret = spend(s, ENTRY_COST)))
		return ret;
	if (!(slot = u64map__put(map, id, &added)))
		return fail(s, -ENOMEM, "out of memory");
	*slot = i + 1;
	return 0;
}

static int gnew(struct go123_state *s, uint64_t id, uint8_t status)
{
	size_t i;
	int ret;

	if (s->free_g) {
		i = s->free_g - 1;
		s->free_g = s->gs[i].next_free;
	} else {
		if ((ret = grow_one(s, (void **)&s->gs, &s->capgs, s->ngs, sizeof(*s->gs))))
			return ret;
		i = s->ngs++;
	}
	s->gs[i] = (struct gst){ .status = status, .seq = { s->gen, 0 } };
	return file_id(s, s->gmap, id, i);
}

static void gdel(struct go123_state *s, uint64_t id)
{
	uint64_t *at = u64map__get(s->gmap, id);
	struct gst *g = &s->gs[*at - 1];

	s->used -= ENTRY_COST + g->rg.cap * sizeof(*g->rg.v) + g->capreg * sizeof(*g->reg);
	free(g->rg.v);
	free(g->reg);
	*g = (struct gst){ .next_free = s->free_g };
	s->free_g = *at;
	u64map__del(s->gmap, id);
}

static struct pst *pfind(const struct go123_state *s, uint64_t id)
{
	size_t i = slot_of(s->pmap, id);

	return i ? &s->ps[i - 1] : NULL;
}

static int pnew(struct go123_state *s, uint64_t id, uint8_t status)
{
	int ret = grow_one(s, (void **)&s->ps, &s->capps, s->nps, sizeof(*s->ps));

	if (ret)
		return ret;
	s->ps[s->nps] = (struct pst){ .status = status, .seq = { s->gen, 0 } };
	return file_id(s, s->pmap, id, s->nps++);
}

static struct mst *mfind(const struct go123_state *s, uint64_t id)
{
	size_t i = slot_of(s->mmap, id);

	return i ? &s->ms[i - 1] : NULL;
}

static int mnew(struct go123_state *s, uint64_t id, uint64_t g)
{
	int ret = grow_one(s, (void **)&s->ms, &s->capms, s->nms, sizeof(*s->ms));

	if (ret)
		return ret;
	s->ms[s->nms] = (struct mst){ id, g, NONE };
	return file_id(s, s->mmap, id, s->nms++);
}

/* ---- ranges and regions ---------------------------------------------------------------------- */

/* The Begin type of a range's events. */
static uint8_t range_start(uint8_t t)
{
	switch (t) {
	case GO123_EV_STW_END:
		return GO123_EV_STW_BEGIN;
	case GO123_EV_GC_SWEEP_ACTIVE:
	case GO123_EV_GC_SWEEP_END:
		return GO123_EV_GC_SWEEP_BEGIN;
	case GO123_EV_GC_MARK_ASSIST_ACTIVE:
	case GO123_EV_GC_MARK_ASSIST_END:
		return GO123_EV_GC_MARK_ASSIST_BEGIN;
	default:
		return t;
	}
}

static bool has_range(const struct ranges *r, struct range x)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->v[i].typ == x.typ && r->v[i].desc == x.desc)
			return true;
	return false;
}

static int push_range(struct go123_state *s, struct ranges *r, struct range x)
{
	int ret = grow_one(s, (void **)&r->v, &r->cap, r->n, sizeof(*r->v));

	if (!ret)
		r->v[r->n++] = x;
	return ret;
}

static int begin_range(struct go123_state *s, struct ranges *r, uint8_t t, uint64_t desc)
{
	struct range x = { range_start(t), desc };

	if (has_range(r, x))
		return fail(s, -EINVAL, "%s while one is in flight already", name(t));
	return push_range(s, r, x);
}

/* A range a generation starts inside: new in the first generation, known after it. */
static int active_range(struct go123_state *s, struct ranges *r, uint8_t t)
{
	struct range x = { range_start(t), 0 };

	if (s->gen == s->initial_gen) {
		if (has_range(r, x))
			return fail(s, -EINVAL, "%s twice in the first generation", name(t));
		return push_range(s, r, x);
	}
	if (!has_range(r, x))
		return fail(s, -EINVAL, "%s for a range not in flight", name(t));
	return 0;
}

static int end_range(struct go123_state *s, struct ranges *r, uint8_t t)
{
	uint8_t st = range_start(t);

	for (size_t i = 0; i < r->n; i++)
		if (r->v[i].typ == st) {
			r->v[i] = r->v[--r->n];
			return 0;
		}
	return fail(s, -EINVAL, "%s without its %s", name(t), name(st));
}

/* ---- the checks of each event ---------------------------------------------------------------- */

enum need { MAY, MUST, MUST_NOT };

/* What an event needs its M to hold (Go's validateCtx). */
static int need(struct go123_state *s, uint8_t t, struct ctx c, enum need m, enum need p,
		enum need g)
{
	static const char *const what[] = { "an M", "a P", "a goroutine" };
	const uint64_t has[] = { c.m, c.p, c.g };
	const enum need want[] = { m, p, g };

	for (int i = 0; i < 3; i++) {
		if (want[i] == MUST && has[i] == NONE)
			return fail(s, -EINVAL, "%s needs %s, its M has none", name(t), what[i]);
		if (want[i] == MUST_NOT && has[i] != NONE)
			return fail(s, -EINVAL, "%s needs no %s, its M has %s %llu", name(t),
				    what[i] + 2, what[i] + 2, (unsigned long long)has[i]);
	}
	return 0;
}

static int user_go(struct go123_state *s, uint8_t t, struct ctx c)
{
	return need(s, t, c, MUST, MUST, MUST);
}

/* The goroutine the M runs, which the event needs in status st. */
static int cur_g(struct go123_state *s, uint8_t t, struct ctx c, uint8_t st, struct gst **g)
{
	static const char *const sts[] = { "bad", "runnable", "running", "in a syscall",
					   "waiting" };

	if (!(*g = gfind(s, c.g)))
		return fail(s, -EINVAL, "%s for goroutine %llu, which does not exist", name(t),
			    (unsigned long long)c.g);
	if ((*g)->status != st)
		return fail(s, -EINVAL, "%s for goroutine %llu, %s, not %s", name(t),
			    (unsigned long long)c.g, (*g)->status < GO123_G_STATUSES ?
			    sts[(*g)->status] : "?", sts[st]);
	return 0;
}

static struct pst *cur_p(struct go123_state *s, uint8_t t, struct ctx c)
{
	struct pst *p = pfind(s, c.p);

	if (!p)
		fail(s, -EINVAL, "%s on P %llu, which has no status", name(t),
		     (unsigned long long)c.p);
	return p;
}

/* Each returns 1 when the event goes, 0 when it waits for another M, or an error; *n is the
 * M's state after it. */

static int proc_status(struct go123_state *s, const struct cursor *e, struct ctx c, struct ctx *n)
{
	uint64_t pid = e->args[0], st = e->args[1];
	struct pst *p = pfind(s, pid);
	bool was_running = false;
	int ret;

	if (st >= GO123_P_STATUSES)
		return fail(s, -EINVAL, "ProcStatus of P %llu: status %llu",
			    (unsigned long long)pid, (unsigned long long)st);
	if (p) {
		if (st == GO123_P_SYSCALL_ABANDONED && p->status == GO123_P_SYSCALL)
			was_running = true;
		else if (!(st == GO123_P_SYSCALL_ABANDONED && p->status == st) && p->status != st)
			return fail(s, -EINVAL, "ProcStatus of P %llu: %llu, but it was %u",
				    (unsigned long long)pid, (unsigned long long)st, p->status);
		p->seq = (struct seq){ s->gen, 0 };
	} else if ((ret = pnew(s, pid, (uint8_t)st))) {
		return ret;
	}
	if (st == GO123_P_RUNNING || st == GO123_P_SYSCALL)
		n->p = pid;
	if (was_running) {
		bool found = false;

		for (size_t i = 0; i < s->nms; i++)
			found |= s->ms[i].p == pid;
		if (!found)
			return fail(s, -EINVAL, "ProcStatus: P %llu abandoned in a syscall, but no "
				    "M holds it", (unsigned long long)pid);
	}
	(void)c;
	return 1;
}

static int proc_start(struct go123_state *s, const struct cursor *e, struct ctx c, struct ctx *n)
{
	struct pst *p = pfind(s, e->args[0]);
	struct seq q = { s->gen, e->args[1] };
	int ret;

	if (!p || p->status != GO123_P_IDLE || !succeeds(q, p->seq) || c.p != NONE)
		return 0;
	if ((ret = need(s, e->type, c, MUST, MUST_NOT, MAY)))
		return ret;
	p->status = GO123_P_RUNNING;
	p->seq = q;
	n->p = e->args[0];
	return 1;
}

static int proc_stop(struct go123_state *s, const struct cursor *e, struct ctx c, struct ctx *n)
{
	struct pst *p = pfind(s, c.p);
	int ret;

	if (!p)
		return fail(s, -EINVAL, "ProcStop of P %llu, which has no status",
			    (unsigned long long)c.p);
	if (p->status != GO123_P_RUNNING && p->status != GO123_P_SYSCALL)
		return fail(s, -EINVAL, "ProcStop of P %llu, which is not running",
			    (unsigned long long)c.p);
	if ((ret = need(s, e->type, c, MUST, MUST, MAY)))
		return ret;
	p->status = GO123_P_IDLE;
	n->p = NONE;
	return 1;
}

static int proc_steal(struct go123_state *s, const struct cursor *e, struct ctx c, struct ctx *n)
{
	uint64_t pid = e->args[0], mid = e->args[2];
	struct pst *p = pfind(s, pid);
	struct seq q = { s->gen, e->args[1] };
	struct mst *from;
	uint8_t old;
	int ret;

	if (!p || (p->status != GO123_P_SYSCALL && p->status != GO123_P_SYSCALL_ABANDONED) ||
	    !succeeds(q, p->seq))
		return 0;
	if ((ret = need(s, e->type, c, MUST, MAY, MAY)))
		return ret;
	old = p->status;
	p->status = GO123_P_IDLE;
	p->seq = q;
	if (old == GO123_P_SYSCALL_ABANDONED)
		return 1;
	if (mid == c.m) {
		if (c.p != pid)
			return fail(s, -EINVAL, "ProcSteal of P %llu from its own M, which holds P "
				    "%llu", (unsigned long long)pid, (unsigned long long)c.p);
		n->p = NONE;
		return 1;
	}
	if (!(from = mfind(s, mid)))
		return fail(s, -EINVAL, "ProcSteal of P %llu from M %llu, which has not been seen",
			    (unsigned long long)pid, (unsigned long long)mid);
	if (from->p != pid)
		return fail(s, -EINVAL, "ProcSteal of P %llu from M %llu, which holds P %llu",
			    (unsigned long long)pid, (unsigned long long)mid,
			    (unsigned long long)from->p);
	from->p = NONE;
	return 1;
}

static int go_status(struct go123_state *s, const struct cursor *e, struct ctx c, struct ctx *n)
{
	uint64_t gid = e->args[0], mid = e->args[1], st = e->args[2];
	struct gst *g = gfind(s, gid);
	struct mst *on;
	int ret;

	if (st >= GO123_G_STATUSES)
		return fail(s, -EINVAL, "%s of goroutine %llu: status %llu", name(e->type),
			    (unsigned long long)gid, (unsigned long long)st);
	if (g) {
		if (g->status != st)
			return fail(s, -EINVAL, "%s of goroutine %llu: %llu, but it was %u",
				    name(e->type), (unsigned long long)gid, (unsigned long long)st,
				    g->status);
		g->seq = (struct seq){ s->gen, 0 };
	} else if (s->gen != s->initial_gen) {
		return fail(s, -EINVAL, "%s of goroutine %llu, new after the first generation",
			    name(e->type), (unsigned long long)gid);
	} else if ((ret = gnew(s, gid, (uint8_t)st))) {
		return ret;
	}
	if (st == GO123_G_RUNNING)
		n->g = gid;
	if (st != GO123_G_SYSCALL)
		return 1;
	if (mid == NONE)
		return fail(s, -EINVAL, "%s: goroutine %llu in a syscall on no M", name(e->type),
			    (unsigned long long)gid);
	if (mid == c.m) {
		if (s->gen != s->initial_gen && c.g != gid)
			return fail(s, -EINVAL, "%s: goroutine %llu in a syscall on an M that runs "
				    "goroutine %llu", name(e->type), (unsigned long long)gid,
				    (unsigned long long)c.g);
		n->g = gid;
		return 1;
	}
	if ((on = mfind(s, mid)) && on->g != gid)
		return fail(s, -EINVAL, "%s: goroutine %llu in a syscall on M %llu, which runs "
			    "goroutine %llu", name(e->type), (unsigned long long)gid,
			    (unsigned long long)mid, (unsigned long long)on->g);
	return on ? 1 : (ret = mnew(s, mid, gid)) ? ret : 1;
}

static int go_create(struct go123_state *s, const struct cursor *e, struct ctx c, struct ctx *n)
{
	struct gst *g;
	int ret;

	if ((ret = need(s, e->type, c, MUST, MUST, MAY)))
		return ret;
	if ((g = gfind(s, c.g)) && g->status != GO123_G_RUNNING)
		return fail(s, -EINVAL, "%s by goroutine %llu, which is not running", name(e->type),
			    (unsigned long long)c.g);
	if (gfind(s, e->args[0]))
		return fail(s, -EINVAL, "%s of goroutine %llu, which exists", name(e->type),
			    (unsigned long long)e->args[0]);
	(void)n;
	return (ret = gnew(s, e->args[0], e->type == GO123_EV_GO_CREATE_BLOCKED ? GO123_G_WAITING :
						  GO123_G_RUNNABLE)) ? ret : 1;
}

static int go_stop(struct go123_state *s, const struct cursor *e, struct ctx c, struct ctx *n)
{
	struct gst *g;
	int ret;

	if ((ret = user_go(s, e->type, c)) || (ret = cur_g(s, e->type, c, GO123_G_RUNNING, &g)))
		return ret;
	if (e->type == GO123_EV_GO_DESTROY)
		gdel(s, c.g);
	else
		g->status = e->type == GO123_EV_GO_STOP ? GO123_G_RUNNABLE : GO123_G_WAITING;
	n->g = NONE;
	return 1;
}

static int go_start(struct go123_state *s, const struct cursor *e, struct ctx c, struct ctx *n)
{
	struct gst *g = gfind(s, e->args[0]);
	struct seq q = { s->gen, e->args[1] };
	int ret;

	if (!g || g->status != GO123_G_RUNNABLE || !succeeds(q, g->seq))
		return 0;
	if ((ret = need(s, e->type, c, MUST, MUST, MUST_NOT)))
		return ret;
	g->status = GO123_G_RUNNING;
	g->seq = q;
	n->g = e->args[0];
	return 1;
}

static int go_unblock(struct go123_state *s, const struct cursor *e, struct ctx c, struct ctx *n)
{
	struct gst *g = gfind(s, e->args[0]);
	struct seq q = { s->gen, e->args[1] };

	if (!g || g->status != GO123_G_WAITING || !succeeds(q, g->seq))
		return 0;
	g->status = GO123_G_RUNNABLE;
	g->seq = q;
	(void)c;
	(void)n;
	return 1;
}

static int go_switch(struct go123_state *s, const struct cursor *e, struct ctx c, struct ctx *n)
{
	struct seq q = { s->gen, e->args[1] };
	struct gst *g, *next;
	int ret;

	if ((ret = user_go(s, e->type, c)) || (ret = cur_g(s, e->type, c, GO123_G_RUNNING, &g)))
		return ret;
	next = gfind(s, e->args[0]);
	if (!next || next->status != GO123_G_WAITING || !succeeds(q, next->seq))
		return 0;
	next->status = GO123_G_RUNNING;
	next->seq = q;
	if (e->type == GO123_EV_GO_SWITCH)
		g->status = GO123_G_WAITING;
	else
		gdel(s, c.g);
	n->g = e->args[0];
	return 1;
}

static int syscall_begin(struct go123_state *s, const struct cursor *e, struct ctx c,
			 struct ctx *n)
{
	struct seq q = { s->gen, e->args[0] };
	struct gst *g;
	struct pst *p;
	int ret;

	if ((ret = user_go(s, e->type, c)) || (ret = cur_g(s, e->type, c, GO123_G_RUNNING, &g)))
		return ret;
	if (!(p = cur_p(s, e->type, c)))
		return -EINVAL;
	if (!succeeds(q, p->seq))
		return fail(s, -EINVAL, "GoSyscallBegin: P %llu's sequence goes from %llu to %llu",
			    (unsigned long long)c.p, (unsigned long long)p->seq.n,
			    (unsigned long long)q.n);
	g->status = GO123_G_SYSCALL;
	p->status = GO123_P_SYSCALL;
	p->seq = q;
	(void)n;
	return 1;
}

static int syscall_end(struct go123_state *s, const struct cursor *e, struct ctx c, struct ctx *n)
{
	struct gst *g;
	struct pst *p;
	int ret;

	if ((ret = user_go(s, e->type, c)) || (ret = cur_g(s, e->type, c, GO123_G_SYSCALL, &g)))
		return ret;
	if (!(p = cur_p(s, e->type, c)))
		return -EINVAL;
	if (p->status != GO123_P_SYSCALL)
		return fail(s, -EINVAL, "GoSyscallEnd on P %llu, which is not in a syscall",
			    (unsigned long long)c.p);
	g->status = GO123_G_RUNNING;
	p->status = GO123_P_RUNNING;
	(void)n;
	return 1;
}

static int syscall_end_blocked(struct go123_state *s, const struct cursor *e, struct ctx c,
			       struct ctx *n)
{
	struct gst *g;
	struct pst *p;
	int ret;

	if (c.p != NONE) {
		if (!(p = cur_p(s, e->type, c)))
			return -EINVAL;
		/* Its P is stolen first, on another M. */
		if (p->status == GO123_P_SYSCALL)
			return 0;
	}
	if ((ret = need(s, e->type, c, MUST, MAY, MUST)) ||
	    (ret = cur_g(s, e->type, c, GO123_G_SYSCALL, &g)))
		return ret;
	g->status = GO123_G_RUNNABLE;
	n->g = NONE;
	return 1;
}

static int create_syscall(struct go123_state *s, const struct cursor *e, struct ctx c,
			  struct ctx *n)
{
	int ret;

	if ((ret = need(s, e->type, c, MUST, MAY, MUST_NOT)))
		return ret;
	if (gfind(s, e->args[0]))
		return fail(s, -EINVAL, "GoCreateSyscall of goroutine %llu, which exists",
			    (unsigned long long)e->args[0]);
	if ((ret = gnew(s, e->args[0], GO123_G_SYSCALL)))
		return ret;
	n->g = e->args[0];
	return 1;
}

static int destroy_syscall(struct go123_state *s, const struct cursor *e, struct ctx c,
			   struct ctx *n)
{
	struct gst *g;
	struct pst *p;
	int ret;

	if ((ret = need(s, e->type, c, MUST, MAY, MUST)) ||
	    (ret = cur_g(s, e->type, c, GO123_G_SYSCALL, &g)))
		return ret;
	gdel(s, c.g);
	n->g = NONE;
	if (c.p == NONE)
		return 1;
	if (!(p = cur_p(s, e->type, c)))
		return -EINVAL;
	if (p->status != GO123_P_SYSCALL)
		return fail(s, -EINVAL, "GoDestroySyscall on P %llu, which is not in a syscall",
			    (unsigned long long)c.p);
	p->status = GO123_P_SYSCALL_ABANDONED;
	n->p = NONE;
	return 1;
}

/* A region's name: Go compares the strings, which a generation's ids do not carry over. */
static int region_of(struct go123_state *s, const struct cursor *e, struct region *r)
{
	size_t len;
	const char *str = s->str(s->str_ctx, e->args[1], &len);

	if (!str)
		return fail(s, -EINVAL, "%s names string %llu, not in the table", name(e->type),
			    (unsigned long long)e->args[1]);
	*r = (struct region){ e->args[0], hash_bytes(HASH_BYTES_INIT, str, len), len };
	return 0;
}

static int region(struct go123_state *s, const struct cursor *e, struct ctx c, struct ctx *n)
{
	struct region r;
	struct gst *g;
	int ret;

	if ((ret = user_go(s, e->type, c)) || (ret = region_of(s, e, &r)))
		return ret;
	if (!(g = gfind(s, c.g)))
		return fail(s, -EINVAL, "%s on goroutine %llu, which has no status", name(e->type),
			    (unsigned long long)c.g);
	(void)n;
	if (e->type == GO123_EV_USER_REGION_BEGIN) {
		if ((ret = grow_one(s, (void **)&g->reg, &g->capreg, g->nreg, sizeof(*g->reg))))
			return ret;
		g->reg[g->nreg++] = r;
		return 1;
	}
	/* A region begun before the trace: Go lets it end. */
	if (!g->nreg)
		return 1;
	if (memcmp(&g->reg[g->nreg - 1], &r, sizeof(r)))
		return fail(s, -EINVAL, "UserRegionEnd of goroutine %llu: not its innermost region",
			    (unsigned long long)c.g);
	g->nreg--;
	return 1;
}

static int task(struct go123_state *s, const struct cursor *e, struct ctx c, struct ctx *n)
{
	size_t len;
	bool added;

	(void)n;
	if (e->type == GO123_EV_USER_TASK_END) {
		if (u64map__get(s->tasks, e->args[0])) {
			u64map__del(s->tasks, e->args[0]);
			s->used -= ENTRY_COST;
		}
	} else {
		if (u64map__get(s->tasks, e->args[0]))
			return fail(s, -EINVAL, "UserTaskBegin of task %llu, which is alive",
				    (unsigned long long)e->args[0]);
		if (!s->str(s->str_ctx, e->args[2], &len))
			return fail(s, -EINVAL, "UserTaskBegin names string %llu, not in the table",
				    (unsigned long long)e->args[2]);
		if (spend(s, ENTRY_COST))
			return -EFBIG;
		if (!u64map__put(s->tasks, e->args[0], &added))
			return fail(s, -ENOMEM, "out of memory");
	}
	return user_go(s, e->type, c) ?: 1;
}

static int gc(struct go123_state *s, const struct cursor *e, struct ctx c, struct ctx *n)
{
	uint64_t q = e->args[0];

	(void)n;
	if (e->type == GO123_EV_GC_ACTIVE && s->gen == s->initial_gen) {
		if (s->gc != GC_UNDETERMINED)
			return fail(s, -EINVAL, "GCActive after another GC event of the first "
				    "generation");
		s->gc_seq = q;
		s->gc = GC_RUNNING;
		return 1;
	}
	if (e->type == GO123_EV_GC_BEGIN && s->gc == GC_UNDETERMINED) {
		s->gc_seq = q;
		s->gc = GC_RUNNING;
		return 1;
	}
	if (q != s->gc_seq + 1)
		return 0;
	if (e->type == GO123_EV_GC_ACTIVE && s->gc != GC_RUNNING)
		return fail(s, -EINVAL, "GCActive while no GC runs");
	if (e->type == GO123_EV_GC_BEGIN && s->gc == GC_RUNNING)
		return fail(s, -EINVAL, "GCBegin while a GC runs");
	if (e->type == GO123_EV_GC_END && s->gc != GC_RUNNING)
		return fail(s, -EINVAL, "GCEnd while no GC is known to run");
	s->gc_seq = q;
	s->gc = e->type == GO123_EV_GC_END ? GC_NOT_RUNNING : GC_RUNNING;
	return user_go(s, e->type, c) ?: 1;
}

static int sweep(struct go123_state *s, const struct cursor *e, struct ctx c, struct ctx *n)
{
	struct pst *p;
	int ret;

	(void)n;
	if (e->type == GO123_EV_GC_SWEEP_ACTIVE) {
		if (!(p = pfind(s, e->args[0])))
			return fail(s, -EINVAL, "GCSweepActive of P %llu, which has no status",
				    (unsigned long long)e->args[0]);
		return active_range(s, &p->rg, e->type) ?: 1;
	}
	if ((ret = need(s, e->type, c, MUST, MUST, MAY)))
		return ret;
	if (!(p = cur_p(s, e->type, c)))
		return -EINVAL;
	if (e->type == GO123_EV_GC_SWEEP_BEGIN)
		return begin_range(s, &p->rg, e->type, 0) ?: 1;
	return end_range(s, &p->rg, e->type) ?: 1;
}

/* STW and mark assist: ranges of the goroutine. */
static int go_range(struct go123_state *s, const struct cursor *e, struct ctx c, struct ctx *n)
{
	struct gst *g;
	int ret;

	(void)n;
	if (e->type == GO123_EV_GC_MARK_ASSIST_ACTIVE) {
		if (!(g = gfind(s, e->args[0])))
			return fail(s, -EINVAL, "GCMarkAssistActive of goroutine %llu, which has "
				    "no status", (unsigned long long)e->args[0]);
		return active_range(s, &g->rg, e->type) ?: 1;
	}
	if ((ret = user_go(s, e->type, c)))
		return ret;
	if (!(g = gfind(s, c.g)))
		return fail(s, -EINVAL, "%s on goroutine %llu, which has no status", name(e->type),
			    (unsigned long long)c.g);
	if (e->type == GO123_EV_STW_BEGIN || e->type == GO123_EV_GC_MARK_ASSIST_BEGIN)
		return begin_range(s, &g->rg, e->type,
				   e->type == GO123_EV_STW_BEGIN ? e->args[0] : 0) ?: 1;
	return end_range(s, &g->rg, e->type) ?: 1;
}

static int annotation(struct go123_state *s, const struct cursor *e, struct ctx c, struct ctx *n)
{
	(void)n;
	return user_go(s, e->type, c) ?: 1;
}

static int heap_metric(struct go123_state *s, const struct cursor *e, struct ctx c, struct ctx *n)
{
	(void)n;
	return need(s, e->type, c, MUST, MUST, MAY) ?: 1;
}

typedef int handler(struct go123_state *s, const struct cursor *e, struct ctx c, struct ctx *n);

static handler *const handlers[] = {
	[GO123_EV_PROCS_CHANGE] = annotation,
	[GO123_EV_PROC_START] = proc_start,
	[GO123_EV_PROC_STOP] = proc_stop,
	[GO123_EV_PROC_STEAL] = proc_steal,
	[GO123_EV_PROC_STATUS] = proc_status,
	[GO123_EV_GO_CREATE] = go_create,
	[GO123_EV_GO_CREATE_SYSCALL] = create_syscall,
	[GO123_EV_GO_START] = go_start,
	[GO123_EV_GO_DESTROY] = go_stop,
	[GO123_EV_GO_DESTROY_SYSCALL] = destroy_syscall,
	[GO123_EV_GO_STOP] = go_stop,
	[GO123_EV_GO_BLOCK] = go_stop,
	[GO123_EV_GO_UNBLOCK] = go_unblock,
	[GO123_EV_GO_SYSCALL_BEGIN] = syscall_begin,
	[GO123_EV_GO_SYSCALL_END] = syscall_end,
	[GO123_EV_GO_SYSCALL_END_BLOCKED] = syscall_end_blocked,
	[GO123_EV_GO_STATUS] = go_status,
	[GO123_EV_STW_BEGIN] = go_range,
	[GO123_EV_STW_END] = go_range,
	[GO123_EV_GC_ACTIVE] = gc,
	[GO123_EV_GC_BEGIN] = gc,
	[GO123_EV_GC_END] = gc,
	[GO123_EV_GC_SWEEP_ACTIVE] = sweep,
	[GO123_EV_GC_SWEEP_BEGIN] = sweep,
	[GO123_EV_GC_SWEEP_END] = sweep,
	[GO123_EV_GC_MARK_ASSIST_ACTIVE] = go_range,
	[GO123_EV_GC_MARK_ASSIST_BEGIN] = go_range,
	[GO123_EV_GC_MARK_ASSIST_END] = go_range,
	[GO123_EV_HEAP_ALLOC] = heap_metric,
	[GO123_EV_HEAP_GOAL] = heap_metric,
	[GO123_EV_GO_LABEL] = annotation,
	[GO123_EV_USER_TASK_BEGIN] = task,
	[GO123_EV_USER_TASK_END] = task,
	[GO123_EV_USER_REGION_BEGIN] = region,
	[GO123_EV_USER_REGION_END] = region,
	[GO123_EV_USER_LOG] = annotation,
	[GO123_EV_GO_SWITCH] = go_switch,
	[GO123_EV_GO_SWITCH_DESTROY] = go_switch,
	[GO123_EV_GO_CREATE_BLOCKED] = go_create,
	[GO123_EV_GO_STATUS_STACK] = go_status,
};

/* Tries the cursor's event on its M's state (Go's ordering.Advance): 1, 0, or an error. */
static int advance(struct go123_state *s, struct cursor *e)
{
	struct ctx c = { NONE, NONE, e->m }, n;
	struct mst *m = NULL;
	int ret;

	s->off = e->evoff;
	if (!s->initial_gen)
		s->initial_gen = s->gen;
	if (e->type >= sizeof(handlers) / sizeof(handlers[0]) || !handlers[e->type])
		return fail(s, -EINVAL, "event type %u has no place in the order", e->type);
	if (e->m != NONE) {
		if (!e->mi) {
			if (!mfind(s, e->m) && (ret = mnew(s, e->m, NONE)))
				return ret;
			e->mi = slot_of(s->mmap, e->m);
		}
		m = &s->ms[e->mi - 1];
		c.g = m->g;
		c.p = m->p;
	}
	n = c;
	ret = handlers[e->type](s, e, c, &n);
	/* The handler may have added Ms and moved them: by index. */
	if (ret == 1 && m) {
		s->ms[e->mi - 1].g = n.g;
		s->ms[e->mi - 1].p = n.p;
	}
	return ret;
}

/* ---- the order of a generation --------------------------------------------------------------- */

/* Go's frequency.mul: a time in ns as float64 times, converted as amd64 converts. */
static int64_t ns(const struct go123_state *s, uint64_t ticks)
{
	double v = (double)ticks * s->ns_per_tick;

	if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
		return INT64_MIN;
	return (int64_t)v;
}

/* The cursor's next event into it: true, false when its batches are done (Go's nextEvent). */
static bool next_event(struct go123_state *s, struct cursor *c)
{
	const struct go123_state_batch *b;
	uint64_t dt;
	size_t n;

	while (c->bi < c->n && s->b[s->order[c->first + c->bi].i].len == c->off) {
		c->bi++;
		c->off = 0;
		c->last = 0;
	}
	if (c->bi == c->n)
		return false;
	b = &s->b[s->order[c->first + c->bi].i];
	if (!c->last)
		c->last = ns(s, b->base);
	n = go123_spec__decode(b->data + c->off, b->data + b->len, &dt, c->args);
	/* The reader decoded every event before: n is not 0. */
	c->type = b->data[c->off];
	c->evoff = b->body + c->off;
	c->time = (int64_t)((uint64_t)ns(s, dt) + (uint64_t)c->last);
	c->last = c->time;
	c->off += n ? n : b->len - c->off;
	return true;
}

static bool before(const struct hent *x, const struct hent *y)
{
	return x->time != y->time ? x->time < y->time : x->m < y->m;
}

static void swap(struct hent *a, struct hent *b)
{
	struct hent t = *a;

	*a = *b;
	*b = t;
}

static void sift_up(struct go123_state *s, size_t i)
{
	for (; i && before(&s->heap[i], &s->heap[(i - 1) / 2]); i = (i - 1) / 2)
		swap(&s->heap[i], &s->heap[(i - 1) / 2]);
}

static void sift_down(struct go123_state *s, size_t i)
{
	for (;;) {
		size_t m = i, l = 2 * i + 1;

		if (l < s->nheap && before(&s->heap[l], &s->heap[m]))
			m = l;
		if (l + 1 < s->nheap && before(&s->heap[l + 1], &s->heap[m]))
			m = l + 1;
		if (m == i)
			return;
		swap(&s->heap[i], &s->heap[m]);
		i = m;
	}
}

/* The cursor at heap position i has gone: its next event, or it leaves the heap. */
static void refresh(struct go123_state *s, size_t i)
{
	struct cursor *c = &s->cur[s->heap[i].c];

	if (next_event(s, c))
		s->heap[i].time = c->time;
	else
		s->heap[i] = s->heap[--s->nheap];
	if (i < s->nheap) {
		sift_up(s, i);
		sift_down(s, i);
	}
}

/* The heap sorted whole, which keeps it a heap: the slow way, after its head could not go. */
static void sort_heap(struct go123_state *s)
{
	for (size_t i = 1; i < s->nheap; i++) {
		struct hent v = s->heap[i];
		size_t j = i;

		for (; j && before(&v, &s->heap[j - 1]); j--)
			s->heap[j] = s->heap[j - 1];
		s->heap[j] = v;
	}
}

static int by_m(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	return x->m != y->m ? (x->m < y->m ? -1 : 1) : (x->i > y->i) - (x->i < y->i);
}

/* A cursor per M over its batches in file order, in the heap when it has an event. */
static int cursors(struct go123_state *s, size_t nb)
{
	/* One more: a generation of samples alone has no batch to order, and qsort takes no
	 * NULL. */
	if (grow_array((void **)&s->order, &s->caporder, nb + 1, sizeof(*s->order), 16) ||
	    grow_array((void **)&s->cur, &s->capcur, nb + 1, sizeof(*s->cur), 16) ||
	    grow_array((void **)&s->heap, &s->capheap, nb + 1, sizeof(*s->heap), 16))
		return fail(s, -ENOMEM, "out of memory");
	for (size_t i = 0; i < nb; i++)
		s->order[i] = (struct slot){ s->b[i].m, i };
	qsort(s->order, nb, sizeof(*s->order), by_m);
	s->ncur = s->nheap = 0;
	for (size_t i = 0; i < nb; i++) {
		struct cursor *c = &s->cur[s->ncur];

		if (s->ncur && s->cur[s->ncur - 1].m == s->order[i].m) {
			s->cur[s->ncur - 1].n++;
			continue;
		}
		*c = (struct cursor){ .m = s->order[i].m, .first = i, .n = 1 };
		s->ncur++;
	}
	for (size_t i = 0; i < s->ncur; i++)
		if (next_event(s, &s->cur[i])) {
			s->heap[s->nheap++] = (struct hent){ s->cur[i].time, s->cur[i].m, i };
			sift_up(s, s->nheap - 1);
		}
	return 0;
}

int go123_state__generation(struct go123_state *s, uint64_t gen, uint64_t freq,
			  const struct go123_state_batch *b, size_t nb, go123_state_string_fn *str,
			  void *ctx, char *msg, size_t msglen)
{
	int ret;

	s->gen = gen;
	s->ns_per_tick = 1.0 / ((double)freq / 1e9);
	s->b = b;
	s->str = str;
	s->str_ctx = ctx;
	s->msg = msg;
	s->msglen = msglen;
	s->off = nb ? b[0].body : 0;
	if ((ret = cursors(s, nb)))
		return ret;
	while (s->nheap) {
		size_t at = 0;

		if (!(ret = advance(s, &s->cur[s->heap[0].c]))) {
			sort_heap(s);
			for (at = 1; at < s->nheap; at++)
				if ((ret = advance(s, &s->cur[s->heap[at].c])))
					break;
			if (!ret) {
				const struct cursor *h = &s->cur[s->heap[0].c];

				s->off = h->evoff;
				return fail(s, -EINVAL, "generation %llu cannot be ordered: M "
					    "%lld's %s and the next events of %zu other Ms all "
					    "wait for a state none of them reaches",
					    (unsigned long long)gen, (long long)h->m, name(h->type),
					    s->nheap - 1);
			}
		}
		if (ret < 0)
			return ret;
		refresh(s, at);
	}
	return 0;
}

struct go123_state *go123_state__new(size_t budget)
{
	struct go123_state *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->budget = budget ? budget : GO123_STATE_BUDGET;
	s->gmap = u64map__new();
	s->pmap = u64map__new();
	s->mmap = u64map__new();
	s->tasks = u64map__new();
	if (!s->gmap || !s->pmap || !s->mmap || !s->tasks) {
		go123_state__free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

void go123_state__free(struct go123_state *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->ngs; i++) {
		free(s->gs[i].rg.v);
		free(s->gs[i].reg);
	}
	for (size_t i = 0; i < s->nps; i++)
		free(s->ps[i].rg.v);
	free(s->gs);
	free(s->ps);
	free(s->ms);
	free(s->order);
	free(s->cur);
	free(s->heap);
	u64map__free(s->gmap);
	u64map__free(s->pmap);
	u64map__free(s->mmap);
	u64map__free(s->tasks);
	free(s);
}
