// SPDX-License-Identifier: GPL-2.0
/* lxtrace.bpf.c - the kernel side: scheduler, process-lifetime and syscall tracepoints turned
 * into the fixed-size records of lxtrace.h, one ring buffer per CPU (ring.bpf.h).
 *
 * One object for every kernel from 5.10 (docs/record.md, "Kernels"). Each tracepoint has two
 * programs over one always-inlined handler that takes `modern` as a compile-time constant,
 * and user space loads one of each pair:
 * - modern (tp_btf, kernels 5.15+): typed arguments and task pointers read directly, the
 *   current task's registers from bpf_task_pt_regs, user stacks unwound here from CFI with a
 *   per-thread cache in task storage (unwind.bpf.h, ucache.bpf.h);
 * - compat (raw_tp): only what 5.10 offers. Task fields are probed reads, the registers are
 *   found at the top of the task's kernel stack, and user stacks are the kernel's own
 *   frame-pointer walk (bpf_get_stack). Nothing of the modern path is compiled into them,
 *   so the verifier of an old kernel never sees a helper it does not know.
 * What differs between kernels of one kind is read in place: tracepoint arguments a kernel
 * lacks (prev_state before 5.18, group_dead before 6.16) by constants user space sets from
 * the kernel's BTF, struct layouts (task state, rss counters, cgroup ancestors) by CO-RE
 * existence checks, whose dead branch the verifier drops.
 *
 * In a target mode (-p, a command, --cgroup) every program asks whether the thread a record would
 * be about is traced before it reserves anything, so other threads cost a map lookup (or a short
 * cgroup walk) and no record; see traced_task() in target.bpf.h.
 *
 * CPU samples (a perf_event program on one cpu-clock event per CPU) and, with --stacks, the
 * switch, wakeup and fork records carry call stacks inline (struct lx_stack after the record).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "ring.bpf.h"
#include "target.bpf.h"
#include "unwind.bpf.h"
#include "python.bpf.h"
#include "pmaps_range.bpf.h"

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
#define __NR_execve 59		/* x86_64's, as the rest of the register reads */
#define __NR_execveat 322

/* An rss record per process at most every rss_min_ns, unless it moved by rss_min_pages. */
const volatile __u32 rss_min_pages = 256;
const volatile __u64 rss_min_ns = 1000000;
const volatile bool stack_kern;		/* --stacks: switch, wakeup and fork records carry */
const volatile bool stack_user;		/* the current thread's kernel / user stack */
const volatile bool sample_idle;	/* --sample-idle: samples of the idle task are kept */
const volatile bool wake_on_process;	/* exec and new-process fork records wake the reader at
					 * once, so it notes the process's mappings while it lives */
/* What the kernel's BTF says of its tracepoints, and where the compat programs find the user
 * registers: the top of the kernel stack (THREAD_SIZE, larger with KASAN). */
const volatile bool switch_state_arg;	/* sched_switch passes prev_state (5.18+) */
const volatile bool exit_group_dead_arg;	/* sched_process_exit passes group_dead (6.16+) */
const volatile __u64 thread_size = 16384;

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

/* Records with a stack are built here and sent with bpf_ringbuf_output, so the ring holds only
 * the frames taken, not room for the most a stack can have. One buffer per nesting level on a
 * CPU: a sample (a timer interrupt) or a wakeup from an interrupt can run inside another
 * program that is building its record. */
#define SCRATCH_LEVELS 4
#define TP_SKIP_FRAMES 3
#define SCRATCH_BYTES 1088	/* largest record (24) + struct lx_stack + 128 frames, rounded */

struct scratch {
	__u8 buf[SCRATCH_BYTES];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SCRATCH_LEVELS);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

/* The outermost level's buffer has room for a copy of the user stack too (LX_USTACK_COPY):
 * its header and bytes follow the frames (at an offset the verifier sees below COPY_AT_MAX),
 * with a page of slack in which it sees each page's read fit. hdr is the header as the walk
 * leaves it. Only this level copies: a copy is rare (a file's first stacks), so nested
 * programs do without. */
#define COPY_AT_MAX 2048

struct scratch_copy {
	__u8 buf[COPY_AT_MAX + sizeof(struct lx_ucopy) + LX_UCOPY_MAX + 4096];
	struct lx_ucopy hdr;
};

_Static_assert(SCRATCH_BYTES <= COPY_AT_MAX, "a record's frames end below COPY_AT_MAX");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch_copy);
} scratch_copy SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} scratch_depth SEC(".maps");

_Static_assert(24 + sizeof(struct lx_stack) + 8 * (LX_STACK_KERN_MAX + LX_STACK_USER_MAX) <=
	       SCRATCH_BYTES, "scratch holds the largest record");

/* The current task, and a field of a task: read directly in modern programs (BTF-typed
 * pointers), with CO-RE probes in compat ones, whose task pointers are plain addresses. */
#define CUR_TASK(modern)                                                                          \
	((modern) ? bpf_get_current_task_btf() : (struct task_struct *)bpf_get_current_task())
#define TASK_READ(modern, t, field) ((modern) ? (t)->field : BPF_CORE_READ(t, field))
#define REGS_READ(modern, r, field) ((modern) ? (r)->field : BPF_CORE_READ(r, field))

/* The user registers saved at t's kernel entry: at the top of its kernel stack, as the kernel's
 * task_pt_regs() finds them (x86_64 has no padding above them). */
static __always_inline struct pt_regs *task_regs(bool modern, struct task_struct *t)
{
	if (modern)
		return (struct pt_regs *)bpf_task_pt_regs(t);
	return (struct pt_regs *)((__u64)BPF_CORE_READ(t, stack) + thread_size -
				  bpf_core_type_size(struct pt_regs));
}

/* The user registers a stack walk starts from. */
struct uregs {
	__u64 ip, sp, bp, di;
};

/* Those saved at the current thread's kernel entry; false for a kernel thread. The walker that
 * needs them is modern only. */
static __always_inline bool current_uregs(struct uregs *u)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct pt_regs *regs;

	if (t->flags & PF_KTHREAD)
		return false;
	regs = (struct pt_regs *)bpf_task_pt_regs(t);
	u->ip = regs->ip;
	u->sp = regs->sp;
	u->bp = regs->bp;
	u->di = regs->di;
	return true;
}

/* Interrupt context (hard or soft interrupt, NMI): current is whatever thread the interrupt
 * landed on, and what the program sees is not that thread's doing. x86_64 runs interrupts, soft
 * interrupts and NMIs on stacks of their own when they interrupt the kernel, so code whose stack
 * is outside the current task's kernel stack (task->stack up to the user registers at its top)
 * runs in one; an interrupt of user mode shows in the task's entry registers. (The preempt
 * count would say it too, but its per-CPU variable has no address for BPF on kernels without
 * CONFIG_KALLSYMS_ALL.) The stack tested is the one ctx lies on: a tracepoint's arguments are an
 * array on the stack of bpf_trace_runN, which is the context's own, whereas the program's
 * frame may be on a private per-CPU stack (6.13+, programs with a large stack). */
static __always_inline bool in_interrupt_ctx(void *ctx, bool modern)
{
	struct task_struct *t = CUR_TASK(modern);
	struct pt_regs *regs = task_regs(modern, t);
	__u64 here = (__u64)ctx, lo = (__u64)TASK_READ(modern, t, stack);
	__u64 hi = (__u64)regs + sizeof(*regs);

	/* An interrupt that arrived in user mode runs on the task's own stack (nothing of the
	 * task is on it), but then the task's entry registers are the interrupt's: orig_ax holds
	 * ~vector, where a syscall or an exception has a number or error code >= 0. */
	return here < lo || here >= hi ||
	       (!(TASK_READ(modern, t, flags) & PF_KTHREAD) &&
		(long)REGS_READ(modern, regs, orig_ax) < 0);
}

/* Past an exec's point of no return the old address space is gone, but the user registers
 * point into its stack until the syscall returns: no walk can read it then. The walk is taken
 * before, as the exec starts building the new address space (keep_exec_ustack), and kept for
 * what the thread does until the exec is done: its switches inside the exec and the exec
 * record itself. An exec that fails leaves its entry to the thread's next exec or its exit. */
struct exec_ustack {
	__u64 mm;		/* the new address space it was kept for */
	__u8 n;
	__u8 uflags;		/* enum lx_ustack_flags */
	__u64 pc[LX_STACK_USER_MAX];
	/* With LX_USTACK_COPY: struct lx_ucopy, where the walk stopped, and the stack, with a page
	 * of slack for the verifier (ex_copy()). */
	__u8 copy[sizeof(struct lx_ucopy) + LX_UCOPY_MAX + 4096] __attribute__((aligned(8)));
};

static __always_inline struct lx_ucopy *ex_copy(struct exec_ustack *e)
{
	return (struct lx_ucopy *)e->copy;
}

/* Execs in flight at once; a thread that finds no room walks as any. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);	/* tid */
	__type(value, struct exec_ustack);
} exec_ustacks SEC(".maps");

/* Where a walk for exec_ustacks is made: larger than a program's stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct exec_ustack);
} exec_ustack_build SEC(".maps");

/* The user stack current kept at its exec's point of no return, if it is inside the exec. */
static __always_inline struct exec_ustack *exec_ustack_of_current(bool modern);

/* The compat programs' user stack: the kernel's walk from the interrupted or the entry
 * registers, as perf's; its first frame is the instruction itself. It cannot tell a chain's
 * end from a broken one. Returns the frame count and adds the walk's flags to *uflags. */
static __always_inline __u64 kernel_user_walk(void *ctx, struct walk_out *out, __u8 *uflags)
{
	long n = bpf_get_stack(ctx, out->pc, sizeof(out->pc), BPF_F_USER_STACK);
	__u64 nu = n > 0 ? (__u64)n / 8 : 0;

	if (nu > LX_STACK_USER_MAX)
		nu = LX_STACK_USER_MAX;
	if (nu) {
		out->pc[0] |= LX_PC_EXACT;
		*uflags |= LX_USTACK_FP | LX_USTACK_KWALK |
			   (nu == LX_STACK_USER_MAX ? LX_USTACK_DEEP : 0);
	}
	return nu;
}

/* Copies the user stack from sp up into dst, a page at a time, as far as it is mapped and at
 * most LX_UCOPY_MAX bytes (dst has a page more). Returns the bytes copied, whole words. */
static __always_inline __u32 copy_user_stack(__u8 *dst, __u64 sp)
{
	__u32 len = 0, chunk;

	for (int i = 0; i < LX_UCOPY_MAX / 4096 + 1; i++) {
		if (len >= LX_UCOPY_MAX)
			break;
		chunk = 4096 - ((sp + len) & 4095);
		if (chunk > LX_UCOPY_MAX - len)
			chunk = LX_UCOPY_MAX - len;
		/* 1 to 4096 either way; the masks show the verifier so. */
		chunk = ((chunk - 1) & 4095) + 1;
		if (bpf_probe_read_user(dst + (len & (LX_UCOPY_MAX - 1)), chunk, (void *)(sp + len)))
			break;
		len += chunk;
	}
	return len & ~7u;
}

/* Whether a copy of the user stack may be sent now: the ring is no more than a quarter
 * full (wakeup_bytes is half of it: one query, not two), so that the copies of a burst of
 * first stacks cannot crowd out other records. */
static __always_inline bool copy_room(void *ring)
{
	return bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA) < wakeup_bytes / 2;
}

/* A record that carries a stack, with no frames: a user stack proven unchanged (LX_USTACK_HIT)
 * and no kernel stack. */
struct stacked_hit {
	__u8 rec[24];
	struct lx_stack st;
};

/* Sends rec (24 bytes: every record that carries a stack) followed by the current thread's
 * kernel stack (kern) and/or its user stack (user), waking the reader at once with `wake`.
 * Modern: the user stack is walked from u's registers here (a proof from the cache when it is
 * unchanged: the common case, written into the ring directly); compat: it is the kernel's
 * frame-pointer walk. irq: the record is an interrupt's, whose stack is only kernel frames.
 * Counts the record as lost when the ring is full. */
static __always_inline void send_stacked(void *ctx, __u32 cpu, const void *rec, bool kern,
					 bool user, const struct uregs *u, bool irq, bool wake,
					 __u32 skip_frames, bool modern)
{
	__u32 zero = 0, *depth, level, copied = 0;
	struct uc_lookup us = {};
	struct exec_ustack *ex = NULL;
	struct scratch_copy *sc0 = NULL;
	struct lx_ucopy *copy = NULL;
	struct stacked_hit *h;
	struct lx_stack *st;
	__u64 nk = 0, nu = 0;
	__u8 uflags = irq ? LX_USTACK_IRQ : 0, uslot = 0;
	bool hit = false;
	__u8 *buf;
	long n;
	void *ring;

	user = user && !irq && (u || !modern);
	ring = bpf_map_lookup_elem(&rings, &cpu);
	if (!ring)
		return;
	flush_syscalls(ring);
	/* A Python thread's frames go just before, in a record of their own (python.bpf.h). */
	if (modern && user)
		py_send(cpu, ((const struct lx_rec *)rec)->ts);
	if (user)
		ex = exec_ustack_of_current(modern);
	if (modern && user && !ex)
		hit = unwind_cached(u->ip, u->sp, u->bp, &us, &uflags, &uslot);
	if (hit && !kern) {
		h = bpf_ringbuf_reserve(ring, sizeof(*h), 0);
		if (!h) {
			count_lost(1);
			return;
		}
		__builtin_memcpy(h->rec, rec, sizeof(h->rec));
		h->st.tid = (__u32)bpf_get_current_pid_tgid();
		h->st.nkern = 0;
		h->st.nuser = 0;
		h->st.uflags = uflags;
		h->st.uslot = uslot;
		bpf_ringbuf_submit(h, wake ? BPF_RB_FORCE_WAKEUP : wake_flags(ring, sizeof(*h)));
		return;
	}
	depth = bpf_map_lookup_elem(&scratch_depth, &zero);
	if (!depth)
		return;
	/* Interrupts nest strictly, so a nested run restores the depth before this one goes on;
	 * the depth is raised before the buffer is written and lowered after it is sent. */
	level = (*depth)++;
	barrier();
	if (!level) {
		sc0 = bpf_map_lookup_elem(&scratch_copy, &zero);
		buf = sc0 ? sc0->buf : NULL;
	} else {
		buf = level < SCRATCH_LEVELS ? bpf_map_lookup_elem(&scratch, &level) : NULL;
	}
	if (!buf) {
		count_lost(1);
		goto out;
	}
	__builtin_memcpy(buf, rec, 24);
	st = (void *)(buf + 24);
	st->tid = (__u32)bpf_get_current_pid_tgid();
	if (kern) {
		/* A tracepoint's stack starts in the BPF program, bpf_trace_runN and the
		 * tracepoint's iterator: skip them. A sample's starts where the timer hit. */
		n = bpf_get_stack(ctx, st->pc, LX_STACK_KERN_MAX * 8,
				  skip_frames & BPF_F_SKIP_FIELD_MASK);
		nk = n > 0 ? (__u64)n / 8 : 0;
	}
	if (nk > LX_STACK_KERN_MAX)
		nk = LX_STACK_KERN_MAX;
	if (ex) {
		nu = ex->n & (LX_STACK_USER_MAX * 2 - 1);
		if (nu > LX_STACK_USER_MAX)
			nu = LX_STACK_USER_MAX;
		if (bpf_probe_read_kernel(&st->pc[nk], nu * 8, ex->pc))
			nu = 0;
		uflags |= ex->uflags;
		if (sc0)
			copy = ex_copy(ex);
	} else if (modern && user && !hit) {
		/* Whether the ring has room for a copy is kept in the copy's len until the copy
		 * is made, off the program's stack (unwind_user). */
		if (sc0) {
			copy = &sc0->hdr;
			copy->len = copy_room(ring) ? 0 : UCOPY_NO_ROOM;
		}
		nu = unwind_user(u->ip, u->sp, u->bp, u->di, &us, (struct walk_out *)&st->pc[nk],
				 &uflags, &uslot, copy);
	} else if (!modern && user) {
		nu = kernel_user_walk(ctx, (struct walk_out *)&st->pc[nk], &uflags);
	}
	if (nu > LX_STACK_USER_MAX)
		nu = LX_STACK_USER_MAX;
	/* A walk that went on by frame pointers for want of room for its copy: marked so for
	 * the daemon to count, and to show where that cut the stack short. */
	if (copy && (uflags & LX_USTACK_COPY) && copy->len == UCOPY_NO_ROOM) {
		uflags &= ~LX_USTACK_COPY;
		uslot = LX_USLOT_NO_ROOM;
	}
	/* A kept exec walk to finish, in a nested program: no room for its copy. */
	if ((uflags & LX_USTACK_COPY) && !copy)
		uflags = (uflags & ~LX_USTACK_COPY) | LX_USTACK_TRUNCATED;
	st->nkern = nk;
	st->nuser = nu;
	st->uflags = uflags;
	st->uslot = uslot;
	n = 24 + sizeof(*st) + (nk + nu) * 8;
	if (n > SCRATCH_BYTES)
		goto out;
	if (copy && (uflags & LX_USTACK_COPY)) {
		struct lx_ucopy *at = (struct lx_ucopy *)(buf + (n & (COPY_AT_MAX - 1)));

		*at = *copy;
		if (!ex) {
			copied = copy_user_stack(at->bytes, copy->sp);
		} else {
			copied = copy->len;
			if (copied > LX_UCOPY_MAX)
				copied = LX_UCOPY_MAX;
			if (bpf_probe_read_kernel(at->bytes, copied, copy->bytes))
				copied = 0;
		}
		at->len = copied;
		__builtin_memset(at->pad, 0, sizeof(at->pad));
		n += sizeof(*at) + copied;
	}
	if (bpf_ringbuf_output(ring, buf, n, wake ? BPF_RB_FORCE_WAKEUP : wake_flags(ring, n))) {
		count_lost(1);
		if (modern && (uflags & LX_USTACK_STORE))
			unwind_unstore(uslot);
	}
out:
	barrier();
	(*depth)--;
}

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

/* task_struct before 5.14, whose state was a long named state. */
struct task_struct___long_state {
	long state;
};

/* task_struct before 5.16, which kept the CPU a task runs on in itself, not in thread_info. */
struct task_struct___cpu {
	unsigned int cpu;
};

static __always_inline __u32 task_cpu(bool modern, struct task_struct *t)
{
	struct task_struct___cpu *old = (void *)t;

	if (bpf_core_field_exists(old->cpu))
		return BPF_CORE_READ(old, cpu);
	return TASK_READ(modern, t, thread_info.cpu);
}

/* The state prev switched out in, on kernels whose sched_switch does not pass it: read from
 * the task at the tracepoint, as the tracepoint itself did then. A wakeup racing the switch
 * can have set it to TASK_WAKING by then (the reason 5.18 passes it). */
static __always_inline unsigned int task_state(bool modern, struct task_struct *t)
{
	struct task_struct___long_state *old = (void *)t;

	if (bpf_core_field_exists(old->state))
		return BPF_CORE_READ(old, state);
	return TASK_READ(modern, t, __state);
}

/* The syscall current (the thread leaving the CPU) is in, from the user registers saved
 * at kernel entry: the syscall entry stores the number in orig_ax and -ENOSYS in ax until the
 * call returns. An exception stores its error code in orig_ax (a page fault's is small and
 * positive) and leaves the user's ax, an interrupt stores ~vector (negative): both give -1 unless
 * the user's ax happened to hold -ENOSYS. Kernel threads have no user registers. */
static __always_inline __s16 current_syscall(bool modern)
{
	struct task_struct *t = CUR_TASK(modern);
	struct pt_regs *regs;
	long ax, nr;

	if (TASK_READ(modern, t, flags) & PF_KTHREAD)
		return -1;
	regs = task_regs(modern, t);
	ax = REGS_READ(modern, regs, ax);
	nr = REGS_READ(modern, regs, orig_ax);
	if (ax != -ENOSYS || nr < 0 || nr >= MAX_SYSCALL_NR)
		return -1;
	return nr;
}

/* Whether current is inside execve: its user registers are still the old image's while the
 * kernel builds the new one, so its stacks are the old image's until the exec is done
 * (sched_process_exec). */
static __always_inline bool in_execve(bool modern)
{
	__s16 nr = current_syscall(modern);

	return nr == __NR_execve || nr == __NR_execveat;
}

static __always_inline struct exec_ustack *exec_ustack_of_current(bool modern)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	return in_execve(modern) ? bpf_map_lookup_elem(&exec_ustacks, &tid) : NULL;
}

/* What each CPU's holder was last said to be (struct lx_occupant): its kind, and the process
 * last named there; and the record saying the next one (too large for the program's stack,
 * which a switch record's stack walk fills). sched_switch does not nest on a CPU. */
struct occupant {
	__u32 kind;	/* enum lx_occupant_kind */
	__u32 tgid;
	struct lx_occupant rec;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct occupant);
} occupants SEC(".maps");

/* Builds the record saying that CPU cpu is held by kind, thread next of process tgid, from ts. */
static __always_inline void build_occupant(struct occupant *o, __u64 ts, __u32 cpu, __u8 kind,
					   struct task_struct *next, __u32 tgid)
{
	header(&o->rec.h, ts, 0, cpu, LX_REC_OCCUPANT);
	o->rec.kind = kind;
	o->rec.pid = kind == LX_OCC_IDLE ? 0 : tgid;
	__builtin_memset(o->rec.comm, 0, sizeof(o->rec.comm));
	if (kind != LX_OCC_IDLE)
		BPF_CORE_READ_STR_INTO(&o->rec.comm, next, comm);
}

/* Sends the record built, and remembers what it says only once sent: after a full ring the
 * next switch tries again. */
static __always_inline void send_occupant(struct occupant *o)
{
	struct lx_occupant *r;
	void *ring;

	r = reserve(&ring, sizeof(*r), o->rec.h.cpu);
	if (!r)
		return;
	__builtin_memcpy(r, &o->rec, sizeof(*r));
	submit(ring, r, sizeof(*r));
	o->kind = o->rec.kind;
	if (o->rec.kind != LX_OCC_IDLE)
		o->tgid = o->rec.pid;
}

static __always_inline void fill_switch(struct lx_switch *r, __u64 ts, __u32 prev_tid, __u32 cpu,
					__u32 next_tid, bool preempt, unsigned int prev_state,
					__u8 next_kind, bool modern)
{
	header(&r->h, ts, prev_tid, cpu, LX_REC_SWITCH);
	r->h.flags = next_kind;
	r->next_tid = next_tid;
	r->prev_state = prev_tid ? classify(preempt, prev_state) : LX_PREV_RUNNABLE;
	/* A thread that gave the CPU up itself is in a syscall: blocked in it, or still runnable
	 * after sched_yield(). A preempted one was interrupted wherever it was. */
	r->prev_syscall = prev_tid && !preempt ? current_syscall(modern) : -1;
	r->pad = 0;
}

/* ctx is the tracepoint's arguments: (preempt, prev, next[, prev_state]). */
static __always_inline int on_switch(__u64 *ctx, bool modern, bool preempt,
				     struct task_struct *prev, struct task_struct *next)
{
	__u64 ts = bpf_ktime_get_ns();
	__u32 cpu = bpf_get_smp_processor_id();
	/* sched_switch runs in prev's context: prev is current. */
	__u64 prev_id = bpf_get_current_pid_tgid();
	__u32 prev_tid = (__u32)prev_id, next_tid = TASK_READ(modern, next, pid), next_tgid = 0;
	__u32 zero = 0;
	__u8 next_kind = LX_OCC_IDLE;
	unsigned int prev_state;
	struct occupant *o = bpf_map_lookup_elem(&occupants, &zero);
	struct lx_switch *r;
	void *ring;

	if (!o)
		return 0;
	/* The tracer's own threads, and in a target mode every untraced thread, are no recorded
	 * thread: the CPU is not running anything the user asked to see (and the tracer's
	 * switches do not feed back into the trace). Only which kind holds the CPU is said, when
	 * it changes: a switch between two of one kind is no record. */
	if (prev_tid && !traced_current(prev_id >> 32))
		prev_tid = 0;
	if (next_tid) {
		next_tgid = TASK_READ(modern, next, tgid);
		if (!traced_task(next, next_tgid)) {
			next_kind = self_process(next_tgid) ? LX_OCC_SELF : LX_OCC_UNTRACED;
			next_tid = 0;
		}
	}
	if (prev_tid == next_tid) {
		if (next_kind != o->kind) {
			build_occupant(o, ts, cpu, next_kind, next, next_tgid);
			send_occupant(o);
		}
		return 0;
	}
	/* The switch says the kind; its name comes first when another process holds the CPU. */
	if (next_kind != LX_OCC_IDLE && next_tgid != o->tgid) {
		build_occupant(o, ts, cpu, next_kind, next, next_tgid);
		o->rec.h.flags = LX_OCC_NAME_ONLY;
		send_occupant(o);
	}
	o->kind = next_kind;
	/* The argument is read only where the tracepoint has it: the verifier of an older kernel
	 * refuses the access, but drops the branch first. */
	prev_state = switch_state_arg ? (unsigned int)ctx[3] : task_state(modern, prev);
	/* prev is current, so its own stacks can be taken: where it blocked or was preempted. */
	if (prev_tid && (stack_kern || stack_user)) {
		struct lx_switch l;
		struct uregs u;
		bool user = stack_user && (!modern || current_uregs(&u));

		fill_switch(&l, ts, prev_tid, cpu, next_tid, preempt, prev_state, next_kind, modern);
		send_stacked(ctx, cpu, &l, stack_kern, user, modern ? &u : NULL, false, false,
			     TP_SKIP_FRAMES, modern);
	} else {
		r = reserve(&ring, sizeof(*r), cpu);
		if (!r)
			return 0;
		fill_switch(r, ts, prev_tid, cpu, next_tid, preempt, prev_state, next_kind, modern);
		submit(ring, r, sizeof(*r));
	}
	return 0;
}

static __always_inline int on_wakeup(void *ctx, bool modern, struct task_struct *p, __u8 type)
{
	__u64 ts = bpf_ktime_get_ns(), waker = bpf_get_current_pid_tgid();
	__u32 cpu = bpf_get_smp_processor_id();
	bool irq = (stack_kern || stack_user) && in_interrupt_ctx(ctx, modern);
	struct lx_wakeup *r, l;
	void *ring;

	/* Kept whoever the waker is: an untraced waker shows as the idle P's wakeup. */
	if (!traced_task(p, TASK_READ(modern, p, tgid)))
		return 0;
	header(&l.h, ts, TASK_READ(modern, p, pid), cpu, type);
	/* At sched_waking the target CPU is not chosen yet: this is where the wakee last ran,
	 * which is where it goes unless the scheduler migrates it. */
	l.target_cpu = task_cpu(modern, p);
	l.pad = 0;
	/* The waker is current (sched_waking runs in its context), if traced: its stack. An
	 * interrupt (a timer, an I/O completion) wakes on top of whatever runs: the record is
	 * the interrupt's, with its kernel stack and never the interrupted thread's user stack. */
	if (stack_kern || stack_user) {
		struct uregs u;
		bool user = stack_user && !irq && (!modern || current_uregs(&u));

		if (irq || ((__u32)waker && traced_current(waker >> 32))) {
			send_stacked(ctx, cpu, &l, stack_kern, user, modern ? &u : NULL, irq,
				     false, TP_SKIP_FRAMES, modern);
			return 0;
		}
	}
	r = reserve(&ring, sizeof(*r), cpu);
	if (!r)
		return 0;
	*r = l;
	submit(ring, r, sizeof(*r));
	return 0;
}

/* The wakee is on a run queue: sched_wakeup follows the enqueue (or finds it still on one:
 * it never slept). The kernel's run delay, perf sched and runqlat start the wait here; for a
 * wakeup queued to another CPU this runs there, in the IPI, after the waker's sched_waking by
 * the IPI's delay. The waker and its stack are sched_waking's record: this one is the time. */
static __always_inline int on_enqueue(bool modern, struct task_struct *p)
{
	__u64 ts = bpf_ktime_get_ns();
	__u32 cpu = bpf_get_smp_processor_id();
	struct lx_rec *r;
	void *ring;

	if (!traced_task(p, TASK_READ(modern, p, tgid)))
		return 0;
	r = reserve(&ring, sizeof(*r), cpu);
	if (!r)
		return 0;
	header(r, ts, TASK_READ(modern, p, pid), cpu, LX_REC_ENQUEUE);
	submit(ring, r, sizeof(*r));
	return 0;
}

static __always_inline int on_fork(void *ctx, bool modern, struct task_struct *parent,
				   struct task_struct *child)
{
	__u64 ts = bpf_ktime_get_ns();
	__u32 cpu = bpf_get_smp_processor_id();
	__u32 child_tgid = TASK_READ(modern, child, tgid);
	__u32 parent_tgid = TASK_READ(modern, parent, tgid);
	struct lx_fork *r, l;
	void *ring;
	__u8 one = 1;
	bool wake;

	if (child_tgid != parent_tgid) {
		__u64 mm = (__u64)TASK_READ(modern, child, mm);

		if (unwind_maps)
			pmaps_fork(parent_tgid, child_tgid, mm);
		if (maps_ask)
			pmaps_ask_fork(parent_tgid, child_tgid, mm);
	}
	/* So is a helper the tracer forks is the tracer's from its first run on. */
	if (parent_tgid == self_tgid && child_tgid != parent_tgid)
		self_child_tgid = child_tgid;
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
	header(&l.h, ts, TASK_READ(modern, child, pid), cpu, LX_REC_FORK);
	l.parent_tid = TASK_READ(modern, parent, pid);
	l.child_pid = child_tgid;
	/* A new process is noted by the reader while it still runs (wake_on_process). */
	wake = wake_on_process && l.child_pid == l.h.tid;
	/* The parent is current: sched_process_fork runs at the end of its fork. A parent that is
	 * not traced itself (--cgroup: a child moved in) gives no stack. */
	if ((stack_kern || stack_user) && traced_current(parent_tgid)) {
		struct uregs u;
		bool user = stack_user && (!modern || current_uregs(&u));

		send_stacked(ctx, cpu, &l, stack_kern, user, modern ? &u : NULL, false, wake,
			     TP_SKIP_FRAMES, modern);
		return 0;
	}
	r = reserve(&ring, sizeof(*r), cpu);
	if (!r)
		return 0;
	*r = l;
	bpf_ringbuf_submit(r, wake ? BPF_RB_FORCE_WAKEUP : wake_flags(ring, sizeof(*r)));
	return 0;
}

/* An exec record followed by the user stack its thread kept at the point of no return, built
 * here: no ring reservation can be sized by the walk. Per CPU, and exec programs do not nest. */
struct exec_rec {
	__u8 buf[sizeof(struct lx_exec) + sizeof(struct lx_stack) + LX_STACK_USER_MAX * 8 +
		 sizeof(struct lx_ucopy) + LX_UCOPY_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct exec_rec);
} exec_recs SEC(".maps");

/* Writes the copy of the stack a kept exec walk stopped at to dst; its size. */
static __always_inline __u32 exec_copy_out(__u8 *dst, struct exec_ustack *ex)
{
	struct lx_ucopy *c = (struct lx_ucopy *)dst, *from = ex_copy(ex);
	__u32 len = from->len;

	if (len > LX_UCOPY_MAX)
		len = LX_UCOPY_MAX;
	*c = *from;
	if (bpf_probe_read_kernel(c->bytes, len, from->bytes))
		len = 0;
	c->len = len;
	return sizeof(*c) + len;
}

/* The exec record, with the old image's user stack at the exec when it was kept: what the
 * caller of execve was doing. */
static __always_inline int on_exec(__u32 old_tid)
{
	__u64 ts = bpf_ktime_get_ns(), id = bpf_get_current_pid_tgid();
	__u32 cpu = bpf_get_smp_processor_id(), zero = 0, size = sizeof(struct lx_exec);
	struct exec_ustack *ex = stack_user ? bpf_map_lookup_elem(&exec_ustacks, &old_tid) : NULL;
	struct exec_rec *b = ex ? bpf_map_lookup_elem(&exec_recs, &zero) : NULL;
	struct lx_exec *r, l;
	struct lx_stack *st;
	__u64 nu = 0;
	void *ring;

	if (!traced_current(id >> 32))
		goto out;
	ring = bpf_map_lookup_elem(&rings, &cpu);
	if (!ring)
		goto out;
	flush_syscalls(ring);
	/* After exec, a non-leader thread has taken over the leader's pid: tid == pid. */
	r = b ? (struct lx_exec *)b->buf : &l;
	header(&r->h, ts, (__u32)id, cpu, LX_REC_EXEC);
	r->pid = id >> 32;
	r->old_tid = old_tid;
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	if (b) {
		st = (struct lx_stack *)(b->buf + sizeof(struct lx_exec));
		nu = ex->n & (LX_STACK_USER_MAX * 2 - 1);
		if (nu > LX_STACK_USER_MAX)
			nu = LX_STACK_USER_MAX;
		if (bpf_probe_read_kernel(st->pc, nu * 8, ex->pc))
			nu = 0;
		st->tid = old_tid;	/* the thread whose stack it is, as the model knows it */
		st->nkern = 0;
		st->nuser = nu;
		st->uflags = ex->uflags;
		st->uslot = 0;
		size += sizeof(*st) + nu * 8;
		if (ex->uflags & LX_USTACK_COPY)
			size += exec_copy_out(b->buf + (size & 1023), ex);
	}
	/* The reader notes the new image's mappings at once, while the process still runs. */
	if (bpf_ringbuf_output(ring, r, size, wake_on_process ? BPF_RB_FORCE_WAKEUP :
								wake_flags(ring, size)))
		count_lost(1);
out:
	if (ex)
		bpf_map_delete_elem(&exec_ustacks, &old_tid);
	return 0;
}

/* Keeps current's user stack for its exec (exec_ustacks) when the lock of an address space
 * not its own, mm, is released inside execve: the exec building the new one (its stack's
 * mapping first, 5.8+), while the old one still stands. Once per exec: the kept walk names
 * the mm it was taken for. */
static __always_inline void keep_exec_ustack(void *ctx, bool modern, struct mm_struct *mm)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 zero = 0, tid = (__u32)id;
	struct exec_ustack *e;
	__u8 uflags = 0, uslot;
	__u64 n;

	if (!stack_user || !in_execve(modern) || !traced_current(id >> 32))
		return;
	/* Past the point of no return the old address space is the one released, and the kept
	 * walk's is current's. */
	e = bpf_map_lookup_elem(&exec_ustacks, &tid);
	if (e && (e->mm == (__u64)mm || e->mm == (__u64)TASK_READ(modern, CUR_TASK(modern), mm)))
		return;
	e = bpf_map_lookup_elem(&exec_ustack_build, &zero);
	if (!e)
		return;
	if (modern) {
		struct uc_lookup us = { .tgid = id >> 32 };
		struct uregs u;

		if (!current_uregs(&u))
			return;
		us.ver = pmaps_ver(us.tgid);
		n = unwind_user(u.ip, u.sp, u.bp, u.di, &us, (struct walk_out *)e->pc, &uflags,
				&uslot, ex_copy(e));
		if (uflags & LX_USTACK_COPY) {
			ex_copy(e)->len = copy_user_stack(ex_copy(e)->bytes, ex_copy(e)->sp);
			__builtin_memset(ex_copy(e)->pad, 0, sizeof(ex_copy(e)->pad));
		}
	} else {
		n = kernel_user_walk(ctx, (struct walk_out *)e->pc, &uflags);
	}
	e->mm = (__u64)mm;
	e->n = n;
	e->uflags = uflags;
	/* Without room the exec's stacks are walked as any, and end at the leaf. */
	bpf_map_update_elem(&exec_ustacks, &tid, e, BPF_ANY);
}

/* mm_struct before 6.2, whose counters were atomics in a struct. */
struct mm_rss_stat___atomic {
	atomic_long_t count[4];
};

struct mm_struct___atomic_rss {
	struct mm_rss_stat___atomic rss_stat;
};

/* Resident pages of mm, the sum the rss_stat tracepoint's members make up (approximate, as
 * get_mm_counter() is: the per-CPU deltas not yet folded in are left out). */
static __always_inline __u32 rss_pages(struct mm_struct *mm)
{
	struct mm_struct___atomic_rss *old = (void *)mm;
	__s64 n;

	if (bpf_core_field_exists(old->rss_stat.count))
		n = BPF_CORE_READ(old, rss_stat.count[MM_FILEPAGES].counter) +
		    BPF_CORE_READ(old, rss_stat.count[MM_ANONPAGES].counter) +
		    BPF_CORE_READ(old, rss_stat.count[MM_SHMEMPAGES].counter);
	else
		n = BPF_CORE_READ(mm, rss_stat[MM_FILEPAGES].count) +
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
static __always_inline int on_rss(bool modern, struct mm_struct *mm, int member)
{
	struct task_struct *t = CUR_TASK(modern);
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
 * when none is left) and its memory, freed after this point outside its context, reads 0.
 * Before 6.16 the tracepoint does not say so: signal->live, which do_exit has already counted
 * down, is 0 then (two threads that exit at once may both see it). */
static __always_inline int on_exit(__u64 *ctx, bool modern)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32, tid = (__u32)bpf_get_current_pid_tgid();
	struct task_struct *t = CUR_TASK(modern);
	bool group_dead = exit_group_dead_arg ? (__u8)ctx[1] :
			  BPF_CORE_READ(t, signal, live.counter) == 0;
	struct lx_rec *r;
	void *ring;

	if (stack_user)
		bpf_map_delete_elem(&exec_ustacks, &tid);	/* killed inside an exec */
	r = reserve_current(&ring, sizeof(*r), LX_REC_EXIT);
	if (r) {
		/* The daemon then lets go of what it keeps per process. */
		r->flags = group_dead ? LX_EXIT_GROUP : 0;
		submit(ring, r, sizeof(*r));
	}
	if (group_dead && (unwind_maps || maps_ask))
		pmaps_gone(pid);
	/* Its pid may go to a process that is not the tracer's. */
	if (group_dead && pid == self_child_tgid)
		self_child_tgid = 0;
	if (!group_dead || !traced_current(pid))
		return 0;
	if (bpf_map_delete_elem(&rss_seen, &pid) == 0)
		send_rss(pid, 0);
	if (target_mode == LX_TARGET_PIDS)
		bpf_map_delete_elem(&targets, &pid);
	return 0;
}

/* Appends the entry (nr, or LX_SYSENT_EXIT) to this CPU's chunk, and sends the chunk once
 * full. No other record is written here, so the reader's order holds. sys_enter and sys_exit
 * never nest in themselves or each other (interrupts make no syscalls), so busy only keeps
 * nested programs out. */
static __always_inline int stage_sysent(__u32 nr)
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
		st->rec.e[n].tid_nr = (__u32)id << LX_SYSENT_NR_BITS | nr;
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
int BPF_PROG(btf_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(ctx, true, preempt, prev, next);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(raw_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(ctx, false, preempt, prev, next);
}

/* sched_waking for the waker: it runs in the waker's context before the wakee is enqueued.
 * sched_wakeup (on_enqueue) may run later on the target CPU (queued wakeups), in an IPI, with
 * nobody's stack; it only dates the enqueue, where the wait for a CPU begins. */
SEC("tp_btf/sched_waking")
int BPF_PROG(btf_waking, struct task_struct *p)
{
	return on_wakeup(ctx, true, p, LX_REC_WAKEUP);
}

SEC("raw_tp/sched_waking")
int BPF_PROG(raw_waking, struct task_struct *p)
{
	return on_wakeup(ctx, false, p, LX_REC_WAKEUP);
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(btf_wakeup, struct task_struct *p)
{
	return on_enqueue(true, p);
}

SEC("raw_tp/sched_wakeup")
int BPF_PROG(raw_wakeup, struct task_struct *p)
{
	return on_enqueue(false, p);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(btf_wakeup_new, struct task_struct *p)
{
	return on_wakeup(ctx, true, p, LX_REC_WAKEUP_NEW);
}

SEC("raw_tp/sched_wakeup_new")
int BPF_PROG(raw_wakeup_new, struct task_struct *p)
{
	return on_wakeup(ctx, false, p, LX_REC_WAKEUP_NEW);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(btf_fork, struct task_struct *parent, struct task_struct *child)
{
	return on_fork(ctx, true, parent, child);
}

SEC("raw_tp/sched_process_fork")
int BPF_PROG(raw_fork, struct task_struct *parent, struct task_struct *child)
{
	return on_fork(ctx, false, parent, child);
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

/* The renamed thread may be another than the one running (a write to its comm in /proc). */
static __always_inline int on_rename(struct task_struct *task, const char *comm)
{
	__u32 tgid = BPF_CORE_READ(task, tgid), cpu = bpf_get_smp_processor_id();
	struct lx_rename *r;
	void *ring;

	if (!traced_task(task, tgid))
		return 0;
	r = reserve(&ring, sizeof(*r), cpu);
	if (!r)
		return 0;
	header(&r->h, bpf_ktime_get_ns(), BPF_CORE_READ(task, pid), cpu, LX_REC_RENAME);
	r->pid = tgid;
	r->pad = 0;
	if (bpf_probe_read_kernel_str(r->comm, sizeof(r->comm), comm) < 0)
		r->comm[0] = '\0';
	submit(ring, r, sizeof(*r));
	return 0;
}

SEC("tp_btf/task_rename")
int BPF_PROG(btf_rename, struct task_struct *task, const char *comm)
{
	return on_rename(task, comm);
}

SEC("raw_tp/task_rename")
int BPF_PROG(raw_rename, struct task_struct *task, const char *comm)
{
	return on_rename(task, comm);
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(btf_exit, struct task_struct *p)
{
	return on_exit(ctx, true);
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(raw_exit, struct task_struct *p)
{
	return on_exit(ctx, false);
}

SEC("tp_btf/rss_stat")
int BPF_PROG(btf_rss, struct mm_struct *mm, int member)
{
	return on_rss(true, mm, member);
}

SEC("raw_tp/rss_stat")
int BPF_PROG(raw_rss, struct mm_struct *mm, int member)
{
	return on_rss(false, mm, member);
}

/* A number the entry cannot carry, LX_SYSENT_EXIT's included, is sent as none. */
static __always_inline int on_sys_enter(long nr)
{
	return stage_sysent(nr >= 0 && nr < LX_SYSENT_EXIT ? nr : LX_SYSENT_NR_NONE);
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

/* The return: user space pairs it with the thread's entry (user/model/syscall.c). */
SEC("tp_btf/sys_exit")
int BPF_PROG(btf_sys_exit, struct pt_regs *regs, long ret)
{
	return stage_sysent(LX_SYSENT_EXIT);
}

SEC("raw_tp/sys_exit")
int BPF_PROG(raw_sys_exit, struct pt_regs *regs, long ret)
{
	return stage_sysent(LX_SYSENT_EXIT);
}

/* The syscall current is in and its first five arguments, for pmaps_range.bpf.h. */
static __always_inline void current_call(struct task_struct *t, struct pmaps_call *c)
{
	struct pt_regs *regs = task_regs(true, t);

	c->nr = current_syscall(true);
	c->a[0] = regs->di;
	c->a[1] = regs->si;
	c->a[2] = regs->dx;
	c->a[3] = regs->r10;
	c->a[4] = regs->r8;
}

/* Every change of a process's mappings (mmap, munmap, mprotect, mremap, exec's ELF loader, the
 * dynamic loader) ends with its mmap lock released or downgraded, in the process's own
 * context. The table is rebuilt only when the executable mappings changed (pmaps.bpf.h), but
 * not inside execve (maps_exec rebuilds it when the exec is done). Its own VMA walk releases
 * the lock again, a run the kernel skips as recursion (not counted as a loss). Needs the VMA
 * iterator (6.7+); maps_ask takes its place before, maps_unlock_ranged from 6.13. */
SEC("tp_btf/mmap_lock_released")
int BPF_PROG(maps_unlock, struct mm_struct *mm)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u32 tgid = t->tgid;

	if (t->mm != mm) {
		keep_exec_ustack(ctx, true, mm);
		return 0;
	}
	if (!pmaps_stale(tgid, mm) || in_execve(true))
		return 0;
	pmaps_rebuild(t, tgid, mm, 0, true, false);
	return 0;
}

/* maps_unlock where mm_lock_seq is a seqcount (6.13+): a write section's range is kept to read
 * (pmaps_range.bpf.h), at the next take of the lock (maps_lock_got). Reads are left to that one
 * program: its verification is most of what a recording's start costs on such a kernel (6.12's
 * verifier under TCG took ~21 s for a second copy here), and a read lock's release comes after
 * its take, where the reading is done. */
SEC("tp_btf/mmap_lock_released")
int BPF_PROG(maps_unlock_ranged, struct mm_struct *mm, bool write)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u32 tgid = t->tgid;
	struct pmaps_call c;
	__s64 seq;

	if (t->mm != mm) {
		keep_exec_ustack(ctx, true, mm);
		return 0;
	}
	seq = mm_seq(mm);
	if (in_execve(true) || seq < 0)
		return 0;
	if (write) {
		current_call(t, &c);
		pmaps_write_done(t, tgid, mm, seq, &c);
	}
	return 0;
}

/* The lock taken: no VMA is write-locked yet (a write lock's holder locks them as it changes
 * them), so what is still to read of the table is read. A read lock taken with the seqcount odd
 * is munmap's downgrade, which ends its write section with its VMAs still locked: its range is
 * read at the next take. */
SEC("tp_btf/mmap_lock_acquire_returned")
int BPF_PROG(maps_lock_got, struct mm_struct *mm, bool write, bool success)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u32 tgid = t->tgid;
	struct pmaps_call c;
	__s64 seq;

	if (!success || t->mm != mm || in_execve(true))
		return 0;
	seq = mm_seq(mm);
	if (seq < 0)
		return 0;
	if (write || !(seq & 1)) {
		pmaps_catch_up(t, tgid, mm, seq);
	} else {
		current_call(t, &c);
		pmaps_write_done(t, tgid, mm, seq, &c);
	}
	return 0;
}

/* Where an mmap or mremap the kernel places goes (its write section's range). */
SEC("tp_btf/vm_unmapped_area")
int BPF_PROG(maps_unmapped, unsigned long addr, struct vm_unmapped_area_info *info)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct mm_struct *mm = t->mm;
	__s64 seq;

	if (!mm || in_execve(true))
		return 0;
	seq = mm_seq(mm);
	if (seq >= 0)
		pmaps_unmapped(t->tgid, mm, seq, addr, info->length);
	return 0;
}

/* The exec is done: the new image's table, with its mappings told (the first of them a new
 * image). */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(maps_exec, struct task_struct *p)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct mm_struct *mm = t->mm;

	if (mm && pmaps_stale(t->tgid, mm))
		pmaps_rebuild(t, t->tgid, mm, 0, true, false);
	return 0;
}

/* Without the VMA iterator: asks user space for the mappings of a traced process whose code
 * changed (5.11+: the tracepoint), but not inside execve: maps_exec_ask asks when it is done. */
static __always_inline int on_maps_release(void *ctx, bool modern, struct mm_struct *mm)
{
	struct task_struct *t = CUR_TASK(modern);
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if ((struct mm_struct *)TASK_READ(modern, t, mm) != mm) {
		keep_exec_ustack(ctx, modern, mm);
		return 0;
	}
	if (!traced_current(tgid) || in_execve(modern))
		return 0;
	pmaps_ask(tgid, (__u64)mm, BPF_CORE_READ(mm, exec_vm), false);
	return 0;
}

static __always_inline int on_exec_ask(bool modern)
{
	struct task_struct *t = CUR_TASK(modern);
	struct mm_struct *mm = (struct mm_struct *)TASK_READ(modern, t, mm);
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (mm && traced_current(tgid))
		pmaps_ask(tgid, (__u64)mm, BPF_CORE_READ(mm, exec_vm), false);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(btf_maps_exec_ask, struct task_struct *p)
{
	return on_exec_ask(true);
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(raw_maps_exec_ask, struct task_struct *p)
{
	return on_exec_ask(false);
}

SEC("tp_btf/mmap_lock_released")
int BPF_PROG(btf_maps_ask, struct mm_struct *mm)
{
	return on_maps_release(ctx, true, mm);
}

SEC("raw_tp/mmap_lock_released")
int BPF_PROG(raw_maps_ask, struct mm_struct *mm)
{
	return on_maps_release(ctx, false, mm);
}

/* Run once at the start, after maps_unlock is attached: the table of every process alive
 * (user space reads their mappings from /proc itself). */
SEC("iter/task")
int maps_scan(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;

	if (!t || t->pid != t->tgid || !t->mm)
		return 0;
	pmaps_rebuild(t, t->tgid, t->mm, 1, false, false);
	return 0;
}

/* The same without the VMA iterator, after btf_maps_ask is attached: the table of every traced
 * process alive, asked of user space. */
SEC("iter/task")
int maps_scan_ask(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;

	if (!t || t->pid != t->tgid || !t->mm || !traced_task(t, t->tgid))
		return 0;
	pmaps_ask(t->tgid, (__u64)t->mm, t->mm->exec_vm, true);
	return 0;
}

/* The registers a perf_event program's context starts with: the user ABI's struct pt_regs
 * (x86_64), whose layout never changes. Not the kernel's (vmlinux.h), whose fields CO-RE
 * relocates: cs is 16 bits of its word there before 6.x, and the context allows only 8-byte
 * reads of whole words. Volatile, so the compiler shares no address between the branches. */
struct sample_regs {
	__u64 r15, r14, r13, r12, bp, bx, r11, r10, r9, r8, ax, cx, dx, si, di, orig_ax, ip, cs,
		flags, sp, ss;
};

#define sample_reg(ctx, r) (((volatile struct sample_regs *)(ctx))->r)

/* A cpu-clock sample (one perf event per CPU, at the frequency set by user space): the thread
 * that was running and its stacks, kernel (when the timer hit kernel code) and user. In a target
 * mode only traced threads are sampled. */
static __always_inline int on_sample(struct bpf_perf_event_data *ctx, bool modern)
{
	__u64 ts = bpf_ktime_get_ns(), id = bpf_get_current_pid_tgid();
	__u32 cpu = bpf_get_smp_processor_id();
	struct lx_sample r;
	struct uregs u;
	bool user = (__u32)id;

	if ((__u32)id ? !traced_current(id >> 32) : !sample_idle)
		return 0;
	header(&r.h, ts, (__u32)id, cpu, LX_REC_SAMPLE);
	r.pid = id >> 32;
	/* Meaningful only when the sample hit kernel code: the daemon uses it then. */
	r.syscall = (__u32)id ? current_syscall(modern) : -1;
	r.pad = 0;
	/* The user registers: the interrupted ones when the timer hit user code, else those
	 * saved when the thread entered the kernel (the kernel's own walk picks the same). */
	if (modern && (sample_reg(ctx, cs) & 3) == 3) {
		u.ip = sample_reg(ctx, ip);
		u.sp = sample_reg(ctx, sp);
		u.bp = sample_reg(ctx, bp);
	} else if (modern) {
		user = user && current_uregs(&u);
	}
	send_stacked(ctx, cpu, &r, true, user, modern ? &u : NULL, false, false, 0, modern);
	return 0;
}

SEC("perf_event")
int cpu_sample(struct bpf_perf_event_data *ctx)
{
	return on_sample(ctx, true);
}

SEC("perf_event")
int cpu_sample_compat(struct bpf_perf_event_data *ctx)
{
	return on_sample(ctx, false);
}
