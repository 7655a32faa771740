/* late_walk.c - the daemon's end of a walk BPF stopped for lack of rows (late_walk.h). */
#include <errno.h>
#include <string.h>

#include "bpf/unwind.h"
#include "user/proc/kdev.h"
#include "user/stacks/cfi.h"
#include "user/stacks/cfi_loader.h"
#include "user/stacks/late_walk.h"
#include "user/stacks/symbolize.h"

/* As bpf/unwind.bpf.h: nothing runs below the first page, and user space ends at 2^47. */
#define USER_MIN 4096
#define USER_END (1ull << 47)

struct regs {
	uint64_t ip, sp, bp;
	bool bp_ok, exact;
};

/* The stack word at a, from the copy; false when a is outside it. */
static bool word(const struct lx_ucopy *c, uint64_t a, uint64_t *v)
{
	if (a < c->sp || a - c->sp > c->len || c->len - (a - c->sp) < sizeof(*v))
		return false;
	memcpy(v, c->bytes + (a - c->sp), sizeof(*v));
	return true;
}

/* The rows of the file code is in: 1 with *rows, *n (n 0: none, as for anonymous code); 2 when
 * the file has rows this walk cannot have (the file late, or its rows not loaded: frame
 * pointers there are a guess); 0 when they are not there yet (asked for). */
static int rows_of(const struct late_walk *lw, const struct sym_code *code,
		   const struct lx_cfi_row **rows, uint32_t *n)
{
	uint32_t dev = code->ino == LX_VDSO_INO ? 0 : kdev__from_dev(code->dev);
	struct lx_cfi_want w = { .start = code->start, .end = code->end, .ino = code->ino,
				 .pid = (uint32_t)code->pid, .dev = dev };
	int ret;

	*rows = NULL;
	*n = 0;
	if (!code->ino || !lw->cfi)
		return 1;
	ret = cfi_loader__rows(lw->cfi, dev, code->ino, rows, n);
	if (ret != -ENOENT)
		return ret;
	/* A file late to open (its filesystem slow or stalled) holds no stack back: this walk
	 * takes frame pointers there, and a later one asks again. */
	if (cfi_loader__want_file(lw->cfi, &w, code->path) == -ETIMEDOUT)
		return 2;
	ret = cfi_loader__rows(lw->cfi, dev, code->ino, rows, n);
	return ret > 0 ? ret : 0;
}

/* One frame-pointer step from r (a frame without a usable row); false: the walk ends, *end
 * says how. chain: the code keeps the chain as far as anyone knows (no FDE covers it), so
 * its 0 is the end; under an FDE's rule the rows cannot hold it proves nothing. */
static bool fp_step(const struct lx_ucopy *c, struct regs *r, bool chain, enum late_walk_end *end)
{
	uint64_t ra, nbp;

	*end = LATE_WALK_NOT_CODE;
	if (!r->bp_ok)
		return false;
	if (!r->bp) {
		*end = chain ? LATE_WALK_WHOLE : LATE_WALK_NOT_CODE;
		return false;
	}
	if (r->bp < r->sp || (r->bp & 7))
		return false;
	if (!word(c, r->bp + 8, &ra) || !word(c, r->bp, &nbp)) {
		*end = LATE_WALK_COPY_SHORT;
		return false;
	}
	r->sp = r->bp + 16;
	r->bp = nbp;
	r->ip = ra;
	return true;
}

/* The caller of r's frame by its row; false: the walk ends, *end says how. leaf: the frame is
 * the interrupted leaf, whose rdi the copy holds. */
static bool row_step(const struct lx_ucopy *c, const struct lx_cfi_row *row, struct regs *r,
		     bool leaf, enum late_walk_end *end)
{
	uint64_t cfa, ra, nbp, nsp;

	*end = LATE_WALK_NOT_CODE;
	switch (LX_CFI_KIND(row->kind)) {
	case LX_CFA_RA_RDI:
		if (!leaf)
			return false;
		if (LX_CFI_RBP(row->kind) != LX_RBP_SAME)
			r->bp_ok = false;
		r->sp += row->cfa_off * 8ull;
		r->ip = c->di;
		return true;
	case LX_CFA_SP:
		cfa = r->sp + row->cfa_off * 8ull;
		break;
	case LX_CFA_BP:
		if (!r->bp_ok)
			return false;
		cfa = r->bp + row->cfa_off * 8ull;
		break;
	case LX_CFA_PLT:
		cfa = r->sp + row->cfa_off * 8ull + ((r->ip & 15) >= (uint8_t)row->rbp_off ? 8 : 0);
		break;
	case LX_CFA_SIGNAL:
		if (!word(c, r->sp + LX_SIGFRAME_RIP, &ra) ||
		    !word(c, r->sp + LX_SIGFRAME_RSP, &nsp) ||
		    !word(c, r->sp + LX_SIGFRAME_RBP, &nbp)) {
			*end = LATE_WALK_COPY_SHORT;
			return false;
		}
		/* A handler on a stack of its own returns to another: not in the copy. */
		if (nsp <= r->sp) {
			*end = LATE_WALK_COPY_SHORT;
			return false;
		}
		*r = (struct regs){ ra, nsp, nbp, true, true };
		return true;
	default:	/* LX_CFA_END */
		*end = LATE_WALK_WHOLE;
		return false;
	}
	if (cfa <= r->sp)
		return false;
	if (!word(c, cfa - 8, &ra)) {
		*end = LATE_WALK_COPY_SHORT;
		return false;
	}
	switch (LX_CFI_RBP(row->kind)) {
	case LX_RBP_CFA:
		if (!word(c, cfa + row->rbp_off * 8ll, &r->bp)) {
			*end = LATE_WALK_COPY_SHORT;
			return false;
		}
		r->bp_ok = true;
		break;
	case LX_RBP_SAME:
		break;
	default:
		r->bp_ok = false;
	}
	r->sp = cfa;
	r->ip = ra;
	return true;
}

int late_walk__finish(const struct late_walk *lw, const struct lx_ucopy *c, uint64_t *pcs,
		      unsigned *n, bool wait, enum late_walk_end *end)
{
	struct regs r = { c->ip, c->sp, c->bp, c->flags & LX_UCOPY_BP_OK,
			  c->flags & LX_UCOPY_EXACT };
	bool guessed = false;

	for (;;) {
		uint64_t look = r.exact ? r.ip : r.ip - 1, sp = r.sp;
		const struct lx_cfi_row *rows, *row;
		struct sym_code code;
		uint32_t nrows;
		bool exact = r.exact, ok;
		int kind, got;

		if (*n >= LX_STACK_USER_MAX) {
			*end = LATE_WALK_DEEP;
			return 0;
		}
		if (r.ip < USER_MIN || r.ip >= USER_END) {
			/* 0 ends some runtimes' stacks */
			*end = r.ip || guessed ? LATE_WALK_NOT_CODE : LATE_WALK_WHOLE;
			return 0;
		}
		if (symbolizer__code_at(lw->sym, lw->proc, look, &code)) {
			*end = LATE_WALK_NOT_CODE;
			return 0;
		}
		got = rows_of(lw, &code, &rows, &nrows);
		if (!got) {
			if (wait)
				return -EAGAIN;
			pcs[(*n)++] = exact ? r.ip | LX_PC_EXACT : r.ip;
			*end = LATE_WALK_NO_ROWS;
			return 0;
		}
		pcs[(*n)++] = exact ? r.ip | LX_PC_EXACT : r.ip;
		r.exact = false;
		row = nrows ? cfi_rows__find(rows, nrows,
					     (uint32_t)(look - code.start + code.pgoff))
			    : NULL;
		kind = row ? LX_CFI_KIND(row->kind) : got == 2 ? LX_CFA_NONE : LX_CFA_GAP;
		/* Code that switched stacks is followed as far as the copy goes: its own stack. */
		if (kind == LX_CFA_NONE || kind == LX_CFA_GAP || kind == LX_CFA_SWITCH)
			ok = fp_step(c, &r, kind != LX_CFA_NONE, end);
		else
			ok = row_step(c, row, &r, exact && *n == 1, end);
		/* The kernel made the handler return to the restorer's first instruction, as
		 * bpf/unwind.bpf.h marks it: not the inside of a call before it. */
		if (kind == LX_CFA_SIGNAL)
			pcs[*n - 1] |= LX_PC_EXACT;
		/* A step through code that need not keep rbp is a guess: a 0 it finds ends
		 * nothing. */
		guessed = kind == LX_CFA_NONE;
		if (!ok)
			return 0;
		/* Every step rises, so no walk loops; the leaf whose return address is in rdi
		 * may keep its sp. */
		if (r.sp < sp || (r.sp == sp && kind != LX_CFA_RA_RDI)) {
			*end = LATE_WALK_NOT_CODE;
			return 0;
		}
	}
}
