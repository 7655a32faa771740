/* ring.bpf.h - the per-CPU record rings every lxtrace BPF object writes into, and the helpers
 * that reserve, stamp and submit a record. Each object that includes it declares the maps;
 * user space creates them once and hands the same fds to every object (capture.c), so all
 * records of a CPU, whichever program wrote them, are in one ring in time order: every
 * reserve first sends the CPU's staged syscall entries, which are older.
 *
 * Records are submitted without waking the reader (it polls on a timer) unless the ring is
 * filling up; a failed reserve is counted per CPU in `lost`, never dropped silently.
 */
#ifndef LXTRACE_BPF_RING_BPF_H
#define LXTRACE_BPF_RING_BPF_H

#include "lxtrace.h"

/* Set by user space before load. */
const volatile __u64 wakeup_bytes = ~0ULL;	/* wake the reader once a ring holds this much */
const volatile bool stage_syscalls;	/* --syscalls=all: the sys_enter/exit programs are loaded */

struct ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);	/* the real size is set before load */
};

/* One ring per possible CPU, indexed by CPU: no producer ever contends for another CPU's ring
 * lock, and each ring is in time order on its own. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);		/* possible CPUs, set before load */
	__type(key, __u32);
	__array(values, struct ring);
} rings SEC(".maps");

/* Records that found their CPU's ring full. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

/* Each CPU's syscall entries not yet sent (lxtrace.h, struct lx_syscalls). `busy` is set while a
 * program changes the chunk: a program nested in it (an interrupt's wakeup) leaves the chunk
 * alone, and its record goes ahead of older entries, which the reader puts back in time order. */
struct stage {
	struct lx_syscalls rec;
	__u32 busy;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stage);
} stages SEC(".maps");

/* busy must be set before the chunk changes and cleared after, as written: a nested program
 * reads it between any two of the stores. */
#define barrier() asm volatile("" ::: "memory")

static __always_inline void count_lost(__u64 n)
{
	__u32 zero = 0;
	__u64 *lost_n = bpf_map_lookup_elem(&lost, &zero);

	if (lost_n)
		__sync_fetch_and_add(lost_n, n);	/* a nested program may count too */
}

/* The reader polls on a timer; only the record that takes the ring past wakeup_bytes wakes it
 * early. Waking it on every record past the mark would cost an interrupt per record exactly
 * when the machine is busiest. `size` is the record's size; the ring adds an 8-byte header. */
static __always_inline __u64 wake_flags(void *ring, __u32 size)
{
	__u64 avail = bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA);

	if (avail >= wakeup_bytes && avail - (size + 8) < wakeup_bytes)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

/* Sends the staged chunk st of this CPU; the caller has set st->busy. */
static __always_inline void send_chunk(struct stage *st, void *ring)
{
	__u32 n = st->rec.n, unused, size;

	/* n is 1 to LX_SYSCALLS_MAX here (a chunk is sent once it has an entry, at the latest
	 * when full). The mask is what bounds the size for the verifiers of 5.10 and 6.1, which
	 * lost a clamp of n through the compiler's 32-bit arithmetic ("R3 unbounded memory
	 * access" in raw_exit once the exit program wrote one more global); a branch instead
	 * cost the switch program stack it has not got (6.18: "combined stack size of 4 calls
	 * is 528"). */
	unused = (LX_SYSCALLS_MAX - n) & (LX_SYSCALLS_MAX - 1);
	size = sizeof(st->rec) - unused * sizeof(st->rec.e[0]);
	if (bpf_ringbuf_output(ring, &st->rec, size, wake_flags(ring, size)))
		count_lost(n);
	st->rec.n = 0;
}

/* Before any other record of this CPU: its staged syscall entries are older. */
static __always_inline void flush_syscalls(void *ring)
{
	__u32 zero = 0;
	struct stage *st;

	if (!stage_syscalls)
		return;
	st = bpf_map_lookup_elem(&stages, &zero);
	if (!st || !st->rec.n || st->busy)
		return;
	st->busy = 1;
	barrier();
	send_chunk(st, ring);
	barrier();
	st->busy = 0;
}

static __always_inline void *reserve(void **ring, __u32 size, __u32 cpu)
{
	void *rec;

	*ring = bpf_map_lookup_elem(&rings, &cpu);
	if (!*ring)
		return NULL;
	flush_syscalls(*ring);
	rec = bpf_ringbuf_reserve(*ring, size, 0);
	if (!rec)
		count_lost(1);
	return rec;
}

static __always_inline void submit(void *ring, void *rec, __u32 size)
{
	bpf_ringbuf_submit(rec, wake_flags(ring, size));
}

static __always_inline void header(struct lx_rec *h, __u64 ts, __u32 tid, __u32 cpu, __u8 type)
{
	h->ts = ts;
	h->tid = tid;
	h->cpu = cpu;
	h->type = type;
	h->flags = 0;
}

#endif
