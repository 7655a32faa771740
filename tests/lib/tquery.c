/* tquery.c - counting and locating events, frames and logs in a decoded trace, for tests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/pcs.h"
#include "tests/lib/tquery.h"

uint64_t tq_subject(const struct gt_event *e)
{
	switch (e->type) {
	case GT_EV_GO_CREATE:
	case GT_EV_GO_START:
	case GT_EV_GO_START_LABEL:
	case GT_EV_GO_UNBLOCK:
	case GT_EV_GO_SYSEXIT:
	case GT_EV_GO_WAITING:
	case GT_EV_GO_IN_SYSCALL:
		return e->nargs ? e->args[0] : e->g;
	default:
		return e->g;
	}
}

bool tq_about(const struct gt_event *e, uint32_t tid)
{
	uint64_t g = tq_subject(e);

	return tid == TQ_ANY_THREAD ? g != 0 : (uint32_t)g == tid;
}

static bool in_mask(const struct gt_event *e, uint64_t mask)
{
	return e->type < 64 && (mask & TQ_BIT(e->type));
}

const struct gt_event *tq_next(const struct gt_trace *t, size_t *i, uint64_t mask, uint32_t tid)
{
	const struct gt_event *ev = gt_trace__events(t);
	size_t n = gt_trace__nevents(t);

	for (; *i < n; ++*i)
		if (in_mask(&ev[*i], mask) && tq_about(&ev[*i], tid))
			return &ev[*i];
	return NULL;
}

size_t tq_count(const struct gt_trace *t, uint64_t mask, uint32_t tid)
{
	size_t i = 0, count = 0;

	for (; tq_next(t, &i, mask, tid); i++)
		count++;
	return count;
}

size_t tq_count_frame(const struct gt_trace *t, uint64_t mask, uint32_t tid, const char *func)
{
	const struct gt_event *e;
	size_t i = 0, count = 0;

	for (; (e = tq_next(t, &i, mask, tid)); i++)
		count += tq_stack_has(e->stack, func);
	return count;
}

size_t tq_count_process(const struct gt_trace *t, uint64_t mask, uint32_t tid, const char *func)
{
	const struct gt_event *e;
	size_t i = 0, count = 0;

	for (; (e = tq_next(t, &i, mask, tid)); i++) {
		const char *proc = tq_process(e->stack);

		count += proc && !strcmp(proc, func);
	}
	return count;
}

bool tq_stack_has(const struct gt_stack *s, const char *func)
{
	for (size_t i = 0; s && i < s->n; i++)
		if (s->frames[i].func && !strcmp(s->frames[i].func, func))
			return true;
	return false;
}

const char *tq_leaf(const struct gt_stack *s)
{
	return s && s->n ? s->frames[0].func : NULL;
}

const char *tq_outermost(const struct gt_stack *s)
{
	return s && s->n ? s->frames[s->n - 1].func : NULL;
}

const char *tq_process(const struct gt_stack *s)
{
	return s && s->n > 1 ? s->frames[s->n - 2].func : NULL;
}

bool tq_user_frames(const struct gt_stack *s)
{
	for (size_t i = 0; s && i < s->n; i++)
		if (s->frames[i].pc < (1ull << 63) && !(s->frames[i].pc & GT_PC_IDENT))
			return true;
	return false;
}

const char *tq_cut_mark(const struct gt_stack *s)
{
	for (size_t i = 0; s && i < s->n; i++)
		if (!strncmp(s->frames[i].func, "[truncated", 10))
			return s->frames[i].func;
	return NULL;
}

const struct gt_stack *tq_create_stack(const struct gt_trace *t, const struct gt_event *e)
{
	if (e->type != GT_EV_GO_CREATE || e->nargs < 2)
		return NULL;
	return gt_trace__stack(t, e->args[1]);
}

size_t tq_count_created(const struct gt_trace *t, uint32_t tid, const char *name)
{
	const struct gt_event *e;
	size_t i = 0, count = 0;

	for (; (e = tq_next(t, &i, TQ_BIT(GT_EV_GO_CREATE), tid)); i++) {
		const char *outer = tq_outermost(tq_create_stack(t, e));

		count += outer && !strcmp(outer, name);
	}
	return count;
}

static bool stack_mentions(const struct gt_stack *s, const char *needle)
{
	for (size_t i = 0; s && i < s->n; i++)
		if (s->frames[i].func && strstr(s->frames[i].func, needle))
			return true;
	return false;
}

bool tq_has_func(const struct gt_trace *t, uint32_t tid, const char *needle)
{
	const struct gt_event *ev = gt_trace__events(t);
	size_t n = gt_trace__nevents(t);

	for (size_t i = 0; i < n; i++) {
		if (tid != TQ_ANY_THREAD && !tq_about(&ev[i], tid))
			continue;
		if (stack_mentions(ev[i].stack, needle) ||
		    stack_mentions(tq_create_stack(t, &ev[i]), needle))
			return true;
	}
	return false;
}

static bool mem_has(const char *hay, size_t len, const char *needle)
{
	size_t nl = strlen(needle);

	for (size_t i = 0; hay && nl <= len && i <= len - nl; i++)
		if (!memcmp(hay + i, needle, nl))
			return true;
	return false;
}

size_t tq_count_logs(const struct gt_trace *t, const char *needle)
{
	const struct gt_event *ev = gt_trace__events(t);
	size_t n = gt_trace__nevents(t), count = 0;

	for (size_t i = 0; i < n; i++) {
		const char *key;

		if (ev[i].type != GT_EV_USER_LOG)
			continue;
		key = ev[i].nargs >= 2 ? gt_trace__string(t, ev[i].args[1]) : NULL;
		count += (key && strstr(key, needle)) || mem_has(ev[i].msg, ev[i].msg_len, needle);
	}
	return count;
}

void tq_sched(const struct gt_trace *t, uint32_t tid, uint64_t from, uint64_t to,
	      struct tq_sched *out)
{
	const struct gt_event *e;
	uint64_t since = 0;	/* runnable since then; 0: not runnable */
	bool woken = false;	/* by a wakeup, not a preemption */
	bool past = false;	/* past the window's end */
	size_t i = 0;

	*out = (struct tq_sched){ 0 };
	while ((e = tq_next(t, &i, ~0ULL, tid))) {
		bool in = e->ts >= from && e->ts <= to;

		if (!past && e->ts > to) {
			past = true;
			if (since)
				out->open_ns = tq_ns(t, since > from ? since : from, to);
		}

		i++;
		out->repaired += in && e->stack && e->stack->n &&
				 !strcmp(e->stack->frames[0].func, "[lxtrace repair]");
		switch (e->type) {
		case GT_EV_GO_CREATE:
		case GT_EV_GO_UNBLOCK:
		case GT_EV_GO_SYSEXIT:
		case GT_EV_GO_PREEMPT:
		case GT_EV_GO_SCHED:
			if (!since) {
				since = e->ts;
				woken = e->type == GT_EV_GO_UNBLOCK || e->type == GT_EV_GO_SYSEXIT;
			}
			break;
		case GT_EV_GO_START:
		case GT_EV_GO_START_LABEL:
			/* A wait counts whole, in the window its end falls in, as the kernel adds
			 * it to the run delay when the thread starts running. */
			if (since && in) {
				out->runnable_ns += tq_ns(t, since, e->ts);
				if (since < from)
					out->before_ns += tq_ns(t, since, from);
			}
			out->starts += in;
			out->woken += in && since && woken;
			since = 0;
			break;
		case GT_EV_GO_SYSCALL:
			break;	/* a syscall that does not block: still running */
		default:
			/* Blocked, asleep, in a syscall at the start, ended. */
			if (e->type >= GT_EV_GO_END && e->type <= GT_EV_GO_IN_SYSCALL)
				since = 0;
			if (in && e->type == GT_EV_GO_BLOCK && e->stack && e->stack->n &&
			    !strcmp(e->stack->frames[0].func, "[lxtrace repair]"))
				out->unseen++;
			break;
		}
	}
	if (!past && since)
		out->open_ns = tq_ns(t, since > from ? since : from, to);
}

double tq_ns(const struct gt_trace *t, uint64_t from, uint64_t to)
{
	uint64_t freq = gt_trace__frequency(t);

	return ((double)to - (double)from) * 1e9 / (double)(freq ? freq : 1000000000);
}

void tq_dump(const struct gt_trace *t, uint32_t tid, size_t max, FILE *f)
{
	const struct gt_event *ev = gt_trace__events(t);
	size_t n = gt_trace__nevents(t), shown = 0;
	uint64_t t0 = n ? ev[0].ts : 0;

	for (size_t i = 0; i < n && shown < max; i++) {
		const char *leaf;

		if (tid != TQ_ANY_THREAD && !tq_about(&ev[i], tid))
			continue;
		leaf = tq_leaf(ev[i].stack);
		fprintf(f, "%12.3f us  P%-3lld %-14s g=%llu subject=%llu%s%s\n",
			tq_ns(t, t0, ev[i].ts) / 1e3, (long long)ev[i].p,
			ev[i].type < GT_EV_COUNT ? gt_specs[ev[i].type].name : "?",
			(unsigned long long)ev[i].g, (unsigned long long)tq_subject(&ev[i]),
			leaf ? "  " : "", leaf ? leaf : "");
		shown++;
	}
}

static int by_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **tq_window_lines(const struct gt_trace *t, uint64_t from, uint64_t to, size_t *n)
{
	const struct gt_event *ev = gt_trace__events(t);
	char **lines = calloc(gt_trace__nevents(t) + 1, sizeof(*lines));

	*n = 0;
	for (size_t i = 0; lines && i < gt_trace__nevents(t); i++) {
		const struct gt_event *e = &ev[i];

		if (e->ts < from || e->ts >= to)
			continue;
		if (asprintf(&lines[*n], "g=%llu %s %s %.*s",
			     e->type == GT_EV_CPU_SAMPLE ? 0ull : (unsigned long long)e->g,
			     gt_specs[e->type].name, tq_leaf(e->stack) ? tq_leaf(e->stack) : "-",
			     (int)e->msg_len, e->msg ? e->msg : "") < 0)
			break;
		(*n)++;
	}
	if (lines)
		qsort(lines, *n, sizeof(*lines), by_line);
	return lines;
}

void tq_free_lines(char **lines, size_t n)
{
	for (size_t i = 0; lines && i < n; i++)
		free(lines[i]);
	free(lines);
}
