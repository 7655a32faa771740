/* offcpu.c - time off the CPU by reason and by stack (offcpu.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "user/report/fmt.h"
#include "user/report/json.h"
#include "user/report/offcpu.h"
#include "user/report/stacktab.h"

struct offcpu {
	size_t top;
	bool oom;
	struct hist h[WALK_OFFS];
	struct stacktab *stacks;	/* label: the reason; value: ns */
};

static const char *const reasons[WALK_OFFS] = {
	[WALK_OFF_IO] = "io",
	[WALK_OFF_LOCK] = "lock",
	[WALK_OFF_SLEEP] = "sleep",
	[WALK_OFF_FD] = "fd-wait",
	[WALK_OFF_OTHER] = "other-wait",
	[WALK_OFF_RUNQ] = "runqueue",
};

static const char *const explained[WALK_OFFS] = {
	[WALK_OFF_IO] = "I/O, in the kernel (D)",
	[WALK_OFF_LOCK] = "a lock (futex)",
	[WALK_OFF_SLEEP] = "a sleep (nanosleep)",
	[WALK_OFF_FD] = "pipe, socket, poll",
	[WALK_OFF_OTHER] = "other waits (wait4..)",
	[WALK_OFF_RUNQ] = "preempted: run queue",
};

const char *offcpu__reason(enum walk_off why)
{
	return why < WALK_OFFS ? reasons[why] : "?";
}

struct offcpu *offcpu__new(size_t top)
{
	struct offcpu *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->top = top;
	o->stacks = stacktab__new(false);
	if (!o->stacks) {
		free(o);
		errno = ENOMEM;
		return NULL;
	}
	return o;
}

void offcpu__add(struct offcpu *o, const struct walk_thread *t, enum walk_off why,
		 const struct gt_stack *stk, const char *sys, uint64_t ns, uint64_t at)
{
	if (hist__add(&o->h[why], ns, at) || stacktab__add(o->stacks, why, stk, SIZE_MAX, 1, ns))
		o->oom = true;
}

bool offcpu__ok(const struct offcpu *o)
{
	return !o->oom;
}

const struct hist *offcpu__hist(const struct offcpu *o, enum walk_off why)
{
	return o->h[why].count ? &o->h[why] : NULL;
}

uint64_t offcpu__stack_ns(const struct offcpu *o, enum walk_off why, const char *leaf)
{
	const struct st_entry *e = stacktab__entries(o->stacks);
	uint64_t ns = 0;

	for (size_t i = 0; i < stacktab__count(o->stacks); i++)
		if (e[i].label == why && (!leaf || (e[i].n && !strcmp(e[i].frames[0].func, leaf))))
			ns += e[i].value;
	return ns;
}

static int by_value(const void *a, const void *b)
{
	const struct st_entry *x = *(const struct st_entry *const *)a;
	const struct st_entry *y = *(const struct st_entry *const *)b;

	return x->value < y->value ? 1 : x->value > y->value ? -1 : 0;
}

/* The stacks, the most time first, into *v (freed by the caller); their count, 0 when out of
 * memory. */
static size_t by_time(const struct offcpu *o, const struct st_entry ***v)
{
	const struct st_entry *e = stacktab__entries(o->stacks);
	size_t n = stacktab__count(o->stacks);

	*v = malloc((n ? n : 1) * sizeof(**v));
	if (!*v)
		return 0;
	for (size_t i = 0; i < n; i++)
		(*v)[i] = &e[i];
	qsort(*v, n, sizeof(**v), by_value);
	return n;
}

void offcpu__print(const struct offcpu *o, bool hist, size_t depth, FILE *out)
{
	const struct st_entry **v;
	size_t n = stacktab__count(o->stacks);
	char a[FMT_DUR], b[FMT_DUR], c[FMT_DUR], d[FMT_DUR];

	fprintf(out, "\n== Off-CPU time: why threads left the CPU, until they ran again ==\n\n");
	fprintf(out, "%-24s %9s %7s %7s %7s %7s\n", "REASON", "COUNT", "TOTAL", "P50", "P99",
		"MAX");
	for (int k = 0; k < WALK_OFFS; k++) {
		const struct hist *h = &o->h[k];

		if (!h->count)
			continue;
		fprintf(out, "%-24s %9llu %7s %7s %7s %7s\n", explained[k],
			(unsigned long long)h->count, fmt__dur(a, h->sum),
			fmt__dur(b, hist__quantile(h, 0.5)), fmt__dur(c, hist__quantile(h, 0.99)),
			fmt__dur(d, h->max));
		if (hist)
			fmt__log2(out, explained[k], h);
	}
	if (!n) {
		fprintf(out, "no time off the CPU\n");
		return;
	}
	n = by_time(o, &v);
	if (!v)
		return;
	fprintf(out, "\nThe stacks with the most time off the CPU (leaf first):\n");
	for (size_t i = 0; i < n && i < o->top; i++) {
		fprintf(out, "%2zu. %s in %llu, %s\n", i + 1, fmt__dur(a, v[i]->value),
			(unsigned long long)v[i]->count, reasons[v[i]->label]);
		fmt__stack(out, v[i], depth);
	}
	if (n > o->top)
		fprintf(out, "(%zu stacks more: --top N)\n", n - o->top);
	free(v);
}

void offcpu__json(const struct offcpu *o, bool hist, struct json *j)
{
	const struct st_entry **v;
	size_t n = by_time(o, &v);

	json__object(j, "offcpu");
	json__array(j, "reasons");
	for (int k = 0; k < WALK_OFFS; k++) {
		if (!o->h[k].count)
			continue;
		json__object(j, NULL);
		json__str(j, "reason", reasons[k]);
		json__hist(j, "time", &o->h[k], hist);
		json__end(j);
	}
	json__end(j);
	json__array(j, "stacks");
	for (size_t i = 0; v && i < n && i < o->top; i++) {
		json__object(j, NULL);
		json__str(j, "reason", reasons[v[i]->label]);
		json__uint(j, "count", v[i]->count);
		json__uint(j, "ns", v[i]->value);
		json__stack(j, "frames", v[i]);
		json__end(j);
	}
	json__end(j);
	json__uint(j, "stacks_more", n > o->top ? n - o->top : 0);
	json__end(j);
	if (!v)
		j->oom = true;
	free(v);
}

void offcpu__free(struct offcpu *o)
{
	if (!o)
		return;
	for (int k = 0; k < WALK_OFFS; k++)
		hist__free(&o->h[k]);
	stacktab__free(o->stacks);
	free(o);
}
