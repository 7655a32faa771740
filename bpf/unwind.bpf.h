/* unwind.bpf.h - user stacks unwound in BPF from call-frame information: the walk, through the
 * process's mapping table (pmaps.bpf.h) and its files' rows (cfi_rows.bpf.h), asked of the
 * per-thread cache (ucache.bpf.h) first. docs/stacks.md, "Unwinding", has the design and the
 * figures behind it.
 *
 * Per frame: the mapping of the address (a frame outside every executable mapping ends the walk
 * as truncated), its row (a binary search), then the CFA, the return address at CFA - 8, and
 * rbp if the row says it was saved. No row (no table loaded yet, JIT code, a rule the table
 * cannot hold, Go code that switches stacks): one frame-pointer step, flagged. The CFA must rise, so no walk can loop.
 * Each walk logs the words it read into a cache slot, for the next to be proven unchanged.
 */
#ifndef LXTRACE_BPF_UNWIND_BPF_H
#define LXTRACE_BPF_UNWIND_BPF_H

#include "lxtrace.h"
#include "unwind.h"
#include "pmaps.bpf.h"
#include "cfi_rows.bpf.h"
#include "ucache.bpf.h"
#include "unwind_stats.bpf.h"

#define USER_ADDR_MAX (1ull << 47)
#define USER_ADDR_MIN 4096
/* A copy's len while the ring has no room for it (unwind_user): more than any copy holds. */
#define UCOPY_NO_ROOM 0xffff
/* walk_io.may_copy */
#define COPY_STOP 1
#define COPY_NO_ROOM 2

/* Set by user space before load. */
const volatile bool unwind_cfi = true;	/* false: frame pointers only */

/* The frames a walk writes. */
struct walk_out {
	__u64 pc[LX_STACK_USER_MAX];
};

/* What a walk starts from and what it found (unwind_walk's scalars). */
struct walk_io {
	__u64 ip, sp, bp;	/* in: the user registers; out with LX_USTACK_COPY: those of the
				 * frame the walk stopped at */
	__u64 di;		/* in: the user rdi, for the leaf's LX_CFA_RA_RDI */
	__u32 n;		/* frames written */
	int want;		/* a mapping whose file has no rows loaded, or -1 */
	__u8 flags;		/* enum lx_ustack_flags */
	bool cache;		/* in: log the words read; out: they were all logged */
	bool bp_used;		/* the walk depended on the initial bp */
	__u8 may_copy;		/* in: COPY_STOP: stop at a file without rows yet
				 * (LX_USTACK_COPY); COPY_NO_ROOM: no room for that copy: go on
				 * by frame pointers there, uncached, with LX_USTACK_COPY all
				 * the same */
	bool stale;		/* in: the table lags the process's mappings (an answer from
				 * user space under way): an address in none may be new code */
	__u8 copy_flags;	/* out with LX_USTACK_COPY: enum lx_ucopy_flags */
};

/* A walk's state between frames: scalars only, so that walk_step, a global function, is
 * checked once. The table, the cache slot and the output are its other arguments. */
struct walk {
	__u64 ip, sp, bp, sp0, di;
	__u32 n;
	int last_map;		/* the mapping whose rows are below, -1: none */
	__u32 first, nrows;	/* its file's rows; nrows 0: none loaded */
	int want;		/* a mapping whose file has no rows */
	__u8 flags;		/* enum lx_ustack_flags */
	bool exact;		/* ip is an interrupted instruction, not a return address */
	bool bp_ok;		/* bp holds the frame's real rbp */
	bool bp_used;		/* the walk depended on the initial bp */
	bool bp_from_mem;	/* bp was read from the stack, not from the registers */
	bool logging;		/* the words read go into the cache slot */
	bool fault;		/* a read failed */
	__u8 may_copy;		/* walk_io.may_copy */
	bool stale;		/* walk_io.stale */
	bool switched;		/* a frame-pointer step went to another stack (fp_step) */
	bool sig_switched;	/* a signal frame went to another stack */
	bool guessed;		/* ip came from a frame-pointer step through code that need not
				 * keep rbp: a 0 there ends nothing */
};

/* The user word at a, logging it into the cache slot; a failed read sets w->fault. Global, as
 * walk_step: one call instruction per use keeps walk_step's paths few for the verifier. The
 * value is returned, not stored through a pointer: the caller's frame then holds no slot for
 * it, which keeps the deepest call chain within the 512 bytes of stack kernels before 6.13
 * allow. */
__noinline __u64 read_word(struct walk *w, struct uc_slot *log, __u64 a)
{
	__u64 d, v = 0;
	__u16 k;

	if (!w || !log)
		return 0;
	if (bpf_probe_read_user(&v, sizeof(v), (void *)a)) {
		w->fault = true;
		return 0;
	}
	if (!w->logging)
		return v;
	d = a - w->sp0;
	k = log->nwords;
	if ((d & 7) || a < w->sp0 || d / 8 > 0xffff || k >= LX_UC_WORDS) {
		w->logging = false;	/* not cacheable: the walk goes on without */
		return v;
	}
	log->idx[k] = d / 8;
	log->val[k] = v;
	log->nwords = k + 1;
	if (!k || d / 8 > log->maxidx)
		log->maxidx = d / 8;
	return v;
}


/* One frame-pointer step: rbp points at the saved rbp, the return address above it. 0: done,
 * 1: the chain's end, 2: done onto another stack, -1: no step. may_switch: code known only by
 * its frame pointers (no rows), where an rbp below the frame can be a stack switch: Go calls
 * the vDSO and cgo on the thread's own stack, its callers' frames on the goroutine's. One
 * switch a walk keeps it from looping; the words it reads are not at offsets above sp, so such
 * a walk is not cached. */
static __always_inline int fp_step(struct walk *w, struct uc_slot *log, __u64 *ra,
				   bool may_switch)
{
	__u64 bp = w->bp, nbp;
	int ret = 0;

	w->flags |= LX_USTACK_FP;
	if (!w->bp_ok)
		return -1;
	if (!w->bp_from_mem)
		w->bp_used = true;
	if (!bp)
		return 1;	/* the chain's end */
	if (bp & 7)
		return -1;
	if (bp < w->sp) {
		if (!may_switch || w->switched)
			return -1;
		w->switched = true;
		w->logging = false;
		ret = 2;
	}
	*ra = read_word(w, log, bp + 8);
	nbp = read_word(w, log, bp);
	if (w->fault)
		return -1;
	w->sp = bp + 16;
	w->bp = nbp;
	w->bp_from_mem = true;
	return ret;
}

/* Emits frame w->ip into out and steps to its caller, through process table t, logging the
 * words read into log. 0: go on; 1: stop. A global function: checked once, not per frame. */
__noinline int walk_step(struct walk *w, struct lx_pmaps *t, struct uc_slot *log,
			 struct walk_out *out)
{
	__u64 ip, look, cfa = 0, ra = 0, nbp, sp, nip;
	const struct lx_cfi_row *row = NULL;
	const struct lx_file_rows *fr;
	struct lx_file_key key = {};
	struct lx_map *m;
	bool exact, guessed, guess;
	__u32 n;
	int mi, err;

	if (!w || !t || !log || !out)
		return 1;
	exact = w->exact;
	guessed = w->guessed;
	w->guessed = false;
	ip = w->ip;
	sp = w->sp;
	n = w->n;
	if (n >= LX_STACK_USER_MAX) {
		w->flags |= LX_USTACK_DEEP;
		return 1;
	}
	if (ip < USER_ADDR_MIN || ip >= USER_ADDR_MAX) {
		if (ip || guessed)	/* 0 ends some runtimes' stacks */
			w->flags |= LX_USTACK_TRUNCATED;
		return 1;
	}
	/* A return address is looked up inside its call instruction. */
	look = w->exact ? ip : ip - 1;
	mi = pmaps_find(t, look);
	if (mi < 0 && !t->overflow && w->may_copy == COPY_STOP && w->stale) {
		/* Maybe code the table does not have yet: the daemon knows the mappings. */
		w->flags |= LX_USTACK_COPY;
		w->logging = false;
		return 1;
	}
	if (mi < 0 && !t->overflow) {
		/* Not in any executable mapping: not code, or new code a copy would have shown
		 * had the ring had room for it. */
		if (w->may_copy == COPY_NO_ROOM && w->stale) {
			w->flags |= LX_USTACK_COPY;
			w->logging = false;
		}
		w->flags |= LX_USTACK_TRUNCATED;
		return 1;
	}
	out->pc[n & (LX_STACK_USER_MAX - 1)] = w->exact ? ip | LX_PC_EXACT : ip;
	w->n = n + 1;
	w->exact = false;
	m = mi >= 0 && unwind_cfi ? pmaps_at(t, mi) : NULL;
	if (m) {
		if (mi != w->last_map) {
			w->last_map = mi;
			w->nrows = 0;
			w->first = 0;
			key.ino = m->ino;
			key.dev = m->dev;
			fr = m->ino ? bpf_map_lookup_elem(&cfi_files, &key) : NULL;
			if (fr) {
				w->first = fr->first;
				w->nrows = fr->n;
			} else if (m->ino) {
				unwind_count(LX_UNWIND_NO_TABLE);
				w->want = mi;
				if (w->may_copy == COPY_STOP) {
					/* Not a guess from rbp: the daemon takes this frame
					 * on from a copy of the stack, with the rows. */
					w->n = n;
					w->exact = exact;
					w->flags |= LX_USTACK_COPY;
					w->logging = false;
					return 1;
				}
				/* No room for the copy: a guess from rbp, said and not
				 * cached, so that the next walk asks for a copy again. */
				if (w->may_copy == COPY_NO_ROOM) {
					w->flags |= LX_USTACK_COPY;
					w->logging = false;
				}
			}
		}
		if (w->nrows) {
			int k = find_row(w->first, w->nrows,
					 look - m->start + ((__u64)m->pgoff << 12));

			row = k >= 0 ? bpf_map_lookup_elem(&cfi_rows, &k) : NULL;
		}
	}
	switch (row ? LX_CFI_KIND(row->kind) : LX_CFA_NONE) {
	case LX_CFA_SP:
		cfa = sp + row->cfa_off * 8;
		break;
	case LX_CFA_BP:
		if (!w->bp_ok)
			goto truncated;
		if (!w->bp_from_mem)
			w->bp_used = true;
		cfa = w->bp + row->cfa_off * 8;
		break;
	case LX_CFA_PLT:
		cfa = sp + row->cfa_off * 8 + ((ip & 15) >= (__u8)row->rbp_off ? 8 : 0);
		break;
	case LX_CFA_SIGNAL:
		/* The kernel made the handler return to the trampoline's first instruction: that
		 * address is the frame, not the inside of a call before it. */
		out->pc[n & (LX_STACK_USER_MAX - 1)] = ip | LX_PC_EXACT;
		nip = read_word(w, log, sp + LX_SIGFRAME_RIP);
		cfa = read_word(w, log, sp + LX_SIGFRAME_RSP);
		nbp = read_word(w, log, sp + LX_SIGFRAME_RBP);
		if (w->fault)
			goto truncated;
		/* A handler on a stack of its own (sigaltstack; every Go handler) returns to
		 * the interrupted code's: once a walk, so none loops, and not cached, as the
		 * words it reads there are not above sp. */
		if (cfa <= sp) {
			if (w->sig_switched)
				goto truncated;
			w->sig_switched = true;
			w->logging = false;
		}
		w->ip = nip;
		w->sp = cfa;
		w->bp = nbp;
		w->bp_ok = true;
		w->bp_from_mem = true;
		w->exact = true;
		return 0;
	case LX_CFA_END:
		return 1;
	case LX_CFA_RA_RDI:
		/* rdi is the interrupted leaf's only; a walk that used it cannot be proven
		 * unchanged from the stack's words. */
		if (!exact || n)
			goto truncated;
		w->logging = false;
		cfa = sp + row->cfa_off * 8;
		if (LX_CFI_RBP(row->kind) != LX_RBP_SAME)
			w->bp_ok = false;
		w->sp = cfa;
		w->ip = w->di;
		return 0;
	default:
		/* rbp 0 ends a frame-pointer chain, but code under a rule the rows cannot hold
		 * or whose rows are not loaded (yet, or at all) need not keep rbp at all. */
		guess = w->want == mi || (row && LX_CFI_KIND(row->kind) == LX_CFA_NONE) ||
			(!w->nrows && w->first == LX_ROWS_UNLOADED);
		err = fp_step(w, log, &ra, row ? LX_CFI_KIND(row->kind) == LX_CFA_SWITCH :
						 !w->nrows && !guess);
		if (err == 1 && guess)
			goto truncated;
		if (err == 1)
			return 1;
		if (err < 0 || (err == 0 && w->sp <= sp))
			goto truncated;
		w->ip = ra;
		w->guessed = guess;
		return 0;
	}
	if (cfa <= sp)
		goto truncated;
	ra = read_word(w, log, cfa - 8);
	if (w->fault)
		goto truncated;
	switch (LX_CFI_RBP(row->kind)) {
	case LX_RBP_CFA:
		nbp = read_word(w, log, cfa + row->rbp_off * 8);
		if (w->fault)
			goto truncated;
		w->bp = nbp;
		w->bp_ok = true;
		w->bp_from_mem = true;
		break;
	case LX_RBP_SAME:
		break;
	default:
		w->bp_ok = false;
	}
	w->sp = cfa;
	w->ip = ra;
	return 0;
truncated:
	w->flags |= LX_USTACK_TRUNCATED;
	return 1;
}

/* A walk's state, kept off the stack: the verifier of kernels before 6.13 sums the frames of
 * a program and the functions it calls, each rounded up (to 32 bytes before 6.2), against 512
 * bytes, and a scheduler program's own frame, unwind_walk's, walk_step's and a leaf's were more
 * than that on 6.1 with these on the stack. One per nesting level on a CPU: a sample or a
 * wakeup in an interrupt can run inside a program that is walking. */
struct walk_state {
	struct walk_io io;
	struct walk w;
};

/* The levels: send_stacked's, and a kept exec walk's (keep_exec_ustack) under them. */
#define WALK_LEVELS 5

struct walk_levels {
	__u32 depth;
	struct walk_state at[WALK_LEVELS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct walk_levels);
} walk_levels SEC(".maps");

/* Walks the user stack from ws->io's registers through process table t into out, logging the
 * words read into log when ws->io.cache. A global function: the verifier checks it once,
 * whichever program calls it. */
__noinline int unwind_walk(struct walk_state *ws, struct lx_pmaps *t, struct uc_slot *log,
			   struct walk_out *out)
{
	struct walk_io *io;
	struct walk *w;

	if (!ws || !t || !log || !out)
		return -1;
	io = &ws->io;
	w = &ws->w;
	__builtin_memset(w, 0, sizeof(*w));
	w->logging = io->cache;
	w->ip = io->ip;
	w->sp = w->sp0 = io->sp;
	w->bp = io->bp;
	w->di = io->di;
	w->bp_ok = true;
	w->exact = true;
	w->last_map = -1;
	w->want = -1;
	w->may_copy = io->may_copy;
	w->stale = io->stale;
	for (int i = 0; i < LX_STACK_USER_MAX + 1; i++)
		if (walk_step(w, t, log, out))
			break;
	io->n = w->n;
	io->want = w->want;
	io->flags = w->flags;
	io->cache = w->logging;
	io->bp_used = w->bp_used;
	if (w->flags & LX_USTACK_COPY) {
		io->ip = w->ip;
		io->sp = w->sp;
		io->bp = w->bp;
		io->copy_flags = (w->exact ? LX_UCOPY_EXACT : 0) | (w->bp_ok ? LX_UCOPY_BP_OK : 0);
	}
	return 0;
}

/* The current thread's user stack from its user registers (ip, sp, bp) into out, leaf first,
 * after unwind_cached() missed with *us. Returns the frame count and adds the walk's enum
 * lx_ustack_flags to *flags, with the cache slot in *slot for LX_USTACK_STORE. The caller
 * reports a stored walk that it failed to send with unwind_unstore(). With copy, the walk
 * stops where it has no rows to go on with (no mapping table, a file whose rows are not
 * loaded yet) and says there (LX_USTACK_COPY) the frame it stopped at; the caller copies the
 * stack above it. A copy whose len is UCOPY_NO_ROOM has no room in the ring: the walk goes on
 * there as without copy, uncached, and says so with LX_USTACK_COPY all the same, which the
 * caller takes off. */
static __always_inline __u32 unwind_user_with(struct walk_state *ws, __u64 ip, __u64 sp,
					      __u64 bp, __u64 di, const struct uc_lookup *us,
					      struct walk_out *out, __u8 *flags, __u8 *slot,
					      struct lx_ucopy *copy)
{
	struct walk_io *io = &ws->io;
	struct ucache *uc = us->uc;
	__u32 tgid = us->tgid, i = 0, zero = 0;
	struct uc_slot *s = NULL;
	struct mm_struct *mm;
	struct lx_pmaps *t;
	struct lx_map *m;

	*io = (struct walk_io){ .ip = ip, .sp = sp, .bp = bp, .di = di,
				.may_copy = !copy ? 0 : copy->len == UCOPY_NO_ROOM ? COPY_NO_ROOM :
									 COPY_STOP };
	t = bpf_map_lookup_elem(&proc_maps, &tgid);
	if (!t) {
		unwind_count(LX_UNWIND_NO_MAPS);
		/* copy, not io's may_copy, which the verifier reads back from a map unknown. */
		if (copy && copy->len != UCOPY_NO_ROOM) {
			copy->ip = ip;
			copy->sp = sp;
			copy->bp = bp;
			copy->di = di;
			copy->flags = LX_UCOPY_EXACT | LX_UCOPY_BP_OK;
			*flags |= LX_USTACK_COPY;
			return 0;
		}
		/* The leaf at least: its address is known. */
		out->pc[0] = ip | LX_PC_EXACT;
		*flags |= LX_USTACK_TRUNCATED | (copy ? LX_USTACK_COPY : 0);
		return 1;
	}
	if (uc && !uc->busy) {
		uc->busy = 1;
		barrier();
		i = uc->next++ % LX_UC_SLOTS;
		s = &uc->s[i];
		s->valid = 0;
		s->nwords = 0;
		io->cache = true;
	} else {
		uc = NULL;
		s = bpf_map_lookup_elem(&uc_spare, &zero);
		if (!s)
			return 0;
	}
	mm = bpf_get_current_task_btf()->mm;
	io->stale = pmaps_lags(t, mm);
	unwind_walk(ws, t, s, out);
	m = io->want >= 0 ? pmaps_at(t, io->want) : NULL;
	if (m)
		want_rows(m, tgid);
	*flags |= io->flags;
	if (copy && (io->flags & LX_USTACK_COPY)) {
		copy->ip = io->ip;
		copy->sp = io->sp;
		copy->bp = io->bp;
		copy->di = di;
		copy->flags = io->copy_flags;
	}
	if (io->flags & LX_USTACK_TRUNCATED)
		unwind_count(LX_UNWIND_TRUNCATED);
	if (io->flags & LX_USTACK_FP)
		unwind_count(LX_UNWIND_FP);
	if (uc) {
		if (io->cache) {
			s->ip = ip;
			s->sp = sp;
			s->bp = bp;
			s->bp_used = io->bp_used;
			s->maps_ver = us->ver;
			s->cfi_gen = cfi_gen;
			s->flags = io->flags;
			s->valid = 1;
			*flags |= LX_USTACK_STORE;
			*slot = i;
			unwind_count(LX_UNWIND_STORED);
		}
		barrier();
		uc->busy = 0;
	}
	unwind_count(LX_UNWIND_WALKS);
	return io->n <= LX_STACK_USER_MAX ? io->n : LX_STACK_USER_MAX;
}


/* unwind_user_with() in this CPU's walk state of the next nesting level. */
static __always_inline __u32 unwind_user(__u64 ip, __u64 sp, __u64 bp, __u64 di,
					 const struct uc_lookup *us, struct walk_out *out,
					 __u8 *flags, __u8 *slot, struct lx_ucopy *copy)
{
	struct walk_levels *wl;
	__u32 zero = 0, level, n = 0;

	*slot = 0;
	wl = bpf_map_lookup_elem(&walk_levels, &zero);
	if (!wl)
		return 0;
	/* Interrupts nest strictly: a nested walk restores the depth before this one goes on. */
	level = wl->depth++;
	barrier();
	if (level < WALK_LEVELS)
		n = unwind_user_with(&wl->at[level], ip, sp, bp, di, us, out, flags, slot, copy);
	else
		*flags |= LX_USTACK_TRUNCATED;
	barrier();
	wl->depth--;
	return n;
}

#endif
