/* syslat.c - syscalls' lengths per call, and the times they blocked, per syscall (syslat.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"
#include "user/report/fmt.h"
#include "user/report/intern.h"
#include "user/report/json.h"
#include "user/report/syslat.h"

/* Longer names are cut: the kernel's longest is 22 bytes. */
#define NAME_MAX_LEN 31

struct sysrow {
	char name[NAME_MAX_LEN + 1];
	uint64_t entries;
	struct hist h;		/* its blocks */
	struct hist calls;	/* its calls' lengths, where known */
};

struct syslat {
	size_t top;
	bool oom;
	struct sysrow *v;	/* by the handle of its name in names */
	size_t n, cap;
	struct intern *names;
};

struct syslat *syslat__new(size_t top)
{
	struct syslat *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->top = top;
	s->names = intern__new();
	if (!s->names) {
		free(s);
		return NULL;
	}
	return s;
}

static struct sysrow *row_of(struct syslat *s, const char *name)
{
	bool added;
	long h = intern__put(s->names, name, strnlen(name, NAME_MAX_LEN), &added);
	struct sysrow *r;

	/* The rows are the names' first s->n: a name whose row could not be made has none. */
	if (h >= 0 && (size_t)h < s->n)
		return &s->v[h];
	if (h < 0 || (size_t)h != s->n ||
	    grow_array((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v), 32)) {
		s->oom = true;
		return NULL;
	}
	r = &s->v[s->n++];
	memset(r, 0, sizeof(*r));
	strncpy(r->name, name, NAME_MAX_LEN);
	return r;
}

/* The row of name, NULL when none. */
static const struct sysrow *row_named(const struct syslat *s, const char *name)
{
	long h = intern__get(s->names, name, strnlen(name, NAME_MAX_LEN));

	return h >= 0 && (size_t)h < s->n ? &s->v[h] : NULL;
}

void syslat__offcpu(struct syslat *s, const struct walk_thread *t, enum walk_off why,
		    const struct gt_stack *stk, const char *sys, uint64_t ns, uint64_t at)
{
	struct sysrow *r;

	/* A preemption inside a syscall is no wait of the syscall's. */
	if (!sys || why == WALK_OFF_RUNQ || !(r = row_of(s, sys)))
		return;
	if (hist__add(&r->h, ns, at))
		s->oom = true;
}

void syslat__call(struct syslat *s, const struct walk_thread *t, const char *sys, uint64_t ns,
		  uint64_t at)
{
	struct sysrow *r = sys ? row_of(s, sys) : NULL;

	if (!r)
		return;
	r->entries++;
	if (ns != WALK_NO_LENGTH && hist__add(&r->calls, ns, at))
		s->oom = true;
}

bool syslat__ok(const struct syslat *s)
{
	return !s->oom;
}

const struct hist *syslat__hist(const struct syslat *s, const char *name, uint64_t *entries)
{
	const struct sysrow *r = row_named(s, name);

	*entries = r ? r->entries : 0;
	return r && r->h.count ? &r->h : NULL;
}

const struct hist *syslat__calls(const struct syslat *s, const char *name)
{
	const struct sysrow *r = row_named(s, name);

	return r && r->calls.count ? &r->calls : NULL;
}

/* By the calls' total when known, then by the blocks'. */
static int by_total(const void *a, const void *b)
{
	const struct sysrow *x = *(const struct sysrow *const *)a;
	const struct sysrow *y = *(const struct sysrow *const *)b;

	if (x->calls.sum != y->calls.sum)
		return x->calls.sum < y->calls.sum ? 1 : -1;
	if (x->h.sum != y->h.sum)
		return x->h.sum < y->h.sum ? 1 : -1;
	if (x->entries != y->entries)
		return x->entries < y->entries ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* Each call's length with the blocks apart: the file has returns. */
static void print_calls(const struct syslat *s, const struct sysrow **v, bool hist, FILE *out)
{
	char name[24], a[FMT_DUR], b[FMT_DUR], c[FMT_DUR], d[FMT_DUR], e[FMT_DUR];
	uint64_t unknown = 0;

	fprintf(out, "%-16s %8s %7s %7s %7s %7s %8s %8s\n", "SYSCALL", "CALLS", "TOTAL", "P50",
		"P99", "MAX", "BLOCKED", "OFF-CPU");
	for (size_t i = 0; i < s->n && i < s->top; i++) {
		const struct sysrow *r = v[i];

		fprintf(out, "%-16s %8llu %7s %7s %7s %7s %8llu %8s\n", fmt__cut(name, 16, r->name),
			(unsigned long long)r->entries, fmt__dur(a, r->calls.sum),
			fmt__dur(b, hist__quantile(&r->calls, 0.5)),
			fmt__dur(c, hist__quantile(&r->calls, 0.99)), fmt__dur(d, r->calls.max),
			(unsigned long long)r->h.count, fmt__dur(e, r->h.sum));
		if (hist && r->calls.count)
			fmt__log2(out, "calls", &r->calls);
		if (hist && r->h.count)
			fmt__log2(out, "times blocked, each off the CPU", &r->h);
	}
	for (size_t i = 0; i < s->n; i++)
		unknown += s->v[i].entries - s->v[i].calls.count;
	if (unknown)
		fprintf(out, "(%llu calls with no return in the file, counted in CALLS alone: "
			"exit, execve,\n those still in their syscall at the end, returns lost)\n",
			(unsigned long long)unknown);
}

/* The blocks alone: the file has no returns. */
static void print_blocks(const struct syslat *s, const struct sysrow **v, bool hist, FILE *out)
{
	char name[24], a[FMT_DUR], b[FMT_DUR], c[FMT_DUR], d[FMT_DUR];
	bool entries = false;

	for (size_t i = 0; i < s->n; i++)
		entries |= s->v[i].entries > 0;
	fprintf(out, "%-20s %9s %9s %7s %7s %7s %7s\n", "SYSCALL", entries ? "ENTERED" : "",
		"BLOCKED", "TOTAL", "P50", "P99", "MAX");
	for (size_t i = 0; i < s->n && i < s->top; i++) {
		const struct sysrow *r = v[i];
		char ent[24] = "";

		if (entries)
			snprintf(ent, sizeof(ent), "%llu", (unsigned long long)r->entries);
		fprintf(out, "%-20s %9s %9llu %7s %7s %7s %7s\n", fmt__cut(name, 20, r->name), ent,
			(unsigned long long)r->h.count, fmt__dur(a, r->h.sum),
			fmt__dur(b, hist__quantile(&r->h, 0.5)),
			fmt__dur(c, hist__quantile(&r->h, 0.99)), fmt__dur(d, r->h.max));
		if (hist && r->h.count)
			fmt__log2(out, "times blocked, each off the CPU", &r->h);
	}
}

/* The rows, the most time first, into a new array; NULL when out of memory. The names' map
 * holds indexes in s->v, so s's own stay in their order. */
static const struct sysrow **sorted(const struct syslat *s)
{
	const struct sysrow **v = malloc((s->n ? s->n : 1) * sizeof(*v));

	if (!v)
		return NULL;
	for (size_t i = 0; i < s->n; i++)
		v[i] = &s->v[i];
	qsort(v, s->n, sizeof(*v), by_total);
	return v;
}

void syslat__print(const struct syslat *s, bool hist, FILE *out)
{
	const struct sysrow **v;
	bool lengths = false;

	for (size_t i = 0; i < s->n; i++)
		lengths |= s->v[i].calls.count > 0;
	if (lengths)
		fprintf(out, "\n== Syscalls: each call from its entry to its return ==\n(and "
			"apart, the times calls blocked: BLOCKED of them, OFF-CPU in all, each\n "
			"until the thread ran again; a call may block several times)\n\n");
	else
		fprintf(out, "\n== Syscalls: the times calls blocked, each until the thread ran "
			"again ==\n(a call may block several times; calls that did not block are "
			"seen only\n as entries, and each call's length, with --syscalls=all)\n\n");
	if (!s->n) {
		fprintf(out, "no syscalls\n");
		return;
	}
	v = sorted(s);
	if (!v)
		return;
	if (lengths)
		print_calls(s, v, hist, out);
	else
		print_blocks(s, v, hist, out);
	free(v);
	if (s->n > s->top)
		fprintf(out, "(%zu syscalls more: --top N)\n", s->n - s->top);
}

void syslat__json(const struct syslat *s, bool hist, struct json *j)
{
	const struct sysrow **v = sorted(s);
	uint64_t unknown = 0;
	bool lengths = false;

	if (!v) {
		j->oom = true;
		return;
	}
	for (size_t i = 0; i < s->n; i++) {
		lengths |= s->v[i].calls.count > 0;
		unknown += s->v[i].entries - s->v[i].calls.count;
	}
	json__object(j, "syscalls");
	json__bool(j, "lengths", lengths);
	json__array(j, "rows");
	for (size_t i = 0; i < s->n && i < s->top; i++) {
		json__object(j, NULL);
		json__str(j, "name", v[i]->name);
		json__uint(j, "calls", v[i]->entries);
		json__hist(j, "length", &v[i]->calls, hist);
		json__hist(j, "blocked", &v[i]->h, hist);
		json__end(j);
	}
	json__end(j);
	json__uint(j, "rows_more", s->n > s->top ? s->n - s->top : 0);
	json__uint(j, "calls_without_length", unknown);
	json__end(j);
	free(v);
}

void syslat__free(struct syslat *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		hist__free(&s->v[i].h);
		hist__free(&s->v[i].calls);
	}
	free(s->v);
	intern__free(s->names);
	free(s);
}
