/* cfi_rows.bpf.h - the call-frame rows user space compiles from each binary's CFI
 * (user/stacks/cfi.c) for the unwinder (unwind.bpf.h): rows sorted by file offset, appended to
 * cfi_rows and published as (first, n) under the file's (dev, inode) in cfi_files. A mapping
 * (pmaps.bpf.h) gives an address's file offset, the file's rows the rule.
 */
#ifndef LXTRACE_BPF_CFI_ROWS_BPF_H
#define LXTRACE_BPF_CFI_ROWS_BPF_H

#include "lxtrace.h"
#include "unwind.h"
#include "ring.bpf.h"

/* Binary search steps: 2^24 rows per file. */
#define ROW_STEPS 24

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

#endif
