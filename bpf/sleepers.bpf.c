// SPDX-License-Identifier: GPL-2.0
/* sleepers.bpf.c - the stack of each thread asleep or waiting for a CPU when a recording
 * starts, read once by a task iterator (sleepers.h has the records; user/capture/startstate.c runs it). A thread
 * that sleeps through the recording sends no record at all, so without this its block at the
 * start would have no stack but its syscall.
 *
 * Two programs, user space loads one: start_copy (a sleepable iterator, 5.18+) takes the
 * kernel stack and copies the top of the user stack with bpf_copy_from_user_task, from the
 * registers the thread entered the kernel with, and walks a Python thread's frames
 * (python_walk.bpf.h); start_kern (5.9+) the kernel stack alone.
 * Only the threads user space names (start_tids, or every thread) are read, and only while they are off the
 * CPU: the saved registers of a thread running now would be stale. Kept apart from lxtrace.bpf.c so
 * that a kernel refusing it costs the start's stacks, never the recording. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "python_walk.bpf.h"
#include "sleepers.h"

char LICENSE[] SEC("license") = "GPL";

#ifndef PF_KTHREAD
#define PF_KTHREAD 0x00200000
#endif

/* Whether to take the kernel stack (--stacks with kernel frames); set before the load. */
const volatile bool want_kern = true;

/* Every thread (the whole machine's recording), not only those of start_tids. */
const volatile bool every = false;

/* The threads to read; user space sizes it to them before the load. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8);
} start_tids SEC(".maps");

/* A power of two above LX_START_MAX and the copy's furthest offset (1023 + the copy). */
#define START_BUF 16384

struct start_buf {
	__u8 b[START_BUF];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct start_buf);
} start_scratch SEC(".maps");

/* A Python thread's walk (python_walk.bpf.h); its maps, py_threads and py_layouts, are
 * lxtrace.bpf.c's, given by user space before the load. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_scratch);
} start_py SEC(".maps");

/* task_struct before 5.14, whose state was a long named state. */
struct task_struct___long_state {
	long state;
} __attribute__((preserve_access_index));

static __always_inline __u32 start_task_state(struct task_struct *t)
{
	struct task_struct___long_state *old = (void *)t;

	if (bpf_core_field_exists(old->state))
		return BPF_CORE_READ(old, state);
	return BPF_CORE_READ(t, __state);
}

/* Copies t's user stack from sp up into dst, a page at a time, as far as it is mapped and at
 * most LX_UCOPY_MAX bytes. Returns the bytes copied, whole words. */
static __always_inline __u32 copy_task_stack(__u8 *dst, __u64 sp, struct task_struct *t)
{
	__u32 len = 0, chunk;

	for (int i = 0; i < LX_UCOPY_MAX / 4096 + 1; i++) {
		if (len >= LX_UCOPY_MAX)
			break;
		chunk = 4096 - ((sp + len) & 4095);
		if (chunk > LX_UCOPY_MAX - len)
			chunk = LX_UCOPY_MAX - len;
		chunk = ((chunk - 1) & 4095) + 1;
		if (bpf_copy_from_user_task(dst + (len & (LX_UCOPY_MAX - 1)), chunk,
					    (void *)(sp + len), t, 0))
			break;
		len += chunk;
	}
	return len & ~7u;
}

/* Whether t runs on a CPU now. on_cpu is an int in older kernels and a u8 in 7.3's: a plain
 * load of it is refused where the size and signedness changed (libbpf adjusts a load's size
 * only between unsigned fields), so it is read by the size and offset this kernel has. */
static __always_inline bool on_a_cpu(const struct task_struct *t)
{
	return BPF_CORE_READ_BITFIELD(t, on_cpu) != 0;
}

/* Writes at dst the Python frames of t (tid), when user space gave the walk its thread state;
 * returns their bytes, 0 for none. */
static __always_inline __u32 start_python(__u8 *dst, struct task_struct *t, __u32 tid)
{
	const struct lx_py_thread *pt = bpf_map_lookup_elem(&py_threads, &tid);
	const struct lx_py_layout *l;
	struct py_scratch *s;
	__u32 zero = 0, n;

	if (!pt || pt->pid != t->tgid || !(s = bpf_map_lookup_elem(&start_py, &zero)))
		return 0;
	l = py_walk_start(pt, s, t);
	for (int i = 0; l && i < 2 * LX_PY_FRAMES_MAX; i++)
		if (py_step_of(s, l, t))
			break;
	n = py_walk_end(s);
	if (bpf_probe_read_kernel(dst, LX_START_PY_MAX, &s->out.ps))
		return 0;
	return sizeof(struct lx_pystack) + (n & (2 * LX_PY_FRAMES_MAX - 1)) *
					   sizeof(struct lx_pyframe);
}

static __always_inline int start_thread(struct bpf_iter__task *ctx, bool copy)
{
	struct task_struct *t = ctx->task;
	struct lx_ucopy *c;
	struct lx_start *h;
	struct lx_stack *st;
	struct pt_regs *regs;
	__u32 zero = 0, tid, size, at;
	__u64 n, switches;
	__u8 *buf;
	long got;

	if (!t)
		return 0;
	tid = t->pid;
	if (!every && !bpf_map_lookup_elem(&start_tids, &tid))
		return 0;
	/* A kernel thread has no user stack to copy. */
	if (!want_kern && (t->flags & PF_KTHREAD))
		return 0;
	buf = bpf_map_lookup_elem(&start_scratch, &zero);
	if (!buf)
		return 0;
	h = (struct lx_start *)buf;
	h->tid = tid;
	h->pid = t->tgid;
	h->state = start_task_state(t);
	h->pysize = 0;
	h->pad = 0;
	/* Running now: its saved registers are stale. Runnable (waiting for a CPU) or asleep,
	 * the thread keeps them until it runs again, which switches says below. */
	switches = t->nvcsw + t->nivcsw;
	if (on_a_cpu(t))
		return 0;
	st = (struct lx_stack *)(h + 1);
	st->tid = tid;
	st->nuser = 0;
	st->uflags = 0;
	st->uslot = 0;
	got = want_kern ? bpf_get_task_stack(t, st->pc, LX_STACK_KERN_MAX * 8, 0) : 0;
	n = got > 0 ? (__u64)got / 8 : 0;
	if (n > LX_STACK_KERN_MAX)
		n = LX_STACK_KERN_MAX;
	/* The compiler moves such bounds onto copies 5.10's verifier does not relate: masks it
	 * sees on the values themselves (no-ops here). */
	asm volatile("" : "+r"(n));
	n &= LX_STACK_KERN_MAX * 2 - 1;
	st->nkern = n;
	size = sizeof(*h) + sizeof(*st) + n * 8;
	if (copy && !(t->flags & PF_KTHREAD)) {
		c = (struct lx_ucopy *)(buf + (size & 1023));
		regs = (struct pt_regs *)bpf_task_pt_regs(t);
		c->ip = BPF_CORE_READ(regs, ip);
		c->sp = BPF_CORE_READ(regs, sp);
		c->bp = BPF_CORE_READ(regs, bp);
		c->di = BPF_CORE_READ(regs, di);
		c->flags = LX_UCOPY_EXACT | LX_UCOPY_BP_OK;
		__builtin_memset(c->pad, 0, sizeof(c->pad));
		c->len = copy_task_stack(c->bytes, c->sp, t);
		st->uflags = LX_USTACK_COPY;
		size += sizeof(*c) + c->len;
		/* A bound the verifier sees on the value itself: the frames fit after. */
		at = size;
		asm volatile("" : "+r"(at));
		if (at <= LX_START_MAX - LX_START_PY_MAX)
			h->pysize = start_python(buf + at, t, tid);
		size += h->pysize;
	}
	/* It ran while it was read: the stack may mix two moments. Left out. */
	if (size > LX_START_MAX || on_a_cpu(t) || t->nvcsw + t->nivcsw != switches)
		return 0;
	h->size = size;
	asm volatile("" : "+r"(size));
	bpf_seq_write(ctx->meta->seq, buf, size & (START_BUF - 1));
	return 0;
}

SEC("iter.s/task")
int start_copy(struct bpf_iter__task *ctx)
{
	return start_thread(ctx, true);
}

SEC("iter/task")
int start_kern(struct bpf_iter__task *ctx)
{
	return start_thread(ctx, false);
}
