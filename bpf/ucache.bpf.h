/* ucache.bpf.h - the per-thread cache that proves a user stack unchanged instead of walking it
 * again (docs/stacks.md, "The cache").
 *
 * The walk (unwind.bpf.h) is a function of its inputs: the registers it starts from (ip, sp,
 * and bp when it used it), the process's mapping table (its version, pmaps.bpf.h), the loaded
 * rows (cfi_gen counts their loads, cfi_rows.bpf.h), and the user memory words it read. Each
 * thread keeps its last LX_UC_SLOTS walks with those inputs, the stack offsets of the words read
 * and their values. When the inputs match and every word still holds its value, the walk would
 * read the same words and compute the same frames: the record then names the slot instead of
 * carrying the frames, and user space repeats the frames it received when the slot was stored.
 */
#ifndef LXTRACE_BPF_UCACHE_BPF_H
#define LXTRACE_BPF_UCACHE_BPF_H

#include "lxtrace.h"
#include "unwind.h"
#include "pmaps.bpf.h"
#include "cfi_rows.bpf.h"
#include "unwind_stats.bpf.h"

/* Set by user space before load. */
const volatile bool unwind_cache = true;

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

/* The record that carried a stored walk was lost: nothing may refer to its slot. */
static __always_inline void unwind_unstore(__u8 slot)
{
	struct ucache *uc = bpf_task_storage_get(&ucaches, bpf_get_current_task_btf(), NULL, 0);

	if (uc && slot < LX_UC_SLOTS)
		uc->s[slot].valid = 0;
}

#endif
