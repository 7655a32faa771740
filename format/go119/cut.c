/* cut.c - a window of a trace as a trace of its own (cut.h, docs/format.md §16).
 *
 * Times of the init phase: each event one tick after the previous one, the last two ticks
 * before the window, so that nothing collides (Go 1.23's viewer cannot take equal times in an
 * init phase) and its Gomaxprocs is strictly before the window; the Ps and what runs on them
 * start one tick before the window.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/go119/close.h"
#include "format/go119/cut.h"
#include "format/pcs.h"
#include "format/go119/writer.h"
#include "lib/u64map.h"

struct gt_cut {
	struct gt_writer *w;
	struct gt_state *out;		/* the output's state */
	uint32_t nprocs, ip;		/* ip: the P of the init phase */
	const struct gt_dict *dict;	/* where the source's ids are looked up now */
	struct u64map *stacks, *strings;	/* source id -> output id */
	struct gt_frame *frames;	/* scratch */
	struct gt_cut_stats st;
	char err[256];
};

static int failf(struct gt_cut *c, int err, const char *fmt, ...)
{
	va_list ap;

	if (!c->err[0]) {
		va_start(ap, fmt);
		vsnprintf(c->err, sizeof(c->err), fmt, ap);
		va_end(ap);
	}
	return err;
}

/* ---- ids --------------------------------------------------------------------------------- */

/* The output's id for source id sid, remembered in m; 0 when none yet. */
static uint64_t cached(const struct u64map *m, uint64_t sid)
{
	const uint64_t *slot = u64map__get(m, sid);

	return slot ? *slot : 0;
}

/* Remembers that source id sid is id in the output; returns id, or 0 (*err -ENOMEM). */
static uint64_t remember(struct u64map *m, uint64_t sid, uint64_t id, int *err)
{
	bool added;
	uint64_t *slot = u64map__put(m, sid, &added);

	if (!slot) {
		*err = -ENOMEM;
		return 0;
	}
	*slot = id;
	return id;
}

/* The output's id of source string sid, defined on P p; 0 when undefined, or when the writer
 * failed (its next event says so). */
static uint64_t map_string(struct gt_cut *c, uint32_t p, uint64_t sid)
{
	const char *s;
	uint64_t id;
	int err = 0;

	if (!sid || !(s = gt_dict__string(c->dict, sid)))
		return 0;
	id = cached(c->strings, sid);
	if (!id && (id = gt_writer__string(c->w, p, s)))
		id = remember(c->strings, sid, id, &err);
	return id;
}

/* The output's id of source stack sid (0 when undefined), defined on P p. Re-encoded string
 * ids can make a full stack longer than 2048 bytes: it then loses frames just inside its
 * outermost one (the thread's identity), as the recorder trims. */
static uint64_t map_stack(struct gt_cut *c, uint32_t p, uint64_t sid, int *err)
{
	const struct gt_stack *s;
	uint64_t id;
	size_t n;

	*err = 0;
	if (!sid || !(s = gt_dict__stack(c->dict, sid)))
		return 0;
	id = cached(c->stacks, sid);
	if (id)
		return id;
	n = s->n;
	for (size_t i = 0; i < n; i++)
		c->frames[i] = (struct gt_frame){ s->frames[i].pc, s->frames[i].func,
						  s->frames[i].file, s->frames[i].line };
	for (;;) {
		id = gt_writer__stack(c->w, p, c->frames, n);
		if (id || errno != E2BIG || n < 3)
			break;
		c->frames[n - 2] = c->frames[n - 1];
		n--;
		if (n == s->n - 1)
			c->st.stacks_trimmed++;
	}
	if (!id) {
		*err = -errno;
		return 0;
	}
	return remember(c->stacks, sid, id, err);
}

/* A goroutine's name stack: its own, else one frame saying it has none. */
static uint64_t name_stack(struct gt_cut *c, uint32_t p, uint64_t sid, int *err)
{
	struct gt_frame f = { GT_PC_UNNAMED, "(created before the trace)", "[lxtrace]", 1 };
	uint64_t id = map_stack(c, p, sid, err);

	if (id || *err)
		return id;
	id = gt_writer__stack(c->w, p, &f, 1);
	*err = id ? 0 : -errno;
	return id;
}

/* ---- writing ----------------------------------------------------------------------------- */

/* The goroutine an event on P p concerns, as the parsers derive it. */
static uint64_t subject(const struct gt_cut *c, uint32_t p, enum gt_type t, const uint64_t *args)
{
	const struct gt_pstat *ps;

	switch (gt_specs[t].g) {
	case GT_G_START:
	case GT_G_SELF:
		return args[0];
	case GT_G_GC:
		return 0;
	default:
		ps = gt_state__proc(c->out, p);
		return ps ? ps->g : 0;
	}
}

/* Follows the output's state with an event written; off is the source event's offset. */
static int follow(struct gt_cut *c, struct gt_event *e)
{
	int err = gt_state__event(c->out, e);

	if (err == -EPROTO)
		return failf(c, err, "cannot cut: source %s (the output would break there)",
			     gt_state__problem(c->out));
	return err;
}

static int emit(struct gt_cut *c, uint32_t p, uint64_t ts, enum gt_type t, const uint64_t *args,
		uint64_t off)
{
	struct gt_event e = { .ts = ts, .off = off, .p = p, .type = (uint8_t)t,
			      .nargs = (uint8_t)gt_nvalues(t) };
	int err;

	memcpy(e.args, args, e.nargs * sizeof(*args));
	e.g = subject(c, p, t, args);
	err = gt_writer__event(c->w, p, ts, t, args, e.nargs);
	if (err)
		return failf(c, err, "writing %s at offset %llu: %s", gt_specs[t].name,
			     (unsigned long long)off, strerror(-err));
	return follow(c, &e);
}

static int emit3(struct gt_cut *c, uint32_t p, uint64_t ts, enum gt_type t, uint64_t a0,
		 uint64_t a1, uint64_t a2)
{
	const uint64_t args[4] = { a0, a1, a2, 0 };

	return emit(c, p, ts, t, args, 0);
}

/* ---- the init phase ---------------------------------------------------------------------- */

static int by_id(const void *a, const void *b)
{
	const struct gt_gstat *x = *(const struct gt_gstat *const *)a;
	const struct gt_gstat *y = *(const struct gt_gstat *const *)b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int by_pid(const void *a, const void *b)
{
	const struct gt_pstat *x = *(const struct gt_pstat *const *)a;
	const struct gt_pstat *y = *(const struct gt_pstat *const *)b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* GoCreate of g on the init P at *t, then its GoWaiting or GoInSyscall. */
static int init_goroutine(struct gt_cut *c, const struct gt_gstat *g, uint64_t *t, bool first)
{
	uint64_t stk;
	int err;

	stk = name_stack(c, c->ip, g->name_stk, &err);
	if (!err)
		err = emit3(c, c->ip, (*t)++, GT_EV_GO_CREATE, g->id, stk, 0);
	/* The P starts right after the first goroutine: the earliest event is a GoCreate. */
	if (!err && first)
		err = emit3(c, c->ip, (*t)++, GT_EV_PROC_START, c->ip, 0, 0);
	if (err)
		return err;
	c->st.goroutines++;
	if (g->state == GT_GS_WAITING) {
		c->st.waiting++;
		return emit3(c, c->ip, (*t)++, GT_EV_GO_WAITING, g->id, 0, 0);
	}
	if (g->state == GT_GS_SYSCALL) {
		c->st.syscall++;
		return emit3(c, c->ip, (*t)++, GT_EV_GO_IN_SYSCALL, g->id, 0, 0);
	}
	return 0;
}

/* What runs on P p one tick before the window: the goroutine, its syscall entry, mark assist,
 * regions; then the P's sweep and the stop-the-world it began. */
static int init_proc(struct gt_cut *c, const struct gt_state *start, const struct gt_pstat *p,
		     uint64_t ts)
{
	const struct gt_gstat *g = p->g ? gt_state__goroutine(start, p->g) : NULL;
	const struct gt_gcstat *gc = gt_state__gc(start);
	const struct gt_gstat *og;
	uint32_t pid = (uint32_t)p->id;
	uint64_t a[4];
	int err = 0;

	if (p->started || g)
		err = emit3(c, pid, ts, GT_EV_PROC_START, p->thread, 0, 0);
	if (!err && g) {
		og = gt_state__goroutine(c->out, g->id);
		a[0] = g->id, a[1] = og ? og->seq : 1, a[2] = map_string(c, pid, g->label);
		err = emit(c, pid, ts, a[2] ? GT_EV_GO_START_LABEL : GT_EV_GO_START, a, 0);
		c->st.running++;
		if (!err && g->syscall) {
			a[0] = map_stack(c, pid, g->stk, &err);
			if (!err)
				err = emit(c, pid, ts, GT_EV_GO_SYSCALL, a, 0);
		}
		if (!err && g->mark_assist)
			err = emit3(c, pid, ts, GT_EV_GC_MARK_ASSIST_START, 0, 0, 0);
		for (size_t i = 0; i < g->nregions && !err; i++) {
			a[0] = g->regions[i].task, a[1] = 0;
			a[2] = map_string(c, pid, g->regions[i].name);
			a[3] = map_stack(c, pid, g->regions[i].stk, &err);
			if (!err)
				err = emit(c, pid, ts, GT_EV_USER_REGION, a, 0);
			c->st.regions++;
		}
	}
	if (!err && p->sweep)
		err = emit3(c, pid, ts, GT_EV_GC_SWEEP_START, 0, 0, 0);
	/* 1.23 makes a stop-the-world a range of the goroutine running it. */
	if (!err && gc->stw && gc->stw_p == p->id && g)
		err = emit3(c, pid, ts, GT_EV_GC_STW_START, gc->stw_kind, 0, 0);
	return err;
}

static int init_phase(struct gt_cut *c, const struct gt_cut_opts *o)
{
	const struct gt_state *start = o->start;
	size_t ng = gt_state__ngoroutines(start), np = gt_state__nprocs(start);
	size_t nt = gt_state__ntasks(start), nstatus = 0;
	const struct gt_gstat *gs = gt_state__goroutines(start), **gv;
	const struct gt_pstat *ps = gt_state__procs(start), **pv;
	const struct gt_task *tasks = gt_state__tasks(start);
	const struct gt_gcstat *gc = gt_state__gc(start);
	struct gt_state_stats ss;
	uint64_t n, t, a[4];
	int err = 0;

	/* A window from the trace's start has the trace's own init phase. */
	gt_state__stats(start, &ss);
	if (!ss.events)
		return 0;
	for (size_t i = 0; i < ng; i++) {
		nstatus += gs[i].state == GT_GS_WAITING || gs[i].state == GT_GS_SYSCALL;
		/* Left out: what only a running goroutine can begin. */
		if (gs[i].state != GT_GS_RUNNING)
			c->st.left_out += gs[i].nregions + gs[i].mark_assist;
	}
	n = 1 + ng + nstatus + nt + 2;
	if (o->from < n + 2)
		return failf(c, -ERANGE, "the window starts too close to the trace's start for an "
			     "init phase of %llu events", (unsigned long long)n);
	t = o->from - n - 1;
	gv = malloc((ng ? ng : 1) * sizeof(*gv));
	pv = malloc((np ? np : 1) * sizeof(*pv));
	if (!gv || !pv) {
		err = -ENOMEM;
		goto out;
	}
	/* Goroutines in id order, so the same window is always written the same way. */
	for (size_t i = 0; i < ng; i++)
		gv[i] = &gs[i];
	qsort(gv, ng, sizeof(*gv), by_id);
	for (size_t i = 0; i < np; i++)
		pv[i] = &ps[i];
	qsort(pv, np, sizeof(*pv), by_pid);

	for (size_t i = 0; i < ng && !err; i++)
		err = init_goroutine(c, gv[i], &t, i == 0);
	if (!err && !ng)
		err = emit3(c, c->ip, t++, GT_EV_PROC_START, c->ip, 0, 0);
	for (size_t i = 0; i < nt && !err; i++) {
		a[0] = tasks[i].id, a[1] = tasks[i].parent;
		a[2] = map_string(c, c->ip, tasks[i].name);
		a[3] = map_stack(c, c->ip, tasks[i].stk, &err);
		if (!err)
			err = emit(c, c->ip, t++, GT_EV_USER_TASK_CREATE, a, 0);
		c->st.tasks++;
	}
	if (!err)
		err = emit3(c, c->ip, t++, GT_EV_GOMAXPROCS, gc->init_done ? gc->gomaxprocs :
			    c->nprocs, 0, 0);
	/* Stopped, so that 1.23's viewer ends the syscalls of GoInSyscall here (docs/format.md
	 * §10.5). */
	if (!err)
		err = emit3(c, c->ip, t++, GT_EV_PROC_STOP, 0, 0, 0);

	/* One tick before the window: the Ps, what runs on them, the GC and the heap. */
	for (size_t i = 0; i < np && !err; i++)
		if (pv[i]->started || pv[i]->g || pv[i]->sweep)
			err = init_proc(c, start, pv[i], o->from - 1);
	if (!err && gc->gc) {
		a[0] = gt_state__gc(c->out)->gc_seq;
		a[1] = map_stack(c, c->ip, gc->gc_stk, &err);
		if (!err)
			err = emit(c, c->ip, o->from - 1, GT_EV_GC_START, a, 0);
	}
	if (!err && gc->has_heap_alloc)
		err = emit3(c, c->ip, o->from - 1, GT_EV_HEAP_ALLOC, gc->heap_alloc, 0, 0);
	if (!err && gc->has_heap_goal)
		err = emit3(c, c->ip, o->from - 1, GT_EV_HEAP_GOAL, gc->heap_goal, 0, 0);
out:
	free(gv);
	free(pv);
	return err;
}

struct gt_cut *gt_cut__new(const struct gt_cut_opts *opts, char *err, size_t errlen)
{
	struct gt_state_stats st;
	struct gt_cut *c;
	int ret = -EINVAL;

	if (!opts || opts->sz < sizeof(*opts) || !opts->start || !opts->nprocs) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	gt_state__stats(opts->start, &st);
	c->nprocs = opts->nprocs;
	c->ip = opts->nprocs - 1;
	c->dict = opts->dict;
	if (st.max_p >= (int64_t)opts->nprocs) {
		failf(c, ret, "P %lld is out of range", (long long)st.max_p);
		goto fail;
	}
	c->out = gt_state__new();
	c->stacks = u64map__new();
	c->strings = u64map__new();
	c->frames = malloc(GT_MAX_STACK_FRAMES * sizeof(*c->frames));
	c->w = gt_writer__new(&(struct gt_writer_opts){ .sz = sizeof(struct gt_writer_opts),
		.fd = opts->fd, .nprocs = opts->nprocs, .frequency = opts->frequency });
	ret = -ENOMEM;
	if (!c->out || !c->stacks || !c->strings || !c->frames) {
		failf(c, ret, "out of memory");
		goto fail;
	}
	if (!c->w) {
		ret = -errno;
		failf(c, ret, "starting the output: %s", strerror(errno));
		goto fail;
	}
	ret = init_phase(c, opts);
	if (ret)
		goto fail;
	gt_state__stats(c->out, &st);
	c->st.init_events = st.events;
	return c;
fail:
	if (err && errlen)
		snprintf(err, errlen, "%s", c->err[0] ? c->err : strerror(-ret));
	gt_cut__free(c);
	errno = -ret;
	return NULL;
}

/* ---- the window -------------------------------------------------------------------------- */

static int window_sample(struct gt_cut *c, const struct gt_event *e)
{
	/* 1.19 would count a sample of a goroutine not created yet as its creation. */
	uint64_t g = gt_state__goroutine(c->out, e->g) ? e->g : 0, stk;
	uint32_t p = e->p >= 0 && e->p < c->nprocs ? (uint32_t)e->p : c->ip;
	int err;

	stk = map_stack(c, p, e->args[3], &err);
	if (!err)
		err = gt_writer__cpu_sample(c->w, p, e->ts, e->p, g, stk);
	if (err)
		return failf(c, err, "writing a CPUSample: %s", strerror(-err));
	return follow(c, &(struct gt_event){ .ts = e->ts, .off = e->off, .p = e->p, .g = g,
					     .type = GT_EV_CPU_SAMPLE });
}

static int window_log(struct gt_cut *c, const struct gt_event *e, uint32_t p)
{
	uint64_t key = map_string(c, p, e->args[1]), stk;
	struct gt_event o = *e;
	int err;

	stk = map_stack(c, p, e->args[2], &err);
	if (!err)
		err = gt_writer__user_log(c->w, p, e->ts, e->args[0], key, stk, e->msg, e->msg_len);
	if (err)
		return failf(c, err, "writing a UserLog: %s", strerror(-err));
	o.args[1] = key;
	o.args[2] = stk;
	o.g = subject(c, p, GT_EV_USER_LOG, o.args);
	return follow(c, &o);
}

/* The seq the output expects next of goroutine g (the source's, when it is not live: the
 * output's state will say what is wrong). */
static uint64_t next_seq(const struct gt_cut *c, uint64_t g, uint64_t src)
{
	const struct gt_gstat *s = gt_state__goroutine(c->out, g);

	return s ? s->seq : src;
}

int gt_cut__event(struct gt_cut *c, const struct gt_event *e, const struct gt_dict *d)
{
	enum gt_type t = (enum gt_type)e->type;
	uint64_t a[GT_MAX_ARGS];
	uint32_t p;
	int err = 0;

	c->dict = d;
	c->st.window_events++;
	if (t == GT_EV_CPU_SAMPLE)
		return window_sample(c, e);
	if (e->p < 0 || e->p >= c->nprocs)
		return failf(c, -ERANGE, "offset %llu: P %lld is out of range",
			     (unsigned long long)e->off, (long long)e->p);
	p = (uint32_t)e->p;
	if (t == GT_EV_USER_LOG)
		return window_log(c, e, p);
	memcpy(a, e->args, sizeof(a));
	if (gt_specs[t].stk_arg)
		a[gt_specs[t].stk_arg - 1] = name_stack(c, p, a[gt_specs[t].stk_arg - 1], &err);
	if (gt_specs[t].str_arg)
		a[gt_specs[t].str_arg - 1] = map_string(c, p, a[gt_specs[t].str_arg - 1]);
	switch (t) {
	case GT_EV_GO_START_LABEL:
	case GT_EV_GO_START:
	case GT_EV_GO_UNBLOCK:
	case GT_EV_GO_SYSEXIT:
		a[1] = next_seq(c, a[0], a[1]);
		if (t == GT_EV_GO_SYSEXIT)
			a[2] = 0;	/* a real time would move it (docs/format.md §7.3) */
		break;
	case GT_EV_GC_START:
		a[0] = gt_state__gc(c->out)->gc_seq;
		break;
	default:
		break;
	}
	if (!err && (gt_specs[t].flags & GT_STACK))
		a[e->nargs - 1] = map_stack(c, p, a[e->nargs - 1], &err);
	if (err)
		return failf(c, err, "offset %llu: %s", (unsigned long long)e->off, strerror(-err));
	return emit(c, p, e->ts, t, a, e->off);
}

int gt_cut__finish(struct gt_cut *c, uint64_t ts)
{
	struct gt_writer_stats ws;
	struct gt_state_stats st;
	struct gt_open o;
	int err;

	gt_state__stats(c->out, &st);
	err = gt_close__plan(c->out, ts, &o);
	if (!err)
		err = gt_close__write(c->w, &o, NULL);
	gt_close__release(&o);
	c->st.closing_events = 0;
	gt_writer__stats(c->w, &ws);
	c->st.closing_events = ws.events - st.events;
	c->st.bytes = ws.bytes;
	return err ? failf(c, err, "closing the output: %s", strerror(-err)) : 0;
}

const char *gt_cut__error(const struct gt_cut *c)
{
	return c->err;
}

void gt_cut__stats(const struct gt_cut *c, struct gt_cut_stats *out)
{
	*out = c->st;
}

void gt_cut__free(struct gt_cut *c)
{
	if (!c)
		return;
	gt_writer__free(c->w);
	gt_state__free(c->out);
	u64map__free(c->stacks);
	u64map__free(c->strings);
	free(c->frames);
	free(c);
}

/* ---- files ------------------------------------------------------------------------------- */

static struct gt_reader *rewind_reader(int fd, char *err, size_t errlen)
{
	struct gt_reader *r;

	if (lseek(fd, 0, SEEK_SET)) {
		snprintf(err, errlen, "the input cannot be read again: %s", strerror(errno));
		return NULL;
	}
	r = gt_reader__new(
		&(struct gt_reader_opts){ .sz = sizeof(struct gt_reader_opts), .fd = fd });
	if (!r)
		snprintf(err, errlen, "%s", strerror(errno));
	return r;
}

/* Ticks from nanoseconds since t0; UINT64_MAX stays. */
static uint64_t to_ticks(uint64_t t0, uint64_t ns, uint64_t freq)
{
	unsigned __int128 v;

	if (ns == UINT64_MAX)
		return UINT64_MAX;
	v = (unsigned __int128)ns * freq / 1000000000u + t0;
	return v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

/* Nanoseconds from ticks since t0. */
static uint64_t ns_since(uint64_t t0, uint64_t ticks, uint64_t freq)
{
	return (uint64_t)((unsigned __int128)(ticks - t0) * 1000000000u / freq);
}

int gt_cut__file(int in_fd, int out_fd, uint64_t from_ns, uint64_t to_ns,
		 struct gt_cut_stats *st, struct gt_cut_window *win, char *err, size_t errlen)
{
	struct gt_reader *r = NULL;
	struct gt_state *s = NULL;
	struct gt_cut *c = NULL;
	struct gt_state_stats ss;
	uint64_t from, to, end, freq, init_end = 0;
	struct gt_event e;
	int ret;

	err[0] = '\0';
	/* Pass 1: the trace's span, its Ps, its frequency; and the whole file checked. */
	r = rewind_reader(in_fd, err, errlen);
	s = gt_state__new();
	if (!r || !s) {
		ret = -ENOMEM;
		goto out;
	}
	ret = gt_state__replay(s, r, UINT64_MAX);
	if (ret) {
		snprintf(err, errlen, "%s", gt_reader__error(r));
		goto out;
	}
	gt_state__stats(s, &ss);
	init_end = gt_state__gc(s)->init_ts;
	freq = gt_reader__frequency(r);
	from = to_ticks(ss.first_ts, from_ns, freq);
	/* A window that starts inside the trace's init phase (a few microseconds) starts with it:
	 * an init phase of our own before the rest of that one would not be an init phase for Go
	 * 1.23 any more. */
	if (from <= init_end)
		from = ss.first_ts;
	to = to_ticks(ss.first_ts, to_ns, freq);
	end = to <= ss.last_ts ? to : ss.last_ts + 1;
	if (from >= end) {
		snprintf(err, errlen, "the window is empty: the trace lasts %.9f s",
			 (double)(ss.last_ts - ss.first_ts) / (double)freq);
		ret = -EINVAL;
		goto out;
	}
	gt_state__free(s);
	gt_reader__free(r);

	/* Pass 2: the state at the window's start, written as the init phase. */
	s = gt_state__new();
	r = rewind_reader(in_fd, err, errlen);
	ret = -ENOMEM;
	if (!r || !s)
		goto out;
	ret = gt_state__replay(s, r, from);
	if (ret) {
		snprintf(err, errlen, "%s", gt_reader__error(r));
		goto out;
	}
	c = gt_cut__new(&(struct gt_cut_opts){ .sz = sizeof(struct gt_cut_opts), .fd = out_fd,
		.nprocs = (uint32_t)(ss.max_p + 1), .frequency = freq, .from = from, .start = s,
		.dict = gt_reader__dict(r) }, err, errlen);
	if (!c) {
		ret = -errno;
		goto out;
	}
	gt_state__free(s);
	s = NULL;
	gt_reader__free(r);

	/* Pass 3: the window. */
	r = rewind_reader(in_fd, err, errlen);
	ret = -ENOMEM;
	if (!r)
		goto out;
	while ((ret = gt_reader__next(r, &e)) == 1) {
		if (e.ts < from || e.ts >= to)
			continue;
		ret = gt_cut__event(c, &e, gt_reader__dict(r));
		if (ret) {
			snprintf(err, errlen, "%s", gt_cut__error(c));
			goto out;
		}
	}
	if (ret) {
		snprintf(err, errlen, "%s", gt_reader__error(r));
		goto out;
	}
	ret = gt_cut__finish(c, end);
	if (ret)
		snprintf(err, errlen, "%s", gt_cut__error(c));
	if (st)
		gt_cut__stats(c, st);
	if (win)
		*win = (struct gt_cut_window){ from, end, ns_since(ss.first_ts, from, freq),
					       ns_since(ss.first_ts, end, freq) };
out:
	if (ret && !err[0])
		snprintf(err, errlen, "%s", strerror(-ret));
	gt_cut__free(c);
	gt_state__free(s);
	gt_reader__free(r);
	return ret;
}
