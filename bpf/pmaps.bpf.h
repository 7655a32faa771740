/* pmaps.bpf.h - each process's executable mappings, kept here as the kernel makes them, for
 * the unwinder (unwind.bpf.h) to find the file and offset of an address. docs/stacks.md,
 * "Unwinding", has the design and the figures behind it.
 *
 * Each process has a table of its executable mappings, sorted (proc_maps, keyed by tgid), made
 * from its VMAs (the task_vma iterator kfuncs) whenever they may have changed: when its mmap
 * lock is released and mm->exec_vm (pages of executable mappings) differs from the table's, or
 * its mm is not the table's (exec). That covers mmap, munmap, mprotect, the ELF loader and the
 * dynamic loader, and costs a lookup and a compare on other releases. fork copies the parent's
 * table (the kernel copies the VMAs without taking the child's lock), the last thread's exit
 * deletes it, and a task iterator builds the tables of the processes alive at the start. A
 * rebuild replaces the whole map element: the hash map is not preallocated, so an unwinder
 * still holding the old element reads a consistent (RCU-protected) snapshot. Each change bumps
 * the process's version (pmaps_vers), for the walk cache (ucache.bpf.h). A mapping a rebuild
 * finds that the table did not have is told to user space (LX_REC_MMAP), which symbolizes
 * against it and loads its file's rows. (This kernel allows no fentry or kprobe on
 * perf_event_mmap, and the syscall tracepoints would slow every syscall.)
 *
 * Without the VMA iterator (before 6.7) user space is asked instead (pmaps_ask), reads
 * /proc/PID/maps and fills the same tables (user/capture/maps_proc.c).
 */
#ifndef LXTRACE_BPF_PMAPS_BPF_H
#define LXTRACE_BPF_PMAPS_BPF_H

#include "lxtrace.h"
#include "unwind.h"
#include "ring.bpf.h"
#include "target.bpf.h"
#include "unwind_stats.bpf.h"

#define VM_WRITE 0x00000002
#define VM_EXEC 0x00000004
#define VM_STACK 0x00000100	/* VM_GROWSDOWN on x86 */

/* Set by user space before load. */
const volatile bool unwind_maps;	/* user stacks are walked here: keep the mapping tables */
const volatile bool maps_ask;		/* no VMA iterator: user space is asked for the mappings */
const volatile bool ranged_maps;	/* the tables follow changes by range (pmaps_range.bpf.h) */

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

/* Tells user space of a new executable mapping of process tgid, which it symbolizes the
 * process's addresses against: with the file's path below its mount, leaf first, one
 * NUL-terminated name per directory (user space turns it around), as far as LX_PATH_LEN holds.
 * The caller tells only of traced processes, and asks traced_current() once, before its VMA
 * loop: a cgroup target's check inside the loop made 6.18's verifier fail in its backtracking
 * ("verifier bug: backtracking call unexpected regs"), and it is the same for every VMA. */
#define PATH_NAME_MAX 64
#define PATH_DEPTH 16

static __always_inline void pmaps_new_map(const struct lx_map *m, struct vm_area_struct *vma,
					  __u32 tgid, bool new_image, bool wake)
{
	struct dentry *d = NULL, *parent;
	struct file *f;
	struct lx_mmap *r;
	__u32 off = 0;
	long n;
	void *ring;

	r = reserve_here(&ring, sizeof(*r), LX_REC_MMAP);
	if (!r)
		return;
	r->start = m->start;
	r->end = m->end;
	r->pgoff = (__u64)m->pgoff << 12;
	r->ino = m->ino;
	r->dev = m->dev;
	r->pid = tgid;
	r->flags = new_image ? LX_MMAP_NEW_IMAGE : 0;
	r->pad = 0;
	r->path[0] = 0;
	/* Read once: newer verifiers know vm_file may be NULL, and a second load of it would be
	 * a pointer not checked. */
	f = vma->vm_file;
	barrier_var(f);
	if (f)
		d = f->f_path.dentry;
	for (int i = 0; i < PATH_DEPTH && d; i++) {
		barrier_var(off);
		if (off > LX_PATH_LEN - PATH_NAME_MAX)
			break;
		n = bpf_probe_read_kernel_str(&r->path[off], PATH_NAME_MAX, d->d_name.name);
		if (n <= 0)
			break;
		off += n;
		parent = d->d_parent;
		if (parent == d) {
			d = NULL;
			break;
		}
		d = parent;
	}
	/* The walk stopped before the root: an empty name marks the path as incomplete. */
	if (d && off < LX_PATH_LEN)
		r->path[off & (LX_PATH_LEN - 1)] = 0;
	/* Range updates (pmaps_range.bpf.h) wake no reader of their own: a process mapping
	 * thousands of pages of code (a JIT, a browser) would wake it at each. */
	bpf_ringbuf_submit(r, wake ? BPF_RB_FORCE_WAKEUP : wake_flags(ring, sizeof(*r)));
}

/* &t->m[i], or NULL when i is out of range. */
static __always_inline struct lx_map *pmaps_at(struct lx_pmaps *t, int i)
{
	__u32 k = i;

	barrier_var(k);
	if (k >= LX_PMAPS_MAX)
		return NULL;
	return &t->m[k];
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

/* mm->mm_lock_seq where it is a seqcount (6.13+): odd while mm is write-locked, bumped when a
 * write lock is taken and when it is dropped (after mmap_lock_released). -1 where it is an int
 * (6.4-6.12) or absent: the tables are then rebuilt whole (pmaps_stale). */
static __always_inline __s64 mm_seq(struct mm_struct *mm)
{
	if (!bpf_core_field_exists(mm->mm_lock_seq.sequence))
		return -1;
	return BPF_CORE_READ(mm, mm_lock_seq.sequence);
}

/* Rebuilds the table of process tgid from the VMAs of task (its mm is mm), in build slot
 * `which`. tell: report new mappings (pmaps_new_map). held: the caller holds mm's lock, so no
 * VMA is write-locked. Nothing changes when the VMAs cannot be read (the lock is contended):
 * the next release tries again. Where the table is kept by range (mm_seq), one that may have
 * missed a VMA (write-locked while it was read: the iterator skips those) stays whole to read. */
static __always_inline void pmaps_rebuild(struct task_struct *task, __u32 tgid,
					  struct mm_struct *mm, __u32 which, bool tell, bool held)
{
	__s64 seq = mm_seq(mm);
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
	nt->pend_lo = 0;
	nt->pend_hi = 0;
	nt->ua_seq = 0;
	nt->seq = seq & ~1;
	nt->flags = 0;
	tell = tell && traced_current(tgid);
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
			pmaps_new_map(&m, v, tgid, !old && !nt->told++, true);
	}
	bpf_iter_task_vma_destroy(&it);
	if (!nt->nvmas) {
		unwind_count(LX_UNWIND_SCAN_BUSY);
		return;
	}
	if (seq >= 0 && (mm_seq(mm) != seq || ((seq & 1) && !held)))
		nt->flags = LX_PMAPS_WHOLE;
	if (bpf_map_update_elem(&proc_maps, &tgid, nt, BPF_ANY))
		unwind_count(LX_UNWIND_TABLES_FULL);
	pmaps_bump(tgid);
	unwind_count(LX_UNWIND_WHOLE);
}

/* Whether table t may lag mm's mappings: another address space's, pages of code it does not
 * count, or a range or all of it still to read (pmaps_range.bpf.h). */
static __always_inline bool pmaps_lags(const struct lx_pmaps *t, struct mm_struct *mm)
{
	/* ranged_maps is known at load: older kernels' verifiers see none of its branches in
	 * every walking program (6.12's under TCG took ~55 s more to start a recording). */
	return !mm || t->mm != (__u64)mm || t->exec_vm != mm->exec_vm ||
	       (ranged_maps && (t->pend_hi || (t->flags & LX_PMAPS_WHOLE)));
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
	if (t) {
		t->mm = mm;
		/* The child's own count of write locks; its table is the parent's as of now. */
		t->seq = mm_seq((struct mm_struct *)mm) & ~1;
	}
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
 * while the reader of the records is busy, which holds back only the records after an ask
 * until its answer is in (user/capture/maps_proc.h). */
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

#endif
