/* unwind.bpf.h - user stacks unwound in BPF from call-frame information (bpf/unwind.h), with
 * each process's executable mappings kept here as the kernel makes them, and a per-thread
 * cache that proves a stack unchanged instead of walking it again. docs/stacks.md,
 * "Unwinding", has the design and the figures behind it.
 *
 * Mappings. Each process has a table of its executable mappings, sorted (proc_maps, keyed by
 * tgid), made from its VMAs (the task_vma iterator kfuncs) whenever they may have changed:
 * when its mmap lock is released and mm->exec_vm (pages of executable mappings) differs from
 * the table's, or its mm is not the table's (exec). That covers mmap, munmap, mprotect, the ELF
 * loader and the dynamic loader, and costs a lookup and a compare on other releases. fork
 * copies the parent's table (the kernel copies the VMAs without taking the child's lock), the
 * last thread's exit deletes it, and a task iterator builds the tables of the processes alive
 * at the start. A rebuild replaces the whole map element: the hash map is not preallocated, so
 * an unwinder still holding the old element reads a consistent (RCU-protected) snapshot. Each
 * change bumps the process's version (pmaps_vers), for the cache. (This kernel allows no fentry or
 * kprobe on perf_event_mmap, and the syscall tracepoints would slow every syscall.)
 *
 * Rows. User space compiles each binary's CFI (user/stacks/cfi.c) into rows sorted by file
 * offset, appends them to cfi_rows, and publishes (first, n) under the file's (dev, inode)
 * in cfi_files. A mapping gives an address's file offset, the file's rows the rule.
 *
 * Walk. Per frame: the mapping of the address (a frame outside every executable mapping ends
 * the walk as truncated), its row (a binary search), then the CFA, the return address at
 * CFA - 8, and rbp if the row says it was saved. No row (no table loaded yet, JIT or Go code,
 * a rule the table cannot hold): one frame-pointer step, flagged. The CFA must rise, so no
 * walk can loop.
 *
 * Cache. The walk is a function of its inputs: the registers it starts from (ip, sp, and bp
 * when it used it), the process's mapping table (its version), the loaded rows (cfi_gen
 * counts their loads), and the user memory words it read. Each thread keeps its last UC_SLOTS walks with those
 * inputs, the stack offsets of the words read and their values. When the inputs match and
 * every word still holds its value, the walk would read the same words and compute the same
 * frames: the record then names the slot instead of carrying the frames, and user space
 * repeats the frames it received when the slot was stored.
 */
#ifndef LXTRACE_BPF_UNWIND_BPF_H
#define LXTRACE_BPF_UNWIND_BPF_H

#include "lxtrace.h"
#include "unwind.h"

#define VM_WRITE 0x00000002
#define VM_EXEC 0x00000004
#define VM_STACK 0x00000100	/* VM_GROWSDOWN on x86 */
#define USER_ADDR_MAX (1ull << 47)
#define USER_ADDR_MIN 4096
/* Binary search steps: 2^24 rows per file, 2^7 mappings per process. */
#define ROW_STEPS 24
#define MAP_STEPS 8

/* Set by user space before load. */
const volatile bool unwind_maps;	/* user stacks are walked here: keep the mapping tables */
const volatile bool maps_ask;		/* no VMA iterator: user space is asked for the mappings */
const volatile bool unwind_cfi = true;	/* false: frame pointers only */
const volatile bool unwind_cache = true;

/* Bumped by user space each time it publishes a file's rows: a walk that fell back to frame
 * pointers for lack of them may come out differently now. */
volatile __u64 cfi_gen;

/* Written by user space through mmap: rows are appended, never changed once published. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);		/* set before load */
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct lx_cfi_row);
} cfi_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);		/* set before load */
	__type(key, struct lx_file_key);
	__type(value, struct lx_file_rows);
} cfi_files SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);		/* set before load */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct lx_pmaps);
} proc_maps SEC(".maps");

/* The version of each process's table, for the cache: a slot per tgid modulo LX_PMAPS_VERS,
 * bumped after every change of the table of a process of that slot (so a change of another's
 * only costs a walk). A global array, read without a map lookup: a cache hit needs no table.
 * A walk reads the version before the table, a change bumps it after: a walk stored with the
 * current version read the current table. */
volatile __u64 pmaps_vers[LX_PMAPS_VERS];

static __always_inline __u64 pmaps_ver(__u32 tgid)
{
	return pmaps_vers[tgid & (LX_PMAPS_VERS - 1)];
}

static __always_inline void pmaps_bump(__u32 tgid)
{
	barrier();
	__sync_fetch_and_add(&pmaps_vers[tgid & (LX_PMAPS_VERS - 1)], 1);
}

/* Counters of the unwinder (enum lx_unwind_stat), per CPU, read at the end. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LX_UNWIND_NSTATS);
	__type(key, __u32);
	__type(value, __u64);
} unwind_stats SEC(".maps");

static __always_inline void unwind_count(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&unwind_stats, &which);

	if (v)
		__sync_fetch_and_add(v, 1);
}

/* Counts a cache hit, made with the thread's cache busy: a plain add. A program nested in this
 * one on this CPU runs for the same thread, finds its cache busy and counts no hit, so none is
 * lost; unwind_count()'s atomic add cost each hit 11-14 ns more. */
static __always_inline void unwind_count_hit(void)
{
	__u32 which = LX_UNWIND_HITS;
	__u64 *v = bpf_map_lookup_elem(&unwind_stats, &which);

	if (v)
		*v += 1;
}

/* ---- mapping tables ---- */

/* The VMA iterator (6.7+). Weak: on older kernels they resolve to nothing, and the programs
 * that call them (maps_unlock, maps_scan) are not loaded; user space fills the tables from
 * /proc instead, asked by pmaps_ask() below. */
extern int bpf_iter_task_vma_new(struct bpf_iter_task_vma *it, struct task_struct *task,
				 __u64 addr) __weak __ksym;
extern struct vm_area_struct *bpf_iter_task_vma_next(struct bpf_iter_task_vma *it) __weak __ksym;
extern void bpf_iter_task_vma_destroy(struct bpf_iter_task_vma *it) __weak __ksym;

/* Tables are built here before they replace a process's element: too large for the stack.
 * One per CPU and context: [0] tracepoints (which do not nest in one another on a CPU), [1] the
 * start's task iterator (process context, which a tracepoint can preempt). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct lx_pmaps);
} pmaps_build SEC(".maps");

/* The mapping of vma as the tables hold it; false for a mapping that is not executable. */
static __always_inline bool map_of_vma(struct vm_area_struct *vma, struct lx_map *m)
{
	/* Each pointer is loaded once and checked: 7.x's verifier knows these may be NULL, and
	 * a second load of one would be a pointer not checked. */
	struct file *f = vma->vm_file;
	struct mm_struct *mm = vma->vm_mm;

	barrier_var(f);
	barrier_var(mm);
	if (!(vma->vm_flags & VM_EXEC))
		return false;
	m->start = vma->vm_start;
	m->end = vma->vm_end;
	m->pgoff = vma->vm_pgoff;
	m->ino = f ? f->f_inode->i_ino : 0;
	m->dev = f ? f->f_inode->i_sb->s_dev : 0;
	if (!f && mm && (__u64)mm->context.vdso == m->start)
		m->ino = LX_VDSO_INO;
	return true;
}

static __always_inline bool same_map(const struct lx_map *a, const struct lx_map *b)
{
	return a->start == b->start && a->end == b->end && a->ino == b->ino && a->dev == b->dev &&
	       a->pgoff == b->pgoff;
}

/* Called for each mapping a rebuild finds that the old table did not have (see lxtrace.bpf.c:
 * user space learns of it); new_image: there was no old table for this address space, so all
 * of its mappings are reported. */
static __always_inline void pmaps_new_map(const struct lx_map *m, struct vm_area_struct *vma,
					  __u32 tgid, bool new_image);

/* &t->m[i], or NULL when i is out of range. */
static __always_inline struct lx_map *pmaps_at(struct lx_pmaps *t, int i)
{
	__u32 k = i;

	barrier_var(k);
	if (k >= LX_PMAPS_MAX)
		return NULL;
	return &t->m[k];
}

__noinline int pmaps_find_at(const struct lx_pmaps *t, __u64 a, int *out);
static __always_inline int pmaps_find(const struct lx_pmaps *t, __u64 a);

/* Rebuilds the table of process tgid from the VMAs of task (its mm is mm), in build slot
 * `which`. tell: report new mappings (pmaps_new_map). Nothing changes when the VMAs cannot be
 * read (the lock is contended): the next release tries again. */
static __always_inline void pmaps_rebuild(struct task_struct *task, __u32 tgid,
					  struct mm_struct *mm, __u32 which, bool tell)
{
	struct lx_pmaps *nt = bpf_map_lookup_elem(&pmaps_build, &which), *old;
	struct bpf_iter_task_vma it;
	struct vm_area_struct *v;
	struct lx_map m, *om;
	__u32 n;
	int k;

	if (!nt)
		return;
	old = bpf_map_lookup_elem(&proc_maps, &tgid);
	if (old && old->mm != (__u64)mm)
		old = NULL;
	nt->mm = (__u64)mm;
	nt->overflow = 0;
	nt->n = 0;
	nt->told = 0;
	nt->exec_vm = 0;
	nt->nvmas = 0;
	/* The counters live in the map value, not in registers: the verifier then sees one loop
	 * body, not one per count. exec_vm is summed as the kernel counts it, from the VMAs
	 * seen: the kernel's count can run ahead of the VMA tree (seen at a release in the middle
	 * of an mmap), and the next release must then build the table again. */
	bpf_iter_task_vma_new(&it, task, 0);
	while ((v = bpf_iter_task_vma_next(&it))) {
		nt->nvmas++;
		if ((v->vm_flags & (VM_EXEC | VM_WRITE | VM_STACK)) == VM_EXEC)
			nt->exec_vm += (v->vm_end - v->vm_start) >> 12;
		if (!map_of_vma(v, &m))
			continue;
		n = nt->n;
		if (n >= LX_PMAPS_MAX) {
			nt->overflow++;
			continue;
		}
		nt->m[n] = m;
		nt->n = n + 1;
		if (!tell)
			continue;
		k = old ? pmaps_find(old, m.start) : -1;
		om = k >= 0 ? pmaps_at(old, k) : NULL;
		if (!om || !same_map(om, &m))
			pmaps_new_map(&m, v, tgid, !old && !nt->told++);
	}
	bpf_iter_task_vma_destroy(&it);
	if (!nt->nvmas) {
		unwind_count(LX_UNWIND_SCAN_BUSY);
		return;
	}
	if (bpf_map_update_elem(&proc_maps, &tgid, nt, BPF_ANY))
		unwind_count(LX_UNWIND_TABLES_FULL);
	pmaps_bump(tgid);
	unwind_count(LX_UNWIND_SCANS);
}

/* Whether the table of process tgid is out of date for mm. */
static __always_inline bool pmaps_stale(__u32 tgid, struct mm_struct *mm)
{
	struct lx_pmaps *t = bpf_map_lookup_elem(&proc_maps, &tgid);

	return !t || t->mm != (__u64)mm || t->exec_vm != mm->exec_vm;
}

/* A new process starts with its parent's mappings, in its own address space. The child has
 * not run yet: its element can be changed in place. */
static __noinline void pmaps_fork(__u32 parent, __u32 child, __u64 mm)
{
	struct lx_pmaps *t = bpf_map_lookup_elem(&proc_maps, &parent);

	if (!t)
		return;
	if (bpf_map_update_elem(&proc_maps, &child, t, BPF_ANY)) {
		unwind_count(LX_UNWIND_TABLES_FULL);
		return;
	}
	t = bpf_map_lookup_elem(&proc_maps, &child);
	if (t)
		t->mm = mm;
	pmaps_bump(child);
}

/* ---- asking user space, on kernels without the VMA iterator ---- */

/* What was last asked of user space for each process: its mappings are asked for again when
 * its address space or its pages of code differ. LRU: an entry aged out costs one more ask. */
struct pmaps_asked {
	__u64 mm;
	__u64 exec_vm;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1);		/* set before load */
	__type(key, __u32);
	__type(value, struct pmaps_asked);
} pmaps_asked SEC(".maps");

/* The asks go to a ring of their own, which a thread of user space waits on: they are answered
 * while the reader of the records is busy, and no record of the trace waits for them. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);	/* set before load */
} maps_ring SEC(".maps");

/* Asks user space for the code mappings of process tgid (its address space mm, with exec_vm
 * pages of code), unless they were asked for as they are: an LX_REC_MAPS_WANT that wakes the
 * answering thread. scan: the start's scan, which wants the table only. */
static __always_inline void pmaps_ask(__u32 tgid, __u64 mm, __u64 exec_vm, bool scan)
{
	struct pmaps_asked *last = bpf_map_lookup_elem(&pmaps_asked, &tgid), now = { mm, exec_vm };
	struct lx_maps_want *r;

	if (last && last->mm == mm && last->exec_vm == exec_vm)
		return;
	r = bpf_ringbuf_reserve(&maps_ring, sizeof(*r), 0);
	if (!r) {
		unwind_count(LX_UNWIND_ASKS_LOST);	/* the next change asks again */
		return;
	}
	header(&r->h, bpf_ktime_get_ns(), (__u32)bpf_get_current_pid_tgid(),
	       bpf_get_smp_processor_id(), LX_REC_MAPS_WANT);
	r->mm = mm;
	r->exec_vm = exec_vm;
	r->pid = tgid;
	r->flags = (!last || last->mm != mm ? LX_MAPS_WANT_NEW : 0) | (scan ? LX_MAPS_WANT_SCAN : 0);
	bpf_map_update_elem(&pmaps_asked, &tgid, &now, BPF_ANY);
	bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
}

/* A new process has its parent's mappings, which user space knows as its parent's: the child
 * is asked about only once they change. */
static __noinline void pmaps_ask_fork(__u32 parent, __u32 child, __u64 mm)
{
	struct pmaps_asked *p = bpf_map_lookup_elem(&pmaps_asked, &parent), c;

	if (!p)
		return;
	c.mm = mm;
	c.exec_vm = p->exec_vm;
	bpf_map_update_elem(&pmaps_asked, &child, &c, BPF_ANY);
}

/* The last thread of process tgid exited. */
static __always_inline void pmaps_gone(__u32 tgid)
{
	bpf_map_delete_elem(&proc_maps, &tgid);
	bpf_map_delete_elem(&pmaps_asked, &tgid);
	pmaps_bump(tgid);
}

/* Sets *out to the index of the mapping holding a in t, or -1. */
__noinline int pmaps_find_at(const struct lx_pmaps *t, __u64 a, int *out)
{
	__u64 pos = 0, n, cand, below, in, take, idx;

	if (!out)
		return 0;
	*out = -1;
	if (!t)
		return 0;
	n = t->n;
	if (!n || n > LX_PMAPS_MAX || t->m[0].start > a)
		return 0;
	/* The last mapping starting at or below a: pos moves up by each power of two that keeps
	 * it there. Branch-free (user addresses and counts are far below 2^63, so a difference's
	 * sign bit is a comparison): the verifier sees one path, not one per outcome. */
	for (__u64 step = LX_PMAPS_MAX / 2; step; step >>= 1) {
		cand = pos + step;
		in = (cand - n) >> 63;			/* cand < n */
		idx = cand * in;			/* 0 when out of range: harmless */
		/* The mask is what bounds the index for the verifier; the compiler, which knows
		 * cand is small, would drop it (6.1's verifier cannot follow without it). */
		barrier_var(idx);
		idx &= LX_PMAPS_MAX - 1;
		below = ((a - t->m[idx].start) >> 63) ^ 1;	/* start <= a */
		take = in & below;
		pos += step * take;
	}
	barrier_var(pos);
	pos &= LX_PMAPS_MAX - 1;
	if (a < t->m[pos].end)
		*out = pos;
	return 0;
}

/* Index of the mapping holding a in t, or -1. */
static __always_inline int pmaps_find(const struct lx_pmaps *t, __u64 a)
{
	int i = -1;

	pmaps_find_at(t, a, &i);
	return i;
}

/* ---- the walk ---- */

/* The per-thread cache (task storage). */
struct uc_slot {
	__u64 ip, sp, bp;
	__u64 cfi_gen;
	__u64 maps_ver;
	__u16 nwords;
	__u16 maxidx;		/* the highest of idx */
	__u8 valid;
	__u8 flags;		/* the walk's enum lx_ustack_flags */
	__u8 bp_used;
	__u8 pad[5];
	__u16 idx[LX_UC_WORDS];	/* stack words read, in 8-byte units above sp */
	__u64 val[LX_UC_WORDS];	/* and what they held */
};

struct ucache {
	__u32 busy;		/* a walk of this thread is using it (a sample nested in it) */
	__u32 next;		/* the slot the next miss replaces */
	struct uc_slot s[LX_UC_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct ucache);
} ucaches SEC(".maps");

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
	bool may_copy;		/* in: stop at a file without rows yet (LX_USTACK_COPY) */
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
	bool may_copy;		/* walk_io.may_copy */
	bool stale;		/* walk_io.stale */
	bool switched;		/* a frame-pointer step went to another stack (fp_step) */
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

/* The index of the row covering file offset off among rows [first, first + n), or -1. A
 * global function, checked once. */
__noinline int find_row(__u32 first, __u32 n, __u32 off)
{
	__u32 lo = first, hi = first + n, i, mid;
	const struct lx_cfi_row *r;

	for (i = 0; i < ROW_STEPS; i++) {
		if (lo >= hi)
			break;
		mid = lo + (hi - lo) / 2;
		r = bpf_map_lookup_elem(&cfi_rows, &mid);
		if (!r)
			return -1;
		if (r->off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > first ? (int)(lo - 1) : -1;
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
	bool exact;
	__u32 n;
	int mi, err;

	if (!w || !t || !log || !out)
		return 1;
	exact = w->exact;
	ip = w->ip;
	sp = w->sp;
	n = w->n;
	if (n >= LX_STACK_USER_MAX) {
		w->flags |= LX_USTACK_DEEP;
		return 1;
	}
	if (ip < USER_ADDR_MIN || ip >= USER_ADDR_MAX) {
		if (ip)	/* 0 ends some runtimes' stacks */
			w->flags |= LX_USTACK_TRUNCATED;
		return 1;
	}
	/* A return address is looked up inside its call instruction. */
	look = w->exact ? ip : ip - 1;
	mi = pmaps_find(t, look);
	if (mi < 0 && !t->overflow && w->may_copy && w->stale) {
		/* Maybe code the table does not have yet: the daemon knows the mappings. */
		w->flags |= LX_USTACK_COPY;
		w->logging = false;
		return 1;
	}
	if (mi < 0 && !t->overflow) {
		/* Not in any executable mapping: not code. */
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
			key.ino = m->ino;
			key.dev = m->dev;
			fr = m->ino ? bpf_map_lookup_elem(&cfi_files, &key) : NULL;
			if (fr) {
				w->first = fr->first;
				w->nrows = fr->n;
			} else if (m->ino) {
				unwind_count(LX_UNWIND_NO_TABLE);
				w->want = mi;
				if (w->may_copy) {
					/* Not a guess from rbp: the daemon takes this frame
					 * on from a copy of the stack, with the rows. */
					w->n = n;
					w->exact = exact;
					w->flags |= LX_USTACK_COPY;
					w->logging = false;
					return 1;
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
		if (cfa <= sp)
			goto truncated;
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
		err = fp_step(w, log, &ra, !row && !w->nrows && w->want != mi);
		/* rbp 0 ends a frame-pointer chain, but code under a rule the rows cannot hold
		 * or whose rows are not loaded yet need not keep rbp at all. */
		if (err == 1 && (w->want == mi || (row && LX_CFI_KIND(row->kind) == LX_CFA_NONE)))
			goto truncated;
		if (err == 1)
			return 1;
		if (err < 0 || (err == 0 && w->sp <= sp))
			goto truncated;
		w->ip = ra;
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

/* Files whose rows were asked for once (user space answers each, with rows or none). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct lx_file_key);
	__type(value, __u8);
} cfi_wanted SEC(".maps");

/* Asks user space for the rows of m's file, once: the record wakes it at once. */
static __always_inline void want_rows(const struct lx_map *m, __u32 tgid)
{
	struct lx_file_key key = { .ino = m->ino, .dev = m->dev };
	struct lx_cfi_want *r;
	__u8 one = 1;
	void *ring;

	if (bpf_map_update_elem(&cfi_wanted, &key, &one, BPF_NOEXIST))
		return;
	r = reserve(&ring, sizeof(*r), bpf_get_smp_processor_id());
	if (!r) {
		bpf_map_delete_elem(&cfi_wanted, &key);
		return;
	}
	header(&r->h, bpf_ktime_get_ns(), (__u32)bpf_get_current_pid_tgid(),
	       bpf_get_smp_processor_id(), LX_REC_CFI_WANT);
	r->start = m->start;
	r->end = m->end;
	r->ino = m->ino;
	r->dev = m->dev;
	r->pid = tgid;
	bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
}

/* The stack above sp as far as a cached walk read it, copied in one read when that is no
 * more than UC_SPAN_WORDS words: one copy costs less than a read per word (a 12-word walk
 * over 1.2 KiB of stack: 100 ns against 900). Per CPU: a program nested in another on the
 * same CPU runs for the same thread, whose cache is then busy. */
#define UC_SPAN_WORDS 512

struct uc_span {
	__u64 w[UC_SPAN_WORDS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct uc_span);
} uc_spans SEC(".maps");

/* Whether every stack word slot s logged above sp still holds its value. Global: checked once. */
__noinline bool uc_words_same(const struct uc_slot *s, __u64 sp)
{
	__u32 zero = 0, n, span;
	struct uc_span *b;
	__u64 v;

	if (!s)
		return false;
	n = s->nwords;
	if (n > LX_UC_WORDS)
		return false;
	span = (__u32)s->maxidx + 1;
	b = bpf_map_lookup_elem(&uc_spans, &zero);
	if (b && span <= UC_SPAN_WORDS &&
	    !bpf_probe_read_user(b->w, span * 8, (void *)sp)) {
		for (__u32 i = 0; i < LX_UC_WORDS; i++) {
			if (i >= n)
				break;
			if (b->w[s->idx[i] & (UC_SPAN_WORDS - 1)] != s->val[i])
				return false;
		}
		return true;
	}
	for (__u32 i = 0; i < LX_UC_WORDS; i++) {
		if (i >= n)
			break;
		if (bpf_probe_read_user(&v, sizeof(v), (void *)(sp + (__u64)s->idx[i] * 8)) ||
		    v != s->val[i])
			return false;
	}
	return true;
}

/* Whether slot s holds a walk from these registers that would come out the same now. */
static __always_inline bool uc_valid(const struct uc_slot *s, __u64 ip, __u64 sp, __u64 bp,
				     __u64 ver)
{
	return s->valid && s->ip == ip && s->sp == sp && (!s->bp_used || s->bp == bp) &&
	       s->maps_ver == ver && s->cfi_gen == cfi_gen && uc_words_same(s, sp);
}

/* Walks the user stack from io's registers through process table t into out, logging the
 * words read into log when io->cache. A global function: the verifier checks it once, whichever
 * program calls it. */
__noinline int unwind_walk(struct walk_io *io, struct lx_pmaps *t, struct uc_slot *log,
			   struct walk_out *out)
{
	struct walk w = {};

	if (!io || !t || !log || !out)
		return -1;
	w.logging = io->cache;
	w.ip = io->ip;
	w.sp = w.sp0 = io->sp;
	w.bp = io->bp;
	w.di = io->di;
	w.bp_ok = true;
	w.exact = true;
	w.last_map = -1;
	w.want = -1;
	w.may_copy = io->may_copy;
	w.stale = io->stale;
	for (int i = 0; i < LX_STACK_USER_MAX + 1; i++)
		if (walk_step(&w, t, log, out))
			break;
	io->n = w.n;
	io->want = w.want;
	io->flags = w.flags;
	io->cache = w.logging;
	io->bp_used = w.bp_used;
	if (w.flags & LX_USTACK_COPY) {
		io->ip = w.ip;
		io->sp = w.sp;
		io->bp = w.bp;
		io->copy_flags = (w.exact ? LX_UCOPY_EXACT : 0) | (w.bp_ok ? LX_UCOPY_BP_OK : 0);
	}
	return 0;
}

/* A slot to log into when the thread's cache is not used. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct uc_slot);
} uc_spare SEC(".maps");

/* What the cache lookup (unwind_cached) hands the walk after a miss. */
struct uc_lookup {
	struct ucache *uc;	/* the thread's cache, NULL: none */
	__u64 ver;		/* the process table's version, read before any of the table */
	__u32 tgid;
};

/* The current thread's walk from user registers (ip, sp, bp), if its cache proves it
 * unchanged: true, with the walk's enum lx_ustack_flags and LX_USTACK_HIT added to *flags and
 * the slot in *slot. Else false, with what unwind_user() needs in *us. */
static __always_inline bool unwind_cached(__u64 ip, __u64 sp, __u64 bp, struct uc_lookup *us,
					  __u8 *flags, __u8 *slot)
{
	struct ucache *uc = NULL;
	struct uc_slot *s;

	us->tgid = bpf_get_current_pid_tgid() >> 32;
	us->ver = pmaps_ver(us->tgid);
	barrier();
	if (unwind_cache)
		uc = bpf_task_storage_get(&ucaches, bpf_get_current_task_btf(), NULL,
					  BPF_LOCAL_STORAGE_GET_F_CREATE);
	us->uc = uc;
	if (!uc || uc->busy)
		return false;
	uc->busy = 1;
	barrier();
	for (__u32 i = 0; i < LX_UC_SLOTS; i++) {
		s = &uc->s[i];
		if (uc_valid(s, ip, sp, bp, us->ver)) {
			*flags |= s->flags | LX_USTACK_HIT;
			*slot = i;
			unwind_count_hit();
			barrier();
			uc->busy = 0;
			return true;
		}
	}
	barrier();
	uc->busy = 0;
	return false;
}

/* The current thread's user stack from its user registers (ip, sp, bp) into out, leaf first,
 * after unwind_cached() missed with *us. Returns the frame count and adds the walk's enum
 * lx_ustack_flags to *flags, with the cache slot in *slot for LX_USTACK_STORE. The caller
 * reports a stored walk that it failed to send with unwind_unstore(). With copy, the walk
 * stops where it has no rows to go on with (no mapping table, a file whose rows are not
 * loaded yet) and says there (LX_USTACK_COPY) the frame it stopped at; the caller copies the
 * stack above it. */
static __always_inline __u32 unwind_user(__u64 ip, __u64 sp, __u64 bp, __u64 di,
					 const struct uc_lookup *us, struct walk_out *out,
					 __u8 *flags, __u8 *slot, struct lx_ucopy *copy)
{
	struct walk_io io = { .ip = ip, .sp = sp, .bp = bp, .di = di, .may_copy = copy != NULL };
	struct ucache *uc = us->uc;
	__u32 tgid = us->tgid, i = 0, zero = 0;
	struct uc_slot *s = NULL;
	struct mm_struct *mm;
	struct lx_pmaps *t;
	struct lx_map *m;

	*slot = 0;
	t = bpf_map_lookup_elem(&proc_maps, &tgid);
	if (!t) {
		unwind_count(LX_UNWIND_NO_MAPS);
		if (copy) {
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
		*flags |= LX_USTACK_TRUNCATED;
		return 1;
	}
	if (uc && !uc->busy) {
		uc->busy = 1;
		barrier();
		i = uc->next++ % LX_UC_SLOTS;
		s = &uc->s[i];
		s->valid = 0;
		s->nwords = 0;
		io.cache = true;
	} else {
		uc = NULL;
		s = bpf_map_lookup_elem(&uc_spare, &zero);
		if (!s)
			return 0;
	}
	mm = bpf_get_current_task_btf()->mm;
	io.stale = !mm || t->mm != (__u64)mm || t->exec_vm != mm->exec_vm;
	unwind_walk(&io, t, s, out);
	m = io.want >= 0 ? pmaps_at(t, io.want) : NULL;
	if (m)
		want_rows(m, tgid);
	*flags |= io.flags;
	if (copy && (io.flags & LX_USTACK_COPY)) {
		copy->ip = io.ip;
		copy->sp = io.sp;
		copy->bp = io.bp;
		copy->di = di;
		copy->flags = io.copy_flags;
	}
	if (io.flags & LX_USTACK_TRUNCATED)
		unwind_count(LX_UNWIND_TRUNCATED);
	if (io.flags & LX_USTACK_FP)
		unwind_count(LX_UNWIND_FP);
	if (uc) {
		if (io.cache) {
			s->ip = ip;
			s->sp = sp;
			s->bp = bp;
			s->bp_used = io.bp_used;
			s->maps_ver = us->ver;
			s->cfi_gen = cfi_gen;
			s->flags = io.flags;
			s->valid = 1;
			*flags |= LX_USTACK_STORE;
			*slot = i;
			unwind_count(LX_UNWIND_STORED);
		}
		barrier();
		uc->busy = 0;
	}
	unwind_count(LX_UNWIND_WALKS);
	return io.n <= LX_STACK_USER_MAX ? io.n : LX_STACK_USER_MAX;
}

/* The record that carried a stored walk was lost: nothing may refer to its slot. */
static __always_inline void unwind_unstore(__u8 slot)
{
	struct ucache *uc = bpf_task_storage_get(&ucaches, bpf_get_current_task_btf(), NULL, 0);

	if (uc && slot < LX_UC_SLOTS)
		uc->s[slot].valid = 0;
}

#endif
