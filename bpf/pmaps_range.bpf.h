/* pmaps_range.bpf.h - a process's mapping table (pmaps.bpf.h) kept in step at the cost of each
 * change, not of all its mappings: where mm->mm_lock_seq is a seqcount (6.13+), only the range a
 * change touched is read again. docs/stacks.md, "How the tables stay in step", has the design.
 *
 * Every change of the VMAs is a write section of the mm's lock, and the seqcount counts them:
 * the table keeps the even count it is in step with (seq). A write section the process ends
 * itself (mmap_lock_released, or the downgrade of munmap) names its range: the syscall's
 * arguments, and for an mmap placed by the kernel the area vm_unmapped_area chose. The VMA
 * iterator skips the VMAs still write-locked there, so the range is not read then: the table's
 * mappings it overlaps are taken out and the range is kept to read (pend_lo..pend_hi) at the
 * next take of the lock, when no VMA is write-locked: a read lock, or a write lock (the next
 * change, before it locks a VMA). A write section not seen (another
 * process's, a count that does not follow) or of no known range that changed mm->exec_vm leaves
 * the table whole to read (LX_PMAPS_WHOLE), and it stays so until a read is sure to have seen
 * every VMA (pmaps_rebuild).
 */
#ifndef LXTRACE_BPF_PMAPS_RANGE_BPF_H
#define LXTRACE_BPF_PMAPS_RANGE_BPF_H

#include "pmaps.bpf.h"

/* x86_64's numbers and flags, as the register reads in lxtrace.bpf.c. */
#define PR_NR_MPROTECT 10
#define PR_NR_MMAP 9
#define PR_NR_MUNMAP 11
#define PR_NR_MREMAP 25
#define PR_NR_PKEY_MPROTECT 329
#define PR_MAP_FIXED 0x10
#define PR_MAP_FIXED_NOREPLACE 0x100000
#define PR_MREMAP_FIXED 2
#define PR_PROT_READ 1
#define PR_PROT_EXEC 4
#define PR_READ_IMPLIES_EXEC 0x0400000
#define PR_PAGE 4096ULL
#define PR_MAX_ERRNO 4095ULL

/* The syscall the thread is in and its first arguments (lxtrace.bpf.c reads them): nr < 0
 * outside a syscall. */
struct pmaps_call {
	long nr;
	__u64 a[5];
};

/* One reader of the VMAs per CPU at a time: the iterator takes and drops the mmap lock, whose
 * tracepoints run the lock's programs inside it, and they share build slot 0. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} pmaps_reading SEC(".maps");

/* A count read again from the map value each time (pmaps_cut). */
#define pr_count(t) (*(volatile __u32 *)&(t)->n)

static __always_inline __u64 pr_min(__u64 a, __u64 b)
{
	return a < b ? a : b;
}

static __always_inline __u64 pr_max(__u64 a, __u64 b)
{
	return a > b ? a : b;
}

/* Adds [lo, hi) to t's range still to read. */
static __always_inline void pmaps_pend(struct lx_pmaps *t, __u64 lo, __u64 hi)
{
	if (lo >= hi)
		return;
	if (!t->pend_hi) {
		t->pend_lo = lo;
		t->pend_hi = hi;
		return;
	}
	t->pend_lo = pr_min(t->pend_lo, lo);
	t->pend_hi = pr_max(t->pend_hi, hi);
}

/* Takes the mappings overlapping [lo, hi) out of the table of process tgid (the current one),
 * and keeps the range they cover to read (what is left of them), and [lo, hi) itself when code
 * may be mapped there now (exec). A global function: verified once, not at each caller. */
__noinline int pmaps_cut(__u32 tgid, __u64 lo, __u64 hi, int exec)
{
	__u32 which = 0, n;
	struct lx_pmaps *nt = bpf_map_lookup_elem(&pmaps_build, &which);
	struct lx_pmaps *old = bpf_map_lookup_elem(&proc_maps, &tgid);
	__u64 cut_lo, cut_hi;

	if (!nt || !old)
		return 0;
	/* The count and the range cut live in the map value, not in registers: the verifier then
	 * sees one loop body, not one per count (pmaps_rebuild). */
	nt->n = 0;
	nt->pend_lo = exec ? lo : ~0ULL;
	nt->pend_hi = exec ? hi : 0;
	for (int k = 0; k < LX_PMAPS_MAX; k++) {
		struct lx_map *m = &old->m[k];

		if (k >= old->n)
			break;
		if (m->end > lo && m->start < hi) {
			if (m->start < nt->pend_lo)
				nt->pend_lo = m->start;
			if (m->end > nt->pend_hi)
				nt->pend_hi = m->end;
			continue;
		}
		n = pr_count(nt);
		barrier_var(n);
		n &= LX_PMAPS_MAX - 1;
		nt->m[n] = *m;
		nt->n = n + 1;
	}
	cut_lo = nt->pend_lo;
	cut_hi = nt->pend_hi;
	if (!cut_hi)
		return 0;		/* no code there before or after */
	if (nt->n == old->n) {		/* nothing to take out: the element stays */
		pmaps_pend(old, cut_lo, cut_hi);
		return 0;
	}
	nt->mm = old->mm;
	nt->exec_vm = old->exec_vm;
	nt->nvmas = old->nvmas;
	nt->overflow = old->overflow;
	nt->told = 0;
	nt->flags = old->flags;
	nt->pend_lo = old->pend_lo;
	nt->pend_hi = old->pend_hi;
	nt->seq = old->seq;
	nt->ua_seq = old->ua_seq;
	nt->ua_lo = old->ua_lo;
	nt->ua_hi = old->ua_hi;
	pmaps_pend(nt, cut_lo, cut_hi);
	if (bpf_map_update_elem(&proc_maps, &tgid, nt, BPF_ANY))
		unwind_count(LX_UNWIND_TABLES_FULL);
	pmaps_bump(tgid);
	return 0;
}

/* Reads the VMAs of [lo, hi) of the current process (tgid), which holds its mmap lock with no
 * VMA write-locked, into its table, the rest kept: a VMA that reaches out of the range (merged
 * with a neighbour) replaces the mappings it covers. Returns 1 when done, 0 when no VMA was
 * seen (the lock was contended: the range stays to read). */
__noinline int pmaps_read_range(__u32 tgid, __u64 lo, __u64 hi)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 which = 0, k;
	struct lx_pmaps *nt = bpf_map_lookup_elem(&pmaps_build, &which);
	struct lx_pmaps *old = bpf_map_lookup_elem(&proc_maps, &tgid);
	struct bpf_iter_task_vma it;
	struct vm_area_struct *v;
	__u64 first, top = hi;
	struct lx_map m, *om;
	bool tell;
	int i;

	if (!nt || !old)
		return 0;
	tell = traced_current(tgid);
	bpf_iter_task_vma_new(&it, task, lo);
	v = bpf_iter_task_vma_next(&it);
	if (!v) {
		bpf_iter_task_vma_destroy(&it);
		unwind_count(LX_UNWIND_SCAN_BUSY);
		return 0;
	}
	first = pr_min(v->vm_start, lo);
	nt->mm = old->mm;
	nt->nvmas = 0;
	nt->overflow = old->overflow;
	nt->told = 0;
	nt->n = 0;
	/* The mappings below: all that end by the first VMA read. */
	for (i = 0; i < LX_PMAPS_MAX; i++) {
		if (i >= old->n || old->m[i].end > first)
			break;
		nt->m[i] = old->m[i];
	}
	nt->n = i;
	for (; v; v = bpf_iter_task_vma_next(&it)) {
		if (v->vm_start >= hi)
			break;
		top = pr_max(top, v->vm_end);
		if (!map_of_vma(v, &m))
			continue;
		k = pr_count(nt);
		if (k >= LX_PMAPS_MAX) {
			nt->overflow++;
			continue;
		}
		nt->m[k] = m;
		nt->n = k + 1;
		i = pmaps_find(old, m.start);
		om = i >= 0 ? pmaps_at(old, i) : NULL;
		if (tell && (!om || !same_map(om, &m)))
			pmaps_new_map(&m, v, tgid, false, false);
	}
	bpf_iter_task_vma_destroy(&it);
	/* The mappings above: all that start from the last VMA read. */
	for (i = 0; i < LX_PMAPS_MAX; i++) {
		if (i >= old->n)
			break;
		if (old->m[i].start < top)
			continue;
		k = pr_count(nt);
		if (k >= LX_PMAPS_MAX) {
			nt->overflow++;
			continue;
		}
		nt->m[k] = old->m[i];
		nt->n = k + 1;
	}
	nt->exec_vm = task->mm->exec_vm;
	nt->flags = 0;
	nt->pend_lo = 0;
	nt->pend_hi = 0;
	nt->seq = old->seq;
	nt->ua_seq = old->ua_seq;
	nt->ua_lo = old->ua_lo;
	nt->ua_hi = old->ua_hi;
	if (bpf_map_update_elem(&proc_maps, &tgid, nt, BPF_ANY))
		unwind_count(LX_UNWIND_TABLES_FULL);
	pmaps_bump(tgid);
	unwind_count(LX_UNWIND_UPDATES);
	return 1;
}

/* The range whose mappings a write section of syscall c replaced, besides an area of new ones
 * vm_unmapped_area chose (pmaps_unmapped); false when it is not one whose range is known.
 * *exec: whether code may be mapped there now. */
static __always_inline bool pmaps_call_range(const struct pmaps_call *c, bool read_exec,
					     __u64 *lo, __u64 *hi, bool *exec)
{
	__u64 a = c->a[0] & ~(PR_PAGE - 1), len = (c->a[1] + PR_PAGE - 1) & ~(PR_PAGE - 1);

	*lo = a;
	*hi = a + len;
	switch (c->nr) {
	case PR_NR_MMAP:
	case PR_NR_MPROTECT:
	case PR_NR_PKEY_MPROTECT:
		*exec = (c->a[2] & PR_PROT_EXEC) || (read_exec && (c->a[2] & PR_PROT_READ));
		return true;
	case PR_NR_MUNMAP:
		*exec = false;
		return true;
	case PR_NR_MREMAP:
		/* The old range, as it was or grown in place, and a new place it was told. */
		*exec = true;
		*hi = a + pr_max(len, (c->a[2] + PR_PAGE - 1) & ~(PR_PAGE - 1));
		if (c->a[3] & PR_MREMAP_FIXED) {
			*lo = pr_min(*lo, c->a[4]);
			*hi = pr_max(*hi, c->a[4] + ((c->a[2] + PR_PAGE - 1) & ~(PR_PAGE - 1)));
		}
		return true;
	}
	return false;
}

/* The current process (tgid, task) ends a write section of mm's lock, at seqcount seq (odd).
 * Changes that cannot map code (no PROT_EXEC) only take out the mappings they replaced. */
static __always_inline void pmaps_write_done(struct task_struct *task, __u32 tgid,
					     struct mm_struct *mm, __u32 seq,
					     const struct pmaps_call *c)
{
	struct lx_pmaps *t = bpf_map_lookup_elem(&proc_maps, &tgid);
	bool read_exec = task->personality & PR_READ_IMPLIES_EXEC, exec, moved = false;
	__u64 lo, hi;

	if (!t || t->mm != (__u64)mm)
		return;		/* the next read builds it whole */
	if (seq != t->seq + 1) {
		t->flags |= LX_PMAPS_WHOLE;
	} else if (c->nr == PR_NR_MMAP && !(c->a[3] & (PR_MAP_FIXED | PR_MAP_FIXED_NOREPLACE))) {
		/* Placed by the kernel in free space: where vm_unmapped_area chose, or at the
		 * hint. Neither seen: its range is not known. */
		pmaps_call_range(c, read_exec, &lo, &hi, &exec);
		if (exec && t->ua_seq == seq)
			pmaps_pend(t, t->ua_lo, t->ua_hi);
		else if (exec && lo)
			pmaps_pend(t, lo, hi);
		else if (exec)
			t->flags |= LX_PMAPS_WHOLE;
	} else if (pmaps_call_range(c, read_exec, &lo, &hi, &exec)) {
		if (lo < hi)
			pmaps_cut(tgid, lo, hi, exec);
		/* An mremap the kernel moved: where to, vm_unmapped_area chose. */
		moved = c->nr == PR_NR_MREMAP;
	} else if (t->exec_vm != BPF_CORE_READ(mm, exec_vm)) {
		t->flags |= LX_PMAPS_WHOLE;
	}
	/* pmaps_cut may have replaced the element. The change is accounted for (or the whole
	 * table is to read): the pages of code it left are the table's. */
	t = bpf_map_lookup_elem(&proc_maps, &tgid);
	if (t) {
		if (moved && t->ua_seq == seq)
			pmaps_pend(t, t->ua_lo, t->ua_hi);
		t->seq = seq + 1;
		t->exec_vm = BPF_CORE_READ(mm, exec_vm);
	}
}

/* vm_unmapped_area chose [addr, addr + len) for a mapping of the current process (tgid),
 * inside a write section (seqcount seq). */
static __always_inline void pmaps_unmapped(__u32 tgid, struct mm_struct *mm, __u32 seq,
					   __u64 addr, __u64 len)
{
	struct lx_pmaps *t = bpf_map_lookup_elem(&proc_maps, &tgid);

	if (!t || t->mm != (__u64)mm || addr >= -PR_MAX_ERRNO)
		return;
	if (t->ua_seq != seq) {
		t->ua_lo = addr;
		t->ua_hi = addr + len;
	} else {
		t->ua_lo = pr_min(t->ua_lo, addr);
		t->ua_hi = pr_max(t->ua_hi, addr + len);
	}
	t->ua_seq = seq;
}

/* The current process (tgid, task) holds mm's lock with no VMA write-locked, at seqcount seq:
 * what is still to read of its table is read. */
static __always_inline void pmaps_catch_up(struct task_struct *task, __u32 tgid,
					   struct mm_struct *mm, __u32 seq)
{
	struct lx_pmaps *t = bpf_map_lookup_elem(&proc_maps, &tgid);
	__u32 zero = 0, *reading = bpf_map_lookup_elem(&pmaps_reading, &zero);

	if (!reading || *reading)
		return;
	if (t && t->mm == (__u64)mm && !(t->flags & LX_PMAPS_WHOLE) && (seq & ~1) == t->seq) {
		/* In step. munmap counts the pages of code it took after its downgrade. */
		if (!t->pend_hi) {
			t->exec_vm = mm->exec_vm;
			return;
		}
		*reading = 1;
		pmaps_read_range(tgid, t->pend_lo, t->pend_hi);
		*reading = 0;
		return;
	}
	*reading = 1;
	pmaps_rebuild(task, tgid, mm, 0, true, true);
	*reading = 0;
}

#endif
