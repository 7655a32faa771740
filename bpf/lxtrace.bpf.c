// SPDX-License-Identifier: GPL-2.0
/* lxtrace.bpf.c - the kernel side: scheduler, process-lifetime and syscall tracepoints turned
 * into the fixed-size records of lxtrace.h, one ring buffer per CPU (ring.bpf.h).
 *
 * Each tracepoint has a tp_btf program (typed arguments, direct field access) and a raw_tp twin
 * for kernels without tp_btf; user space keeps one of each pair. Both are thin wrappers over
 * one always-inlined handler that takes `btf` as a compile-time constant, so the tp_btf variant
 * reads task fields directly and only the raw_tp variant pays for bpf_probe_read_kernel.
 *
 * In a target mode (-p, a command, --cgroup) every program asks whether the thread a record would
 * be about is traced before it reserves anything, so other threads cost a map lookup (or a short
 * cgroup walk) and no record; see traced_task() in target.bpf.h.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "ring.bpf.h"
#include "target.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* From linux/sched.h and errno.h, which vmlinux.h does not carry (macros). */
#define ENOSYS 38
#define TASK_INTERRUPTIBLE 0x0001
#define TASK_UNINTERRUPTIBLE 0x0002
#define EXIT_DEAD 0x0010
#define EXIT_ZOMBIE 0x0020
#define TASK_DEAD 0x0080
#define TASK_NOLOAD 0x0400
#define PF_KTHREAD 0x00200000
/* enum mm_counter_type: the rss_stat members that make up resident memory (MM_SWAPENTS, 2,
 * does not). */
#define MM_FILEPAGES 0
#define MM_ANONPAGES 1
#define MM_SHMEMPAGES 3
/* Syscall numbers are small; anything else in orig_ax is an exception's error code or an
 * interrupt's ~vector. */
#define MAX_SYSCALL_NR 1024

/* An rss record per process at most every rss_min_ns, unless it moved by rss_min_pages. */
const volatile __u32 rss_min_pages = 256;
const volatile __u64 rss_min_ns = 1000000;

struct rss_last {
	__u64 ts;
	__u32 pages;
	__u32 pad;
};

/* The last rss record of each traced process, for the throttle. LRU: a process whose exit was
 * missed ages out instead of filling the map. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1);		/* set before load */
	__type(key, __u32);
	__type(value, struct rss_last);
} rss_seen SEC(".maps");

/* A task's field: direct BTF access in tp_btf programs, a probed read in raw_tp ones. */
#define TASK_READ(btf, t, field) ((btf) ? (t)->field : BPF_CORE_READ(t, field))

static __always_inline __u8 classify(bool preempt, unsigned int state)
{
	if (preempt || !state)
		return LX_PREV_RUNNABLE;
	if (state & (EXIT_DEAD | EXIT_ZOMBIE | TASK_DEAD))
		return LX_PREV_DEAD;
	/* TASK_IDLE (uninterruptible | noload) is a kernel thread waiting for work, not I/O. */
	if ((state & TASK_NOLOAD) || (state & TASK_INTERRUPTIBLE))
		return LX_PREV_SLEEP;
	if (state & TASK_UNINTERRUPTIBLE)
		return LX_PREV_DISK;
	return LX_PREV_OTHER;
}

/* The syscall current (the thread leaving the CPU) is in, from the user registers saved
 * at kernel entry: the syscall entry stores the number in orig_ax and -ENOSYS in ax until the
 * call returns. An exception stores its error code in orig_ax (a page fault's is small and
 * positive) and leaves the user's ax, an interrupt stores ~vector (negative): both give -1 unless
 * the user's ax happened to hold -ENOSYS. Kernel threads have no user registers. */
static __always_inline __s16 current_syscall(void)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct pt_regs *regs;
	long ax, nr;

	if (t->flags & PF_KTHREAD)
		return -1;
	regs = (struct pt_regs *)bpf_task_pt_regs(t);
	ax = regs->ax;
	nr = regs->orig_ax;
	if (ax != -ENOSYS || nr < 0 || nr >= MAX_SYSCALL_NR)
		return -1;
	return nr;
}

static __always_inline int on_switch(bool btf, bool preempt, struct task_struct *next,
				     unsigned int prev_state)
{
	__u64 ts = bpf_ktime_get_ns();
	__u32 cpu = bpf_get_smp_processor_id();
	/* sched_switch runs in prev's context: prev is current. */
	__u64 prev_id = bpf_get_current_pid_tgid();
	__u32 prev_tid = (__u32)prev_id, next_tid = TASK_READ(btf, next, pid);
	struct lx_switch *r;
	void *ring;

	/* The tracer's own threads, and in a target mode every untraced thread, look like the
	 * idle task: the CPU is not running anything the user asked to see (and the tracer's
	 * switches do not feed back into the trace). A switch between two of them is no record. */
	if (prev_tid && !traced_current(prev_id >> 32))
		prev_tid = 0;
	if (next_tid && !traced_task(next, TASK_READ(btf, next, tgid)))
		next_tid = 0;
	if (prev_tid == next_tid)
		return 0;
	r = reserve(&ring, sizeof(*r), cpu);
	if (!r)
		return 0;
	header(&r->h, ts, prev_tid, cpu, LX_REC_SWITCH);
	r->next_tid = next_tid;
	r->prev_state = prev_tid ? classify(preempt, prev_state) : LX_PREV_RUNNABLE;
	/* A thread that gave the CPU up itself is in a syscall: blocked in it, or still runnable
	 * after sched_yield(). A preempted one was interrupted wherever it was. */
	r->prev_syscall = prev_tid && !preempt ? current_syscall() : -1;
	r->pad = 0;
	submit(ring, r, sizeof(*r));
	return 0;
}

static __always_inline int on_wakeup(bool btf, struct task_struct *p, __u8 type)
{
	__u64 ts = bpf_ktime_get_ns();
	__u32 cpu = bpf_get_smp_processor_id();
	struct lx_wakeup *r;
	void *ring;

	/* Kept whoever the waker is: an untraced waker shows as the idle P's wakeup. */
	if (!traced_task(p, TASK_READ(btf, p, tgid)))
		return 0;
	r = reserve(&ring, sizeof(*r), cpu);
	if (!r)
		return 0;
	header(&r->h, ts, TASK_READ(btf, p, pid), cpu, type);
	/* At sched_waking the target CPU is not chosen yet: this is where the wakee last ran,
	 * which is where it goes unless the scheduler migrates it. */
	r->target_cpu = TASK_READ(btf, p, thread_info.cpu);
	r->pad = 0;
	submit(ring, r, sizeof(*r));
	return 0;
}

static __always_inline int on_fork(bool btf, struct task_struct *parent, struct task_struct *child)
{
	__u64 ts = bpf_ktime_get_ns();
	__u32 cpu = bpf_get_smp_processor_id();
	__u32 child_tgid = TASK_READ(btf, child, tgid), parent_tgid = TASK_READ(btf, parent, tgid);
	struct lx_fork *r;
	void *ring;
	__u8 one = 1;

	/* A new process of a traced one is traced from here on, before it can first run: the
	 * child is not on a run queue until after this tracepoint. */
	if (target_mode == LX_TARGET_PIDS) {
		if (!bpf_map_lookup_elem(&targets, &parent_tgid))
			return 0;
		if (child_tgid != parent_tgid)
			bpf_map_update_elem(&targets, &child_tgid, &one, BPF_ANY);
	} else if (!traced_task(child, child_tgid)) {
		return 0;
	}
	r = reserve(&ring, sizeof(*r), cpu);
	if (!r)
		return 0;
	header(&r->h, ts, TASK_READ(btf, child, pid), cpu, LX_REC_FORK);
	r->parent_tid = TASK_READ(btf, parent, pid);
	r->child_pid = TASK_READ(btf, child, tgid);
	submit(ring, r, sizeof(*r));
	return 0;
}

static __always_inline int on_exec(__u32 old_tid)
{
	struct lx_exec *r;
	void *ring;

	/* After exec, a non-leader thread has taken over the leader's pid: tid == pid. */
	r = reserve_current(&ring, sizeof(*r), LX_REC_EXEC);
	if (!r)
		return 0;
	r->pid = bpf_get_current_pid_tgid() >> 32;
	r->old_tid = old_tid;
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	submit(ring, r, sizeof(*r));
	return 0;
}

/* Resident pages of mm, the sum the rss_stat tracepoint's members make up (approximate, as
 * get_mm_counter() is: the per-CPU deltas not yet folded in are left out). */
static __always_inline __u32 rss_pages(struct mm_struct *mm)
{
	__s64 n = BPF_CORE_READ(mm, rss_stat[MM_FILEPAGES].count) +
		  BPF_CORE_READ(mm, rss_stat[MM_ANONPAGES].count) +
		  BPF_CORE_READ(mm, rss_stat[MM_SHMEMPAGES].count);

	return n > 0 ? (__u32)n : 0;
}

static __always_inline void send_rss(__u32 pid, __u32 pages)
{
	struct lx_rss *r;
	void *ring;

	r = reserve_current(&ring, sizeof(*r), LX_REC_RSS);
	if (!r)
		return;
	r->pid = pid;
	r->pages = pages;
	submit(ring, r, sizeof(*r));
}

/* rss_stat fires on every change of an mm counter (each page fault): only the changes of a
 * traced process's own mm, made by one of its threads, and of those at most one record per
 * rss_min_ns or rss_min_pages per process. */
static __always_inline int on_rss(struct mm_struct *mm, int member)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u32 pid = bpf_get_current_pid_tgid() >> 32, pages;
	struct rss_last *last, now = {};
	__s64 delta;

	if (member != MM_FILEPAGES && member != MM_ANONPAGES && member != MM_SHMEMPAGES)
		return 0;
	if (BPF_CORE_READ(t, mm) != mm || !traced_current(pid))
		return 0;
	now.ts = bpf_ktime_get_ns();
	now.pages = pages = rss_pages(mm);
	last = bpf_map_lookup_elem(&rss_seen, &pid);
	if (last) {
		delta = (__s64)pages - last->pages;
		if (!delta || (delta < rss_min_pages && delta > -(__s64)rss_min_pages &&
			       now.ts - last->ts < rss_min_ns))
			return 0;
	}
	bpf_map_update_elem(&rss_seen, &pid, &now, BPF_ANY);
	send_rss(pid, pages);
	return 0;
}

/* group_dead: the process's last thread exits. Its tgid leaves the targets (user space stops
 * when none is left) and its memory, freed after this point outside its context, reads 0. */
static __always_inline int on_exit(bool group_dead)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct lx_rec *r;
	void *ring;

	r = reserve_current(&ring, sizeof(*r), LX_REC_EXIT);
	if (r)
		submit(ring, r, sizeof(*r));
	if (!group_dead || !traced_current(pid))
		return 0;
	if (bpf_map_delete_elem(&rss_seen, &pid) == 0)
		send_rss(pid, 0);
	if (target_mode == LX_TARGET_PIDS)
		bpf_map_delete_elem(&targets, &pid);
	return 0;
}

/* Appends the entry to this CPU's chunk, and sends the chunk once full. No other record is
 * written here, so the reader's order holds. sys_enter never nests in itself (interrupts make
 * no syscalls), so busy only keeps nested programs out. */
static __always_inline int on_sys_enter(long nr)
{
	__u64 ts = bpf_ktime_get_ns(), id = bpf_get_current_pid_tgid();
	__u32 cpu = bpf_get_smp_processor_id(), zero = 0, n;
	struct stage *st;
	void *ring;

	if (!traced_current(id >> 32))
		return 0;
	st = bpf_map_lookup_elem(&stages, &zero);
	if (!st)
		return 0;
	if (st->busy) {
		count_lost(1);	/* cannot happen: nothing that changes a chunk makes syscalls */
		return 0;
	}
	st->busy = 1;
	barrier();
	n = st->rec.n;
	/* An entry's time is 32 bits of ns after the chunk's: a chunk older than 4 s goes first. */
	if (n && ts - st->rec.h.ts > 0xffffffffULL) {
		ring = bpf_map_lookup_elem(&rings, &cpu);
		if (ring)
			send_chunk(st, ring);
		n = st->rec.n;
	}
	if (!n)
		header(&st->rec.h, ts, 0, cpu, LX_REC_SYSCALLS);
	if (n < LX_SYSCALLS_MAX) {
		st->rec.e[n].dt = ts - st->rec.h.ts;
		st->rec.e[n].tid_nr = (__u32)id << LX_SYSENT_NR_BITS |
			(nr >= 0 && nr < LX_SYSENT_NR_NONE ? nr : LX_SYSENT_NR_NONE);
		st->rec.n = ++n;
	} else {
		count_lost(1);	/* a full chunk that could not be sent: no ring for this CPU */
	}
	/* The ring is looked up only to send: most entries just go into the chunk. */
	if (n >= LX_SYSCALLS_MAX) {
		ring = bpf_map_lookup_elem(&rings, &cpu);
		if (ring)
			send_chunk(st, ring);
	}
	barrier();
	st->busy = 0;
	return 0;
}

/* Run by the reader on a CPU (BPF_PROG_TEST_RUN, BPF_F_TEST_RUN_ON_CPU) whose chunk has waited
 * too long: a CPU that makes a few syscalls and nothing else would otherwise hold them back. */
SEC("raw_tp")
int flush_cpu(void *ctx)
{
	__u32 cpu = bpf_get_smp_processor_id();
	void *ring = bpf_map_lookup_elem(&rings, &cpu);

	if (ring)
		flush_syscalls(ring);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(btf_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	return on_switch(true, preempt, next, prev_state);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(raw_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	return on_switch(false, preempt, next, prev_state);
}

/* sched_waking, not sched_wakeup: it runs in the waker's context before the wakee is enqueued,
 * so its timestamp precedes the wakee's next switch-in on any CPU. sched_wakeup may run later
 * on the target CPU (queued wakeups), after the wakee could already be running elsewhere. */
SEC("tp_btf/sched_waking")
int BPF_PROG(btf_waking, struct task_struct *p)
{
	return on_wakeup(true, p, LX_REC_WAKEUP);
}

SEC("raw_tp/sched_waking")
int BPF_PROG(raw_waking, struct task_struct *p)
{
	return on_wakeup(false, p, LX_REC_WAKEUP);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(btf_wakeup_new, struct task_struct *p)
{
	return on_wakeup(true, p, LX_REC_WAKEUP_NEW);
}

SEC("raw_tp/sched_wakeup_new")
int BPF_PROG(raw_wakeup_new, struct task_struct *p)
{
	return on_wakeup(false, p, LX_REC_WAKEUP_NEW);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(btf_fork, struct task_struct *parent, struct task_struct *child)
{
	return on_fork(true, parent, child);
}

SEC("raw_tp/sched_process_fork")
int BPF_PROG(raw_fork, struct task_struct *parent, struct task_struct *child)
{
	return on_fork(false, parent, child);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(btf_exec, struct task_struct *p, pid_t old_pid)
{
	return on_exec(old_pid);
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(raw_exec, struct task_struct *p, pid_t old_pid)
{
	return on_exec(old_pid);
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(btf_exit, struct task_struct *p, bool group_dead)
{
	return on_exit(group_dead);
}

/* Kernels before 6.16 have no group_dead argument; signal->live is already decremented here. */
SEC("raw_tp/sched_process_exit")
int BPF_PROG(raw_exit, struct task_struct *p)
{
	struct task_struct *t = bpf_get_current_task_btf();

	return on_exit(BPF_CORE_READ(t, signal, live.counter) == 0);
}

SEC("tp_btf/rss_stat")
int BPF_PROG(btf_rss, struct mm_struct *mm, int member)
{
	return on_rss(mm, member);
}

SEC("raw_tp/rss_stat")
int BPF_PROG(raw_rss, struct mm_struct *mm, int member)
{
	return on_rss(mm, member);
}

SEC("tp_btf/sys_enter")
int BPF_PROG(btf_sys_enter, struct pt_regs *regs, long nr)
{
	return on_sys_enter(nr);
}

SEC("raw_tp/sys_enter")
int BPF_PROG(raw_sys_enter, struct pt_regs *regs, long nr)
{
	return on_sys_enter(nr);
}
