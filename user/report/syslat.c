/* syslat.c - syscalls' lengths per call, and the times they blocked, per syscall (syslat.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"
#include "lib/hash.h"
#include "lib/u64map.h"
#include "user/report/fmt.h"
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
	struct sysrow *v;
	size_t n, cap;
	/* A name's hash -> index + 1 in v, probing past collisions: a crafted file can name
	 * any number of syscalls, so rows are never searched in order. */
	struct u64map *byname;
};

struct syslat *syslat__new(size_t top)
{
	struct syslat *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->top = top;
	s->byname = u64map__new();
	if (!s->byname) {
		free(s);
		return NULL;
	}
	return s;
}

static struct sysrow *row_of(struct syslat *s, const char *name)
{
	uint64_t h = hash_bytes(HASH_BYTES_INIT, name, strnlen(name, NAME_MAX_LEN)), *slot;
	struct sysrow *r;
	bool added;

	for (;; h++) {
		slot = u64map__get(s->byname, h);
		if (!slot)
			break;
		if (!strncmp(s->v[*slot - 1].name, name, NAME_MAX_LEN))
			return &s->v[*slot - 1];
	}
	if (grow_array((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v), 32) ||
	    !(slot = u64map__put(s->byname, h, &added))) {
		s->oom = true;
		return NULL;
	}
	*slot = s->n + 1;
	r = &s->v[s->n++];
	memset(r, 0, sizeof(*r));
	strncpy(r->name, name, NAME_MAX_LEN);
	return r;
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
	*entries = 0;
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].name, name)) {
			*entries = s->v[i].entries;
			return s->v[i].h.count ? &s->v[i].h : NULL;
		}
	return NULL;
}

const struct hist *syslat__calls(const struct syslat *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].name, name))
			return s->v[i].calls.count ? &s->v[i].calls : NULL;
	return NULL;
}

/* By the calls' total when known, then by the blocks'. */
static int by_total(const void *a, const void *b)
{
	const struct sysrow *x = a, *y = b;

	if (x->calls.sum != y->calls.sum)
		return x->calls.sum < y->calls.sum ? 1 : -1;
	if (x->h.sum != y->h.sum)
		return x->h.sum < y->h.sum ? 1 : -1;
	if (x->entries != y->entries)
		return x->entries < y->entries ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* Each call's length with the blocks apart: the file has returns. */
static void print_calls(const struct syslat *s, bool hist, FILE *out)
{
	char name[24], a[FMT_DUR], b[FMT_DUR], c[FMT_DUR], d[FMT_DUR], e[FMT_DUR];
	uint64_t unknown = 0;

	fprintf(out, "%-16s %8s %7s %7s %7s %7s %8s %8s\n", "SYSCALL", "CALLS", "TOTAL", "P50",
		"P99", "MAX", "BLOCKED", "OFF-CPU");
	for (size_t i = 0; i < s->n && i < s->top; i++) {
		const struct sysrow *r = &s->v[i];

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
		fprintf(out, "(%llu calls with no return in the file, counted in CALLS alone: exit, "
			     "execve,\n those still in their syscall at the end, returns lost)\n",
			(unsigned long long)unknown);
}

/* The blocks alone: the file has no returns. */
static void print_blocks(const struct syslat *s, bool hist, FILE *out)
{
	char name[24], a[FMT_DUR], b[FMT_DUR], c[FMT_DUR], d[FMT_DUR];
	bool entries = false;

	for (size_t i = 0; i < s->n; i++)
		entries |= s->v[i].entries > 0;
	fprintf(out, "%-20s %9s %9s %7s %7s %7s %7s\n", "SYSCALL", entries ? "ENTERED" : "",
		"BLOCKED", "TOTAL", "P50", "P99", "MAX");
	for (size_t i = 0; i < s->n && i < s->top; i++) {
		const struct sysrow *r = &s->v[i];
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

void syslat__print(const struct syslat *s, bool hist, FILE *out)
{
	bool lengths = false;

	for (size_t i = 0; i < s->n; i++)
		lengths |= s->v[i].calls.count > 0;
	if (lengths)
		fprintf(out, "\n== Syscalls: each call from its entry to its return ==\n"
			     "(and apart, the times calls blocked: BLOCKED of them, OFF-CPU in all, "
			     "each\n until the thread ran again; a call may block several times)\n\n");
	else
		fprintf(out, "\n== Syscalls: the times calls blocked, each until the thread ran again "
			     "==\n(a call may block several times; calls that did not block are seen "
			     "only\n as entries, and each call's length, with --syscalls=all)\n\n");
	if (!s->n) {
		fprintf(out, "no syscalls\n");
		return;
	}
	qsort(s->v, s->n, sizeof(*s->v), by_total);
	if (lengths)
		print_calls(s, hist, out);
	else
		print_blocks(s, hist, out);
	if (s->n > s->top)
		fprintf(out, "(%zu syscalls more: --top N)\n", s->n - s->top);
}

void syslat__json(const struct syslat *s, bool hist, struct json *j)
{
	uint64_t unknown = 0;
	bool lengths = false;

	for (size_t i = 0; i < s->n; i++) {
		lengths |= s->v[i].calls.count > 0;
		unknown += s->v[i].entries - s->v[i].calls.count;
	}
	qsort(s->v, s->n, sizeof(*s->v), by_total);
	json__object(j, "syscalls");
	json__bool(j, "lengths", lengths);
	json__array(j, "rows");
	for (size_t i = 0; i < s->n && i < s->top; i++) {
		json__object(j, NULL);
		json__str(j, "name", s->v[i].name);
		json__uint(j, "calls", s->v[i].entries);
		json__hist(j, "length", &s->v[i].calls, hist);
		json__hist(j, "blocked", &s->v[i].h, hist);
		json__end(j);
	}
	json__end(j);
	json__uint(j, "rows_more", s->n > s->top ? s->n - s->top : 0);
	json__uint(j, "calls_without_length", unknown);
	json__end(j);
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
	u64map__free(s->byname);
	free(s);
}
