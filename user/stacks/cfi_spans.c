/* cfi_spans.c - spans of code to the unwinder's rows, for every maker of rows (cfi_spans.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "lib/clock.h"
#include "lib/grow.h"
#include "user/stacks/cfi_spans.h"

/* Gaps between functions up to this long are padding (functions are 16-byte aligned). */
#define PAD_MAX 15

/* How often cfi_budget__spent reads the clock. */
#define CHECK_EVERY 64

int cfi_segs__read(Elf *elf, struct cfi_segs *s)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	s->n = 0;
	for (size_t i = 0; i < n && s->n < sizeof(s->p) / sizeof(s->p[0]); i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
			s->p[s->n++] = ph;
	}
	return 0;
}

const GElf_Phdr *cfi_segs__of(const struct cfi_segs *s, uint64_t a)
{
	for (size_t i = 0; i < s->n; i++)
		if (a >= s->p[i].p_vaddr && a < s->p[i].p_vaddr + s->p[i].p_filesz)
			return &s->p[i];
	return NULL;
}

int cfi_spans__add(struct cfi_spans *sp, uint64_t lo, uint64_t hi, struct lx_cfi_row rule)
{
	if (sp->n >= sp->max)
		return -EFBIG;
	if (grow_array((void **)&sp->v, &sp->cap, sp->n + 1, sizeof(*sp->v), 1024))
		return -ENOMEM;
	sp->v[sp->n++] = (struct cfi_span){ lo, hi, rule };
	return 0;
}

struct lx_cfi_row cfi_rule(enum lx_cfa_kind cfa)
{
	return (struct lx_cfi_row){ .kind = LX_CFI_MAKE_KIND(cfa, LX_RBP_UNKNOWN) };
}

static int cmp_span(const void *a, const void *b)
{
	const struct cfi_span *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static bool same_rule(const struct lx_cfi_row *a, const struct lx_cfi_row *b)
{
	return a->kind == b->kind && a->cfa_off == b->cfa_off && a->rbp_off == b->rbp_off;
}

int cfi_spans__to_rows(struct cfi_spans *sp, struct cfi_table *t)
{
	size_t cap = 0;
	uint64_t prev_hi = 0;

	qsort(sp->v, sp->n, sizeof(*sp->v), cmp_span);
	t->rows = NULL;
	t->n = 0;
	for (size_t i = 0; i < sp->n; i++) {
		const struct cfi_span *s = &sp->v[i];
		struct lx_cfi_row r = s->rule;

		if (s->hi > UINT32_MAX)
			break;	/* past what a row's offset holds: left uncovered */
		if (grow_array((void **)&t->rows, &cap, t->n + 2, sizeof(*t->rows), 1024))
			return -ENOMEM;
		/* Alignment padding between two functions is no code: the row before covers it. */
		if (t->n && s->lo > prev_hi + PAD_MAX) {
			struct lx_cfi_row gap = cfi_rule(LX_CFA_GAP);

			gap.off = (uint32_t)prev_hi;
			if (!same_rule(&t->rows[t->n - 1], &gap))
				t->rows[t->n++] = gap;
		}
		r.off = (uint32_t)s->lo;
		if (!t->n || !same_rule(&t->rows[t->n - 1], &r))
			t->rows[t->n++] = r;
		if (s->hi > prev_hi)
			prev_hi = s->hi;
	}
	if (t->n) {
		/* Past the last span: nothing known. */
		struct lx_cfi_row end = cfi_rule(LX_CFA_GAP);

		end.off = (uint32_t)prev_hi;
		if (grow_array((void **)&t->rows, &cap, t->n + 1, sizeof(*t->rows), 1024))
			return -ENOMEM;
		t->rows[t->n++] = end;
	}
	return 0;
}

struct cfi_budget cfi_budget__start(const struct cfi_limits *lim, uint64_t ns)
{
	if (lim && lim->max_ns && lim->max_ns < ns)
		ns = lim->max_ns;
	return (struct cfi_budget){ .cancel = lim ? lim->cancel : NULL,
				    .cpu_end = thread_cpu_ns() + ns };
}

int cfi_budget__spent(struct cfi_budget *b)
{
	if (b->steps++ % CHECK_EVERY)
		return 0;
	if (b->cancel && atomic_load_explicit(b->cancel, memory_order_relaxed))
		return -ECANCELED;
	return thread_cpu_ns() > b->cpu_end ? -ETIME : 0;
}
