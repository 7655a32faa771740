/* cpu.c - CPU samples by function (self, total) and by stack (cpu.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"
#include "user/report/cpu.h"
#include "user/report/fmt.h"
#include "user/events/ident.h"
#include "user/report/intern.h"
#include "user/report/json.h"
#include "user/report/stacktab.h"

struct func {
	const char *name;	/* its key in names */
	uint64_t self, total;
	uint64_t seen;		/* the sample it was last counted in, to count it once */
};

struct cpu_report {
	size_t top;
	bool oom;
	uint64_t samples, idle;
	struct stacktab *stacks;
	struct intern *names;	/* a function's index in funcs: its name's handle */
	struct func *funcs;
	size_t nfuncs, cap;
};

struct cpu_report *cpu_report__new(size_t top)
{
	struct cpu_report *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->top = top;
	c->stacks = stacktab__new(false);
	c->names = intern__new();
	if (!c->stacks || !c->names) {
		cpu_report__free(c);
		errno = ENOMEM;
		return NULL;
	}
	return c;
}

static struct func *func_of(struct cpu_report *c, const char *name)
{
	bool added;
	long h = intern__put(c->names, name, strlen(name), &added);

	/* The functions are the names' first nfuncs: a name whose row could not be made has
	 * none. */
	if (h >= 0 && (size_t)h < c->nfuncs)
		return &c->funcs[h];
	if (h < 0 || (size_t)h != c->nfuncs ||
	    grow_array((void **)&c->funcs, &c->cap, c->nfuncs + 1, sizeof(*c->funcs), 64))
		return NULL;
	c->funcs[c->nfuncs] = (struct func){ .name = intern__key(c->names, (size_t)h) };
	return &c->funcs[c->nfuncs++];
}

void cpu_report__sample(struct cpu_report *c, const struct walk_thread *t,
			const struct gt_stack *stk, int64_t p, uint64_t at)
{
	const char *special = ident__special(stk);

	if (special && !strcmp(special, "[idle]")) {
		c->idle++;
		return;
	}
	c->samples++;
	if (stacktab__add(c->stacks, 0, stk, SIZE_MAX, 1, 0)) {
		c->oom = true;
		return;
	}
	for (size_t i = 0; stk && i < stk->n; i++) {
		struct func *f;

		/* The program frame says again what the process frame says. */
		if (!strcmp(stk->frames[i].file, "program"))
			continue;
		f = func_of(c, stk->frames[i].func);
		if (!f) {
			c->oom = true;
			return;
		}
		if (i == 0)
			f->self++;
		if (f->seen != c->samples) {
			f->seen = c->samples;
			f->total++;
		}
	}
}

bool cpu_report__ok(const struct cpu_report *c)
{
	return !c->oom;
}

uint64_t cpu_report__samples(const struct cpu_report *c, uint64_t *idle)
{
	*idle = c->idle;
	return c->samples;
}

void cpu_report__function(const struct cpu_report *c, const char *func, uint64_t *self,
			  uint64_t *total)
{
	long h = intern__get(c->names, func, strlen(func));

	*self = *total = 0;
	if (h >= 0 && (size_t)h < c->nfuncs) {
		*self = c->funcs[h].self;
		*total = c->funcs[h].total;
	}
}

static int by_self(const void *a, const void *b)
{
	const struct func *x = a, *y = b;

	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int by_total(const void *a, const void *b)
{
	const struct func *x = a, *y = b;

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int by_count(const void *a, const void *b)
{
	const struct st_entry *x = *(const struct st_entry *const *)a;
	const struct st_entry *y = *(const struct st_entry *const *)b;

	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

static void print_funcs(const struct cpu_report *c, const struct func *funcs, FILE *out,
			const char *title)
{
	char name[64];
	double all = c->samples ? (double)c->samples : 1;

	fprintf(out, "\n%s\n%8s %6s %8s %6s  %s\n", title, "SELF", "SELF%", "TOTAL", "TOTAL%",
		"FUNCTION");
	for (size_t i = 0; i < c->nfuncs && i < c->top; i++) {
		const struct func *f = &funcs[i];

		fprintf(out, "%8llu %5.1f%% %8llu %5.1f%%  %s\n", (unsigned long long)f->self,
			100.0 * (double)f->self / all, (unsigned long long)f->total,
			100.0 * (double)f->total / all, fmt__cut(name, 48, f->name));
	}
}

/* Copies of the functions and the stacks, the most samples as the leaf first and the most
 * sampled first, into *funcs and *v (freed by the caller); false when out of memory. The name
 * map holds indexes into c->funcs, so c's own stay in their order. */
static bool sorted(const struct cpu_report *c, struct func **funcs, const struct st_entry ***v)
{
	const struct st_entry *e = stacktab__entries(c->stacks);
	size_t n = stacktab__count(c->stacks);

	*funcs = malloc((c->nfuncs ? c->nfuncs : 1) * sizeof(**funcs));
	*v = malloc((n ? n : 1) * sizeof(**v));
	if (!*funcs || !*v) {
		free(*funcs);
		free(*v);
		return false;
	}
	if (c->nfuncs)
		memcpy(*funcs, c->funcs, c->nfuncs * sizeof(**funcs));
	qsort(*funcs, c->nfuncs, sizeof(**funcs), by_self);
	for (size_t i = 0; i < n; i++)
		(*v)[i] = &e[i];
	qsort(*v, n, sizeof(**v), by_count);
	return true;
}

void cpu_report__print(const struct cpu_report *c, size_t depth, FILE *out)
{
	const struct st_entry **v;
	size_t n = stacktab__count(c->stacks);
	struct func *funcs;

	fprintf(out, "\n== CPU samples: %llu of threads, %llu of idle CPUs (not below) ==\n",
		(unsigned long long)c->samples, (unsigned long long)c->idle);
	if (!c->samples) {
		fprintf(out, "no samples (lxtrace record -F HZ takes them)\n");
		return;
	}
	if (!sorted(c, &funcs, &v))
		return;
	print_funcs(c, funcs, out, "By function, the most samples as the leaf first:");
	qsort(funcs, c->nfuncs, sizeof(*funcs), by_total);
	print_funcs(c, funcs, out, "By function, the most samples anywhere on the stack first:");
	free(funcs);
	fprintf(out, "\nThe stacks sampled most (leaf first):\n");
	for (size_t i = 0; i < n && i < c->top; i++) {
		fprintf(out, "%2zu. %llu samples, %.1f%%\n", i + 1, (unsigned long long)v[i]->count,
			100.0 * (double)v[i]->count / (double)c->samples);
		fmt__stack(out, v[i], depth);
	}
	if (n > c->top)
		fprintf(out, "(%zu stacks more: --top N)\n", n - c->top);
	free(v);
}

void cpu_report__json(const struct cpu_report *c, struct json *j)
{
	size_t n = stacktab__count(c->stacks);
	const struct st_entry **v;
	struct func *funcs;

	if (!sorted(c, &funcs, &v)) {
		j->oom = true;
		return;
	}
	json__object(j, "cpu");
	json__uint(j, "samples", c->samples);
	json__uint(j, "idle", c->idle);
	json__array(j, "functions");
	for (size_t i = 0; i < c->nfuncs && i < c->top; i++) {
		json__object(j, NULL);
		json__str(j, "name", funcs[i].name);
		json__uint(j, "self", funcs[i].self);
		json__uint(j, "total", funcs[i].total);
		json__end(j);
	}
	json__end(j);
	json__uint(j, "functions_more", c->nfuncs > c->top ? c->nfuncs - c->top : 0);
	json__array(j, "stacks");
	for (size_t i = 0; i < n && i < c->top; i++) {
		json__object(j, NULL);
		json__uint(j, "count", v[i]->count);
		json__stack(j, "frames", v[i]);
		json__end(j);
	}
	json__end(j);
	json__uint(j, "stacks_more", n > c->top ? n - c->top : 0);
	json__end(j);
	free(funcs);
	free(v);
}

void cpu_report__free(struct cpu_report *c)
{
	if (!c)
		return;
	stacktab__free(c->stacks);
	intern__free(c->names);
	free(c->funcs);
	free(c);
}
