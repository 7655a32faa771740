/* walk.c - a trace file's events as waits, stretches off the CPU, syscalls, samples and logs
 * of the threads a filter keeps (walk.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "lib/escape.h"
#include "lib/grow.h"
#include "lib/u64map.h"
#include "user/model/model.h"
#include "user/events/events.h"
#include "user/report/walk.h"

struct tstate {
	struct walk_thread pub;
	bool live;
	bool runnable;		/* since runnable_at, for runnable_kind */
	bool off;		/* off the CPU since left_at, for left_why */
	/* Created by its own exec, or found by a go1.23 file's status (no creator, no P):
	 * its first start is no wait. */
	bool exec_start;
	/* Made runnable by a repair (a wakeup the kernel's records lost, written on the
	 * housekeeping P or with the "[lxtrace repair]" stack): its wait is not known. Stopped by
	 * one: its time off the CPU is not known (nor a wait, when the stop was a preemption). */
	bool invented_wake, invented_stop;
	bool own;		/* lxtrace's goroutine (creation stack "lxtrace"): writes logs */
	bool matched;		/* counted in walk_stats.matched */
	uint8_t runnable_kind;	/* enum walk_wait */
	uint8_t left_why;	/* enum walk_off */
	uint64_t runnable_at, left_at;	/* ticks */
	/* The stacks the events were written under (an id defined again later names another):
	 * of the event it left with, and of its latest GoSysCall, which a GoSysBlock blocks in. */
	const struct gt_stack *left_stk, *sys_stk;
	/* A GoSysCall not yet known to be an entry: the recorder writes one with a GoSysBlock
	 * at the same time for an uninterruptible sleep, with or without entries recorded. */
	bool entry_pending;
	uint64_t entry_ts;
	/* An entry whose return (a LXTRACE_SYSRET_KEY log) has not come yet, at call_ts. */
	bool call_open;
	uint64_t call_ts;
	const struct gt_stack *call_stk;
	/* A wait that ended before any stack named the thread's process (a new thread's first
	 * start), told once one does. */
	bool wait_pending;
	uint8_t pend_kind;
	int64_t pend_p;
	uint64_t pend_ns, pend_at;
	const struct gt_stack *pend_stk;	/* it left the CPU with; NULL: none (new thread) */
};

struct pstate {
	uint64_t g;		/* running, 0 for none */
	uint64_t since;		/* ticks */
	size_t next, n;		/* ring of the latest runs */
	struct walk_run runs[WALK_RUNS_KEPT];
};

struct walk {
	/* The file's events, checked as `lxtrace dump` checks them (events.h). */
	struct events *src;
	const struct gt_dict *dict;
	const struct walk_filter *f;
	const struct walk_sink *s;
	struct walk_stats *st;
	uint64_t base, freq;	/* the first event's ticks; ticks per second */
	uint64_t init_end;	/* ticks of the Gomaxprocs event, 0 before it */
	struct u64map *byg;	/* g -> index + 1 in threads */
	struct tstate *threads;
	size_t nthreads, cap, *free_slots, nfree, free_cap;
	struct pstate **procs;
	size_t nprocs;
	bool lxtrace;		/* lxtrace's goroutine was created: lxtrace wrote the file */
	bool oom;		/* a thread or P could not be kept */
};

static uint64_t ns_of(const struct walk *w, uint64_t ticks)
{
	if (ticks <= w->base)
		return 0;
	return (uint64_t)((unsigned __int128)(ticks - w->base) * 1000000000u / w->freq);
}

void walk__name(const struct walk_thread *t, char *buf, size_t len)
{
	FILE *f = fmemopen(buf, len, "w");
	size_t at;

	if (!f) {
		snprintf(buf, len, "tid %u", t->tid);
		return;
	}
	if (model__standin(t->g)) {
		/* What held a CPU that the trace does not follow: no thread of it, and no tid. */
		fputs(model__standin_self(t->g) ? "lxtrace (the tracer)" : "untraced", f);
		if (t->id.pid) {
			fputs(": ", f);
			escape__print(f, t->id.comm, strlen(t->id.comm));
			fprintf(f, " (pid %u)", t->id.pid);
		}
	} else if (t->id.pid) {
		escape__print(f, t->id.comm, strlen(t->id.comm));
		fprintf(f, " (tid %u, pid %u)", t->tid, t->id.pid);
	} else if (t->go_runtime) {
		fprintf(f, "goroutine %u", t->tid);
	} else {
		fprintf(f, "tid %u", t->tid);
	}
	fflush(f);
	at = (size_t)ftell(f);
	fclose(f);
	buf[at < len ? at : len - 1] = '\0';
}

static struct tstate *thread_of(struct walk *w, uint64_t g, bool create)
{
	uint64_t *slot = u64map__get(w->byg, g);
	bool added, reused = w->nfree > 0;
	struct tstate *t;
	size_t i;

	if (slot)
		return &w->threads[*slot - 1];
	if (!create || !g)
		return NULL;
	if (reused) {
		i = w->free_slots[--w->nfree];
	} else {
		if (grow_array((void **)&w->threads, &w->cap, w->nthreads + 1, sizeof(*w->threads),
			       64)) {
			w->oom = true;
			return NULL;
		}
		i = w->nthreads++;
	}
	slot = u64map__put(w->byg, g, &added);
	if (!slot) {
		if (reused)
			w->nfree++;
		else
			w->nthreads--;
		w->oom = true;
		return NULL;
	}
	*slot = i + 1;
	t = &w->threads[i];
	memset(t, 0, sizeof(*t));
	t->pub.g = g;
	t->pub.tid = (uint32_t)g;
	/* lxtrace's goroutine is created first in lxtrace's files. */
	t->pub.go_runtime = !w->lxtrace;
	t->live = true;
	if (!model__standin(g))
		w->st->threads++;
	return t;
}

static int drop_thread(struct walk *w, struct tstate *t)
{
	size_t i = (size_t)(t - w->threads);

	if (grow_array((void **)&w->free_slots, &w->free_cap, w->nfree + 1, sizeof(size_t), 64))
		return -ENOMEM;
	u64map__del(w->byg, t->pub.g);
	t->live = false;
	w->free_slots[w->nfree++] = i;
	return 0;
}

static struct pstate *proc_of(struct walk *w, int64_t p)
{
	size_t need;

	/* lxtrace's Ps are the CPUs and its housekeeping P; the readers take ids from 1,000,000
	 * for their own lanes (docs/format.md §3). A P past this has no runs kept. */
	if (p < 0 || p >= 4096)
		return NULL;
	need = (size_t)p + 1;
	if (need > w->nprocs) {
		struct pstate **n = realloc(w->procs, need * sizeof(*n));

		if (!n) {
			w->oom = true;
			return NULL;
		}
		memset(n + w->nprocs, 0, (need - w->nprocs) * sizeof(*n));
		w->procs = n;
		w->nprocs = need;
	}
	if (!w->procs[p])
		w->procs[p] = calloc(1, sizeof(struct pstate));
	if (!w->procs[p])
		w->oom = true;
	return w->procs[p];
}

static bool matches(const struct walk_filter *f, const struct walk_thread *t)
{
	if (f->pid && t->id.pid != f->pid)
		return false;
	if (f->comm && strcmp(t->id.comm, f->comm) && strcmp(t->id.prog, f->comm))
		return false;
	return true;
}

static bool keeps(const struct walk *w, const struct walk_thread *t, uint64_t at)
{
	const struct walk_filter *f = w->f;

	if (at < f->from_ns || at >= f->to_ns)
		return false;
	return matches(f, t);
}

/* Its identity changed: the filter may keep it now. */
static void named(struct walk *w, struct tstate *t)
{
	if (!t->matched && !model__standin(t->pub.g) && (t->pub.id.pid || t->pub.id.prog[0]) &&
	    matches(w->f, &t->pub)) {
		t->matched = true;
		w->st->matched++;
	}
}

bool walk__none_kept(const struct walk_filter *f, const struct walk_stats *st, char *buf,
		     size_t len)
{
	FILE *out;

	if (st->matched || (!f->pid && !f->comm) || !(out = fmemopen(buf, len, "w")))
		return false;
	fputs("no thread", out);
	if (f->pid)
		fprintf(out, " of pid %u", f->pid);
	if (f->pid && f->comm)
		fputs(" and", out);
	if (f->comm) {
		fputs(" named ", out);
		escape__quoted(out, f->comm, strlen(f->comm));
	}
	fputs(" in this trace", out);
	fclose(out);
	buf[len - 1] = '\0';
	return true;
}

/* A stack of the thread's own names its process (and its current comm). */
static void learn(struct walk *w, struct tstate *t, const struct gt_stack *s)
{
	struct ident id;

	if (ident__of_stack(s, &id)) {
		t->pub.id = id;
		named(w, t);
	}
}

size_t walk__runs(const struct walk *w, int64_t p, uint64_t from, uint64_t to,
		  struct walk_run *out, size_t n, bool *complete)
{
	const struct pstate *ps = p >= 0 && (size_t)p < w->nprocs ? w->procs[p] : NULL;
	size_t found = 0, k;

	*complete = true;
	if (!ps)
		return 0;
	for (k = 0; k < ps->n; k++) {
		const struct walk_run *r =
			&ps->runs[(ps->next + WALK_RUNS_KEPT - 1 - k) % WALK_RUNS_KEPT];

		if (r->to <= from)
			return found < n ? found : n;
		if (r->from >= to)
			continue;
		if (found < n) {
			out[found] = *r;
			if (out[found].from < from)
				out[found].from = from;
			if (out[found].to > to)
				out[found].to = to;
		}
		found++;
	}
	/* Every kept run is inside the span: older ones may be too. */
	if (ps->n == WALK_RUNS_KEPT) {
		*complete = false;
		w->st->runs_missed++;
	}
	return found < n ? found : n;
}

/* The thread running on P p stops at ts. */
static void run_ends(struct walk *w, int64_t p, uint64_t ts, bool unsure)
{
	struct pstate *ps = proc_of(w, p);
	struct walk_run *r;

	if (!ps || !ps->g)
		return;
	r = &ps->runs[ps->next];
	ps->next = (ps->next + 1) % WALK_RUNS_KEPT;
	if (ps->n < WALK_RUNS_KEPT)
		ps->n++;
	r->g = ps->g;
	r->unsure = unsure;
	r->from = ns_of(w, ps->since);
	r->to = ns_of(w, ts);
	ps->g = 0;
}

const struct walk_thread *walk__thread(const struct walk *w, uint64_t g)
{
	const uint64_t *slot = u64map__get(w->byg, g);

	return slot ? &w->threads[*slot - 1].pub : NULL;
}

static const struct gt_stack *stack_id(const struct walk *w, uint64_t id)
{
	return id ? gt_dict__stack(w->dict, id) : NULL;
}

static void tell_wait(struct walk *w, struct tstate *t)
{
	t->wait_pending = false;
	if (keeps(w, &t->pub, t->pend_at))
		w->s->wait(w->s->ctx, w, &t->pub, t->pend_kind, t->pend_stk, t->pend_ns,
			   t->pend_at, t->pend_p);
}

/* The open call ends at ts (its return), or with no length known (ts 0). */
static void tell_call(struct walk *w, struct tstate *t, uint64_t ts)
{
	uint64_t at = ns_of(w, ts ? ts : t->call_ts);

	t->call_open = false;
	if (w->s->syscall && keeps(w, &t->pub, at))
		w->s->syscall(w->s->ctx, &t->pub, t->call_stk, ident__syscall(t->call_stk),
			      ts ? at - ns_of(w, t->call_ts) : WALK_NO_LENGTH, at);
}

/* The GoSysCall was an entry: a call opens, which its return will end. */
static void tell_entry(struct walk *w, struct tstate *t)
{
	t->entry_pending = false;
	if (!w->init_end)
		return;
	if (t->call_open)
		tell_call(w, t, 0);
	t->call_open = true;
	t->call_ts = t->entry_ts;
	t->call_stk = t->sys_stk;
}

/* t's stretch off the CPU, which ends at ts (a run, or with end the end of the file), told to
 * the sink. One begun in the init phase (a thread asleep when the recording started) counts
 * from the recording's start: the time before it is unknown. */
static void tell_off(struct walk *w, struct tstate *t, uint64_t ts, bool end)
{
	bool cut = end || t->left_at <= w->init_end;
	uint64_t from = cut && t->left_at < w->init_end ? w->init_end : t->left_at;
	uint64_t at = ns_of(w, ts);
	const struct gt_stack *s;
	void (*tell)(void *ctx, const struct walk_thread *t, enum walk_off why,
		     const struct gt_stack *stk, const char *sys, uint64_t ns, uint64_t at) =
		cut ? w->s->offcpu_cut : w->s->offcpu;

	if (!t->off || t->invented_stop || t->own || model__standin(t->pub.g) || !tell ||
	    !keeps(w, &t->pub, at))
		return;
	s = t->left_stk;
	tell(w->s->ctx, &t->pub, t->left_why, s, ident__syscall(s), at - ns_of(w, from), at);
}

static void on_start(struct walk *w, const struct gt_event *e)
{
	struct tstate *t = thread_of(w, e->g, true);
	struct pstate *ps = proc_of(w, e->p);
	uint64_t at = ns_of(w, e->ts);

	if (!t)
		return;
	if (ps) {
		ps->g = e->g;
		ps->since = e->ts;
	}
	/* What began in the init phase or ends on the housekeeping P is the recorder's making. */
	/* A stand-in's runs are what held the CPU (walk__runs), never a thread's waits. */
	if (w->init_end && e->p < w->st->cpus && !model__standin(e->g)) {
		if (t->runnable && !t->exec_start && !t->invented_wake &&
		    t->runnable_at > w->init_end && w->s->wait) {
			if (t->wait_pending)
				tell_wait(w, t);
			t->wait_pending = true;
			t->pend_kind = t->runnable_kind;
			t->pend_ns = ns_of(w, e->ts) - ns_of(w, t->runnable_at);
			t->pend_at = at;
			t->pend_p = e->p;
			t->pend_stk = t->off ? t->left_stk : NULL;
			if (t->pub.id.pid)
				tell_wait(w, t);
		}
		tell_off(w, t, e->ts, false);
	}
	t->runnable = t->off = t->exec_start = t->invented_wake = t->invented_stop = false;
}

static void becomes_runnable(struct tstate *t, enum walk_wait kind, uint64_t ts)
{
	if (!t || t->runnable)
		return;
	t->runnable = true;
	t->runnable_kind = kind;
	t->runnable_at = ts;
}

static void leaves(struct walk *w, const struct gt_event *e, enum walk_off why,
		   const struct gt_stack *stk)
{
	struct tstate *t = thread_of(w, e->g, true);
	const char *special = ident__special(e->stack);

	run_ends(w, e->p, e->ts, special && !strcmp(special, "[lxtrace repair]"));
	if (!t)
		return;
	t->off = true;
	t->left_why = why;
	t->left_at = e->ts;
	t->left_stk = stk;
	if (why == WALK_OFF_RUNQ)
		becomes_runnable(t, WALK_PREEMPT, e->ts);
}

static void on_create(struct walk *w, const struct gt_event *e)
{
	struct tstate *t = thread_of(w, e->args[0], true);
	const struct gt_stack *created = stack_id(w, e->args[1]);
	const char *special = ident__special(created);

	if (!t)
		return;
	if (ident__program(created, &t->pub.id))
		named(w, t);
	t->own = special && !strcmp(special, "lxtrace");
	w->lxtrace |= t->own;
	t->pub.go_runtime &= !t->own;
	/* An exec: the thread's next goroutine, started at once where the old one ran. */
	t->exec_start = (e->g && (uint32_t)e->g == t->pub.tid) || (!e->g && e->p < 0);
	becomes_runnable(t, WALK_WAKEUP, e->ts);
}

static void on_log(struct walk *w, const struct gt_event *e)
{
	struct tstate *t = thread_of(w, e->g, true);
	const char *key = gt_dict__string(w->dict, e->args[1]);
	uint64_t at = ns_of(w, e->ts);

	/* A syscall's return (go1.19 files, docs/format.md §10.3): one with no entry open
	 * (before the start, or in the image an exec left) has no length. */
	if (t && key && !strcmp(key, LXTRACE_SYSRET_KEY)) {
		if (t->call_open)
			tell_call(w, t, e->ts);
		return;
	}
	if (!t || !w->s->log || at < w->f->from_ns || at >= w->f->to_ns)
		return;
	w->s->log(w->s->ctx, &t->pub, key ? key : "", e->msg, e->msg_len, at);
}

/* An event the model invented (docs/model.md, "Repairs"): with the "[lxtrace repair]" stack,
 * or a wakeup or a creation on the housekeeping P after the init phase (where the model
 * writes what the kernel's records did not show; a GoSysExit has no stack to say so). The
 * thread it makes runnable has no known wait; the one it stops no known time off the CPU
 * (nor a wait, when it is preempted). lxtrace's own goroutine, woken there to write a log,
 * is no repair. */
static void invented(struct walk *w, const struct gt_event *e, struct tstate *t)
{
	bool wake = e->type == GT_EV_GO_UNBLOCK || e->type == GT_EV_GO_SYSEXIT ||
		    e->type == GT_EV_GO_CREATE;
	struct tstate *x = e->type == GT_EV_GO_UNBLOCK || e->type == GT_EV_GO_CREATE ?
			   thread_of(w, e->args[0], true) : t;

	if (!x || (x->own && wake))
		return;
	x->invented_wake |= wake || e->type == GT_EV_GO_PREEMPT || e->type == GT_EV_GO_SCHED;
	x->invented_stop |= !wake;
	if (w->s->repair && keeps(w, &x->pub, ns_of(w, e->ts)))
		w->s->repair(w->s->ctx, &x->pub, gt_specs[e->type].name, ns_of(w, e->ts));
}

static int event(struct walk *w, const struct gt_event *e)
{
	bool wake = e->type == GT_EV_GO_UNBLOCK || e->type == GT_EV_GO_SYSEXIT;
	struct tstate *t = NULL;
	const struct gt_stack *stk = e->stack;
	const char *special = ident__special(e->stack);

	/* Every stack is its goroutine's own (an unblock's is the waker's, which runs). */
	if (e->g) {
		t = thread_of(w, e->g, true);
		if (t)
			learn(w, t, e->stack);
		if (t && t->wait_pending && t->pub.id.pid)
			tell_wait(w, t);
		if (t && t->entry_pending && (e->type != GT_EV_GO_SYSBLOCK || e->ts != t->entry_ts))
			tell_entry(w, t);
		if (t)
			t->entry_pending = false;
	}
	if ((special && !strcmp(special, "[lxtrace repair]")) ||
	    (w->init_end && e->p >= w->st->cpus && (wake || e->type == GT_EV_GO_CREATE)))
		invented(w, e, t);
	switch (e->type) {
	case GT_EV_GOMAXPROCS:
		if (!w->init_end) {
			w->init_end = e->ts;
			w->st->cpus = (int64_t)e->args[0];
			w->st->go_runtime = !w->lxtrace;
		}
		break;
	case GT_EV_GO_CREATE:
		on_create(w, e);
		break;
	case GT_EV_GO_START:
		on_start(w, e);
		break;
	case GT_EV_GO_END:
		run_ends(w, e->p, e->ts, false);
		if (t && t->wait_pending)
			tell_wait(w, t);
		if (t && t->call_open)
			tell_call(w, t, 0);
		if (t && drop_thread(w, t))
			return -ENOMEM;
		break;
	case GT_EV_PROC_STOP:
		run_ends(w, e->p, e->ts, false);
		break;
	case GT_EV_GO_PREEMPT:
	case GT_EV_GO_SCHED:
		leaves(w, e, WALK_OFF_RUNQ, stk);
		break;
	case GT_EV_GO_SLEEP:
		leaves(w, e, WALK_OFF_SLEEP, stk);
		break;
	case GT_EV_GO_BLOCK_SYNC:
		leaves(w, e, WALK_OFF_LOCK, stk);
		break;
	case GT_EV_GO_BLOCK_SELECT:
	case GT_EV_GO_BLOCK_NET:
	case GT_EV_GO_BLOCK_SEND:
	case GT_EV_GO_BLOCK_RECV:
		leaves(w, e, WALK_OFF_FD, stk);
		break;
	case GT_EV_GO_BLOCK:
	case GT_EV_GO_BLOCK_COND:
	case GT_EV_GO_BLOCK_GC:
	case GT_EV_GO_STOP:
		leaves(w, e, WALK_OFF_OTHER, stk);
		break;
	case GT_EV_GO_SYSBLOCK:
		leaves(w, e, WALK_OFF_IO, t ? t->sys_stk : NULL);
		break;
	case GT_EV_GO_SYSCALL:
		if (!t)
			break;
		t->sys_stk = stk;
		t->entry_pending = true;
		t->entry_ts = e->ts;
		break;
	case GT_EV_GO_UNBLOCK:
		becomes_runnable(thread_of(w, e->args[0], true), WALK_WAKEUP, e->ts);
		break;
	case GT_EV_GO_SYSEXIT:
		becomes_runnable(t, WALK_WAKEUP, e->ts);
		break;
	case GT_EV_CPU_SAMPLE:
		if (w->s->sample && (!t || keeps(w, &t->pub, ns_of(w, e->ts))) &&
		    (t || (!w->f->pid && !w->f->comm)))
			w->s->sample(w->s->ctx, t ? &t->pub : NULL, e->stack, e->p,
				     ns_of(w, e->ts));
		break;
	case GT_EV_USER_LOG:
		on_log(w, e);
		break;
	default:
		break;
	}
	return 0;
}

static void free_walk(struct walk *w)
{
	for (size_t i = 0; i < w->nprocs; i++)
		free(w->procs[i]);
	free(w->procs);
	free(w->threads);
	free(w->free_slots);
	u64map__free(w->byg);
	events__free(w->src);
}

int walk__file(int fd, const struct walk_filter *f, const struct walk_sink *s,
	       struct walk_stats *st, char *err, size_t errlen)
{
	struct walk w = { .f = f, .s = s, .st = st };
	struct gt_event e;
	uint64_t last = 0;
	bool first = true, freq_read = false;
	int ret;

	memset(st, 0, sizeof(*st));
	*err = '\0';
	w.byg = u64map__new();
	if (!w.byg) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	if ((ret = events__open(fd, &w.src, err, errlen))) {
		free_walk(&w);
		return ret;
	}
	w.dict = events__dict(w.src);
	while ((ret = events__next(w.src, &e, err, errlen)) > 0) {
		if (first) {
			w.base = e.ts;
			first = false;
		}
		/* Go's runtime wrote it (format/go119/order.h): from a pipe, not read whole. */
		if (!freq_read && !events__frequency(w.src)) {
			snprintf(err, errlen, "a trace Go's runtime wrote is read whole, to be put "
				 "in Go's order: give it as a file, not a pipe");
			ret = -EINVAL;
			break;
		}
		/* Known before the first event: in the first batch's header of lxtrace's files, and
		 * read whole with those Go's runtime wrote, which have it at the end. */
		if (!freq_read) {
			w.freq = events__frequency(w.src);
			freq_read = true;
		}
		st->events++;
		if (e.ts > last)
			last = e.ts;
		ret = event(&w, &e);
		if (!ret && w.oom)
			ret = -ENOMEM;
		if (ret) {
			snprintf(err, errlen, "%s", strerror(-ret));
			break;
		}
	}
	if (!first && events__last(w.src) > last)
		last = events__last(w.src);
	/* What the threads alive at the end still hold. */
	for (size_t i = 0; !ret && i < w.nthreads; i++) {
		if (w.threads[i].live && w.threads[i].wait_pending)
			tell_wait(&w, &w.threads[i]);
		if (w.threads[i].live && w.threads[i].entry_pending)
			tell_entry(&w, &w.threads[i]);
		if (w.threads[i].live && w.threads[i].call_open)
			tell_call(&w, &w.threads[i], 0);
		/* Still off the CPU: asleep until the end, maybe the whole recording. */
		if (w.threads[i].live && w.init_end)
			tell_off(&w, &w.threads[i], last, true);
	}
	st->span_ns = ns_of(&w, last);
	free_walk(&w);
	return ret < 0 ? ret : 0;
}
