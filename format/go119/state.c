/* state.c - the trace state tracker: goroutines, Ps, tasks, regions and GC phases as the
 * events of a trace leave them.
 *
 * The rules are the ones Go's parsers check after ordering a trace (docs/format.md §6.3): a
 * start needs a runnable goroutine and an idle P, a block or stop needs the P's own
 * running goroutine, an unblock a waiting one, and so on. An event the state does not allow is
 * applied as it says and counted, so the state stays what a viewer would show. Goroutines
 * live in an array indexed through a map and leave it when they end; tasks and Ps the same.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/go119/dict.h"
#include "format/go119/state.h"
#include "lib/grow.h"
#include "lib/u64map.h"

struct gt_state {
	struct gt_gstat *gs;
	size_t ngs, gs_cap;
	struct u64map *g_index;	/* goid -> index in gs */
	struct gt_pstat *ps;
	size_t nps, ps_cap;
	struct u64map *p_index;	/* P (as uint64_t) -> index in ps */
	struct gt_task *tasks;
	size_t ntasks, tasks_cap;
	struct u64map *task_index;	/* task id -> index in tasks */
	struct gt_gcstat gc;
	struct gt_state_stats st;
	struct gt_reader *feeder;	/* gt_state__feed's decoder */
	struct gt_dict *dict;		/* and the definitions it read */
	/* Ids to drop from dict once the state no longer refers to them: [0] strings,
	 * [1] stacks (gt_state__forget). */
	uint64_t *pending[2];
	size_t npending[2], pending_cap[2];
	/* The GC's and the stop-the-world's latest event: the merge orders the next one by time
	 * alone (only GCStart has a sequence number), and ties across Ps either way. */
	uint64_t gc_at, stw_at;
	int64_t gc_at_p, stw_at_p;
	bool gc_seen, stw_seen;
	/* Goroutines that ended (Go's parsers keep every id created: none comes twice), and
	 * those CPU samples named before their creation (goid -> the sample's earliest time).
	 * Each holds up to MAX_IDS and is emptied when full: memory stays bounded, at the price
	 * of checking less. */
	struct u64map *ended;
	struct u64map *sampled;
	char problem[256];
};

#define MAX_IDS (1u << 16)

struct gt_state *gt_state__new(void)
{
	struct gt_state *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->g_index = u64map__new();
	s->p_index = u64map__new();
	s->task_index = u64map__new();
	s->ended = u64map__new();
	s->sampled = u64map__new();
	s->st.max_p = -1;
	if (!s->g_index || !s->p_index || !s->task_index || !s->ended || !s->sampled) {
		gt_state__free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

/* Notes that e is not allowed here; returns -EPROTO. */
static int problem(struct gt_state *s, const struct gt_event *e, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!s->st.problems++) {
		n = snprintf(s->problem, sizeof(s->problem), "offset %llu: %s: ",
			     (unsigned long long)e->off, gt_specs[e->type].name);
		if (n >= 0 && (size_t)n < sizeof(s->problem)) {
			va_start(ap, fmt);
			vsnprintf(s->problem + n, sizeof(s->problem) - (size_t)n, fmt, ap);
			va_end(ap);
		}
	}
	return -EPROTO;
}

static struct gt_gstat *find_g(const struct gt_state *s, uint64_t id)
{
	const uint64_t *i = u64map__get(s->g_index, id);

	return i ? &s->gs[*i] : NULL;
}

/* A new goroutine, runnable with seq 1 as GoCreate makes it. NULL on ENOMEM. */
static struct gt_gstat *add_g(struct gt_state *s, uint64_t id, uint64_t ts)
{
	uint64_t *slot;
	bool added;

	if (grow_array((void **)&s->gs, &s->gs_cap, s->ngs + 1, sizeof(*s->gs), 64))
		return NULL;
	slot = u64map__put(s->g_index, id, &added);
	if (!slot)
		return NULL;
	*slot = s->ngs;
	s->gs[s->ngs] = (struct gt_gstat){ .id = id, .state = GT_GS_RUNNABLE, .seq = 1,
					   .why = GT_EV_GO_CREATE, .since = ts, .created = ts,
					   .p = -1 };
	return &s->gs[s->ngs++];
}

/* Adds key to a map of at most MAX_IDS (emptied when full), keeping its smallest val. 0 or
 * -ENOMEM. */
static int remember(struct u64map *set, uint64_t key, uint64_t val)
{
	uint64_t *slot;
	bool added;

	if (u64map__count(set) >= MAX_IDS)
		u64map__clear(set);
	slot = u64map__put(set, key, &added);
	if (!slot)
		return -ENOMEM;
	if (added || val < *slot)
		*slot = val;
	return 0;
}

static int del_g(struct gt_state *s, struct gt_gstat *g)
{
	size_t i = (size_t)(g - s->gs);
	int err = remember(s->ended, g->id, 0);

	free((void *)g->regions);
	u64map__del(s->g_index, g->id);
	if (i != --s->ngs) {
		s->gs[i] = s->gs[s->ngs];
		*u64map__get(s->g_index, s->gs[i].id) = i;
	}
	return err;
}

/* e, a transition of g, is not earlier than g's previous one: the merge would put it
 * before that one otherwise. */
static int in_order(struct gt_state *s, const struct gt_event *e, const struct gt_gstat *g)
{
	if (!g || e->ts >= g->since)
		return 0;
	return problem(s, e, "time stamps out of order: at %llu, g %llu's previous transition at "
		       "%llu", (unsigned long long)e->ts, (unsigned long long)g->id,
		       (unsigned long long)g->since);
}

/* The same for the GC's or the stop-the-world's events, *at and *at_p their latest's time
 * and P (updated): on another P, a tie is out of order too. err: the event's problem found
 * already, returned instead of a second one. */
static int global_in_order(struct gt_state *s, const struct gt_event *e, int err, bool *seen,
			   uint64_t *at, int64_t *at_p, const char *what)
{
	bool late = *seen && (e->ts < *at || (e->ts == *at && e->p != *at_p));
	uint64_t prev = *at;

	*seen = true;
	*at = e->ts;
	*at_p = e->p;
	if (err || !late)
		return err;
	return problem(s, e, "time stamps out of order: at %llu, the %s's previous event at %llu",
		       (unsigned long long)e->ts, what, (unsigned long long)prev);
}

/* The P of id, added (stopped) when first seen. NULL on ENOMEM. */
static struct gt_pstat *get_p(struct gt_state *s, int64_t id)
{
	uint64_t *slot;
	bool added;

	slot = u64map__get(s->p_index, (uint64_t)id);
	if (slot)
		return &s->ps[*slot];
	if (grow_array((void **)&s->ps, &s->ps_cap, s->nps + 1, sizeof(*s->ps), 16))
		return NULL;
	slot = u64map__put(s->p_index, (uint64_t)id, &added);
	if (!slot)
		return NULL;
	*slot = s->nps;
	s->ps[s->nps] = (struct gt_pstat){ .id = id };
	if (id > s->st.max_p)
		s->st.max_p = id;
	return &s->ps[s->nps++];
}

static int push_region(struct gt_gstat *g, const struct gt_event *e)
{
	size_t n = g->nregions;
	struct gt_region *r = (struct gt_region *)g->regions;

	/* Once allocated, the capacity is the next power of two, at least 4 (the array stays
	 * when the regions are all ended). */
	if (!r)
		r = malloc(4 * sizeof(*r));
	else if (n >= 4 && !(n & (n - 1)))
		r = realloc(r, 2 * n * sizeof(*r));
	if (!r)
		return -ENOMEM;
	r[n] = (struct gt_region){ e->args[0], e->args[2], e->args[3] };
	g->regions = r;
	g->nregions = n + 1;
	return 0;
}

static int user_region(struct gt_state *s, struct gt_gstat *g, const struct gt_event *e)
{
	const struct gt_region *in;

	if (!g)
		return e->g ? problem(s, e, "g %llu does not exist", (unsigned long long)e->g) :
			      problem(s, e, "no goroutine runs");
	if (e->args[1] == 0)
		return push_region(g, e);
	if (e->args[1] != 1)
		return problem(s, e, "mode %llu", (unsigned long long)e->args[1]);
	if (!g->nregions)	/* an end without its start is allowed */
		return 0;
	in = &g->regions[g->nregions - 1];
	g->nregions--;
	if (in->task != e->args[0] || in->name != e->args[2])
		return problem(s, e, "g %llu ends a region that is not its innermost",
			       (unsigned long long)g->id);
	return 0;
}

static int user_task(struct gt_state *s, const struct gt_event *e)
{
	uint64_t *slot;
	bool added;
	size_t i;

	if (e->type == GT_EV_USER_TASK_END) {
		slot = u64map__get(s->task_index, e->args[0]);
		if (!slot)	/* an end without its start is allowed */
			return 0;
		i = (size_t)*slot;
		/* Task events are merged by time alone: an earlier end would come first. */
		if (e->ts < s->tasks[i].since ||
		    (e->ts == s->tasks[i].since && e->p != s->tasks[i].p))
			return problem(s, e, "time stamps out of order: at %llu, task %llu created "
				       "at %llu", (unsigned long long)e->ts,
				       (unsigned long long)e->args[0],
				       (unsigned long long)s->tasks[i].since);
		u64map__del(s->task_index, e->args[0]);
		if (i != --s->ntasks) {
			s->tasks[i] = s->tasks[s->ntasks];
			*u64map__get(s->task_index, s->tasks[i].id) = i;
		}
		return 0;
	}
	if (u64map__get(s->task_index, e->args[0]))
		return problem(s, e, "task %llu exists", (unsigned long long)e->args[0]);
	if (grow_array((void **)&s->tasks, &s->tasks_cap, s->ntasks + 1, sizeof(*s->tasks), 16))
		return -ENOMEM;
	slot = u64map__put(s->task_index, e->args[0], &added);
	if (!slot)
		return -ENOMEM;
	*slot = s->ntasks;
	s->tasks[s->ntasks++] = (struct gt_task){ e->args[0], e->args[1], e->args[2], e->args[3],
						  e->g, e->ts, e->p };
	return 0;
}

/* The goroutine e says runs on its P must: it is the P's, and running. */
static int check_running(struct gt_state *s, const struct gt_event *e, struct gt_pstat *p,
			 struct gt_gstat *g, bool allow_g0)
{
	if (!e->g)
		return allow_g0 && !p->g ? 0 : problem(s, e, "no goroutine runs on p %lld",
							 (long long)e->p);
	if (!g || g->state != GT_GS_RUNNING)
		return problem(s, e, "g %llu is not running", (unsigned long long)e->g);
	if (p->g != e->g)
		return problem(s, e, "p %lld does not run g %llu", (long long)e->p,
			       (unsigned long long)e->g);
	return 0;
}

/* The running goroutine of p leaves it into state (why = e's type, its stack). */
static void leave(struct gt_pstat *p, struct gt_gstat *g, const struct gt_event *e,
		  enum gt_gstate state)
{
	if (p->g == e->g)
		p->g = 0;
	if (!g)
		return;
	g->state = (uint8_t)state;
	g->why = e->type;
	g->stk = (gt_specs[e->type].flags & GT_STACK) ? e->args[e->nargs - 1] : 0;
	g->since = e->ts;
	g->label = 0;
	g->p = -1;
}

/* A transition of target into runnable by e (unblock, syscall exit), checking its seq. */
static int ready(struct gt_state *s, const struct gt_event *e, struct gt_gstat *t, uint8_t from)
{
	int err = 0;

	if (!t)
		return problem(s, e, "g %llu does not exist", (unsigned long long)e->args[0]);
	if (t->state != from)
		err = problem(s, e, "g %llu is not %s", (unsigned long long)t->id,
			      from == GT_GS_SYSCALL ? "in a syscall" : "waiting");
	else if (e->args[1] != t->seq)
		err = problem(s, e, "g %llu has seq %llu, not %llu", (unsigned long long)t->id,
			      (unsigned long long)t->seq, (unsigned long long)e->args[1]);
	else if (e->type == GT_EV_GO_SYSEXIT && e->args[2] &&
		 (e->args[2] < t->since || e->args[2] > e->ts))
		/* The parsers move the exit to its real time, which must lie between the block
		 * and the event, or the merged order breaks. */
		err = problem(s, e, "real time %llu outside g %llu's syscall [%llu, %llu]",
			      (unsigned long long)e->args[2], (unsigned long long)t->id,
			      (unsigned long long)t->since, (unsigned long long)e->ts);
	else
		err = in_order(s, e, t);
	t->state = GT_GS_RUNNABLE;
	t->why = e->type;
	t->stk = (gt_specs[e->type].flags & GT_STACK) ? e->args[e->nargs - 1] : 0;
	t->since = e->ts;
	t->seq = e->args[1] + 1;
	return err;
}

static int go_event(struct gt_state *s, const struct gt_event *e, struct gt_pstat *p,
		    struct gt_gstat *g)
{
	struct gt_gstat *t;
	uint64_t *slot;
	int err = 0, ret;

	if (gt_blocks(e->type)) {
		err = check_running(s, e, p, g, false);
		leave(p, g, e, GT_GS_WAITING);
		return err;
	}
	switch (e->type) {
	case GT_EV_GO_CREATE:
		err = check_running(s, e, p, g, true);
		if (!e->args[0] || find_g(s, e->args[0]))
			return problem(s, e, "g %llu exists", (unsigned long long)e->args[0]);
		slot = u64map__get(s->sampled, e->args[0]);
		if (!err && u64map__get(s->ended, e->args[0]))
			err = problem(s, e, "g %llu existed: an id is created once",
				      (unsigned long long)e->args[0]);
		else if (!err && slot && *slot <= e->ts)
			err = problem(s, e, "g %llu is named by a CPUSample before it, at %llu",
				      (unsigned long long)e->args[0], (unsigned long long)*slot);
		if (slot)
			u64map__del(s->sampled, e->args[0]);
		t = add_g(s, e->args[0], e->ts);
		if (!t)
			return -ENOMEM;
		t->name_stk = e->args[1];
		t->stk = e->args[2];
		if (e->args[0] > s->st.max_goid)
			s->st.max_goid = e->args[0];
		return err;
	case GT_EV_GO_START:
	case GT_EV_GO_START_LABEL:
		if (!g)
			return problem(s, e, "g %llu does not exist", (unsigned long long)e->g);
		if (g->state != GT_GS_RUNNABLE)
			err = problem(s, e, "g %llu is not runnable", (unsigned long long)g->id);
		else if (p->g)
			err = problem(s, e, "p %lld runs g %llu", (long long)e->p,
				      (unsigned long long)p->g);
		else if (e->args[1] != g->seq)
			err = problem(s, e, "g %llu has seq %llu, not %llu",
				      (unsigned long long)g->id, (unsigned long long)g->seq,
				      (unsigned long long)e->args[1]);
		else
			err = in_order(s, e, g);
		g->state = GT_GS_RUNNING;
		g->why = e->type;
		g->p = e->p;
		g->seq = e->args[1] + 1;
		g->stk = 0;
		g->since = e->ts;
		g->label = e->type == GT_EV_GO_START_LABEL ? e->args[2] : 0;
		p->g = g->id;
		return err;
	case GT_EV_GO_END:
	case GT_EV_GO_STOP:
		err = check_running(s, e, p, g, false);
		if (p->g == e->g)
			p->g = 0;
		ret = g ? del_g(s, g) : 0;
		return ret ? ret : err;
	case GT_EV_GO_SCHED:
	case GT_EV_GO_PREEMPT:
		err = check_running(s, e, p, g, false);
		leave(p, g, e, GT_GS_RUNNABLE);
		return err;
	case GT_EV_GO_SYSBLOCK:
		err = check_running(s, e, p, g, false);
		leave(p, g, e, GT_GS_SYSCALL);
		return err;
	case GT_EV_GO_SYSCALL:
		err = check_running(s, e, p, g, false);
		if (g) {
			g->syscall = true;
			g->stk = e->args[0];
		}
		return err;
	case GT_EV_GO_UNBLOCK:
		err = check_running(s, e, p, g, true);
		t = find_g(s, e->args[0]);
		ret = ready(s, e, t, GT_GS_WAITING);
		return err ? err : ret;
	case GT_EV_GO_SYSEXIT:
		return ready(s, e, g, GT_GS_SYSCALL);
	case GT_EV_GO_WAITING:
	case GT_EV_GO_IN_SYSCALL:
		if (!g)
			return problem(s, e, "g %llu does not exist", (unsigned long long)e->g);
		if (g->state != GT_GS_RUNNABLE || g->why != GT_EV_GO_CREATE)
			err = problem(s, e, "g %llu is not freshly created",
				      (unsigned long long)g->id);
		else
			err = in_order(s, e, g);
		g->state = e->type == GT_EV_GO_WAITING ? GT_GS_WAITING : GT_GS_SYSCALL;
		g->why = e->type;
		g->seq = 2;
		g->stk = 0;
		g->since = e->ts;
		return err;
	default:
		return 0;
	}
}

/* GC phases, sweeps, mark assists, heap counters, Ps. */
static int other_event(struct gt_state *s, const struct gt_event *e, struct gt_pstat *p,
		       struct gt_gstat *g)
{
	struct gt_gcstat *gc = &s->gc;
	int err = 0;

	switch (e->type) {
	case GT_EV_PROC_START:
		if (p->started)
			err = problem(s, e, "p %lld is running", (long long)e->p);
		p->started = true;
		p->thread = e->args[0];
		p->since = e->ts;
		return err;
	case GT_EV_PROC_STOP:
		if (!p->started)
			err = problem(s, e, "p %lld is not running", (long long)e->p);
		else if (p->g)
			err = problem(s, e, "p %lld runs g %llu", (long long)e->p,
				      (unsigned long long)p->g);
		p->started = false;
		p->since = e->ts;
		return err;
	case GT_EV_GOMAXPROCS:
		if (!gc->init_done)
			gc->init_ts = e->ts;
		gc->init_done = true;
		gc->gomaxprocs = e->args[0];
		return 0;
	case GT_EV_GC_START:
		if (gc->gc)
			err = problem(s, e, "a GC is running");
		else if (e->args[0] != gc->gc_seq)
			err = problem(s, e, "seq %llu, not %llu", (unsigned long long)e->args[0],
				      (unsigned long long)gc->gc_seq);
		err = global_in_order(s, e, err, &s->gc_seen, &s->gc_at, &s->gc_at_p, "GC");
		gc->gc = true;
		gc->gc_seq = e->args[0] + 1;
		gc->gc_stk = e->args[1];
		return err;
	case GT_EV_GC_DONE:
		if (!gc->gc)
			err = problem(s, e, "no GC is running");
		err = global_in_order(s, e, err, &s->gc_seen, &s->gc_at, &s->gc_at_p, "GC");
		gc->gc = false;
		return err;
	case GT_EV_GC_STW_START:
		if (gc->stw)
			err = problem(s, e, "the world is stopped");
		else if (e->args[0] > 1)	/* Go 1.19 knows kinds 0 and 1 */
			err = problem(s, e, "unknown kind %llu", (unsigned long long)e->args[0]);
		err = global_in_order(s, e, err, &s->stw_seen, &s->stw_at, &s->stw_at_p,
				      "stop-the-world");
		gc->stw = true;
		gc->stw_kind = e->args[0];
		gc->stw_p = e->p;
		return err;
	case GT_EV_GC_STW_DONE:
		if (!gc->stw)
			err = problem(s, e, "the world is not stopped");
		err = global_in_order(s, e, err, &s->stw_seen, &s->stw_at, &s->stw_at_p,
				      "stop-the-world");
		gc->stw = false;
		return err;
	case GT_EV_GC_SWEEP_START:
	case GT_EV_GC_SWEEP_DONE:
		if (p->sweep == (e->type == GT_EV_GC_SWEEP_START))
			err = problem(s, e, "p %lld is %ssweeping", (long long)e->p,
				      p->sweep ? "" : "not ");
		p->sweep = e->type == GT_EV_GC_SWEEP_START;
		return err;
	case GT_EV_GC_MARK_ASSIST_START:
	case GT_EV_GC_MARK_ASSIST_DONE:
		/* A done without its start is allowed: assists can span the trace's start. */
		if (g && g->mark_assist && e->type == GT_EV_GC_MARK_ASSIST_START)
			err = problem(s, e, "g %llu is assisting already",
				      (unsigned long long)g->id);
		if (g)
			g->mark_assist = e->type == GT_EV_GC_MARK_ASSIST_START;
		return err;
	case GT_EV_HEAP_ALLOC:
		gc->has_heap_alloc = true;
		gc->heap_alloc = e->args[0];
		return 0;
	case GT_EV_HEAP_GOAL:
		gc->has_heap_goal = true;
		gc->heap_goal = e->args[0];
		return 0;
	case GT_EV_USER_TASK_CREATE:
	case GT_EV_USER_TASK_END:
		return user_task(s, e);
	case GT_EV_USER_REGION:
		return user_region(s, g, e);
	default:
		return 0;
	}
}

/* Go 1.19 records the goroutine of every event, a sample's too, as existing: a sample
 * before its goroutine's creation (in time) makes the GoCreate fail. */
static int sample(struct gt_state *s, const struct gt_event *e)
{
	const struct gt_gstat *g;

	if (!e->g)
		return 0;
	if (e->g > s->st.max_goid)
		s->st.max_goid = e->g;
	g = find_g(s, e->g);
	if (g && e->ts <= g->created)
		return problem(s, e, "g %llu is created after it, at %llu",
			       (unsigned long long)e->g, (unsigned long long)g->created);
	if (g || u64map__get(s->ended, e->g))
		return 0;
	return remember(s->sampled, e->g, e->ts);
}

int gt_state__event(struct gt_state *s, const struct gt_event *e)
{
	struct gt_gstat *g = NULL;
	struct gt_pstat *p;

	if (!s->st.events || e->ts < s->st.first_ts)
		s->st.first_ts = e->ts;
	if (e->ts > s->st.last_ts)
		s->st.last_ts = e->ts;
	s->st.events++;
	/* A sample names a P and a G but changes neither. */
	if (e->type == GT_EV_CPU_SAMPLE)
		return sample(s, e);
	if (gt_specs[e->type].flags & GT_AVOID)
		return problem(s, e, e->type == GT_EV_FUTILE_WAKEUP ? "Go 1.23 refuses it" :
			       "no sequence number: lxtrace cannot place it across Ps");
	p = get_p(s, e->p);
	if (!p)
		return -ENOMEM;
	if (e->g) {
		g = find_g(s, e->g);
		/* In 1.23's reading, any later event of the goroutine ends the syscall GoSysCall
		 * began, unless that event is the GoSysBlock that makes it blocking. */
		if (g && e->type != GT_EV_GO_SYSBLOCK)
			g->syscall = false;
	}
	if ((gt_specs[e->type].g != GT_G_NONE && gt_specs[e->type].g != GT_G_GC) ||
	    e->type == GT_EV_GO_SYSCALL)
		return go_event(s, e, p, g);
	return other_event(s, e, p, g);
}

int gt_state__replay(struct gt_state *s, struct gt_reader *r, uint64_t before)
{
	struct gt_event e;
	int ret;

	while ((ret = gt_reader__next(r, &e)) == 1)
		if (e.ts < before && gt_state__event(s, &e) == -ENOMEM)
			return -ENOMEM;
	return ret;
}

int gt_state__next(struct gt_state *s, struct gt_reader *r, struct gt_event *e, char *err,
		   size_t errlen)
{
	int ret = gt_reader__next(r, e);

	if (ret < 0)
		snprintf(err, errlen, "%s", gt_reader__error(r));
	else if (ret == 1 && (ret = gt_state__event(s, e)) == 0)
		return 1;
	else if (ret == -EPROTO)
		snprintf(err, errlen, "%s (as Go's parsers refuse it; checked in file order)",
			 gt_state__problem(s));
	else if (ret)
		snprintf(err, errlen, "%s", strerror(-ret));
	return ret;
}

int gt_state__check(const struct gt_event *ev, size_t n, char *err, size_t errlen)
{
	struct gt_state *s = gt_state__new();
	int ret = s ? 0 : -ENOMEM;

	for (size_t i = 0; !ret && i < n; i++)
		if ((ret = gt_state__event(s, &ev[i])) == -EPROTO)
			snprintf(err, errlen, "%s (as Go's parsers refuse it; in the order Go 1.19 "
				 "puts a trace its runtime wrote)", gt_state__problem(s));
	if (ret == -ENOMEM)
		snprintf(err, errlen, "%s", strerror(ENOMEM));
	gt_state__free(s);
	return ret;
}

int gt_state__feed(struct gt_state *s, const void *bytes, size_t len)
{
	struct gt_event e;
	int ret, err = 0;

	if (!s->feeder) {
		s->dict = s->dict ? s->dict : gt_dict__new(NULL, 0);
		s->feeder = s->dict ? gt_reader__new(&(struct gt_reader_opts){
			.sz = sizeof(struct gt_reader_opts), .fd = -1, .headerless = true,
			.dict = s->dict }) : NULL;
		if (!s->feeder)
			return -ENOMEM;
	}
	gt_reader__feed(s->feeder, bytes, len);
	while ((ret = gt_reader__next(s->feeder, &e)) == 1) {
		ret = gt_state__event(s, &e);
		if (ret == -ENOMEM)
			return ret;
		err = err ? err : ret;
	}
	if (ret) {
		if (!s->st.problems++)
			snprintf(s->problem, sizeof(s->problem), "%s", gt_reader__error(s->feeder));
		return ret;
	}
	return err;
}

const struct gt_dict *gt_state__dict(const struct gt_state *s)
{
	return s->dict;
}

/* Adds id to the set refs. */
static int ref(struct u64map *refs, uint64_t id)
{
	bool added;

	return !id || u64map__put(refs, id, &added) ? 0 : -ENOMEM;
}

/* The stack (stacks) or string ids the state refers to, into refs. */
static int state_refs(const struct gt_state *s, bool stacks, struct u64map *refs)
{
	int err = stacks ? ref(refs, s->gc.gc_stk) : 0;

	for (size_t i = 0; i < s->ngs && !err; i++) {
		const struct gt_gstat *g = &s->gs[i];

		if (stacks)
			err = ref(refs, g->stk) || ref(refs, g->name_stk) ? -ENOMEM : 0;
		else
			err = ref(refs, g->label);
		for (size_t k = 0; k < g->nregions && !err; k++)
			err = ref(refs, stacks ? g->regions[k].stk : g->regions[k].name);
	}
	for (size_t i = 0; i < s->ntasks && !err; i++)
		err = ref(refs, stacks ? s->tasks[i].stk : s->tasks[i].name);
	return err;
}

/* Drops the pending ids of one kind that refs does not hold; keeps the others pending. */
static void sweep(struct gt_state *s, bool stacks, const struct u64map *refs)
{
	uint64_t *ids = s->pending[stacks];
	size_t kept = 0;

	for (size_t i = 0; i < s->npending[stacks]; i++) {
		if (u64map__get(refs, ids[i]))
			ids[kept++] = ids[i];
		else if (stacks)
			gt_dict__forget_stack(s->dict, ids[i]);
		else
			gt_dict__forget_string(s->dict, ids[i]);
	}
	s->npending[stacks] = kept;
}

/* Adds n ids of one kind to those pending. */
static int pend(struct gt_state *s, bool stacks, const uint64_t *ids, size_t n)
{
	if (!n)
		return 0;	/* ids may be NULL */
	if (grow_array((void **)&s->pending[stacks], &s->pending_cap[stacks],
		       s->npending[stacks] + n, sizeof(*ids), 256))
		return -ENOMEM;
	memcpy(s->pending[stacks] + s->npending[stacks], ids, n * sizeof(*ids));
	s->npending[stacks] += n;
	return 0;
}

int gt_state__forget(struct gt_state *s, const uint64_t *strings, size_t nstrings,
		     const uint64_t *stacks, size_t nstacks)
{
	struct u64map *refs;
	int err = pend(s, false, strings, nstrings);

	if (!err)
		err = pend(s, true, stacks, nstacks);
	if (err)
		return err;
	if (!s->dict)
		return 0;
	refs = u64map__new();
	if (!refs)
		return -ENOMEM;
	/* Stacks first: a string stays while a stack left names it. */
	err = state_refs(s, true, refs);
	if (!err)
		sweep(s, true, refs);
	u64map__clear(refs);
	if (!err)
		err = state_refs(s, false, refs);
	for (size_t i = 0; i < gt_dict__nstacks(s->dict) && !err; i++) {
		const struct gt_stack *st = gt_dict__stack_at(s->dict, i);

		for (size_t k = 0; k < st->n && !err; k++)
			err = ref(refs, st->frames[k].func_id) || ref(refs, st->frames[k].file_id) ?
				      -ENOMEM : 0;
	}
	if (!err)
		sweep(s, false, refs);
	u64map__free(refs);
	return err;
}

const char *gt_state__problem(const struct gt_state *s)
{
	return s->problem;
}

size_t gt_state__ngoroutines(const struct gt_state *s)
{
	return s->ngs;
}

const struct gt_gstat *gt_state__goroutines(const struct gt_state *s)
{
	return s->gs;
}

const struct gt_gstat *gt_state__goroutine(const struct gt_state *s, uint64_t g)
{
	return find_g(s, g);
}

size_t gt_state__nprocs(const struct gt_state *s)
{
	return s->nps;
}

const struct gt_pstat *gt_state__procs(const struct gt_state *s)
{
	return s->ps;
}

const struct gt_pstat *gt_state__proc(const struct gt_state *s, int64_t p)
{
	const uint64_t *i = u64map__get(s->p_index, (uint64_t)p);

	return i ? &s->ps[*i] : NULL;
}

size_t gt_state__ntasks(const struct gt_state *s)
{
	return s->ntasks;
}

const struct gt_task *gt_state__tasks(const struct gt_state *s)
{
	return s->tasks;
}

const struct gt_gcstat *gt_state__gc(const struct gt_state *s)
{
	return &s->gc;
}

void gt_state__stats(const struct gt_state *s, struct gt_state_stats *out)
{
	*out = s->st;
}

/* Copies n elements of size from src into a fresh array (kept at least 1 long), with an index
 * map from each element's key. */
static int copy_table(void **dst, size_t *cap, const void *src, size_t n, size_t size,
		      struct u64map *index, uint64_t (*key)(const void *))
{
	uint64_t *slot;
	bool added;

	*dst = malloc((n ? n : 1) * size);
	if (!*dst)
		return -ENOMEM;
	*cap = n ? n : 1;
	if (n)
		memcpy(*dst, src, n * size);
	for (size_t i = 0; i < n; i++) {
		slot = u64map__put(index, key((const char *)src + i * size), &added);
		if (!slot)
			return -ENOMEM;
		*slot = i;
	}
	return 0;
}

static uint64_t g_key(const void *x)
{
	return ((const struct gt_gstat *)x)->id;
}

static uint64_t p_key(const void *x)
{
	return (uint64_t)((const struct gt_pstat *)x)->id;
}

static uint64_t task_key(const void *x)
{
	return ((const struct gt_task *)x)->id;
}

struct gt_state *gt_state__clone(const struct gt_state *s)
{
	struct gt_state *c = gt_state__new();
	int err;

	if (!c)
		return NULL;
	c->gc = s->gc;
	c->st = s->st;
	/* The ids of ended and sampled goroutines stay behind: the copy checks less there. */
	c->gc_at = s->gc_at;
	c->stw_at = s->stw_at;
	c->gc_at_p = s->gc_at_p;
	c->stw_at_p = s->stw_at_p;
	c->gc_seen = s->gc_seen;
	c->stw_seen = s->stw_seen;
	memcpy(c->problem, s->problem, sizeof(c->problem));
	err = copy_table((void **)&c->gs, &c->gs_cap, s->gs, s->ngs, sizeof(*s->gs), c->g_index,
			 g_key);
	c->ngs = c->gs ? s->ngs : 0;
	if (!err)
		err = copy_table((void **)&c->ps, &c->ps_cap, s->ps, s->nps, sizeof(*s->ps),
				 c->p_index, p_key);
	c->nps = c->ps ? s->nps : 0;
	if (!err)
		err = copy_table((void **)&c->tasks, &c->tasks_cap, s->tasks, s->ntasks,
				 sizeof(*s->tasks), c->task_index, task_key);
	c->ntasks = c->tasks ? s->ntasks : 0;
	/* Each goroutine's regions are its own. */
	for (size_t i = 0; i < c->ngs; i++) {
		struct gt_gstat *g = &c->gs[i];
		size_t n = g->nregions, cap = 4;
		struct gt_region *r;

		while (cap < n)	/* as push_region keeps it: 4, or the next power of two */
			cap *= 2;
		r = !err && n ? malloc(cap * sizeof(*r)) : NULL;
		if (r)
			memcpy(r, g->regions, n * sizeof(*r));
		else if (n)
			err = -ENOMEM;
		g->regions = r;
		if (!r)
			g->nregions = 0;
	}
	if (err) {
		gt_state__free(c);
		errno = ENOMEM;
		return NULL;
	}
	return c;
}

void gt_state__free(struct gt_state *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->ngs; i++)
		free((void *)s->gs[i].regions);
	free(s->gs);
	free(s->ps);
	free(s->tasks);
	u64map__free(s->g_index);
	u64map__free(s->p_index);
	u64map__free(s->task_index);
	u64map__free(s->ended);
	u64map__free(s->sampled);
	gt_reader__free(s->feeder);
	gt_dict__free(s->dict);
	free(s->pending[0]);
	free(s->pending[1]);
	free(s);
}
