/* sched.c - waits for a CPU per process and thread, and the worst of them with what ran
 * meanwhile (sched.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"
#include "lib/u64map.h"
#include "user/report/fmt.h"
#include "user/report/json.h"
#include "user/report/sched.h"

struct row {
	struct walk_thread who;	/* a process row: who.id of its latest thread */
	struct hist h[WALK_WAITS];
};

struct rows {
	struct u64map *by;	/* key -> index + 1 */
	struct row *v;
	size_t n, cap;
};

struct sched_report {
	size_t top;
	bool oom;
	struct rows threads, procs;	/* by goroutine, by pid */
	struct sched_worst *worst;	/* the worst `top` waits, worst first */
	size_t nworst;
	struct walk_run *runs;		/* WALK_RUNS_KEPT, for walk__runs */
	uint64_t *sums;			/* as many */
	struct u64map *by_g;		/* who_ran's: goroutine -> index in runs */
};

static const char *const kind_names[WALK_WAITS] = { "wakeup", "preempt" };
static const char *const kind_after[WALK_WAITS] = { "a wakeup", "a preemption" };

struct sched_report *sched_report__new(size_t top)
{
	struct sched_report *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->top = top;
	s->threads.by = u64map__new();
	s->procs.by = u64map__new();
	s->worst = calloc(top ? top : 1, sizeof(*s->worst));
	s->runs = calloc(WALK_RUNS_KEPT, sizeof(*s->runs));
	s->sums = calloc(WALK_RUNS_KEPT, sizeof(*s->sums));
	s->by_g = u64map__new();
	if (!s->threads.by || !s->procs.by || !s->worst || !s->runs || !s->sums || !s->by_g) {
		sched_report__free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

static struct row *row_of(struct rows *r, uint64_t key, bool *added)
{
	uint64_t *slot = u64map__get(r->by, key);

	*added = false;
	if (slot)
		return &r->v[*slot - 1];
	if (grow_array((void **)&r->v, &r->cap, r->n + 1, sizeof(*r->v), 64))
		return NULL;
	slot = u64map__put(r->by, key, added);
	if (!slot)
		return NULL;
	*slot = ++r->n;
	memset(&r->v[r->n - 1], 0, sizeof(r->v[0]));
	return &r->v[r->n - 1];
}

/* The runs on the wait's CPU summed per thread, the longest first. */
static void who_ran(struct sched_report *s, const struct walk *w, struct sched_worst *x)
{
	size_t n = walk__runs(w, x->p, x->at - x->ns, x->at, s->runs, WALK_RUNS_KEPT, &x->complete);
	uint64_t covered = 0, *sum = s->sums;
	size_t m = 0;

	/* Each thread's first run (the latest) stands for all of its runs, with their sum. */
	u64map__clear(s->by_g);
	x->unsure_ns = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t len = s->runs[i].to - s->runs[i].from, *slot;
		bool added;

		covered += len;
		if (s->runs[i].unsure) {
			x->unsure_ns += len;
			continue;
		}
		slot = u64map__put(s->by_g, s->runs[i].g, &added);
		if (!slot) {
			s->oom = true;
			return;
		}
		if (added) {
			*slot = m;
			s->runs[m] = s->runs[i];
			sum[m++] = len;
		} else {
			sum[*slot] += len;
		}
	}
	x->nruns = 0;
	x->others_ns = 0;
	for (size_t k = 0; k < m; k++) {
		if (k < SCHED_WORST_RUNS) {
			size_t best = k;

			for (size_t j = k + 1; j < m; j++)
				if (sum[j] > sum[best])
					best = j;
			x->runs[k].ns = sum[best];
			if (walk__thread(w, s->runs[best].g))
				x->runs[k].who = *walk__thread(w, s->runs[best].g);
			else
				x->runs[k].who = (struct walk_thread){
					.g = s->runs[best].g, .tid = (uint32_t)s->runs[best].g,
					.go_runtime = x->who.go_runtime };
			x->nruns++;
			s->runs[best] = s->runs[k];
			sum[best] = sum[k];
		} else {
			x->others_ns += sum[k];
		}
	}
	x->idle_ns = covered < x->ns ? x->ns - covered : 0;
}

static void note_worst(struct sched_report *s, const struct walk *w, const struct walk_thread *t,
		       enum walk_wait kind, uint64_t ns, uint64_t at, int64_t p)
{
	size_t i;

	if (!s->top || (s->nworst == s->top && ns <= s->worst[s->nworst - 1].ns))
		return;
	if (s->nworst < s->top)
		s->nworst++;
	for (i = s->nworst - 1; i > 0 && s->worst[i - 1].ns < ns; i--)
		s->worst[i] = s->worst[i - 1];
	s->worst[i] = (struct sched_worst){ .who = *t, .kind = kind, .ns = ns, .at = at, .p = p };
	who_ran(s, w, &s->worst[i]);
}

void sched_report__wait(struct sched_report *s, const struct walk *w,
			const struct walk_thread *t, enum walk_wait kind, uint64_t ns,
			uint64_t at, int64_t p)
{
	struct row *tr, *pr;
	bool added;

	tr = row_of(&s->threads, t->g, &added);
	if (!tr) {
		s->oom = true;
		return;
	}
	tr->who = *t;
	pr = row_of(&s->procs, t->id.pid, &added);
	if (!pr) {
		s->oom = true;
		return;
	}
	pr->who = *t;
	if (hist__add(&tr->h[kind], ns, at) || hist__add(&pr->h[kind], ns, at))
		s->oom = true;
	note_worst(s, w, t, kind, ns, at, p);
}

bool sched_report__ok(const struct sched_report *s)
{
	return !s->oom;
}

const struct hist *sched_report__hist(const struct sched_report *s, uint32_t pid, uint32_t tid,
				      enum walk_wait kind)
{
	const struct row *best = NULL;

	if (!tid) {
		const uint64_t *slot = u64map__get(s->procs.by, pid);

		best = slot ? &s->procs.v[*slot - 1] : NULL;
	}
	/* A thread's rows, one per program it ran: its latest with waits of the kind. */
	for (size_t i = 0; tid && i < s->threads.n; i++)
		if (s->threads.v[i].who.tid == tid && s->threads.v[i].h[kind].count &&
		    (!best || s->threads.v[i].who.g > best->who.g))
			best = &s->threads.v[i];
	return best && best->h[kind].count ? &best->h[kind] : NULL;
}

bool sched_report__worst(const struct sched_report *s, size_t i, struct sched_worst *out)
{
	if (i >= s->nworst)
		return false;
	*out = s->worst[i];
	return true;
}

static uint64_t row_max(const struct row *r)
{
	return r->h[0].max > r->h[1].max ? r->h[0].max : r->h[1].max;
}

static int by_max(const void *a, const void *b)
{
	const struct row *x = *(const struct row *const *)a, *y = *(const struct row *const *)b;
	uint64_t mx = row_max(x), my = row_max(y);

	return mx < my ? 1 : mx > my ? -1 : x->who.g < y->who.g ? -1 : x->who.g > y->who.g;
}

static void print_row(FILE *out, const char *label, const struct row *r)
{
	char a[FMT_DUR], b[FMT_DUR], c[FMT_DUR], d[FMT_DUR];
	bool first = true;

	for (int k = 0; k < WALK_WAITS; k++) {
		const struct hist *h = &r->h[k];

		if (!h->count)
			continue;
		fprintf(out, "%-22s %-7s %7llu %6s %6s %6s %6s %10.6f\n", first ? label : "",
			kind_names[k], (unsigned long long)h->count,
			fmt__dur(a, hist__quantile(h, 0.5)), fmt__dur(b, hist__quantile(h, 0.9)),
			fmt__dur(c, hist__quantile(h, 0.99)), fmt__dur(d, h->max), h->max_at / 1e9);
		first = false;
	}
}

static size_t sorted(const struct rows *r, const struct row ***out)
{
	const struct row **v = malloc((r->n ? r->n : 1) * sizeof(*v));

	*out = v;
	if (!v)
		return 0;
	for (size_t i = 0; i < r->n; i++)
		v[i] = &r->v[i];
	qsort(v, r->n, sizeof(*v), by_max);
	return r->n;
}

static void print_worst(const struct sched_report *s, FILE *out)
{
	char name[72], d[FMT_DUR], e[FMT_DUR];

	fprintf(out, "\nThe worst waits, and who ran on that CPU meanwhile:\n");
	for (size_t i = 0; i < s->nworst; i++) {
		const struct sched_worst *x = &s->worst[i];

		walk__name(&x->who, name, sizeof(name));
		fprintf(out, "%2zu. %6s %s\n    after %s, until %.6f s, on CPU %lld; it ran:\n",
			i + 1, fmt__dur(d, x->ns), name, kind_after[x->kind], x->at / 1e9,
			(long long)x->p);
		for (size_t j = 0; j < x->nruns; j++) {
			walk__name(&x->runs[j].who, name, sizeof(name));
			fprintf(out, "      %6s %s\n", fmt__dur(e, x->runs[j].ns), name);
		}
		if (x->others_ns)
			fprintf(out, "      %6s other threads\n", fmt__dur(e, x->others_ns));
		if (x->unsure_ns)
			fprintf(out, "      %6s not known: a switch the kernel did not report\n",
				fmt__dur(e, x->unsure_ns));
		if (x->idle_ns)
			fprintf(out, "      %6s %s\n", fmt__dur(e, x->idle_ns),
				x->complete ?
				"no thread (the CPU idle, or the wakeup's way to it)" :
				"before the latest runs of that CPU kept");
	}
}

void sched_report__print(const struct sched_report *s, bool hist, FILE *out)
{
	const struct row **procs, **threads;
	size_t np = sorted(&s->procs, &procs), nt = sorted(&s->threads, &threads);
	char label[64], buf[32];

	fprintf(out, "\n== Scheduler latency: how long runnable threads waited for a CPU ==\n"
		     "(after a wakeup or their creation; after a preemption or a yield)\n\n");
	if (!np) {
		fprintf(out, "no waits\n");
		goto done;
	}
	fprintf(out, "%-22s %-7s %7s %6s %6s %6s %6s %10s\n", "PROCESS, its threads", "AFTER",
		"COUNT", "P50", "P90", "P99", "MAX", "MAX AT (s)");
	for (size_t i = 0; i < np && i < s->top; i++) {
		const struct row *p = procs[i];
		size_t shown = 0, nthreads = 0;

		for (size_t j = 0; j < nt; j++)
			nthreads += threads[j]->who.id.pid == p->who.id.pid;
		if (p->who.id.pid) {
			char pid[24];

			snprintf(pid, sizeof(pid), " (pid %u)", p->who.id.pid);
			fmt__cut(buf, 22 - strlen(pid), p->who.id.prog);
			snprintf(label, sizeof(label), "%s%s", buf, pid);
		} else {
			snprintf(label, sizeof(label), "(no pid known)");
		}
		print_row(out, label, p);
		for (int k = 0; hist && k < WALK_WAITS; k++) {
			char what[32];

			snprintf(what, sizeof(what), "waits after %s", kind_after[k]);
			if (p->h[k].count)
				fmt__log2(out, what, &p->h[k]);
		}
		for (size_t j = 0; j < nt && nthreads > 1 && shown < s->top; j++) {
			if (threads[j]->who.id.pid != p->who.id.pid)
				continue;
			snprintf(label, sizeof(label), "  %u ", threads[j]->who.tid);
			/* A thread no stack named has its program's name alone. */
			fmt__cut(buf, 22 - strlen(label), threads[j]->who.id.comm[0] ?
				 threads[j]->who.id.comm : threads[j]->who.id.prog);
			strcat(label, buf);
			print_row(out, label, threads[j]);
			shown++;
		}
		if (nthreads > shown && nthreads > 1)
			fprintf(out, "  (%zu threads more)\n", nthreads - shown);
	}
	if (np > s->top)
		fprintf(out, "(%zu processes more: --top N, -p PID)\n", np - s->top);
	print_worst(s, out);
done:
	free(procs);
	free(threads);
}

/* A thread's or a process's identity: who.id as the stacks named it. */
static void json_who(struct json *j, const struct walk_thread *who)
{
	json__uint(j, "tid", who->tid);
	json__uint(j, "pid", who->id.pid);
	json__str(j, "comm", who->id.comm);
	json__str(j, "program", who->id.prog);
}

static void json_waits(struct json *j, const struct row *r, bool hist)
{
	json__object(j, "waits");
	for (int k = 0; k < WALK_WAITS; k++)
		if (r->h[k].count)
			json__hist(j, kind_names[k], &r->h[k], hist);
	json__end(j);
}

static void json_worst(const struct sched_report *s, struct json *j)
{
	json__array(j, "worst");
	for (size_t i = 0; i < s->nworst; i++) {
		const struct sched_worst *x = &s->worst[i];

		json__object(j, NULL);
		json_who(j, &x->who);
		json__str(j, "after", kind_names[x->kind]);
		json__uint(j, "ns", x->ns);
		json__uint(j, "at_ns", x->at);
		json__int(j, "cpu", x->p);
		json__array(j, "ran");
		for (size_t k = 0; k < x->nruns; k++) {
			json__object(j, NULL);
			json_who(j, &x->runs[k].who);
			json__uint(j, "ns", x->runs[k].ns);
			json__end(j);
		}
		json__end(j);
		json__uint(j, "others_ns", x->others_ns);
		json__uint(j, "unsure_ns", x->unsure_ns);
		json__uint(j, "idle_ns", x->idle_ns);
		json__bool(j, "complete", x->complete);
		json__end(j);
	}
	json__end(j);
}

void sched_report__json(const struct sched_report *s, bool hist, struct json *j)
{
	const struct row **procs, **threads;
	size_t np = sorted(&s->procs, &procs), nt = sorted(&s->threads, &threads);

	json__object(j, "sched");
	json__array(j, "processes");
	for (size_t i = 0; i < np && i < s->top; i++) {
		size_t shown = 0, nthreads = 0;

		json__object(j, NULL);
		json__uint(j, "pid", procs[i]->who.id.pid);
		json__str(j, "program", procs[i]->who.id.prog);
		json_waits(j, procs[i], hist);
		json__array(j, "threads");
		for (size_t k = 0; k < nt; k++) {
			if (threads[k]->who.id.pid != procs[i]->who.id.pid)
				continue;
			nthreads++;
			if (shown >= s->top)
				continue;
			shown++;
			json__object(j, NULL);
			json_who(j, &threads[k]->who);
			json_waits(j, threads[k], hist);
			json__end(j);
		}
		json__end(j);
		json__uint(j, "threads_more", nthreads - shown);
		json__end(j);
	}
	json__end(j);
	json__uint(j, "processes_more", np > s->top ? np - s->top : 0);
	json_worst(s, j);
	json__end(j);
	free(procs);
	free(threads);
}

static void free_rows(struct rows *r)
{
	for (size_t i = 0; i < r->n; i++)
		for (int k = 0; k < WALK_WAITS; k++)
			hist__free(&r->v[i].h[k]);
	free(r->v);
	u64map__free(r->by);
}

void sched_report__free(struct sched_report *s)
{
	if (!s)
		return;
	free_rows(&s->threads);
	free_rows(&s->procs);
	free(s->worst);
	free(s->runs);
	free(s->sums);
	u64map__free(s->by_g);
	free(s);
}
