/* unwind_stats.bpf.h - the unwinder's counters (enum lx_unwind_stat in unwind.h): of the
 * mapping tables (pmaps.bpf.h), the walk (unwind.bpf.h) and its cache (ucache.bpf.h); user space
 * reads and sums them at the end. */
#ifndef LXTRACE_BPF_UNWIND_STATS_BPF_H
#define LXTRACE_BPF_UNWIND_STATS_BPF_H

#include "unwind.h"

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

#endif
